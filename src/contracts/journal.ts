/**
 * The payment journal's store: what a process writes before it signs, before a signed payment leaves and when the
 * payment ends, so a process killed at any instruction leaves what may have been paid findable after a restart.
 */
import type { PaymentTerms } from "./payment";
import type { MaybePromise, Reservation } from "./plugin";

/**
 * Where a journaled payment is. Unfinished: `intent` (chosen, not signed: nothing can have left), `signed` (its
 * header kept; it may have left), `pending` (a settlement broadcast, not confirmed) and `unknown` (sent, no usable
 * answer). Finished: `settled`, `failed` (nothing was charged), `expired` (signed, never settled, no longer valid).
 */
export type JournalState = "intent" | "signed" | "pending" | "unknown" | "settled" | "failed" | "expired";

/** The states of a payment that may still move money or be resent. */
export const UNFINISHED: readonly JournalState[] = ["intent", "signed", "pending", "unknown"];

/** A signed payment as it is sent: the header's name and its value (base64 JSON of the payment payload). */
export interface PaymentHeader {
  readonly name: string;
  readonly value: string;
}

/**
 * A payment kept to be sent once more, identical: its header as it was sent, what it pays, and what the client's
 * plug-ins reserved for it when it was signed (ended by this sending's outcome).
 */
export interface KeptPayment {
  readonly paymentHeader: PaymentHeader;
  readonly terms: PaymentTerms;
  readonly reservations?: readonly Reservation[] | undefined;
  /** The attempt it was signed in (`ReserveContext.attempt`): this sending's outcome is that attempt's. */
  readonly attempt?: string | undefined;
  /** Its outcome was reported already (it settled): this sending is not reported again. */
  readonly reported?: boolean | undefined;
}

/** One payment attempt in the journal, as written at its last step. */
export interface JournalEntry {
  /** The attempt's own id (unique): `ReserveContext.attempt`, under which budgets reserved it. */
  readonly id: string;
  /**
   * The logical request's key (`x402: { paymentId }`), when the app gave one: a key whose payment is kept is never
   * signed anew.
   */
  readonly key?: string | undefined;
  readonly state: JournalState;
  /** When the entry was last written (ms since the epoch). */
  readonly at: number;
  readonly url: string;
  readonly method: string;
  readonly scheme: string;
  /** CAIP-2. */
  readonly network: string;
  readonly asset: string;
  readonly payTo: string;
  /** Base units: what the payment may move at most. */
  readonly amount: string;
  readonly payer: string;
  /** What it pays, as it was signed (the requirement as offered among them). */
  readonly terms: PaymentTerms;
  /** batch-settlement: the channel that pays it (`ReserveContext.channel`). */
  readonly channel?: string | undefined;
  /** From `signed` on: the header as it leaves. It is a signed authorization, not a key. */
  readonly paymentHeader?: PaymentHeader | undefined;
  /** From `signed` on: when the signed payment stops being valid at the latest (seconds since the epoch). */
  readonly validBefore?: number | undefined;
  /** The settlement's transaction, when known. */
  readonly transaction?: string | undefined;
  /** How it failed, or why its outcome is not known (an x402-pay error code). */
  readonly code?: string | undefined;
}

/**
 * Where the journal keeps its entries: memory (tests), a file (one machine), Redis (a fleet). `put` resolves only once
 * the entry is durable: a payment is not signed, or sent, before its entry is.
 *
 * A store refuses a write, atomically with it (across every process that shares it), that would let one key be paid
 * twice or undo an ending (`journalRefuses`): an entry over its attempt's finished one (a finished attempt is final);
 * a key's new attempt while its newest one is unfinished (one attempt per key at a time); and a write `over` a state
 * its attempt is no longer at. A refused write writes nothing and resolves `false`.
 */
export interface JournalStore {
  /** Writes an entry, replacing the one of the same `id`, unless refused (then `false`, nothing written). */
  put(entry: JournalEntry, options?: JournalPutOptions): Promise<boolean>;
  /** The latest entry written for a key, finished or not. */
  latest(key: string): MaybePromise<JournalEntry | undefined>;
  /** Every entry that is not finished. */
  unfinished(): MaybePromise<readonly JournalEntry[]>;
}

export interface JournalPutOptions {
  /** Written only if its attempt's stored entry is at this state now (a compare-and-set). */
  readonly over?: JournalState | undefined;
}

/**
 * Whether a store refuses to write an entry, from what it holds now: `stored`, the state of the entry's attempt (none
 * if it is new), and `newest`, the state of its key's newest attempt (none without a key, or for a key not seen).
 */
export function journalRefuses(
  { stored, newest }: { stored: JournalState | undefined; newest: JournalState | undefined },
  { over }: JournalPutOptions = {},
): boolean {
  if (over !== undefined && stored !== over) return true;
  if (stored !== undefined) return !UNFINISHED.includes(stored);
  return newest !== undefined && UNFINISHED.includes(newest);
}

/** An entry read back from a store (JSON), or `undefined` for a torn or foreign one. */
export function parseJournalEntry(json: unknown): JournalEntry | undefined {
  if (typeof json !== "string") return undefined;
  try {
    const value = JSON.parse(json) as JournalEntry;
    return typeof value?.id === "string" && typeof value.state === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
