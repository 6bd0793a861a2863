/** The default budget store: this process's memory. */
import type { BudgetEntry, BudgetStore, BudgetUsage, HoldChange } from "../../contracts";

interface Held {
  /** When it was reserved (ms), and its amount. */
  at: number;
  amount: number;
  committed: boolean;
}

/** How many attempts an entry remembers for its holds (the latest). */
const MARKS_KEPT = 4096;

/** A hold's change as an attempt makes it: it adds once, and ends once (letting go only of what it added). */
function once(marks: Set<string>, id: string, { add = 0, spend = 0, release = 0, attempt }: HoldChange) {
  if (attempt === undefined) return { add, spend, release };
  const added = marks.has(`${id}\0+${attempt}`);
  if (marks.has(`${id}\0${attempt}`)) return { add: added ? 0 : add, spend: 0, release: 0 };
  return { add: added ? 0 : add, spend, release: added ? release : 0 };
}

/** Remembers `key`, the latest MARKS_KEPT in order. */
function mark(marks: Set<string>, key: string) {
  marks.add(key);
  if (marks.size > MARKS_KEPT) marks.delete(marks.values().next().value!);
}

interface State {
  held: Map<string, Held>;
  /** Standing holds (channels): they do not pass with the window. */
  holds: Map<string, number>;
  /** The latest attempts that added to a hold (`<hold>\0+<attempt>`) or ended on it (`<hold>\0<attempt>`). */
  marks: Set<string>;
  /** Spend of a budget without a window, folded into one total. */
  total: number;
  /** Names spend drawn from holds in a window. */
  draws: number;
}

/**
 * The default store: this process's memory. Each entry keeps its reservations and, for a window,
 * each commit until the window has passed it; without a window, commits fold into one total.
 */
export function memoryBudgetStore(now: () => number = Date.now): BudgetStore {
  const entries = new Map<string, State>();
  const open = (entry: BudgetEntry) => {
    let state = entries.get(entry.key);
    if (!state)
      entries.set(entry.key, (state = { held: new Map(), holds: new Map(), marks: new Set(), total: 0, draws: 0 }));
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
    for (const amount of state.holds.values()) reserved += amount;
    return { spent, reserved };
  };
  /** Counts `amount` as spent now. */
  const spend = (entry: BudgetEntry, state: State, amount: number) => {
    if (entry.windowMs === undefined) state.total += amount;
    else state.held.set(`\0draw:${++state.draws}`, { at: now(), amount, committed: true });
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
      const spent = Math.min(amount, held.amount);
      if (entry.windowMs === undefined) {
        state.held.delete(id);
        state.total += spent;
      } else Object.assign(held, { amount: spent, committed: true });
    },
    async release(entry, id) {
      const state = open(entry);
      if (!state.held.get(id)?.committed) state.held.delete(id);
    },
    async usage(entry) {
      return usage(entry);
    },
    async hold(entry, id, change) {
      const before = usage(entry);
      const state = open(entry);
      const held = state.holds.get(id) ?? 0;
      const { add, spend: drawn, release } = once(state.marks, id, change);
      const ok = before.spent + before.reserved + add <= entry.limit;
      let left = held + (ok ? add : 0);
      if (ok && drawn > 0) {
        left = Math.max(0, left - drawn);
        spend(entry, state, drawn);
      }
      if (ok) left = release === "all" ? 0 : Math.max(0, left - release);
      if (left > 0) state.holds.set(id, left);
      else state.holds.delete(id);
      if (ok && change.attempt !== undefined) {
        if (add > 0) mark(state.marks, `${id}\0+${change.attempt}`);
        if (drawn > 0 || release !== 0) mark(state.marks, `${id}\0${change.attempt}`);
      }
      return { ok, held, ...before };
    },
  };
}
