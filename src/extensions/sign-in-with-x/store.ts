/** Where sign-in remembers the routes each wallet paid for: a small async key-value store. */
import type { Ledger, SignInStore } from "../../contracts";

/** How many routes the default memory keeps; past that, the least recently paid are forgotten. */
export const MEMORY_STORE_ENTRIES = 10_000;

/** The default: this process's memory, bounded. */
export function memoryStore(limit = MEMORY_STORE_ENTRIES): SignInStore {
  const entries = new Map<string, string>();
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > limit) entries.delete(entries.keys().next().value!);
    },
  };
}

/** The key of a route (origin and path: the query is not part of it, as servers record it) and a payer. */
export function paidKey(url: string, payer: string): string {
  const { origin, pathname } = new URL(url);
  return `${origin}${pathname} ${/^0x/i.test(payer) ? payer.toLowerCase() : payer}`;
}

/**
 * The receipts ledger as sign-in's memory: a route a wallet paid is one with a settled record of that
 * payer. Read once, at first use; the routes paid after that are remembered as they settle. (Another
 * process's payments into a shared ledger are seen at the next start: for a fleet, `redisSignInStore`.)
 */
export function ledgerStore(ledger: Ledger): SignInStore {
  const known = memoryStore(Number.MAX_SAFE_INTEGER);
  let loaded: Promise<unknown> | undefined;
  const load = async () => {
    for await (const record of ledger.records()) {
      if (record.outcome === "settled" && record.payer)
        await known.set(paidKey(record.url, record.payer), record.network ?? "");
    }
  };
  return {
    async get(key) {
      await (loaded ??= load().catch(() => (loaded = undefined)));
      return known.get(key);
    },
    set: (key, value) => known.set(key, value),
  };
}

/** Is this a ledger (given as sign-in's store)? */
export const isLedger = (value: unknown): value is Ledger =>
  typeof (value as Ledger)?.append === "function" && typeof (value as Ledger).records === "function";
