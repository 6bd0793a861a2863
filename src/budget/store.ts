/** Where budgets keep what was spent and reserved: one interface, this process's memory by default. */

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
  /** Reserves `amount` under `id` if it fits: spent + reserved + amount ≤ limit. Returns whether it did, and the usage before it. */
  reserve(entry: BudgetEntry, id: string, amount: number): Promise<BudgetUsage & { readonly ok: boolean }>;
  /** Turns reservation `id` into spend of `amount` (at most what was reserved). Unknown ids (expired) are ignored. */
  commit(entry: BudgetEntry, id: string, amount: number): Promise<void>;
  /** Drops reservation `id`. Unknown ids are ignored. */
  release(entry: BudgetEntry, id: string): Promise<void>;
  /** What the entry holds now. */
  usage(entry: BudgetEntry): Promise<BudgetUsage>;
}

interface Held {
  /** When it was reserved (ms), and its amount. */
  at: number;
  amount: number;
  committed: boolean;
}

/**
 * The default store: this process's memory. Each entry keeps its reservations and, for a window,
 * each commit until the window has passed it; without a window, commits fold into one total.
 */
export function memoryBudgetStore(now: () => number = Date.now): BudgetStore {
  const entries = new Map<string, { held: Map<string, Held>; total: number }>();
  const open = (entry: BudgetEntry) => {
    let state = entries.get(entry.key);
    if (!state) entries.set(entry.key, (state = { held: new Map(), total: 0 }));
    if (entry.windowMs !== undefined) {
      const since = now() - entry.windowMs;
      for (const [id, held] of state.held) if (held.at <= since) state.held.delete(id);
    }
    return state;
  };
  const usage = (entry: BudgetEntry): BudgetUsage => {
    const state = open(entry);
    let spent = state.total;
    let reserved = 0;
    for (const held of state.held.values()) held.committed ? (spent += held.amount) : (reserved += held.amount);
    return { spent, reserved };
  };
  return {
    async reserve(entry, id, amount) {
      const before = usage(entry);
      const ok = before.spent + before.reserved + amount <= entry.limit;
      if (ok) open(entry).held.set(id, { at: now(), amount, committed: false });
      return { ok, ...before };
    },
    async commit(entry, id, amount) {
      const state = open(entry);
      const held = state.held.get(id);
      if (!held || held.committed) return;
      const spend = Math.min(amount, held.amount);
      if (entry.windowMs === undefined) {
        state.held.delete(id);
        state.total += spend;
      } else Object.assign(held, { amount: spend, committed: true });
    },
    async release(entry, id) {
      const state = open(entry);
      if (!state.held.get(id)?.committed) state.held.delete(id);
    },
    async usage(entry) {
      return usage(entry);
    },
  };
}
