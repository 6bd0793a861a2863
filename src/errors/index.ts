/**
 * Every error x402-pay throws is an `X402Error`: a stable `code` to branch on, the `phase` of the
 * handshake it came from, a one-line `shortMessage`, structured `details`, and an optional `cause`.
 * Messages are scrubbed of anything shaped like key material before they are stored.
 */

export type ErrorPhase = "config" | "challenge" | "select" | "sign" | "send" | "settle";

const brand = Symbol.for("x402-pay.error");

// 32-byte hex (an EVM private key or seed) and 64-byte base58 (a Solana secret key).
const secretPatterns = [
  /(?<![0-9a-fA-F])(0x)?[0-9a-fA-F]{64}(?![0-9a-fA-F])/g,
  /(?<![1-9A-HJ-NP-Za-km-z])[1-9A-HJ-NP-Za-km-z]{86,90}(?![1-9A-HJ-NP-Za-km-z])/g,
];

/** Replaces anything that looks like key material with `[redacted]`. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const pattern of secretPatterns) out = out.replace(pattern, "[redacted]");
  return out;
}

/** A copy of an arbitrary thrown value that is safe to keep as `cause`: name and scrubbed message only. */
export function sanitizeCause(cause: unknown): Error | undefined {
  if (cause === undefined) return undefined;
  if (isX402Error(cause)) return cause;
  const error = cause instanceof Error;
  const copy = new Error(redactSecrets(error ? cause.message : String(cause)));
  copy.name = error ? cause.name : "Error";
  return copy;
}

export interface X402ErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
  /** What the caller can do about it; appended to the message. */
  hint?: string;
}

export class X402Error extends Error {
  // `declare`: assigned in the constructor, so no class-field code is emitted for them.
  declare readonly code: string;
  declare readonly phase: ErrorPhase;
  declare readonly shortMessage: string;
  declare readonly details: Readonly<Record<string, unknown>>;

  constructor(code: string, phase: ErrorPhase, shortMessage: string, options: X402ErrorOptions = {}) {
    const short = redactSecrets(shortMessage);
    const hint = options.hint ? redactSecrets(options.hint) : undefined;
    super(hint ? `${short} ${hint}` : short, { cause: sanitizeCause(options.cause) });
    this.name = "X402Error";
    this.code = code;
    this.phase = phase;
    this.shortMessage = short;
    this.details = Object.freeze({ ...options.details });
    Object.defineProperty(this, brand, { value: true });
  }
}

/** A subclass whose only difference is its name, code and phase. */
function defineError(name: string, code: string, phase: ErrorPhase) {
  return class extends X402Error {
    constructor(message: string, options?: X402ErrorOptions) {
      super(code, phase, message, options);
      this.name = name;
    }
  };
}

/** True for errors from any copy of x402-pay (ESM and CJS builds, bundles), unlike `instanceof`. */
export function isX402Error(value: unknown): value is X402Error {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/** The options, the signer or the policy given to x402-pay are unusable. */
export const InvalidConfigError = /* @__PURE__ */ defineError("InvalidConfigError", "INVALID_CONFIG", "config");
export type InvalidConfigError = InstanceType<typeof InvalidConfigError>;

/** A 402 arrived but its challenge is malformed: bad base64, not JSON, wrong version, bad shape, too large. */
export const InvalidChallengeError = /* @__PURE__ */ defineError("InvalidChallengeError", "INVALID_CHALLENGE", "challenge");
export type InvalidChallengeError = InstanceType<typeof InvalidChallengeError>;

/** A 402 arrived with no challenge we can read at all (no PAYMENT-REQUIRED header, no JSON body). */
export const ChallengeNotFoundError = /* @__PURE__ */ defineError("ChallengeNotFoundError", "CHALLENGE_NOT_FOUND", "challenge");
export type ChallengeNotFoundError = InstanceType<typeof ChallengeNotFoundError>;

export interface RejectedRequirement {
  index: number;
  scheme: unknown;
  network: unknown;
  amount: unknown;
  asset: unknown;
  payTo: unknown;
  /** Machine-readable: `invalid`, `unsupported`, `policy`. */
  code: "invalid" | "unsupported" | "policy";
  reason: string;
}

/** No offered requirement can be paid: each one is listed in `details.rejected` with its reason. */
export class NoPayableRequirementError extends X402Error {
  declare readonly rejected: readonly RejectedRequirement[];
  constructor(rejected: RejectedRequirement[], options?: X402ErrorOptions) {
    const lines = rejected.map(
      (r) => `#${r.index} ${String(r.scheme)} on ${String(r.network)} (${String(r.amount)} of ${String(r.asset)}): ${r.reason}`,
    );
    const summary = rejected.length === 0 ? "the server offered no payment requirements" : lines.join("; ");
    super("NO_PAYABLE_REQUIREMENT", "select", `Nothing payable: ${summary}.`, {
      ...options,
      details: { ...options?.details, rejected },
    });
    this.name = "NoPayableRequirementError";
    this.rejected = rejected;
  }
}

/** The user's selector or `onBeforePayment` hook refused the payment. Nothing was signed. */
export const PaymentRefusedError = /* @__PURE__ */ defineError("PaymentRefusedError", "PAYMENT_REFUSED", "select");
export type PaymentRefusedError = InstanceType<typeof PaymentRefusedError>;

/** The wallet failed to sign, or the requirement could not be turned into a payload. */
export const SigningError = /* @__PURE__ */ defineError("SigningError", "SIGNING_FAILED", "sign");
export type SigningError = InstanceType<typeof SigningError>;

/** A request that already carried a payment header got a 402; x402-pay never signs a second time. */
export const PaymentAlreadyAttemptedError = /* @__PURE__ */ defineError("PaymentAlreadyAttemptedError", "PAYMENT_ALREADY_ATTEMPTED", "send");
export type PaymentAlreadyAttemptedError = InstanceType<typeof PaymentAlreadyAttemptedError>;

/** The request body cannot be sent twice (a stream), so a paid retry is impossible. Nothing was signed. */
export const BodyNotReplayableError = /* @__PURE__ */ defineError("BodyNotReplayableError", "BODY_NOT_REPLAYABLE", "send");
export type BodyNotReplayableError = InstanceType<typeof BodyNotReplayableError>;

/**
 * The chosen requirement turned out to be unpayable while building the payment (the mint does not
 * exist, a wallet changed the transaction in a way the facilitator refuses). Nothing was sent.
 */
export const UnpayableRequirementError = /* @__PURE__ */ defineError("UnpayableRequirementError", "UNPAYABLE_REQUIREMENT", "sign");
export type UnpayableRequirementError = InstanceType<typeof UnpayableRequirementError>;

/** The server refused the signed payment (a 402 after paying). `details.reason` is the server's reason. */
export class PaymentRejectedError extends X402Error {
  declare readonly reason: string;
  constructor(reason: string, options?: X402ErrorOptions) {
    super("PAYMENT_REJECTED", "settle", `The server rejected the payment: ${reason}.`, {
      ...options,
      details: { ...options?.details, reason },
    });
    this.name = "PaymentRejectedError";
    this.reason = reason;
  }
}

/**
 * The signed payment left, but no answer came back (network failure, abort) or the answer cannot be
 * read. The payment may or may not have settled: `details.paymentHeader` holds the exact signed
 * header so the caller can reconcile or resend it (a resend never pays twice: the nonce is one-time).
 */
export const PaymentOutcomeUnknownError = /* @__PURE__ */ defineError("PaymentOutcomeUnknownError", "PAYMENT_OUTCOME_UNKNOWN", "send");
export type PaymentOutcomeUnknownError = InstanceType<typeof PaymentOutcomeUnknownError>;
