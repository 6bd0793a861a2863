/**
 * Wire shapes of x402 v1 and v2 as zod/mini schemas: the one source of truth for what a well-formed
 * message is, exported to users as `x402-pay/schemas`. The wrappers validate with plain functions
 * generated from these schemas (`validators.generated.ts`, by `npm run gen:validators`), so zod stays
 * out of their bundles; a test holds the two to the same verdicts and sentences. Unknown fields are
 * kept (loose objects). An issue's message says what the field must be (`must be a string`) and its
 * path names the field; x402-pay's errors join the two (`amount must be a string`).
 *
 * Refinements name a predicate of `wire.ts` (the generator knows no other), and every message is a
 * fixed sentence.
 */
import * as z from "zod/mini";
import type * as W from "./wire-types";
import {
  isAtomicAmount,
  isBuilderCodeText,
  isCaip2,
  isNonEmpty,
  isPaymentIdText,
  isPositiveInteger,
  type SETTLEMENT_TEXT_FIELDS,
} from "./wire";

// Builders marked free of side effects, so a bundler drops the schemas an app never uses (esbuild
// does not see zod's own marks across modules).

/** A string, which `rule` (if any) must accept, else `error`. */
// @__NO_SIDE_EFFECTS__
function string(rule?: (value: string) => boolean, error?: string) {
  const schema = z.string("must be a string");
  return rule ? schema.check(z.refine(rule, error)) : schema;
}

/** An object with these fields at least: unknown fields are kept. */
// @__NO_SIDE_EFFECTS__
function object<T extends z.core.$ZodLooseShape>(shape: T, error = "must be a JSON object") {
  return z.looseObject(shape, error);
}

/** May be absent. */
// @__NO_SIDE_EFFECTS__
function optional<T extends z.ZodMiniType>(schema: T) {
  return z.optional(schema);
}

/** May be absent or `null`: servers that write absent fields as null (Java's `"payer": null`) are not refused. */
// @__NO_SIDE_EFFECTS__
function nullish<T extends z.ZodMiniType>(schema: T) {
  return z.optional(z.nullable(schema));
}

/** A whole number of seconds above 0. */
// @__NO_SIDE_EFFECTS__
function seconds() {
  return z.number("must be a number").check(z.refine(isPositiveInteger, "must be a positive integer"));
}

/** The protocol version, which picks the schema. */
// @__NO_SIDE_EFFECTS__
function version<V extends 1 | 2>(value: V) {
  return z.literal(value, `must be ${value}`);
}

// Field rules, each made once and shared by every field that follows it. Fields are listed in the
// order they are checked: the first problem is the one reported.
const text = string();
const nonEmpty = string(isNonEmpty, "must not be empty");
const atomic = string(isAtomicAmount, "must be a base-10 integer string within uint256");
const caip2 = string(isCaip2, "must be a CAIP-2 id such as eip155:8453");
const timeout = seconds();
const record = object({}, "must be an object");
const optionalRecord = nullish(record);
const optionalText = nullish(text);
/**
 * `accepts`: its elements are checked one by one against the version's requirements schema, so that one malformed
 * option does not void the others. It may be empty (SIWX auth-only routes).
 */
const accepts = /* @__PURE__ */ z.array(/* @__PURE__ */ z.unknown(), "must be an array");

/** `{ url, description?, mimeType? }`: only `url` is read, so only `url` is checked. */
export const ResourceInfoSchema = object({ url: nonEmpty }, "must be an object");

/** An element of a v2 `accepts`, the payment requirements the payer chooses from; echoed verbatim as `accepted`. */
export const PaymentRequirementsV2Schema = object({
  scheme: nonEmpty,
  network: caip2,
  amount: atomic,
  asset: nonEmpty,
  payTo: nonEmpty,
  maxTimeoutSeconds: timeout,
  extra: optionalRecord,
});

/**
 * An element of a v1 `accepts`. Of the descriptive fields only `resource` is read
 * (the same-host check), so only it is checked.
 */
export const PaymentRequirementsV1Schema = object({
  scheme: nonEmpty,
  network: nonEmpty,
  maxAmountRequired: atomic,
  asset: nonEmpty,
  payTo: nonEmpty,
  maxTimeoutSeconds: timeout,
  extra: optionalRecord,
  resource: optional(text),
});

/** The v2 402 challenge, from the `PAYMENT-REQUIRED` header or the body. `resource` may be absent. */
export const PaymentRequiredV2Schema = object({
  x402Version: version(2),
  error: optionalText,
  accepts,
  extensions: optionalRecord,
  resource: optional(ResourceInfoSchema),
});

/** The v1 402 challenge, a JSON body. */
export const PaymentRequiredV1Schema = object({
  x402Version: version(1),
  error: optionalText,
  accepts,
  extensions: optionalRecord,
});

/** The v2 `PAYMENT-SIGNATURE` payload: `payload` is the scheme's, `accepted` one of the challenge's requirements. */
export const PaymentPayloadV2Schema = object({
  x402Version: version(2),
  payload: record,
  extensions: optionalRecord,
  resource: optional(ResourceInfoSchema),
  accepted: PaymentRequirementsV2Schema,
});

/** The v1 `X-PAYMENT` payload. */
export const PaymentPayloadV1Schema = object({
  x402Version: version(1),
  scheme: nonEmpty,
  network: nonEmpty,
  payload: record,
});

/** The settlement reported in `PAYMENT-RESPONSE` (v2) or `X-PAYMENT-RESPONSE` (v1). */
export const SettleResponseSchema = object({
  success: /* @__PURE__ */ z.boolean("must be a boolean"),
  errorReason: optionalText,
  errorMessage: optionalText,
  payer: optionalText,
  transaction: optionalText,
  network: optionalText,
  amount: optionalText,
  extensions: optionalRecord,
});

// sign-in-with-x (wire.md §6): the 402's declaration and the SIGN-IN-WITH-X header's payload.

const optionalString = optional(text);
const strings = /* @__PURE__ */ z.array(text, "must be an array");

/**
 * An entry of a sign-in-with-x declaration's `supportedChains`. `signatureScheme` may hold anything
 * (the reference server never sets it; x402-pay echoes only `eip191`, `eip1271`, `eip6492`, `siws`).
 */
export const SignInWithXChainSchema = object({ chainId: text, type: text });

/**
 * `extensions["sign-in-with-x"]` of a 402: `info`, the message's fields but the chain, and the chains
 * the server takes proofs on. `supportedChains` is an array of anything: x402-pay checks its entries
 * one by one against `SignInWithXChainSchema` and drops the malformed ones. Do the same.
 */
export const SignInWithXDeclarationSchema = object({
  info: object({
    domain: text,
    uri: text,
    version: text,
    nonce: text,
    issuedAt: text,
    statement: optionalString,
    expirationTime: optionalString,
    notBefore: optionalString,
    requestId: optionalString,
    resources: optional(strings),
  }),
  supportedChains: /* @__PURE__ */ z.array(/* @__PURE__ */ z.unknown(), "must be an array"),
});

/**
 * The `SIGN-IN-WITH-X` header's payload (base64 of its JSON): the declaration's `info` echoed, the chain chosen, the
 * signer's address and signature.
 */
export const SignInWithXPayloadSchema = object({
  domain: text,
  address: nonEmpty,
  statement: optionalString,
  uri: text,
  version: text,
  chainId: caip2,
  type: /* @__PURE__ */ z.literal(["eip191", "ed25519"], "must be eip191 or ed25519"),
  nonce: text,
  issuedAt: text,
  expirationTime: optionalString,
  notBefore: optionalString,
  requestId: optionalString,
  resources: optional(strings),
  signatureScheme: optional(
    /* @__PURE__ */ z.literal(["eip191", "eip1271", "eip6492", "siws"], "must be eip191, eip1271, eip6492 or siws"),
  ),
  signature: nonEmpty,
});

// payment-identifier (wire.md §7).

/**
 * `extensions["payment-identifier"]` of a 402: the server declares it with a boolean `info.required`, and x402-pay
 * sends an id only then.
 */
export const PaymentIdentifierDeclarationSchema = object({
  info: object({ required: /* @__PURE__ */ z.boolean("must be a boolean") }),
});

/**
 * `extensions["payment-identifier"]` of a PaymentPayload: the declaration echoed with `info.id`, 16 to 128 characters
 * of `a-z A-Z 0-9 _ -`. Only the id is read.
 */
export const PaymentIdentifierPayloadSchema = object({
  info: object({ id: string(isPaymentIdText, "must be 16 to 128 characters of a-z, A-Z, 0-9, _ and -") }),
});

// builder-code (ERC-8021 attribution, the reference's BUILDER_CODE_SCHEMA).

/**
 * A builder code. Its refinement aborts, so that inside `s`'s union zod reports the union's sentence, whichever option
 * came closer.
 */
const builderCode = /* @__PURE__ */ z
  .string("must be a string")
  .check(
    /* @__PURE__ */ z.refine(isBuilderCodeText, { error: "must be 1 to 32 characters of a-z, 0-9 and _", abort: true }),
  );

/**
 * `extensions["builder-code"]`, of a 402 and of a PaymentPayload alike: `info.a` the app's code (the
 * server's), `info.w` a wallet's, `info.s` service codes, one or a list. The reference allows at most
 * 11 codes in `s` and no other field in `info`; this schema checks the codes only, as x402-pay reads them.
 */
export const BuilderCodeSchema = object({
  info: object({
    a: optional(builderCode),
    w: optional(builderCode),
    s: optional(
      /* @__PURE__ */ z.union(
        [builderCode, /* @__PURE__ */ z.array(builderCode, "must be an array")],
        "must be a builder code or an array of builder codes",
      ),
    ),
  }),
});

/**
 * A listing of a facilitator's discovery endpoint (bazaar, wire.md §8.2). `accepts` holds requirements
 * of the listing's `x402Version`, checked one by one like a challenge's; `lastUpdated` is unix seconds
 * (the spec) or an ISO string (the reference); an MCP listing names its tool in `tool` (the spec) or
 * `toolName` (the reference), at the top, in `metadata` or in its bazaar declaration.
 */
export const DiscoveryResourceSchema = object({
  resource: nonEmpty,
  type: optional(text),
  x402Version: /* @__PURE__ */ z.union([version(1), version(2)], "must be 1 or 2"),
  accepts,
  lastUpdated: optional(
    /* @__PURE__ */ z.union([/* @__PURE__ */ z.number("must be a number"), text], "must be a number or a string"),
  ),
  metadata: optionalRecord,
});

const count = /* @__PURE__ */ z.number("must be a number");

/**
 * A page of `GET /discovery/resources`: its items are checked one by one, so one malformed listing does not void the
 * page.
 */
export const DiscoveryPageSchema = object({
  items: /* @__PURE__ */ z.array(/* @__PURE__ */ z.unknown(), "must be an array"),
  pagination: optional(object({ limit: optional(count), offset: optional(count), total: optional(count) })),
});

/** A page of `GET /discovery/search` (2.27): `resources`, and a cursor to the next page when there is one. */
export const DiscoverySearchPageSchema = object({
  resources: /* @__PURE__ */ z.array(/* @__PURE__ */ z.unknown(), "must be an array"),
  pagination: nullish(object({ limit: optional(count), cursor: nullish(text) })),
});

export type {
  ResourceInfo,
  PaymentRequirementsV2,
  PaymentRequirementsV1,
  PaymentRequiredV2,
  PaymentRequiredV1,
  PaymentPayloadV2,
  PaymentPayloadV1,
  SignInWithXChain,
  SignInWithXDeclaration,
  SignInWithXPayload,
  PaymentIdentifierDeclaration,
  PaymentIdentifierPayload,
  BuilderCode,
  DiscoveryResource,
  SettleResponse,
} from "./wire-types";

/** True when A and B are the same type (not only assignable to each other). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Holds<T extends true> = T;
/** A settlement as decoded: the text fields' `null` dropped (`decodeSettlement`). */
type Decoded<T> = { [K in keyof T]: K extends (typeof SETTLEMENT_TEXT_FIELDS)[number] ? Exclude<T[K], null> : T[K] };
/** T with every object type in it written out, so an interface and an inferred object type can be the same. */
type Flat<T> = T extends object ? { [K in keyof T]: Flat<T[K]> } : T;

/** Each written-out wire type (wire-types.ts) is what its schema reads: checked by `tsc`, nothing at run time. */
// biome-ignore lint/correctness/noUnusedVariables: read by tsc only, which checks each `Holds`
type WireTypesMatchSchemas = [
  Holds<Same<Flat<W.ResourceInfo>, Flat<z.infer<typeof ResourceInfoSchema>>>>,
  Holds<Same<Flat<W.PaymentRequirementsV2>, Flat<z.infer<typeof PaymentRequirementsV2Schema>>>>,
  Holds<Same<Flat<W.PaymentRequirementsV1>, Flat<z.infer<typeof PaymentRequirementsV1Schema>>>>,
  Holds<Same<Flat<W.PaymentRequiredV2>, Flat<z.infer<typeof PaymentRequiredV2Schema>>>>,
  Holds<Same<Flat<W.PaymentRequiredV1>, Flat<z.infer<typeof PaymentRequiredV1Schema>>>>,
  Holds<Same<Flat<W.PaymentPayloadV2>, Flat<z.infer<typeof PaymentPayloadV2Schema>>>>,
  Holds<Same<Flat<W.PaymentPayloadV1>, Flat<z.infer<typeof PaymentPayloadV1Schema>>>>,
  Holds<Same<Flat<W.SettleResponse>, Flat<Decoded<z.infer<typeof SettleResponseSchema>>>>>,
  Holds<Same<Flat<W.SignInWithXChain>, Flat<z.infer<typeof SignInWithXChainSchema>>>>,
  Holds<Same<Flat<W.SignInWithXDeclaration>, Flat<z.infer<typeof SignInWithXDeclarationSchema>>>>,
  Holds<Same<Flat<W.SignInWithXPayload>, Flat<z.infer<typeof SignInWithXPayloadSchema>>>>,
  Holds<Same<Flat<W.PaymentIdentifierDeclaration>, Flat<z.infer<typeof PaymentIdentifierDeclarationSchema>>>>,
  Holds<Same<Flat<W.PaymentIdentifierPayload>, Flat<z.infer<typeof PaymentIdentifierPayloadSchema>>>>,
  Holds<Same<Flat<W.BuilderCode>, Flat<z.infer<typeof BuilderCodeSchema>>>>,
  Holds<Same<Flat<W.DiscoveryResource>, Flat<z.infer<typeof DiscoveryResourceSchema>>>>,
];

/**
 * The first problem `value` has against `schema`, the field's path in front (`resource.url must not
 * be empty`), else `undefined`: zod's verdict as x402-pay words it, the sentence the generated
 * validators return.
 */
export function problemOf(schema: z.ZodMiniType, value: unknown): string | undefined {
  const issue = schema.safeParse(value).error?.issues[0];
  return issue && (issue.path.length > 0 ? `${issue.path.join(".")} ${issue.message}` : issue.message);
}
