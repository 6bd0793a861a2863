/** A request being paid for, what a payment pays, and how it ended: what hooks, plug-ins and receipts see. */
import type { AnyX402Error } from "../errors";
import type { KnownAsset, PaymentChallenge, PaymentRequirement, SettleResponse } from "../protocol";
import type { ChannelPaymentKind, ChannelSnapshot, SessionRequest } from "./scheme";

/** The request being paid for, as the handshake sees it (after any redirect of the first request). */
export interface X402Request {
  readonly url: string;
  readonly method: string;
  /** The caller's AbortSignal: every phase (hooks, wallet, RPC reads, sending) stops when it fires. */
  readonly signal?: AbortSignal | undefined;
  /** The caller's payment-identifier id for this request (`x402: { paymentId }`); default: a fresh one. */
  readonly paymentId?: string | undefined;
  /** A door's own rules for this request (an MCP tool's allow-lists, cap and approval), on top of the client's. */
  readonly guard?: RequestGuard | undefined;
  /** A request a scheme's state builds (`x402: { session }`, a refund): it answers the 402 instead of a payment. */
  readonly session?: SessionRequest | undefined;
}

/** Rules a door adds to one request: checked with the spend policy, and asked after `onBeforePayment`. */
export interface RequestGuard {
  /** What refusals name as the approver, e.g. `"onPaymentRequested"`. */
  readonly name?: string | undefined;
  /**
   * Why this requirement is refused for this request (a `policy` rejection), else `undefined`. `asset`: its decimals
   * and symbol, when known.
   */
  check?(requirement: PaymentRequirement, asset: KnownAsset | undefined): string | undefined;
  /**
   * Last word before signing, after the client's `onBeforePayment`: as it, `false` or `{ abort: true }` refuses;
   * throwing refuses.
   */
  approve?(payment: PaymentSnapshot): unknown;
}

/** What a payment pays, as it is described before signing (a snapshot) and after (a receipt). */
export interface PaymentTerms {
  readonly x402Version: 1 | 2;
  /** The URL paid for and the method of the request. */
  readonly url: string;
  readonly method: string;
  /** The requirement, verbatim as offered. */
  readonly requirement: Readonly<Record<string, unknown>>;
  readonly scheme: string;
  readonly network: string;
  /** Atomic amount; for `upto` and escrowed payments, the most the server may settle (what is at risk). */
  readonly amount: string;
  /** True for `upto` and escrowed payments (auth-capture): the server settles what it charges, at most `amount`. */
  readonly upTo: boolean;
  /** `"0.001 USDC"` (`"up to 5 USDC"` for `upto`), for assets of known decimals. */
  readonly displayAmount: string | undefined;
  readonly asset: string;
  readonly payTo: string;
  readonly payer: string;
  /**
   * batch-settlement: money this payment moves from the wallet into its channel (base units), a deposit or top-up,
   * beside the call's price `amount`, which the channel pays. Absent when nothing moves but the price.
   */
  readonly deposit?: string | undefined;
  /** batch-settlement: what the payment does to its channel (`deposit`, `top-up`, `voucher`). */
  readonly kind?: ChannelPaymentKind | undefined;
  /** How the seller takes the money: after delivery, before it, or held in escrow ([PaymentFlow]). */
  readonly flow: PaymentFlow;
  /** auth-capture: who takes the money out of the escrow, until when, for what fee, and until when it is refundable. */
  readonly escrow?: EscrowTerms | undefined;
}

/**
 * What a payment through an escrow (auth-capture) gives the buyer: the money is held by `contract`; `capturer` may
 * take up to the amount for the payee until `captureDeadline` (after it, what it did not take can be reclaimed by the
 * payer), and may refund what it took until `refundableUntil`. A capture pays a fee of `fees.minBps` to `fees.maxBps`
 * of it to `fees.recipient`, out of the payee's share.
 */
export interface EscrowTerms {
  /** The escrow contract (the same address on every chain). */
  readonly contract: string;
  /** The seller's operator (`extra.captureAuthorizer`): it alone captures, voids and refunds. */
  readonly capturer: string;
  /** Unix seconds: the last moment a capture can happen. */
  readonly captureDeadline: number;
  /** Unix seconds: until then, what was captured can still be refunded. */
  readonly refundableUntil: number;
  /** The fee taken from a capture, in basis points of it, and who receives it. */
  readonly fees: { readonly minBps: number; readonly maxBps: number; readonly recipient: string };
}

/**
 * How the seller takes the money (`extra.paymentFlow`): `authorization` (the signed payment is settled after the
 * resource is delivered), `upfront` (settled before it is delivered), `escrow` (held on chain before, captured after,
 * the rest refundable).
 */
export type PaymentFlow = "authorization" | "upfront" | "escrow";

/** Every payment flow, in the order x402-pay prefers them when a seller offers several. */
export const PAYMENT_FLOWS: readonly PaymentFlow[] = Object.freeze(["authorization", "escrow", "upfront"]);

/** What `onBeforePayment` sees: a frozen copy, so a hook cannot change what gets signed. */
export interface PaymentSnapshot extends PaymentTerms {
  readonly resource: unknown;
  readonly extensions: unknown;
}

/** What was paid for a response: the terms, the paid response's status, and the server's settlement. */
export interface PaymentReceipt extends PaymentTerms {
  /** HTTP status of the paid response. */
  readonly status: number;
  /** True only when the server reported a successful settlement (PAYMENT-RESPONSE with `success: true`). */
  readonly settled: boolean;
  /**
   * True when the server reported the settlement under way (`settlement_pending`, or a failure naming a
   * transaction): the money may still move. `transaction` names it; `checkSettlement(client, receipt)` asks the chain.
   */
  readonly pending: boolean;
  /** The decoded PAYMENT-RESPONSE (or X-PAYMENT-RESPONSE); `undefined` if the server sent none readable. */
  readonly settlement: SettleResponse | undefined;
  /** Settlement transaction, when the server reported one. */
  readonly transaction: string | undefined;
  /** Base units the server reports it settled (the settlement's `amount`); for `upto`, at most `amount`. */
  readonly settledAmount: string | undefined;
  /** What plug-ins read from the settlement, by key (`offer-receipt`: the checked signed receipt). */
  readonly extensions: Readonly<Record<string, unknown>>;
  /** batch-settlement: the channel after this call (its balance, and what was charged in all). */
  readonly channel?: ChannelSnapshot | undefined;
}

/**
 * Money come back to the wallet, as plug-ins are told of it: a batch-settlement channel's refund, or an auth-capture
 * payment the seller's operator refunded or voided (`channel`: the escrow's payment hash it reported).
 */
export interface ChannelRefund {
  /** The seller asked. */
  readonly url: string;
  readonly scheme: string;
  /** CAIP-2. */
  readonly network: string;
  readonly asset: string;
  readonly payTo: string;
  readonly payer: string;
  /** The channel's id. */
  readonly channel: string;
  /** What came back to the wallet, in base units. */
  readonly amount: string;
  /** What the channel still holds, in base units. */
  readonly balance: string;
  readonly transaction: string | undefined;
}

/** A payment that was signed: its terms and the requirement it pays (CAIP-2 network in `caip2`). */
export interface SignedPayment {
  readonly terms: PaymentTerms;
  readonly requirement: PaymentRequirement;
}

/** How one payment attempt ended: what outcome hooks and plug-ins observe. */
export type PaymentOutcome =
  | {
      readonly settled: true;
      readonly receipt: PaymentReceipt;
      readonly challenge: PaymentChallenge;
      readonly request: X402Request;
      readonly payment?: SignedPayment | undefined;
      /** The payment attempt's id (`ReserveContext.attempt`, a journal entry's id): a ledger names it in its record. */
      readonly attempt?: string | undefined;
    }
  | {
      readonly settled: false;
      /** `code` says which: rejected, pending, outcome unknown, aborted, or refused before signing. */
      readonly error: AnyX402Error;
      readonly challenge: PaymentChallenge | undefined;
      readonly request: X402Request;
      /** What was signed, when anything was. */
      readonly payment?: SignedPayment | undefined;
      /** The payment attempt's id, once one was made. */
      readonly attempt?: string | undefined;
    };
