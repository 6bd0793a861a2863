/** The receipts ledger: one record per payment attempt's outcome, and the questions asked of it. */
import type { Ledger, LedgerRecord, PaymentScheme, X402Plugin } from "../../contracts";
import { checkSettlement } from "../../settlement";
import { originOf, randomId } from "../../protocol";
import { recordOutcomes, type LedgerPluginOptions } from "./record";

/**
 * A ledger in this process's memory, as a plug-in: `plugins: [memoryLedger()]`. `list` holds the records. Two on one
 * client need names: `memoryLedger({ name: "audit" })`.
 */
export function memoryLedger(
  options: LedgerPluginOptions = {},
): Ledger & X402Plugin & { readonly list: readonly LedgerRecord[] } {
  const list: LedgerRecord[] = [];
  const settled = new Set<string>();
  return recordOutcomes(
    {
      list,
      async append(record) {
        const attempt = settledAttempt(record);
        if (attempt !== undefined && settled.has(attempt)) return;
        if (attempt !== undefined) settled.add(attempt);
        list.push(Object.freeze({ ...record }));
      },
      async *records() {
        yield* [...list];
      },
    },
    options,
  );
}

/** The attempt a settled record names, which a ledger holds settled once; else `undefined`. */
export const settledAttempt = (record: LedgerRecord): string | undefined =>
  record.outcome === "settled" && typeof record.attempt === "string" ? record.attempt : undefined;

/** What records are grouped by in `spendBy`: the request's origin, the payee, the UTC day, or only the asset. */
export type SpendGrouping = "origin" | "payee" | "day" | "asset";

/** Settled spend of one group in one asset. */
export interface SpendRow {
  /** The origin, payee or day (`2026-11-23`); `""` when grouped by asset only. */
  readonly key: string;
  readonly network: string;
  readonly asset: string;
  /** Sum of the settled amounts (for `upto`, what was settled), atomic. */
  readonly amount: string;
  readonly count: number;
}

export interface SpendQuery {
  /** Records at or after this time, and before `until`. */
  readonly since?: Date | string | number | undefined;
  readonly until?: Date | string | number | undefined;
}

const millis = (time: Date | string | number | undefined, otherwise: number) =>
  time === undefined ? otherwise : new Date(time).getTime();

/** The settled outcomes, their reconciliations included, within the query's times. */
async function* settled(ledger: Ledger, query: SpendQuery) {
  const since = millis(query.since, -Infinity);
  const until = millis(query.until, Infinity);
  for await (const record of ledger.records()) {
    const at = Date.parse(record.time);
    // Money that came back (a channel's refund) is not spend.
    if (record.kind === "refund") continue;
    if (record.outcome === "settled" && at >= since && at < until && record.asset !== undefined) yield record;
  }
}

/** Settled spend per origin, payee, UTC day or asset, one row per group and asset, in the order first seen. */
export async function spendBy(ledger: Ledger, by: SpendGrouping, query: SpendQuery = {}): Promise<SpendRow[]> {
  const rows = new Map<string, { key: string; network: string; asset: string; amount: bigint; count: number }>();
  for await (const record of settled(ledger, query)) {
    const key =
      by === "origin"
        ? originOf(record.url)
        : by === "payee"
          ? (record.payee ?? "")
          : by === "day"
            ? record.time.slice(0, 10)
            : "";
    const network = record.network ?? "";
    const asset = record.asset!;
    const id = JSON.stringify([key, network, /^0x/i.test(asset) ? asset.toLowerCase() : asset]);
    const row = rows.get(id) ?? rows.set(id, { key, network, asset, amount: 0n, count: 0 }).get(id)!;
    row.amount += BigInt(record.settledAmount ?? record.amount ?? "0");
    row.count++;
  }
  return [...rows.values()].map((row) => ({ ...row, amount: row.amount.toString() }));
}

/**
 * The `unknown` and `pending` outcomes no later record reconciles: payments that may have settled, to check on chain.
 */
export async function unreconciled(ledger: Ledger): Promise<LedgerRecord[]> {
  const open = new Map<string, LedgerRecord>();
  for await (const record of ledger.records()) {
    if (record.reconciles !== undefined) open.delete(record.reconciles);
    else if (record.outcome === "unknown" || record.outcome === "pending") open.set(record.id, record);
  }
  return [...open.values()];
}

/**
 * States how an `unknown` or `pending` outcome ended (after checking the chain for its payer and amount): appends
 * a record that copies the payment's fields, with `reconciles` naming it.
 */
export async function reconcile(
  ledger: Ledger,
  unknown: LedgerRecord,
  outcome: "settled" | "rejected",
  found: { transaction?: string | undefined; settledAmount?: string | undefined } = {},
): Promise<LedgerRecord> {
  const record: LedgerRecord = {
    ...unknown,
    ...found,
    id: randomId(),
    time: new Date().toISOString(),
    outcome,
    code: undefined,
    reconciles: unknown.id,
  };
  await ledger.append(record);
  return record;
}

/** One unreconciled record, and what the chain said of it (or why it could not be asked). */
export interface ChainReconciliation {
  readonly record: LedgerRecord;
  /** `settled`, `failed` (recorded as `rejected`: nothing moved) or `pending` (left open). */
  readonly state?: "settled" | "failed" | "pending";
  readonly reason: string;
  /** The record appended for a settled or failed payment. */
  readonly reconciled?: LedgerRecord;
  /** Why the chain could not be asked (no RPC for the network, the RPC failed). */
  readonly error?: unknown;
}

/**
 * Asks the chain about every unreconciled `pending` or `unknown` record (`checkSettlement`, through the
 * client's scheme that paid it) and records each answer that settles the question: `settled`, or `rejected`
 * when the chain shows the payment can no longer move money. Records still pending stay open.
 */
export async function reconcileOnChain(
  ledger: Ledger,
  client: { readonly schemes: readonly PaymentScheme[] },
  options: { signal?: AbortSignal | undefined } = {},
): Promise<ChainReconciliation[]> {
  const results: ChainReconciliation[] = [];
  for (const record of await unreconciled(ledger)) {
    try {
      const status = await checkSettlement(client, record, options);
      const found = {
        transaction: status.transaction ?? record.transaction,
        settledAmount: status.state === "settled" ? status.amount : undefined,
      };
      const reconciled =
        status.state === "pending"
          ? undefined
          : await reconcile(ledger, record, status.state === "settled" ? "settled" : "rejected", found);
      results.push({ record, state: status.state, reason: status.reason, ...(reconciled && { reconciled }) });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      results.push({ record, reason: error instanceof Error ? error.message : String(error), error });
    }
  }
  return results;
}
