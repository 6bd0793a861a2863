import type { AnyX402Error } from "../errors";
import type { KnownAsset, PaymentChallenge, PaymentRequirement, SchemePayload, SettleResponse } from "../protocol";

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
}

/** Rules a door adds to one request: checked with the spend policy, and asked after `onBeforePayment`. */
export interface RequestGuard {
  /** What refusals name as the approver, e.g. `"onPaymentRequested"`. */
  readonly name?: string | undefined;
  /** Why this requirement is refused for this request (a `policy` rejection), else `undefined`. `asset`: its decimals and symbol, when known. */
  check?(requirement: PaymentRequirement, asset: KnownAsset | undefined): string | undefined;
  /** Last word before signing, after the client's `onBeforePayment`: as it, `false` or `{ abort: true }` refuses; throwing refuses. */
  approve?(payment: Readonly<PaymentTerms> & { readonly resource: unknown; readonly extensions: unknown }): unknown;
}

/** What a scheme gets besides the requirement when asked to build a payment. */
export interface PaymentContext {
  readonly challenge: PaymentChallenge;
  readonly request: X402Request;
  /** The request's signal, for the scheme's own reads (RPC); the wallet call is raced against it too. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * A way to pay: one scheme (`exact`, `upto`) on the networks it serves, with one wallet.
 * Schemes are values; `exactEvm({ signer })` returns one.
 */
export interface PaymentScheme {
  /** The `scheme` field this pays, e.g. `"exact"`. */
  readonly scheme: string;
  /** Network patterns served, CAIP-2 with `*` wildcards: `["eip155:*"]`. v1 names are matched by their CAIP-2 id. */
  readonly networks: readonly string[];
  /** Protocol versions served. */
  readonly x402Versions: readonly (1 | 2)[];
  /** The address that pays. */
  readonly payer: string;
  /** Protocol v1 network names this family knows, to CAIP-2 (`{ "base-sepolia": "eip155:84532" }`). */
  readonly v1Networks?: Readonly<Record<string, string>>;
  /** Stablecoins of this family whose decimals are known, so the spend policy can price them. */
  readonly knownAssets?: readonly KnownAsset[];
  /** Why this scheme cannot pay a requirement it matches (bad address, missing domain...), else `undefined`. */
  check(requirement: PaymentRequirement): string | undefined;
  /** Signs and returns the scheme payload. Called only after `check` passed, policy and hooks approved. */
  createPayload(requirement: PaymentRequirement, context: PaymentContext): Promise<SchemePayload>;
  /**
   * Looks a payment up on its chain (a pending settlement, an unknown outcome): did the money move?
   * Present when the scheme was given a way to (`exactEvm({ settlement: evmSettlement({ rpc }) })`, `exactSvm({ settlement: svmSettlement() })`).
   */
  checkSettlement?(query: SettlementQuery, signal?: AbortSignal): Promise<SettlementStatus>;
}

/** A payment to look up on its chain: what an outcome's error or a ledger record says of it. */
export interface SettlementQuery {
  readonly scheme: string;
  /** CAIP-2. */
  readonly network: string;
  /** The transaction the server named, if any. */
  readonly transaction: string | undefined;
  readonly asset: string;
  readonly payTo: string;
  readonly payer: string;
  /** Atomic; for `upto`, the most the server may settle. */
  readonly amount: string;
  /** The signed PaymentPayload when it is known (an error's `details.payload`): its authorization is looked up too. */
  readonly payload?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * What the chain says of a payment: `settled` (the money moved: `amount`, in base units, when it is
 * known), `failed` (it did not, and can no longer move through this payment), or `pending` (not yet:
 * it may still move). `reason` says why.
 */
export type SettlementStatus =
  | { readonly state: "settled"; readonly transaction: string | undefined; readonly amount: string | undefined; readonly reason: string }
  | { readonly state: "failed" | "pending"; readonly transaction: string | undefined; readonly reason: string };

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
  /** Atomic amount; for `upto`, the most the server may settle (what is at risk). */
  readonly amount: string;
  /** True for `upto`: the server settles what was used, at most `amount`. */
  readonly upTo: boolean;
  /** `"0.001 USDC"` (`"up to 5 USDC"` for `upto`), for assets of known decimals. */
  readonly displayAmount: string | undefined;
  readonly asset: string;
  readonly payTo: string;
  readonly payer: string;
}

/** What was paid for a response: the terms, the paid response's status, and the server's settlement. */
export interface PaymentReceipt extends PaymentTerms {
  /** HTTP status of the paid response. */
  readonly status: number;
  /** True only when the server reported a successful settlement (PAYMENT-RESPONSE with `success: true`). */
  readonly settled: boolean;
  /**
   * True when the server reported the settlement under way (`settlement_pending`, or a failure naming a
   * transaction): the money may still move. `transaction` names it; `client.checkSettlement` asks the chain.
   */
  readonly pending: boolean;
  /** The decoded PAYMENT-RESPONSE (or X-PAYMENT-RESPONSE); `undefined` if the server sent none readable. */
  readonly settlement: SettleResponse | undefined;
  /** Settlement transaction, when the server reported one. */
  readonly transaction: string | undefined;
  /** Base units the server reports it settled (the settlement's `amount`); for `upto`, at most `amount`. */
  readonly settledAmount: string | undefined;
  /** What extensions read from the settlement, by key (`offer-receipt`: the checked signed receipt). */
  readonly extensions: Readonly<Record<string, unknown>>;
}

/** How one payment attempt ended: what outcome hooks and extensions observe. */
export type PaymentOutcome =
  | { readonly settled: true; readonly receipt: PaymentReceipt; readonly challenge: PaymentChallenge; readonly request: X402Request }
  | {
      readonly settled: false;
      /** `code` says which: rejected, outcome unknown, aborted, or refused before signing. */
      readonly error: AnyX402Error;
      readonly challenge: PaymentChallenge | undefined;
      readonly request: X402Request;
    };

/** What an extension step sees: its own declaration in the 402, the challenge and the request. */
export interface ExtensionContext {
  /** `challenge.extensions[key]`, as the server declared it. */
  readonly declaration: unknown;
  readonly challenge: PaymentChallenge;
  readonly request: X402Request;
  readonly signal?: AbortSignal | undefined;
}

/** A requirement an extension refuses before the spend policy sees it: its index in `accepts`, and why. */
export interface RequirementReview {
  readonly index: number;
  /** `invalid`: what the server sent for it does not hold up (a signed offer that fails); `policy`: the extension's options refuse it. */
  readonly code: "invalid" | "policy";
  readonly reason: string;
}

/** What `describeSettlement` sees besides the declaration: the settlement the paid response reported. */
export interface SettlementContext extends ExtensionContext {
  readonly settlement: SettleResponse;
}

/** What `enrichPayload` sees besides the declaration: the requirement being paid and who pays it. */
export interface EnrichContext extends ExtensionContext {
  readonly requirement: PaymentRequirement;
  readonly payer: string;
  /** What the scheme already put in `extensions[key]`, if anything. */
  readonly current: Readonly<Record<string, unknown>> | undefined;
}

type MaybePromise<T> = T | Promise<T>;

/**
 * A plug-in serving one key of a 402's `extensions` object. Every step is optional and runs only
 * when the 402 declares `key`.
 */
export interface X402Extension {
  /** The key in the 402's `extensions`, e.g. `"sign-in-with-x"`. */
  readonly key: string;
  /**
   * Before paying: request headers to try instead (a sign-in proof). The request is sent once more
   * with them; a payment follows only if the server still answers 402. At most one extension's
   * headers are tried per request.
   */
  beforePayment?(context: ExtensionContext): MaybePromise<Record<string, string> | undefined | void>;
  /** Before choosing: requirements to refuse (a signed offer that fails), each with its reason. */
  reviewRequirements?(context: ExtensionContext): MaybePromise<readonly RequirementReview[] | undefined | void>;
  /** After a reported settlement: what the receipt says under `extensions[key]` (a checked signed receipt). */
  describeSettlement?(context: SettlementContext): MaybePromise<unknown>;
  /**
   * Adds to the payload's `extensions[key]`: the fields returned are added to the server's declaration,
   * whose own fields stay as declared (a declared list gives way only to one that keeps every entry).
   */
  enrichPayload?(context: EnrichContext): MaybePromise<Record<string, unknown> | undefined | void>;
  /**
   * `enrichPayload` runs for v2 payments whose 402 does not declare `key` too (its `declaration` is then
   * `undefined`): data the client sends on its own account, such as builder-code service codes.
   */
  readonly enrichUndeclared?: boolean | undefined;
  /** Observes how the payment ended. Errors it throws are ignored. */
  onOutcome?(outcome: PaymentOutcome): MaybePromise<void>;
}
