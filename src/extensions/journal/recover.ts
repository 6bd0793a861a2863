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
import { getPaymentReceipt, resendPayment, type PaymentRequestOptions } from "../../handshake";
import { randomId } from "../../protocol";
import { checkSettlement } from "../../settlement";
import { isChannelPayment, journalOf, pastValidity, queryOf } from "./journal";

export interface RecoveryOptions {
  /**
   * Entries written in the last `staleAfterMs` are left alone: another process may be paying them now. Default 60 s
   * (no paid request of x402-pay's is in flight longer); 0 on a start where no other process shares the store.
   */
  staleAfterMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Send each kept payment again now, through this paid fetch (`wrapFetchWithPayment(fetch, client)`), instead of
   * waiting for its key to be asked again: the seller settles it, or answers from its idempotency cache. Only GET and
   * HEAD requests (the journal keeps no body); an answer that reports a settlement ends the entry settled, anything
   * else leaves it kept. Nothing is signed: the kept header goes as it is.
   */
  resend?: PaidFetch | undefined;
}

/** A fetch wrapped with `wrapFetchWithPayment`, as `resend` calls it. */
export type PaidFetch = (
  url: string,
  init: { method: string; signal?: AbortSignal; x402: PaymentRequestOptions },
) => Promise<Response>;

/** The requests the journal can send again as they were: it keeps no body. */
const RESENDABLE = ["GET", "HEAD"];

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

/** What recovery did with one entry, and, when it settled, what moved as the chain or the seller said (base units). */
type Ended = RecoveredPayment & { readonly moved?: string | undefined };

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
    resend: is((f) => typeof f === "function", "a paid fetch: wrapFetchWithPayment(fetch, client)"),
  });
  const { staleAfterMs = 60_000, signal } = options;
  const { store } = journal;
  const record = recorder(client.plugins);
  const done: RecoveredPayment[] = [];
  for (const entry of await store.unfinished()) {
    throwIfAborted(signal);
    if (entry.at > Date.now() - staleAfterMs) continue;
    let ended: Ended = await recoverOne(client, entry, signal);
    if (ended.action === "kept" && options.resend) ended = await resendNow(options.resend, ended, signal);
    const { moved, ...recovered } = ended;
    const { action } = recovered;
    // What it moved: what the chain or the seller said (never above what was signed), else what was signed, unless
    // that is only a most (upto, an escrow): then not known, and the budget spends the most (never counted less).
    const settledAmount = action === "settled" ? settledOf(entry, moved) : undefined;
    // What the budgets reserved under the attempt (spent if it settled, let go if it never could; else left counted),
    // then the ledgers, then the entry: a step that fails leaves the entry open, and the next recovery ends it (each
    // step is done once: by the reservation's id, by the ledger's record of the attempt).
    try {
      // Never signed: ended first, and only if it is still at its intent (a process paying it slowly, an approval
      // awaited, may have signed it meanwhile; ended, it can no longer), then what was reserved for it let go.
      if (action === "dropped" && !(await store.put(Object.freeze(recovered.entry), { over: "intent" }))) {
        done.push({ action: "unchecked", entry, reason: "it was signed meanwhile: left to the process paying it" });
        continue;
      }
      if (action !== "kept" && action !== "unchecked")
        for (const reservation of engineOf(client).reservationsOf(entry))
          await (action === "settled" ? reservation.commit(settledAmount) : reservation.release());
      if (action === "settled") await record(recovered.entry, settledAmount);
      // Refused if another process ended it meanwhile (a finished attempt is final): as that one said.
      if (recovered.entry !== entry && action !== "dropped") await store.put(Object.freeze(recovered.entry));
    } catch (error) {
      throwIfAborted(signal);
      const reason = error instanceof Error ? error.message : String(error);
      done.push({ action: "unchecked", entry, reason: `ending it failed (${reason}): left open` });
      continue;
    }
    done.push(recovered);
  }
  return done;
}

/** A kept GET or HEAD sent again as it was; settled if the answer reports a settlement, else kept as it is. */
async function resendNow(resend: PaidFetch, kept: Ended, signal: AbortSignal | undefined): Promise<Ended> {
  const { entry } = kept;
  if (!RESENDABLE.includes(entry.method.toUpperCase()) || !entry.paymentHeader) return kept;
  const details = { paymentHeader: entry.paymentHeader, requirement: entry.terms.requirement, payer: entry.payer };
  try {
    const response = await resend(entry.url, {
      method: entry.method,
      x402: resendPayment({ details, attempt: entry.id }),
      ...(signal && { signal }),
    });
    // Not awaited: a body whose source never answers the cancel (as msw's does not) must not hold recovery up.
    void response.body?.cancel().catch(() => undefined);
    const receipt = getPaymentReceipt(response);
    if (!receipt?.settled) return kept;
    const transaction = receipt.transaction ?? entry.transaction;
    return {
      action: "settled",
      entry: { ...entry, state: "settled", at: Date.now(), ...(transaction && { transaction }) },
      reason: `sent again: the seller answered ${response.status} and reported the settlement`,
      moved: receipt.settledAmount,
    };
  } catch {
    throwIfAborted(signal);
    return kept;
  }
}

/** One entry, ended as the chain says (or left as it is). */
async function recoverOne(client: X402Client, entry: JournalEntry, signal: AbortSignal | undefined): Promise<Ended> {
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
      moved: status.amount,
    };
  }
  // Failed on chain while still valid may be a nonce not yet used: only one past its validity is over; a channel's
  // voucher whose amount went to another call is over at once.
  if (status.state === "failed" && (isChannelPayment(entry) || pastValidity(entry, at)))
    return { action: "expired", entry: { ...entry, state: "expired", at }, reason };
  return { action: "kept", entry, reason };
}

/**
 * The client's ledgers, as recovery records in them: a settled payment where its attempt has no settled record,
 * reconciling the attempt's `unknown` or `pending` record if it has one. Each ledger is read once, when a first
 * settled payment is to be recorded.
 */
function recorder(plugins: readonly X402Plugin[]) {
  const ledgers = plugins.filter((p): p is X402Plugin & Ledger => typeof Object(p).append === "function");
  /** Each ledger's latest record of each attempt (a settled one stays). */
  const read = async (ledger: Ledger) => {
    const latest = new Map<string, LedgerRecord>();
    for await (const record of ledger.records())
      if (record.attempt !== undefined && latest.get(record.attempt)?.outcome !== "settled")
        latest.set(record.attempt, record);
    return latest;
  };
  let held: Promise<Map<string, LedgerRecord>[]> | undefined;
  return async function record(entry: JournalEntry, settledAmount: string | undefined): Promise<void> {
    const attempts = await (held ??= Promise.all(ledgers.map(read)));
    for (const [i, ledger] of ledgers.entries()) {
      const earlier = attempts[i]!.get(entry.id);
      if (earlier?.outcome === "settled") continue;
      const open = earlier?.outcome === "unknown" || earlier?.outcome === "pending";
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
        ...(settledAmount !== undefined && { settledAmount }),
        ...(entry.transaction && { transaction: entry.transaction }),
        ...channelOf(entry),
        payer: entry.payer,
        payee: entry.payTo,
        attempt: entry.id,
        ...(open && { reconciles: earlier.id }),
      };
      await ledger.append(record);
      attempts[i]!.set(entry.id, record);
    }
  };
}

/**
 * What a settled entry moved (base units): `said` (the chain's or the seller's amount) when it is one, at most what was
 * signed; else what was signed, for a payment whose amount is not a most; else not known.
 */
function settledOf(entry: JournalEntry, said: string | undefined): string | undefined {
  const units = /^\d+$/;
  const signed = units.test(entry.amount) ? BigInt(entry.amount) : undefined;
  if (said !== undefined && units.test(said) && signed !== undefined)
    return BigInt(said) < signed ? said : entry.amount;
  return (entry.terms?.upTo ?? entry.scheme === "upto") ? undefined : entry.amount;
}

/** A channel payment's fields of a ledger record: what it did to its channel, its deposit, the channel. */
const channelOf = ({ terms, channel }: JournalEntry) =>
  terms.kind === undefined
    ? {}
    : {
        kind: terms.kind,
        ...(terms.deposit !== undefined && { deposit: terms.deposit }),
        ...(channel !== undefined && { channel }),
      };
