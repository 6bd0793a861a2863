/** The default budget store: this process's memory. */
import type { BudgetEntry, BudgetStore, BudgetUsage } from "../../contracts";

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
