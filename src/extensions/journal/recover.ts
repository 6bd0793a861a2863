/**
 * `recoverPayments(client)`: on start, every payment the journal holds unfinished (a process died with it, or its
 * outcome was not known) is ended as the chain says: never signed → dropped; settled → recorded; no longer able to
 * move money → expired; else kept, for the keyed request to send again.
 */
import { engineOf, type X402Client } from "../../client";
import {
  checkOptions,
  fail,
  is,
  type JournalEntry,
  type Ledger,
  type LedgerRecord,
  type X402Plugin,
} from "../../contracts";
import { throwIfAborted } from "../../errors";
import { randomId } from "../../protocol";
import { checkSettlement } from "../../settlement";
import { journalOf, queryOf } from "./journal";

export interface RecoveryOptions {
  /**
   * Entries written in the last `staleAfterMs` are left alone: another process may be paying them now. Default 60 s
   * (no paid request of x402-pay's is in flight longer); 0 on a start where no other process shares the store.
   */
  staleAfterMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** What recovery did with one entry, and the entry as it left it. */
export interface RecoveredPayment {
  /**
   * `dropped`: never signed, so nothing left; `settled`: the chain shows it paid (the ledger records it); `expired`:
   * it can no longer move money; `kept`: it may still settle (pending, or valid and not yet seen on chain): a request
   * with its key sends it again, never a new one; `unchecked`: no chain to ask (the scheme has no RPC): kept as well.
   */
  readonly action: "dropped" | "settled" | "expired" | "kept" | "unchecked";
  readonly entry: JournalEntry;
  /** What the chain said, when it was asked. */
  readonly reason?: string | undefined;
}

/**
 * Ends what the client's journal (`paymentJournal(store)` among its plug-ins) holds unfinished, as the chain says;
 * records settled payments in the client's ledgers and ends what its budgets reserved for them (spent if settled,
 * released if never signed or expired unused, left counted while it may still settle). `InvalidConfigError` for a
 * client without a journal.
 */
export async function recoverPayments(
  client: X402Client,
  options: RecoveryOptions = {},
): Promise<readonly RecoveredPayment[]> {
  const journal = journalOf(Object(client).plugins ?? []);
  if (!journal) fail("recoverPayments", "give it the client whose plug-ins include paymentJournal(store)");
  checkOptions("recoverPayments.", options, {
    staleAfterMs: is(
      (ms) => Number.isSafeInteger(ms) && (ms as number) >= 0,
      "a whole number of milliseconds, 0 or more",
    ),
    signal: is((s) => s instanceof AbortSignal, "an AbortSignal"),
  });
  const { staleAfterMs = 60_000, signal } = options;
  const { store } = journal;
  const done: RecoveredPayment[] = [];
  for (const entry of await store.unfinished()) {
    throwIfAborted(signal);
    if (entry.at > Date.now() - staleAfterMs) continue;
    const recovered = await recoverOne(client, entry, signal);
    const { action } = recovered;
    // What the budgets reserved under the attempt: spent if it settled, let go if it never could; else left counted.
    const reserved = action === "kept" || action === "unchecked" ? [] : engineOf(client).reservationsOf(entry);
    for (const reservation of reserved) await (action === "settled" ? reservation.commit() : reservation.release());
    if (recovered.entry !== entry) await store.put(Object.freeze(recovered.entry));
    if (action === "settled") await recordSettled(client.plugins, recovered.entry);
    done.push(recovered);
  }
  return done;
}

/** One entry, ended as the chain says (or left as it is). */
async function recoverOne(
  client: X402Client,
  entry: JournalEntry,
  signal: AbortSignal | undefined,
): Promise<RecoveredPayment> {
  const at = Date.now();
  // Never signed: nothing can have left.
  if (entry.state === "intent" || !entry.paymentHeader)
    return { action: "dropped", entry: { ...entry, state: "failed", at, code: "PAYMENT_NOT_SENT" } };
  let status: Awaited<ReturnType<typeof checkSettlement>>;
  try {
    status = await checkSettlement(client, queryOf(entry), { signal });
  } catch (error) {
    throwIfAborted(signal);
    const reason = error instanceof Error ? error.message : String(error);
    return { action: "unchecked", entry, reason };
  }
  const { reason } = status;
  if (status.state === "settled") {
    const transaction = status.transaction ?? entry.transaction;
    return {
      action: "settled",
      entry: { ...entry, state: "settled", at, ...(transaction && { transaction }) },
      reason,
    };
  }
  // Failed on chain while still valid may be a nonce not yet used: only one past its validity is over.
  const expired = entry.validBefore !== undefined && entry.validBefore * 1000 < at;
  if (status.state === "failed" && expired)
    return { action: "expired", entry: { ...entry, state: "expired", at }, reason };
  return { action: "kept", entry, reason };
}

/** A settled payment found on recovery, as each of the client's ledgers records it (reconciling any `unknown`). */
async function recordSettled(plugins: readonly X402Plugin[], entry: JournalEntry): Promise<void> {
  const record: LedgerRecord = {
    id: randomId(),
    time: new Date().toISOString(),
    outcome: "settled",
    url: entry.url,
    method: entry.method,
    scheme: entry.scheme,
    network: entry.network,
    asset: entry.asset,
    amount: entry.amount,
    ...(entry.scheme !== "upto" && { settledAmount: entry.amount }),
    ...(entry.transaction && { transaction: entry.transaction }),
    payer: entry.payer,
    payee: entry.payTo,
  };
  const ledgers = plugins.filter((p): p is X402Plugin & Ledger => typeof Object(p).append === "function");
  for (const ledger of ledgers) await ledger.append(record).catch(() => undefined);
}
