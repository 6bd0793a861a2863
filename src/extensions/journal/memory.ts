/** `memoryJournalStore()`: the journal in this process's memory (tests, and a process that needs no restart). */
import { UNFINISHED, journalRefuses, type JournalEntry, type JournalStore } from "../../contracts";

/** A journal store in memory: `entries` holds the latest of each attempt, in the order first written. */
export function memoryJournalStore(): JournalStore & { readonly entries: () => readonly JournalEntry[] } {
  const byId = new Map<string, JournalEntry>();
  /** Each key's newest attempt: the one whose first entry was written last. */
  const newest = new Map<string, string>();
  // Equivalent mutants here and below (docs/mutation.md): `Map.get(undefined)` is undefined anyway, and an accepted
  // write of a stored attempt is of an unfinished one, already its key's newest (older ones are finished, so refused).
  const latest = (key: string | undefined) => {
    // Stryker disable next-line ConditionalExpression: equivalent (above)
    const id = key === undefined ? undefined : newest.get(key);
    // Stryker disable next-line ConditionalExpression: equivalent (above)
    return id === undefined ? undefined : byId.get(id);
  };
  return {
    async put(entry, options) {
      const now = { stored: byId.get(entry.id)?.state, newest: latest(entry.key)?.state };
      if (journalRefuses(now, options)) return false;
      // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent (above)
      if (entry.key !== undefined && now.stored === undefined) newest.set(entry.key, entry.id);
      byId.set(entry.id, Object.freeze({ ...entry }));
      return true;
    },
    latest,
    unfinished: () => [...byId.values()].filter((entry) => UNFINISHED.includes(entry.state)),
    entries: () => [...byId.values()],
  };
}
