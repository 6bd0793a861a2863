/**
 * The stores plug-ins keep state in: small async interfaces, a memory default each, Redis and file adapters elsewhere.
 */
import type { EscrowTerms } from "./payment";

// ---------------------------------------------------------------- budgets

/** One budget for one scope value: the store's key, its limit and its window. Amounts are micro-dollars (10^-6 USD). */
export interface BudgetEntry {
  /** Names the budget and the scope value (`daily:origin:https://api.example.com`); stores prefix it. */
  readonly key: string;
  /** The limit, in micro-dollars. */
  readonly limit: number;
  /** The rolling window in milliseconds; `undefined`: the whole life of the store. */
  readonly windowMs: number | undefined;
}

/** What a budget holds: committed spend and open reservations, in micro-dollars, within its window. */
export interface BudgetUsage {
  readonly spent: number;
  readonly reserved: number;
}

/**
 * A budget store. Each call concerns one entry and is atomic: under any concurrency, and across
 * processes for a shared store, `reserve` never lets spent + reserved pass the limit. A reservation
 * and a commit count from the time of the reservation until its window has passed; without a window,
 * for good. A store may read its own clock (Redis's), so that a fleet agrees on the time.
 */
export interface BudgetStore {
  /**
   * Reserves `amount` under `id` if it fits: spent + reserved + amount ≤ limit. Returns whether it did, and the usage
   * before it.
   */
  reserve(entry: BudgetEntry, id: string, amount: number): Promise<BudgetUsage & { readonly ok: boolean }>;
  /** Turns reservation `id` into spend of `amount` (at most what was reserved). Unknown ids (expired) are ignored. */
  commit(entry: BudgetEntry, id: string, amount: number): Promise<void>;
  /** Drops reservation `id`. Unknown ids are ignored. */
  release(entry: BudgetEntry, id: string): Promise<void>;
  /** What the entry holds now. */
  usage(entry: BudgetEntry): Promise<BudgetUsage>;
  /**
   * Optional, for channels (batch-settlement): changes standing hold `id`, money moved into a channel and not yet
   * spent. A hold counts as reserved, and it does not pass with the window: it lasts until spent or let go. In one
   * atomic step: adds `change.add` if it fits (spent + reserved + add ≤ limit; if not, nothing changes and `ok` is
   * false), moves `change.spend` of the hold into spend as of now (spend the hold lacks is counted all the same: never
   * less than was paid), and lets `change.release` go (`"all"`: the whole hold). Returns the usage and the hold
   * before the call. Without it a budget holds a deposit only while its own payment is under way.
   */
  hold?(entry: BudgetEntry, id: string, change: HoldChange): Promise<BudgetUsage & HoldAnswer>;
}

/** What `BudgetStore.hold` does to a hold, in micro-dollars; each part absent or 0 does nothing. */
export interface HoldChange {
  readonly add?: number | undefined;
  readonly spend?: number | undefined;
  readonly release?: number | "all" | undefined;
  /**
   * The payment attempt the change is for: an attempt adds to a hold once, and ends on it once (its call's spend, or
   * letting go of its deposit, only if it added it), so that processes that end one attempt at once, or again after a
   * kill, end it once, and one killed before its deposit was held lets nothing go.
   */
  readonly attempt?: string | undefined;
}

/** What `BudgetStore.hold` answers: whether `add` fit, and what the hold held before the call. */
export interface HoldAnswer {
  readonly ok: boolean;
  readonly held: number;
}

// ---------------------------------------------------------------- the receipts ledger

/**
 * How a payment attempt ended: `settled` (the server reported the settlement), `rejected` (the server
 * refused the payment: nothing was charged), `unknown` (it may have settled: to reconcile), `pending`
 * (the server says its settlement transaction, in `transaction`, is not yet confirmed: to reconcile),
 * `refused` (nothing was sent: the policy, a budget, a hook, the wallet or the network stopped it first).
 */
export type LedgerOutcome = "settled" | "rejected" | "unknown" | "pending" | "refused";

/** One outcome. Amounts are atomic integer strings of `asset`; fields of a payment never chosen are absent. */
export interface LedgerRecord {
  /** Unique per record. */
  readonly id: string;
  /** ISO 8601 time of the outcome. */
  readonly time: string;
  readonly outcome: LedgerOutcome;
  /** The error code, for anything but `settled`. */
  readonly code?: string | undefined;
  readonly url: string;
  readonly method: string;
  readonly scheme?: string | undefined;
  /** CAIP-2 where known (v1 names translated), else as offered. */
  readonly network?: string | undefined;
  readonly asset?: string | undefined;
  /** What was signed for: the price, or for `upto` the maximum. */
  readonly amount?: string | undefined;
  /** What the server reported it settled. */
  readonly settledAmount?: string | undefined;
  readonly transaction?: string | undefined;
  readonly payer?: string | undefined;
  readonly payee?: string | undefined;
  /**
   * The payment attempt recorded (`ReserveContext.attempt`, a journal entry's id): recovery records a settled attempt
   * the ledger lacks, and never one it has.
   */
  readonly attempt?: string | undefined;
  /** A reconciliation: the id of the `unknown` record whose outcome this one states. */
  readonly reconciles?: string | undefined;
  /**
   * batch-settlement: what the record is to its channel: a `deposit` (opening it), a `top-up`, a call paid by
   * `voucher` alone, or a `refund` (its `settledAmount` came back to the payer).
   */
  readonly kind?: "deposit" | "top-up" | "voucher" | "refund" | undefined;
  /** How the seller takes the money: `authorization` (after delivery), `upfront` (before it) or `escrow`. */
  readonly flow?: "authorization" | "upfront" | "escrow" | undefined;
  /** batch-settlement: base units moved from the wallet into the channel. */
  readonly deposit?: string | undefined;
  /** batch-settlement: the channel's id. auth-capture refunds: the escrow's payment hash the seller reported. */
  readonly channel?: string | undefined;
  /** auth-capture: the escrow's terms (who captures, until when it is refundable, the fees). */
  readonly escrow?: EscrowTerms | undefined;
}

/**
 * Where records go: appended once each, read back in the order appended. Memory, a JSONL file (`x402-pay/file`) or a
 * Redis stream (`x402-pay/redis`).
 */
export interface Ledger {
  /**
   * Resolves once the record is stored (a file: flushed). A settled record of an `attempt` the ledger holds settled
   * already is not stored again (the journal's recovery and a kept payment's resending may both learn it settled).
   */
  append(record: LedgerRecord): Promise<void>;
  records(): AsyncIterable<LedgerRecord>;
}

// ---------------------------------------------------------------- sign-in-with-x's memory

/**
 * Any async key-value store: memory by default, or one shared by processes (Redis `GET`/`SET`, a
 * file). Keys are `<origin><path> <payer>` (0x addresses lower-cased); values the network paid on.
 */
export interface SignInStore {
  get(key: string): Promise<string | undefined | null> | string | undefined | null;
  set(key: string, value: string): Promise<unknown> | unknown;
}

// ---------------------------------------------------------------- batch-settlement channels

/** One batch-settlement channel as the buyer keeps it. Amounts are base-unit integer strings. */
export interface ChannelState {
  /** Held in the channel, as last checked: deposits less refunds and withdrawals. */
  readonly balance: string;
  /** Charged in all (cumulative), as the server reported it and we checked it. */
  readonly charged: string;
  /** The largest voucher signed for the channel (cumulative): the most the seller can ever claim. */
  readonly signed: string;
  /** That voucher's signature. */
  readonly signature?: string | undefined;
  /** Why payments on the channel stopped (the seller's account did not hold up); absent in good standing. */
  readonly disputed?: string | undefined;
  /**
   * The vouchers signed above `charged` whose answer was never read (a process that died, an answer lost): each
   * amount (cumulative) and the attempt (`ReserveContext.attempt`) that signed it, the only one that may send it.
   */
  readonly owners?: Readonly<Record<string, string>> | undefined;
  /**
   * What became of such vouchers once the seller's count was read (the latest 64): by attempt,
   * `charged` (the seller took it: that attempt's request was paid) or `dropped` (the seller never had it; its amount
   * was signed again by another payment, and it can no longer pay for its own request).
   */
  readonly ended?: Readonly<Record<string, "charged" | "dropped">> | undefined;
}

/**
 * Where batch-settlement keeps its channels: memory (the default), a file, or Redis, shared by processes.
 * A channel is held by one payment at a time, from before its voucher is signed until the seller's answer
 * is read, so that no two vouchers are signed for the same cumulative amount.
 */
export interface ChannelStore {
  /**
   * Holds channel `id` (lower-case hex): waits until no other holder (in this process, or any sharing the
   * store) has it. `signal` stops the wait.
   */
  hold(id: string, signal?: AbortSignal): Promise<ChannelHold>;
  /** The channel's state without holding it, for reports. */
  peek(id: string): Promise<ChannelState | undefined>;
}

/** A channel held by one payment. */
export interface ChannelHold {
  /** The state when it was taken; `undefined` for a channel the store does not know. */
  readonly state: ChannelState | undefined;
  /** Keeps `state` (`undefined` forgets the channel). Throws when the hold was lost (it expired). */
  save(state: ChannelState | undefined): Promise<void>;
  /** Lets the channel go; later calls do nothing. */
  release(): Promise<void>;
}
