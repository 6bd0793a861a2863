/**
 * What a model gives the paid fetch tool, and what an author may set: the input schema (zod, the one every framework
 * reads), the headers and methods a model may use, and the bounds of what it reads back.
 */
import * as z from "zod/mini";
import { checkCeiling, type PaymentCeiling } from "../client";
import { checkOptions, every, fail, is, isFunction, show } from "../contracts";
import type { MaybePromise } from "../contracts";
import { PAYMENT_HEADERS, type Money } from "../protocol";

/** The HTTP methods a model can ask for. */
export type PaidFetchMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";
export const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const satisfies readonly PaidFetchMethod[];

/** What a model passes to the tool. */
export interface PaidFetchInput {
  /** The http(s) URL to request. */
  url: string;
  /** GET by default. */
  method?: PaidFetchMethod | undefined;
  /** Request headers; only those the author allows (`allowHeaders`). */
  headers?: Record<string, string> | undefined;
  /** The request body, as text (JSON as a string). */
  body?: string | undefined;
  /** The most to pay, in USD (`"$0.01"`): the price the model was told, if it was told one. */
  maxPrice?: string | undefined;
}

/** Each field's description, as the model reads it in the tool's JSON Schema. */
const FIELDS = {
  url: "The http(s) URL to request.",
  method: "The HTTP method; GET when left out.",
  headers: "Request headers (only those the tool allows).",
  body: "The request body as text (JSON as a string).",
  maxPrice:
    'The most to pay for this request, in USD ("$0.01"): give the price you were told, if you were told one. ' +
    "A request that asks more pays nothing.",
} as const;
const said = (field: keyof typeof FIELDS) => z.describe(FIELDS[field]);

/** The input schema a framework shows the model (zod/mini: a JSON Schema for the model, the parse for the input). */
export const inputSchema = z.object({
  url: z.string().check(said("url")),
  method: z.optional(z.enum(METHODS).check(said("method"))),
  headers: z.optional(z.record(z.string(), z.string()).check(said("headers"))),
  body: z.optional(z.string().check(said("body"))),
  maxPrice: z.optional(z.string().check(said("maxPrice"))),
});

/**
 * The same schema as JSON Schema, for a framework that takes only that (the OpenAI Agents SDK outside strict mode),
 * written out rather than converted so the JSON Schema converter stays out of the bundle; a test holds it equal to
 * zod's conversion of `inputSchema`. Extra properties are let through to the tool's own parse, which drops them.
 */
export const inputJsonSchema = {
  type: "object" as const,
  properties: {
    url: { type: "string", description: FIELDS.url },
    method: { type: "string", enum: METHODS, description: FIELDS.method },
    headers: {
      type: "object",
      propertyNames: { type: "string" },
      additionalProperties: { type: "string" },
      description: FIELDS.headers,
    },
    body: { type: "string", description: FIELDS.body },
    maxPrice: { type: "string", description: FIELDS.maxPrice },
  },
  required: ["url"],
  additionalProperties: true as const,
};

/** What the human is asked to approve: the seller's price as its 402 quoted it, never what the model said. */
export interface PaidFetchApproval {
  readonly url: string;
  readonly method: string;
  /** `"0.10 USDC"` (`"up to 0.10 USDC"` for `upto`), when the asset's decimals are known; else base units. */
  readonly price: string;
  /** Base units, and where they go. */
  readonly amount: string;
  readonly asset: string;
  readonly network: string;
  readonly payTo: string;
  readonly scheme: string;
  /** What the approved call pays at most (its ceiling): the price quoted. */
  readonly maxAmount: PaymentCeiling;
}

/**
 * When a human must say yes before a payment: above a USD price (`"$0.10"`; a price in an asset the client cannot
 * price in USD is always asked), `{ above, origins }` (above a price, default every payment, to those origins, default
 * every origin), or your own function of the quoted price (true: ask).
 */
export type ApprovalRule =
  | Money
  | { readonly above?: Money | undefined; readonly origins?: readonly string[] | undefined }
  | ((approval: PaidFetchApproval) => MaybePromise<boolean>);

/**
 * Where the quote each approval was asked on is kept, by tool call id, until the call runs: in memory by default. A
 * server that answers the approval in another process (a serverless route) gives a shared store; without the quote, a
 * call that needs approval pays nothing.
 */
export interface ApprovalStore {
  get(callId: string): MaybePromise<unknown>;
  set(callId: string, record: unknown): MaybePromise<unknown>;
  delete(callId: string): MaybePromise<unknown>;
}

/** The tool's options: the same in every framework's door. */
export interface PaidFetchToolOptions {
  /** The tool's name, where the framework asks for one. Default `"paid_fetch"`. */
  name?: string | undefined;
  /** What the model reads about the tool. Default: a description of paying for HTTP resources. */
  description?: string | undefined;
  /** The base fetch, wrapped with the client. Default: the global `fetch`. */
  fetch?: typeof globalThis.fetch | undefined;
  /** When a human must approve a payment (the framework's own approval step). Default: never (the policy decides). */
  approval?: ApprovalRule | undefined;
  /** Where the quotes approvals were asked on are kept. Default: in memory (1,000 calls, 15 minutes). */
  approvals?: ApprovalStore | undefined;
  /** Methods the model may use. Default: GET, HEAD, POST. */
  methods?: readonly PaidFetchMethod[] | undefined;
  /** Request headers the model may set (any case). Default: accept, accept-language, content-type. */
  allowHeaders?: readonly string[] | undefined;
  /** Most bytes of a body read (the rest is not read). Default and at most 65,536. */
  maxBytes?: number | undefined;
  /** Most characters of a body the model sees. Default 4,000; at most 65,536. */
  maxChars?: number | undefined;
}

export const LIMITS = { maxBytes: 65_536, maxChars: 4_000, ceiling: 65_536 } as const;
const DEFAULT_METHODS: readonly PaidFetchMethod[] = ["GET", "HEAD", "POST"];
const DEFAULT_HEADERS = ["accept", "accept-language", "content-type"];
/** Never the model's: a payment (the tool's to make), and what a request's framing belongs to. */
const FORBIDDEN_HEADERS = [...PAYMENT_HEADERS, "sign-in-with-x", "host", "content-length", "transfer-encoding"].map(
  (name) => name.toLowerCase(),
);

/** The author's options, checked and with their defaults. Throws `InvalidConfigError` for what it cannot use. */
export function resolveOptions(options: PaidFetchToolOptions = {}) {
  const bound = (max: number) =>
    is((v) => Number.isInteger(v) && (v as number) > 0 && (v as number) <= max, `an integer from 1 to ${max}`);
  checkOptions("", options, {
    name: is((v) => typeof v === "string" && /^[a-zA-Z0-9_-]{1,64}$/.test(v), "1 to 64 letters, digits, _ or -"),
    description: is((v) => typeof v === "string" && v.length > 0, "a non-empty string"),
    fetch: isFunction,
    approval: checkRule,
    approvals: is(
      (v) => ["get", "set", "delete"].every((k) => typeof (v as Record<string, unknown>)?.[k] === "function"),
      "a store with get, set and delete",
    ),
    methods: (value) =>
      Array.isArray(value) && value.length === 0
        ? "[] allows no request: give at least one method"
        : every(is((v) => (METHODS as readonly unknown[]).includes(v), METHODS.join(", ")))(value),
    allowHeaders: every(is((v) => typeof v === "string" && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(v), "a header name")),
    maxBytes: bound(LIMITS.ceiling),
    maxChars: bound(LIMITS.ceiling),
  });
  const allowHeaders = (options.allowHeaders ?? DEFAULT_HEADERS).map((name) => name.toLowerCase());
  const forbidden = allowHeaders.find((name) => FORBIDDEN_HEADERS.includes(name));
  if (forbidden) fail("allowHeaders", `${show(forbidden)} is the tool's own to set, never the model's`);
  return {
    name: options.name ?? "paid_fetch",
    methods: options.methods ?? DEFAULT_METHODS,
    allowHeaders,
    maxBytes: options.maxBytes ?? LIMITS.maxBytes,
    maxChars: options.maxChars ?? LIMITS.maxChars,
    approval: options.approval,
  };
}
export type ResolvedOptions = ReturnType<typeof resolveOptions>;

/** What is wrong with an approval rule, else `undefined`. */
function checkRule(value: unknown): string | undefined {
  if (typeof value === "function") return undefined;
  if (typeof value === "string") return checkCeiling(value) && `${show(value)} is not a USD amount such as "$0.10"`;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `${show(value)} is not a USD amount, { above, origins } or a function`;
  const { above, origins, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return `${show(extra)} is not an option of an approval rule (above, origins)`;
  if (above !== undefined && (typeof above !== "string" || checkCeiling(above)))
    return `above: ${show(above)} is not a USD amount such as "$0.10"`;
  if (origins !== undefined && (!Array.isArray(origins) || !origins.every((o) => typeof o === "string")))
    return `origins: ${show(origins)} is not a list of origins`;
  // An empty list would match no origin, so ask no one: never what an author means by an approval rule.
  if (Array.isArray(origins) && origins.length === 0)
    return "origins: [] asks about no payment: leave it out to ask about payments to every origin";
  return undefined;
}

/** A model's input as a request, or why it is refused (said to the model). */
export function requestOf(
  raw: unknown,
  { methods, allowHeaders }: Pick<ResolvedOptions, "methods" | "allowHeaders">,
):
  | { url: string; method: PaidFetchMethod; headers: Headers; body: string | undefined; maxPrice?: Money }
  | {
      refused: string;
    } {
  const parsed = inputSchema.safeParse(raw);
  if (!parsed.success) return { refused: `The input is not valid: ${z.prettifyError(parsed.error)}` };
  const { url, method = "GET", headers = {}, body, maxPrice } = parsed.data;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { refused: `${show(url)} is not an absolute URL.` };
  }
  if (target.protocol !== "http:" && target.protocol !== "https:")
    return { refused: `Only http and https URLs can be requested, not ${target.protocol}.` };
  if (target.username || target.password) return { refused: "A URL with a user name or password is not requested." };
  if (!methods.includes(method)) return { refused: `The method ${method} is not allowed (${methods.join(", ")}).` };
  if (body !== undefined && (method === "GET" || method === "HEAD"))
    return { refused: `A ${method} request has no body.` };
  const sent = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (!allowHeaders.includes(name.toLowerCase()))
      return { refused: `The header ${show(name)} is not allowed (${allowHeaders.join(", ") || "none"}).` };
    try {
      sent.set(name, value);
    } catch {
      return { refused: `The header ${show(name)} has a value that cannot be sent.` };
    }
  }
  if (maxPrice !== undefined && checkCeiling(maxPrice))
    return { refused: `maxPrice ${show(maxPrice)} is not a USD amount such as "$0.01".` };
  return { url: target.href, method, headers: sent, body, ...(maxPrice !== undefined && { maxPrice }) };
}
export type ToolRequest = Exclude<ReturnType<typeof requestOf>, { refused: string }>;

// The schema gives what the input type says (checked when compiling; nothing at run time).
type Expect<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type InputMatchesSchema = Expect<Same<z.infer<typeof inputSchema>, PaidFetchInput>>;
