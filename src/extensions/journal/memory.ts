/** `memoryJournalStore()`: the journal in this process's memory (tests, and a process that needs no restart). */
import { UNFINISHED, type JournalEntry, type JournalStore } from "../../contracts";

/** A journal store in memory: `entries` holds the latest of each attempt, in the order first written. */
export function memoryJournalStore(): JournalStore & { readonly entries: () => readonly JournalEntry[] } {
  const byId = new Map<string, JournalEntry>();
  /** Each key's newest attempt: the one whose first entry was written last. */
  const newest = new Map<string, string>();
  return {
    async put(entry) {
      if (entry.key !== undefined && !byId.has(entry.id)) newest.set(entry.key, entry.id);
      byId.set(entry.id, Object.freeze({ ...entry }));
    },
    latest: (key) => {
      const id = newest.get(key);
      return id === undefined ? undefined : byId.get(id);
    },
    unfinished: () => [...byId.values()].filter((entry) => UNFINISHED.includes(entry.state)),
    entries: () => [...byId.values()],
  };
}
