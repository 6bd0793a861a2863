/**
 * The one error base class. Every error x402-pay throws is an `X402Error`: a stable `code` to branch
 * on, the `phase` of the handshake it came from, a one-line `shortMessage`, typed `details`, and the
 * original `cause` (a wallet's "user rejected", an RPC failure), walkable like viem's `BaseError`.
 *
 * Redaction is for key material only, and only where it can come from: the causes (a wallet or RPC
 * library's error text), scrubbed in place so their identity and fields stay reachable, and the
 * messages of configuration errors, which may repeat an option's value. x402-pay's other messages name
 * public things (transaction hashes, nonces, addresses) and are left readable.
 */

export type ErrorPhase = "config" | "challenge" | "select" | "sign" | "send" | "settle" | "discover";

export type X402ErrorCode =
  | "INVALID_CONFIG"
  | "INVALID_CHALLENGE"
  | "CHALLENGE_NOT_FOUND"
  | "NO_PAYABLE_REQUIREMENT"
  | "PAYMENT_REFUSED"
  | "USER_REJECTED"
  | "SIGNING_FAILED"
  | "RPC_FAILED"
  | "UNPAYABLE_REQUIREMENT"
  | "PAYMENT_ALREADY_ATTEMPTED"
  | "BODY_NOT_REPLAYABLE"
  | "ABORTED"
  | "PAYMENT_NOT_SENT"
  | "PAYMENT_REJECTED"
  | "PERMIT2_ALLOWANCE_REQUIRED"
  | "PAYMENT_ID_CONFLICT"
  | "PAYMENT_OUTCOME_UNKNOWN"
  | "PAYMENT_PENDING"
  | "SIGN_IN_REFUSED"
  | "BUDGET_EXCEEDED"
  | "BUDGET_UNAVAILABLE"
  | "DISCOVERY_FAILED"
  | "CHANNEL_DISPUTED";

const brand = Symbol.for("x402-pay.error");

// Key-shaped text: 32 bytes of hex (an EVM private key or a seed), 64 bytes of base58 (a Solana
// secret key), 32 or more comma-separated byte values (a key file's JSON array, a Uint8Array), a
// mnemonic (twelve or more lowercase words of three to eight letters in a row, as BIP-39's are), and
// base64 JSON (a signed payment header, a token: a plug-in's or a seller's words may quote one).
const secretPatterns = [
  /(?<![0-9a-fA-F])(0x)?[0-9a-fA-F]{64}(?![0-9a-fA-F])/g,
  /(?<![1-9A-HJ-NP-Za-km-z])[1-9A-HJ-NP-Za-km-z]{86,90}(?![1-9A-HJ-NP-Za-km-z])/g,
  /(?<![\d.])(?:\d{1,3}\s*,\s*){31,}\d{1,3}(?![\d.])/g,
  /(?<![a-z])[a-z]{3,8}(?: [a-z]{3,8}){11,}(?![a-z])/g,
  /(?<![A-Za-z0-9+/_-])eyJ[A-Za-z0-9+/_-]{16,}={0,2}/g,
];

/** Replaces anything shaped like key material with `[redacted]`. Used on text from outside x402-pay. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const pattern of secretPatterns) out = out.replace(pattern, "[redacted]");
  return out;
}

/**
 * Scrubs a foreign error (and its causes) of key-shaped text in place: every own string field
 * (`message`, `stack`, viem's `shortMessage` and `details`, ...), string arrays (`metaMessages`)
 * and the errors an `AggregateError` holds. The object stays the same, so `instanceof` and fields
 * like `code` still work. A thrown non-error, or an error whose text cannot be changed (read-only,
 * or not an own field: DOMException's `message` getter, a custom `toString`), is replaced by a
 * scrubbed copy.
 */
export function scrub(cause: unknown, depth = 0): unknown {
  // String() throws for objects without a prototype, or with a throwing toString.
  const text = (value: unknown) => {
    try {
      return String(value);
    } catch {
      return {}.toString.call(value);
    }
  };
  if (cause === undefined || cause === null || isX402Error(cause)) return cause;
  if (typeof cause !== "object") return new Error(redactSecrets(String(cause)));
  if (depth > 8) return undefined;
  const target = cause as Record<string, unknown>;
  const field = (key: string): unknown => {
    try {
      return target[key];
    } catch {
      // A getter that throws: no value.
    }
  };
  const copy = () => {
    const scrubbed = new Error(redactSecrets(text(field("message") ?? cause)));
    scrubbed.name = redactSecrets(text(field("name") ?? "Error"));
    return scrubbed;
  };
  try {
    for (const key of Object.getOwnPropertyNames(target)) {
      const value = target[key];
      const clean =
        typeof value === "string"
          ? redactSecrets(value)
          : Array.isArray(value) && value.every((v) => typeof v === "string" || v instanceof Error)
            ? value.map((v) => (typeof v === "string" ? redactSecrets(v) : scrub(v, depth + 1)))
            : key === "cause"
              ? scrub(value, depth + 1)
              : value;
      if (clean !== value && String(clean) !== String(value)) {
        target[key] = clean;
        // A setter that ignores what it is given.
        if (target[key] !== clean) return copy();
      }
    }
    // What a log shows of it, from fields that are not its own (a getter, a prototype's toString).
    const shown = `${text(cause)} ${text(target.message)}`;
    return redactSecrets(shown) === shown ? cause : copy();
  } catch {
    // A read-only field (a frozen error), a getter that throws.
    return copy();
  }
}

export interface X402ErrorOptions<D extends object = Record<string, unknown>> {
  details?: Omit<D, "paymentHeader" | "payload">;
  /** Kept on `details` but not enumerable, so logging `details` does not log them (a signed header). */
  hidden?: Record<string, unknown>;
  cause?: unknown;
  /** What the caller can do about it; appended to the message. */
  hint?: string;
}

/** docs/errors.md has one section per code, headed by the code: its anchor is the code in lower case. */
const DOCS = "https://github.com/x402-pay/x402-pay/blob/main/docs/errors.md#";

export class X402Error<
  C extends X402ErrorCode = X402ErrorCode,
  D extends object = Record<string, unknown>,
> extends Error {
  // `declare`: assigned in the constructor, so no class-field code is emitted for them.
  declare readonly code: C;
  declare readonly phase: ErrorPhase;
  declare readonly shortMessage: string;
  declare readonly details: Readonly<D>;
  /**
   * The section of docs/errors.md that explains the code (`…/docs/errors.md#payment_rejected`), like
   * viem's `docsPath`. An enumerable field, so a logged or serialised error names its docs.
   */
  declare readonly docsUrl: string;

  /** `kind`: what every error of a class shares (its name, code and phase); each class passes its own. */
  constructor(kind: { name: string; code: C; phase: ErrorPhase }, message: string, options: X402ErrorOptions<D> = {}) {
    // A configuration error may repeat a value the caller gave, which may be a key pasted in the wrong
    // place; it never needs to show a hash, so key-shaped text goes.
    const shortMessage = kind.phase === "config" ? redactSecrets(message) : message;
    super(options.hint ? `${shortMessage} ${options.hint}` : shortMessage, { cause: scrub(options.cause) });
    const { name, code, phase } = kind;
    const details = { ...options.details } as D;
    for (const [key, value] of Object.entries(options.hidden ?? {})) Object.defineProperty(details, key, { value });
    const docsUrl = DOCS + code.toLowerCase();
    Object.assign(this, { name, code, phase, shortMessage, details: Object.freeze(details), docsUrl });
    Object.defineProperty(this, brand, { value: true });
  }

  /**
   * Follows the `cause` chain: without `fn`, returns the deepest cause; with `fn`, the first error in
   * the chain (this one included) for which it returns true, else `null`.
   */
  walk(fn?: (error: unknown) => boolean): unknown {
    let error: unknown = this;
    for (let i = 0; i < 16; i++) {
      if (fn?.(error)) return error;
      const next = (error as { cause?: unknown }).cause;
      if (next === undefined || next === null || next === error) break;
      error = next;
    }
    return fn ? null : error;
  }
}

/** The codes after which money may have moved (the payment left; its settlement is not known, or not yet final). */
export const MONEY_MAY_HAVE_MOVED: readonly X402ErrorCode[] = ["PAYMENT_OUTCOME_UNKNOWN", "PAYMENT_PENDING"];

/** True for errors from any copy of x402-pay (ESM and CJS builds, bundles), unlike `instanceof`. */
export function isX402Error(value: unknown): value is import("./classes").AnyX402Error {
  return (value as Record<symbol, unknown> | undefined)?.[brand] === true;
}
