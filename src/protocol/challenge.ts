/** Reading a 402: the PAYMENT-REQUIRED header first, then a v1 or v2 JSON body. */
import { ChallengeNotFoundError, InvalidChallengeError } from "../errors";
import { decodeBase64Json } from "./base64";
import { MAX_HEADER_BYTES, PAYMENT_REQUIRED_HEADER } from "./headers";
import { isCaip2 } from "./networks";
import type {
  PaymentRequiredV1,
  PaymentRequiredV2,
  PaymentRequirementsV1,
  PaymentRequirementsV2,
  ResourceInfo,
} from "./schemas";
import {
  problemOfPaymentRequiredV1,
  problemOfPaymentRequiredV2,
  problemOfPaymentRequirementsV1,
  problemOfPaymentRequirementsV2,
} from "./validators.generated";
import { MAX_JSON_DEPTH, isObject, isTooDeep } from "./wire";

/** One offered payment requirement, validated and normalised across v1 and v2. */
export interface PaymentRequirement {
  readonly x402Version: 1 | 2;
  /** Position in `accepts`. */
  readonly index: number;
  readonly scheme: string;
  /** The network as offered (a v1 name or a CAIP-2 id). */
  readonly network: string;
  /** CAIP-2 id; for a v1 name (`base-sepolia`), `undefined` until a scheme that knows the name translates it. */
  readonly caip2: string | undefined;
  /** Atomic amount (v1: `maxAmountRequired`). */
  readonly amount: string;
  readonly asset: string;
  readonly payTo: string;
  readonly maxTimeoutSeconds: number;
  readonly extra: Readonly<Record<string, unknown>>;
  /** The element of `accepts` exactly as received: echoed verbatim as `accepted`. */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** An element of `accepts` that failed validation, with the reason. */
export interface InvalidRequirement {
  readonly index: number;
  readonly raw: unknown;
  readonly reason: string;
}

/** A parsed 402 challenge. */
export interface PaymentChallenge {
  readonly x402Version: 1 | 2;
  readonly error: string | undefined;
  readonly resource: ResourceInfo | undefined;
  readonly extensions: Readonly<Record<string, unknown>> | undefined;
  readonly requirements: readonly PaymentRequirement[];
  readonly invalid: readonly InvalidRequirement[];
  /** The decoded challenge object as received. */
  readonly raw: Readonly<Record<string, unknown>>;
  readonly source: "header" | "body";
}

const MAX_BODY_CHARS = 1024 * 1024;

/**
 * Parses a 402 challenge from the `PAYMENT-REQUIRED` header value, or else from the body (a JSON
 * string or an already-parsed value). Throws `InvalidChallengeError` for a malformed challenge and
 * `ChallengeNotFoundError` when there is none.
 */
export function parseChallenge(input: {
  header: string | null | undefined;
  body?: unknown;
  contentType?: string | null;
}): PaymentChallenge {
  const { header } = input;
  if (header) {
    if (header.length > MAX_HEADER_BYTES) {
      throw new InvalidChallengeError(
        `The ${PAYMENT_REQUIRED_HEADER} header is ${header.length} bytes, over the ${MAX_HEADER_BYTES}-byte limit.`,
      );
    }
    const decoded = decodeBase64Json(header);
    if (!decoded.ok) throw new InvalidChallengeError(`The ${PAYMENT_REQUIRED_HEADER} header ${decoded.reason}.`);
    return toChallenge(decoded.value, "header");
  }
  const body = readJsonBody(input.body);
  if (body && typeof body === "object" && "x402Version" in body) return toChallenge(body, "body");
  const html = /html/i.test(input.contentType ?? "") || (typeof input.body === "string" && /^\s*</.test(input.body));
  throw new ChallengeNotFoundError(
    html
      ? "The 402 response is an HTML paywall for browsers, not an x402 challenge."
      : `The 402 response has no ${PAYMENT_REQUIRED_HEADER} header and no x402 JSON body.`,
    {
      hint: html
        ? "Do not send `Accept: text/html`, or ask the server for its API response."
        : `In a browser, a server on another origin must list ${PAYMENT_REQUIRED_HEADER} in ` +
          `Access-Control-Expose-Headers.`,
    },
  );
}

function readJsonBody(body: unknown): unknown {
  if (typeof body !== "string") return body;
  if (body.length > MAX_BODY_CHARS) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function toChallenge(value: unknown, source: "header" | "body"): PaymentChallenge {
  if (!isObject(value)) {
    throw new InvalidChallengeError(
      `The ${source === "header" ? `${PAYMENT_REQUIRED_HEADER} header` : "402 body"} is not a JSON object.`,
    );
  }
  if (isTooDeep(value)) {
    throw new InvalidChallengeError(`The challenge is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  const version = (value as { x402Version?: unknown }).x402Version;
  if (version !== 1 && version !== 2) {
    throw new InvalidChallengeError(
      `Unsupported x402Version ${JSON.stringify(version) ?? "undefined"}: expected 1 or 2.`,
    );
  }
  const reason = (version === 2 ? problemOfPaymentRequiredV2 : problemOfPaymentRequiredV1)(value);
  if (reason) throw new InvalidChallengeError(`The x402 v${version} challenge is malformed: ${reason}.`);
  const data = value as PaymentRequiredV1 | PaymentRequiredV2;
  const requirements: PaymentRequirement[] = [];
  const invalid: InvalidRequirement[] = [];
  data.accepts.forEach((raw, index) => {
    const result = toRequirement(raw, index, version);
    if ("reason" in result) invalid.push(result);
    else requirements.push(result);
  });
  return {
    x402Version: version,
    error: data.error ?? undefined,
    resource: version === 2 ? (data as PaymentRequiredV2).resource : undefined,
    extensions: data.extensions ?? undefined,
    requirements,
    invalid,
    raw: value as Record<string, unknown>,
    source,
  };
}

/** A requirement as offered (`PaymentTerms.requirement`, kept by a journal) read again; `undefined` if not one. */
export function parseRequirement(raw: unknown, version: 1 | 2): PaymentRequirement | undefined {
  const requirement = toRequirement(raw, 0, version);
  return "reason" in requirement ? undefined : requirement;
}

function toRequirement(raw: unknown, index: number, version: 1 | 2): PaymentRequirement | InvalidRequirement {
  const reason = (version === 2 ? problemOfPaymentRequirementsV2 : problemOfPaymentRequirementsV1)(raw);
  if (reason) return { index, raw, reason };
  const r = raw as PaymentRequirementsV1 & PaymentRequirementsV2;
  return Object.freeze({
    index,
    raw: raw as Record<string, unknown>,
    x402Version: version,
    amount: version === 2 ? r.amount : r.maxAmountRequired,
    network: r.network,
    // v2 networks are validated CAIP-2 ids; a v1 name waits for a scheme that knows it.
    caip2: isCaip2(r.network) ? r.network : undefined,
    scheme: r.scheme,
    asset: r.asset,
    payTo: r.payTo,
    maxTimeoutSeconds: r.maxTimeoutSeconds,
    extra: r.extra ?? {},
  });
}
