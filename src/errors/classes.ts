/**
 * One class per case a caller acts on differently, each with its literal `code` and typed `details`,
 * so `switch (error.code)` narrows. `isX402Error(e)` narrows to their union, `AnyX402Error`.
 */
import { X402Error, type X402ErrorCode, type X402ErrorOptions } from "./base";

/** Where in the request an error arose. */
export interface RequestDetails {
  /** The URL paid for (after any redirect of the first request). */
  readonly url?: string;
  readonly method?: string;
}

/** The request details of an error about `request`. */
export const requestDetails = (request: { readonly url: string; readonly method: string }): RequestDetails => ({
  url: request.url,
  method: request.method,
});

/** A signed payment. `paymentHeader` and `payload` are not enumerable: logging `details` does not log them. */
export interface PaymentDetails extends RequestDetails {
  /** The requirement paid, verbatim as offered. */
  readonly requirement: Readonly<Record<string, unknown>>;
  readonly payer: string;
  /** The exact signed header, to reconcile or resend (a resend cannot pay twice). Not enumerable. */
  readonly paymentHeader: { readonly name: string; readonly value: string };
  /** The decoded PaymentPayload. Not enumerable. */
  readonly payload: Readonly<Record<string, unknown>>;
}

export interface RejectedRequirement {
  readonly index: number;
  readonly scheme: unknown;
  readonly network: unknown;
  readonly amount: unknown;
  readonly asset: unknown;
  readonly payTo: unknown;
  /**
   * Machine-readable: `invalid` (malformed), `unsupported` (no scheme pays it), `policy` (the spend policy refuses it).
   */
  readonly code: "invalid" | "unsupported" | "policy";
  readonly reason: string;
}

/** The constructor of an error class that takes a message and options (every class here but two). */
export interface X402ErrorClass<C extends X402ErrorCode, D extends object> {
  new (message: string, options?: X402ErrorOptions<D>): X402Error<C, D>;
  readonly prototype: X402Error<C, D>;
}

/** The options, a wallet or the policy given to x402-pay are unusable. Thrown at construction where possible. */
export class InvalidConfigError extends X402Error<"INVALID_CONFIG", { readonly option?: string }> {
  constructor(message: string, options?: X402ErrorOptions<{ readonly option?: string }>) {
    super({ name: "InvalidConfigError", code: "INVALID_CONFIG", phase: "config" }, message, options);
  }
}

/**
 * A 402 arrived but its challenge is malformed: bad base64, not JSON, wrong version, bad shape, too large or too deep.
 */
export class InvalidChallengeError extends X402Error<"INVALID_CHALLENGE", RequestDetails> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails>) {
    super({ name: "InvalidChallengeError", code: "INVALID_CHALLENGE", phase: "challenge" }, message, options);
  }
}

/** A 402 arrived with no challenge that can be read (an HTML paywall; CORS hiding PAYMENT-REQUIRED). */
export class ChallengeNotFoundError extends X402Error<"CHALLENGE_NOT_FOUND", RequestDetails> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails>) {
    super({ name: "ChallengeNotFoundError", code: "CHALLENGE_NOT_FOUND", phase: "challenge" }, message, options);
  }
}

/** How many rejected requirements a message names before it only counts the rest. */
const NAMED_IN_MESSAGE = 3;

/** No offered requirement can be paid. `details.rejected` lists every one with its reason. */
export class NoPayableRequirementError extends X402Error<
  "NO_PAYABLE_REQUIREMENT",
  RequestDetails & { readonly rejected: readonly RejectedRequirement[] }
> {
  declare readonly rejected: readonly RejectedRequirement[];
  constructor(rejected: readonly RejectedRequirement[], options: X402ErrorOptions<RequestDetails> = {}) {
    // However long the list, the message names the first few and counts the rest.
    const named = rejected.slice(0, NAMED_IN_MESSAGE).map((r) => {
      const what =
        `#${r.index} ${clip(r.scheme, 66)} on ${clip(r.network, 66)} (${clip(r.amount, 66)} of ` +
        `${clip(r.asset, 66)})`;
      return `${what}: ${clip(r.reason)}`;
    });
    const more = rejected.length - named.length;
    const summary =
      rejected.length === 0
        ? "the server offered no payment requirements"
        : named.join("; ") + (more > 0 ? `; and ${more} more` : "");
    super(
      { name: "NoPayableRequirementError", code: "NO_PAYABLE_REQUIREMENT", phase: "select" },
      `Nothing payable: ${summary}.`,
      {
        ...options,
        details: { ...options.details, rejected },
      },
    );
    this.rejected = rejected;
  }
}

/** A value from a server, shortened for a message (the whole of it stays in `details`). */
export function clip(value: unknown, max = 200): string {
  const s = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** `selectRequirement` or `onBeforePayment` refused (or threw), so nothing was signed. */
export class PaymentRefusedError extends X402Error<"PAYMENT_REFUSED", RequestDetails> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails>) {
    super({ name: "PaymentRefusedError", code: "PAYMENT_REFUSED", phase: "select" }, message, options);
  }
}

/**
 * The wallet's user declined to sign (EIP-1193 code 4001, viem's `UserRejectedRequestError`, ...). Nothing was sent.
 */
export class UserRejectedError extends X402Error<"USER_REJECTED", RequestDetails> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails>) {
    super({ name: "UserRejectedError", code: "USER_REJECTED", phase: "sign" }, message, options);
  }
}

/** The wallet failed to sign, or the requirement could not be turned into a payload. Nothing was sent. */
export class SigningError extends X402Error<"SIGNING_FAILED", RequestDetails> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails>) {
    super({ name: "SigningError", code: "SIGNING_FAILED", phase: "sign" }, message, options);
  }
}

/** A chain read (Solana RPC) failed or timed out while building the payment. Nothing was sent. */
export class RpcError extends X402Error<
  "RPC_FAILED",
  RequestDetails & { readonly rpcUrl?: string; readonly rpcMethod: string }
> {
  constructor(
    message: string,
    options?: X402ErrorOptions<RequestDetails & { readonly rpcUrl?: string; readonly rpcMethod: string }>,
  ) {
    super({ name: "RpcError", code: "RPC_FAILED", phase: "sign" }, message, options);
  }
}

/**
 * The chosen requirement turned out to be unpayable while building the payment (the mint does not
 * exist, a wallet changed the transaction in a way the facilitator refuses). Nothing was sent.
 */
export class UnpayableRequirementError extends X402Error<"UNPAYABLE_REQUIREMENT", RequestDetails> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails>) {
    super({ name: "UnpayableRequirementError", code: "UNPAYABLE_REQUIREMENT", phase: "sign" }, message, options);
  }
}

/** A request that already carried a payment header got a 402; x402-pay never signs a second time. */
export class PaymentAlreadyAttemptedError extends X402Error<
  "PAYMENT_ALREADY_ATTEMPTED",
  RequestDetails & { readonly reason?: string }
> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails & { readonly reason?: string }>) {
    super({ name: "PaymentAlreadyAttemptedError", code: "PAYMENT_ALREADY_ATTEMPTED", phase: "send" }, message, options);
  }
}

/**
 * The request cannot be sent again exactly as it was (a stream body; a redirect the browser hides). Nothing was signed.
 */
export class BodyNotReplayableError extends X402Error<"BODY_NOT_REPLAYABLE", RequestDetails> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails>) {
    super({ name: "BodyNotReplayableError", code: "BODY_NOT_REPLAYABLE", phase: "send" }, message, options);
  }
}

/**
 * The request's AbortSignal fired before the paid request left: nothing was sent, nothing can settle.
 * Its `name` is `"AbortError"`, like fetch's; `cause` is the signal's reason.
 */
export class PaymentAbortedError extends X402Error<"ABORTED", RequestDetails> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails>) {
    super({ name: "AbortError", code: "ABORTED", phase: "send" }, message, options);
  }
}

/**
 * The browser refused to send the paid request (a CORS preflight that does not allow the payment header). Nothing was
 * sent.
 */
export class PaymentNotSentError extends X402Error<"PAYMENT_NOT_SENT", PaymentDetails> {
  constructor(message: string, options?: X402ErrorOptions<PaymentDetails>) {
    super({ name: "PaymentNotSentError", code: "PAYMENT_NOT_SENT", phase: "send" }, message, options);
  }
}

export interface RejectedDetails extends PaymentDetails {
  /** The server's reason code, as sent (e.g. `invalid_exact_evm_insufficient_balance`). */
  readonly reason: string;
  readonly status: number;
  /** The decoded PAYMENT-RESPONSE of a failed settlement, if the server sent one. */
  readonly settlement?: Readonly<Record<string, unknown>>;
}

/** The server refused the signed payment (a 402 or 412 after paying, or a failed settlement). Nothing was charged. */
export class PaymentRejectedError extends X402Error<"PAYMENT_REJECTED", RejectedDetails> {
  declare readonly reason: string;
  constructor(sentence: string, options: X402ErrorOptions<RejectedDetails>) {
    super({ name: "PaymentRejectedError", code: "PAYMENT_REJECTED", phase: "settle" }, sentence, options);
    this.reason = options.details!.reason;
  }
}

/**
 * After the server's 412, also the payment and its answer (`reason`, `status`); before signing, the `allowance` read.
 */
export interface Permit2AllowanceDetails extends Partial<RejectedDetails> {
  /** The token (`asset`) Permit2 may not yet move. */
  readonly token: string;
  /** The payer, who must approve Permit2 once. */
  readonly owner: string;
  /** Permit2, the contract to approve. */
  readonly spender: string;
  readonly network: string;
  /** Base units the allowance must at least be. */
  readonly amount: string;
  /** The allowance x402-pay read from the chain, when it checked before signing. */
  readonly allowance?: string;
}

/**
 * Permit2 may not move the token for the payer: the facilitator said so (HTTP 412,
 * `permit2_allowance_required`; nothing was charged), or x402-pay read the allowance before signing
 * and nothing the server sponsors could cover it (nothing was signed). Approve once, with
 * `permit2ApprovalTransaction` from `x402-pay/evm`, then retry.
 */
/** What to do about a PERMIT2_ALLOWANCE_REQUIRED, said the same wherever it is found. */
export const PERMIT2_APPROVAL_HINT =
  "Send permit2ApprovalTransaction({ token, amount }) from x402-pay/evm once from that wallet, then retry.";

export class Permit2AllowanceError extends X402Error<"PERMIT2_ALLOWANCE_REQUIRED", Permit2AllowanceDetails> {
  constructor(message: string, options?: X402ErrorOptions<Permit2AllowanceDetails>) {
    super({ name: "Permit2AllowanceError", code: "PERMIT2_ALLOWANCE_REQUIRED", phase: "settle" }, message, options);
  }
}

export interface PaymentIdConflictDetails extends PaymentDetails {
  /** The payment-identifier id the server already holds with another payment. */
  readonly paymentId: string;
  readonly status: number;
}

/**
 * The server answered 409 to the payment: it already holds another payment under the same
 * payment-identifier id (a caller-supplied id used twice, or a payment signed again under its id), and
 * refused this one, so nothing was charged for it. The earlier payment under that id may have been:
 * resend its own header (`x402: resendPayment(error)`) to be served from the server's idempotency cache.
 */
export class PaymentIdConflictError extends X402Error<"PAYMENT_ID_CONFLICT", PaymentIdConflictDetails> {
  constructor(message: string, options?: X402ErrorOptions<PaymentIdConflictDetails>) {
    super({ name: "PaymentIdConflictError", code: "PAYMENT_ID_CONFLICT", phase: "settle" }, message, options);
  }
}

export interface OutcomeUnknownDetails extends PaymentDetails {
  /** The status of the paid response, when one came. */
  readonly status?: number;
  /** The server's reason, when it refused the payment after it had been sent more than once. */
  readonly reason?: string;
  /**
   * True when the identical signed header was sent more than once (payment-identifier's idempotent retry, or
   * `resendPayment`).
   */
  readonly resent?: boolean;
  /** The decoded PAYMENT-RESPONSE, when one came (a successful settlement beside a refusal). */
  readonly settlement?: Readonly<Record<string, unknown>>;
  /** The receipt of the paid response (a `PaymentReceipt`), when one came: a 4xx/5xx without a settlement. */
  readonly receipt?: {
    readonly url: string;
    readonly status: number;
    readonly settled: boolean;
    readonly amount: string;
    readonly asset: string;
    readonly payTo: string;
    readonly payer: string;
  };
}

/**
 * The signed payment left, but how it ended is unknown: no answer (network failure, abort while in
 * flight), an error status without a settlement report, or a refusal of a payment sent twice.
 * `details.paymentHeader` holds the exact signed header to reconcile or resend (`x402: resendPayment(error)`):
 * resending it cannot pay twice (the nonce is one-time).
 */
export class PaymentOutcomeUnknownError extends X402Error<"PAYMENT_OUTCOME_UNKNOWN", OutcomeUnknownDetails> {
  constructor(message: string, options?: X402ErrorOptions<OutcomeUnknownDetails>) {
    super({ name: "PaymentOutcomeUnknownError", code: "PAYMENT_OUTCOME_UNKNOWN", phase: "send" }, message, options);
  }
}

export interface PendingDetails extends PaymentDetails {
  /** The transaction the server says was broadcast: it may still land. */
  readonly transaction: string;
  /** The CAIP-2 network it was broadcast on. */
  readonly network: string;
  /** The server's reason code, as sent (`settlement_pending`, or a failure that names a transaction). */
  readonly reason: string;
  /** The status of the paid response. */
  readonly status: number;
  /** The decoded PAYMENT-RESPONSE. */
  readonly settlement: Readonly<Record<string, unknown>>;
}

/**
 * The server says the settlement is under way: a transaction was broadcast and not yet confirmed
 * (`settlement_pending`), or it reports a failure that names a broadcast transaction. Money may still
 * move: the amount stays counted by budgets, and the ledger records it as `pending` with the hash.
 * `checkSettlement(client, error)` looks the transaction up on the chain and says whether it settled.
 */
export class PaymentPendingError extends X402Error<"PAYMENT_PENDING", PendingDetails> {
  constructor(message: string, options?: X402ErrorOptions<PendingDetails>) {
    super({ name: "PaymentPendingError", code: "PAYMENT_PENDING", phase: "settle" }, message, options);
  }
}

/** Why a sign-in-with-x challenge was refused before anything was signed (`SignInRefusedError.reason`). */
export type SignInRefusal =
  /** `domain` is not the request's host (with or without its port): a proof for another site. */
  | "domain_mismatch"
  /** `uri` is not on the request's origin. */
  | "uri_mismatch"
  /** `issuedAt` is later than now, beyond the allowed clock skew. */
  | "issued_in_future"
  /** `issuedAt` is older than the servers accept (a replayed or cached 402). */
  | "issued_too_long_ago"
  /** `expirationTime` has passed. */
  | "expired"
  /** `notBefore` is still ahead. */
  | "not_yet_valid"
  /** `nonce` is not the 8 or more letters and digits EIP-4361 requires. */
  | "weak_nonce"
  /** The declaration lacks a field or has one of the wrong type or format. */
  | "malformed"
  /** On a route with no payment option: no declared chain that a registered wallet can sign for. */
  | "unsupported_chain";

export interface SignInRefusedDetails extends RequestDetails {
  readonly reason: SignInRefusal;
}

/**
 * A sign-in-with-x challenge x402-pay will not sign: bound to another origin (the phishing guard),
 * stale, expired, with a weak nonce or malformed; or, on a route with no payment option, one no
 * registered wallet can sign. Nothing was signed and nothing was paid. `details.reason` says which.
 */
export class SignInRefusedError extends X402Error<"SIGN_IN_REFUSED", SignInRefusedDetails> {
  constructor(message: string, options?: X402ErrorOptions<SignInRefusedDetails>) {
    super({ name: "SignInRefusedError", code: "SIGN_IN_REFUSED", phase: "challenge" }, message, options);
  }
}

/** A budget's state when a payment did not fit: USD amounts as `"$4.99"`. */
export interface BudgetExceededDetails extends RequestDetails {
  /** The budget's name (`client/day` unless named). */
  readonly budget: string;
  readonly limit: string;
  /** Committed spend within the budget's window, and reservations of payments still under way. */
  readonly spent: string;
  readonly reserved: string;
  /** What this payment would have added (for `upto`, its maximum). */
  readonly amount: string;
}

/**
 * The payment does not fit a cumulative budget (`createX402Client({ budget })`). Refused before any wallet prompt:
 * nothing was signed.
 */
export class BudgetExceededError extends X402Error<"BUDGET_EXCEEDED", BudgetExceededDetails> {
  constructor(message: string, options?: X402ErrorOptions<BudgetExceededDetails>) {
    super({ name: "BudgetExceededError", code: "BUDGET_EXCEEDED", phase: "select" }, message, options);
  }
}

/**
 * A budget's store failed or did not answer in time (Redis down): budgets fail closed, so nothing was signed or paid.
 */
export class BudgetUnavailableError extends X402Error<
  "BUDGET_UNAVAILABLE",
  RequestDetails & { readonly budget: string }
> {
  constructor(message: string, options?: X402ErrorOptions<RequestDetails & { readonly budget: string }>) {
    super({ name: "BudgetUnavailableError", code: "BUDGET_UNAVAILABLE", phase: "select" }, message, options);
  }
}

/**
 * What a failed discovery read names: the URL, the HTTP status if one came, and a bounded, sanitised excerpt of the
 * answer.
 */
export interface DiscoveryFailedDetails {
  readonly url: string;
  readonly status?: number;
  readonly excerpt?: string;
}

/**
 * A facilitator's discovery endpoint failed: unreachable, too slow, too large, not 2xx, or not a discovery page.
 * Nothing is paid by discovering.
 */
export class DiscoveryFailedError extends X402Error<"DISCOVERY_FAILED", DiscoveryFailedDetails> {
  constructor(message: string, options?: X402ErrorOptions<DiscoveryFailedDetails>) {
    super({ name: "DiscoveryFailedError", code: "DISCOVERY_FAILED", phase: "discover" }, message, options);
  }
}

export interface ChannelDisputedDetails extends RequestDetails {
  /** The batch-settlement channel (its id, lower-case hex). */
  readonly channel: string;
  /** CAIP-2. */
  readonly network: string;
  /** What did not hold up. */
  readonly reason: string;
}

/**
 * A seller's account of a batch-settlement channel did not hold up (a charge beyond what we signed, a voucher that is
 * not ours, a state the chain contradicts): x402-pay signs no more vouchers on it. Nothing more was paid; refund or
 * withdraw what the channel holds.
 */
export class ChannelDisputedError extends X402Error<"CHANNEL_DISPUTED", ChannelDisputedDetails> {
  constructor(message: string, options?: X402ErrorOptions<ChannelDisputedDetails>) {
    super({ name: "ChannelDisputedError", code: "CHANNEL_DISPUTED", phase: "settle" }, message, options);
  }
}

/** Every error x402-pay throws; `switch (error.code)` narrows to one of them. */
export type AnyX402Error =
  | InvalidConfigError
  | InvalidChallengeError
  | ChallengeNotFoundError
  | NoPayableRequirementError
  | PaymentRefusedError
  | UserRejectedError
  | SigningError
  | RpcError
  | UnpayableRequirementError
  | PaymentAlreadyAttemptedError
  | BodyNotReplayableError
  | PaymentAbortedError
  | PaymentNotSentError
  | PaymentRejectedError
  | Permit2AllowanceError
  | PaymentIdConflictError
  | PaymentOutcomeUnknownError
  | PaymentPendingError
  | SignInRefusedError
  | BudgetExceededError
  | BudgetUnavailableError
  | DiscoveryFailedError
  | ChannelDisputedError;
