/**
 * `fileJournalStore(path)`: the payment journal in an append-only JSONL file, one line per write, flushed to the disk
 * before `put` resolves. Several processes on one machine may share it: each reads the lines the others appended.
 */
import {
  UNFINISHED,
  journalRefuses,
  parseJournalEntry as parse,
  type JournalEntry,
  type JournalState,
  type JournalStore,
} from "../contracts";
import { lineAppender, readLinesFrom } from "./lines";
import { withFileLock } from "./lock";

export interface FileJournalStoreOptions {
  /** `fdatasync` after each entry, so a power loss keeps it too. Default `true`. */
  readonly sync?: boolean | undefined;
}

/** How long a journal write may hold the file's lock: a process killed holding it stops the others this long. */
const LOCK_TTL_MS = 5000;

/**
 * A journal store in a JSONL file: each `put` appends the entry whole; reading folds the file (the last line of an
 * attempt wins; a key's newest attempt is the one that appeared last). A line torn by a process killed mid-write is
 * skipped: its `put` never resolved, so its payment never went on. A `put` reads what the others appended and appends
 * its own holding the file's lock (`<path>.lock`), so that what the store contract refuses is refused across processes.
 */
export function fileJournalStore(path: string, options: FileJournalStoreOptions = {}): JournalStore {
  // Equivalent mutants (docs/mutation.md), marked where they are: `sync` only decides fdatasync (a power cut tells);
  // `forget` forgetting less only keeps more in memory; `Map.get(undefined)` is undefined anyway; a later line of an
  // attempt is of an unfinished one, already its key's newest (older ones are finished, so refused).
  // Stryker disable next-line LogicalOperator,BooleanLiteral: equivalent (above)
  const append = lineAppender(path, options.sync ?? true);
  /** The entries still needed: the unfinished, and each key's newest attempt. */
  const byId = new Map<string, JournalEntry>();
  const newest = new Map<string, string>();
  /** The state of every attempt read so far (forgotten ones too), to tell its first line from later ones. */
  const states = new Map<string, JournalState>();
  // A finished entry that no key names as its newest is read no more: it is let go (a long-lived store stays small).
  // Stryker disable next-line BlockStatement: equivalent (above)
  const forget = (id: string | undefined) => {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent (above)
    const entry = id === undefined ? undefined : byId.get(id);
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent (above)
    if (entry && !UNFINISHED.includes(entry.state) && (entry.key === undefined || newest.get(entry.key) !== id))
      byId.delete(id!);
  };
  let offset = 0;
  let writing: Promise<unknown> = Promise.resolve();
  // One read at a time: each picks up where the last stopped.
  let reading: Promise<void> = Promise.resolve();
  const catchUp = () => {
    const done = reading.then(async () => {
      const read = await readLinesFrom(path, offset);
      for (const line of read.lines) {
        const entry = parse(line);
        if (!entry) continue;
        // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent (above)
        if (!states.has(entry.id) && entry.key !== undefined) {
          const before = newest.get(entry.key);
          newest.set(entry.key, entry.id);
          forget(before);
        }
        states.set(entry.id, entry.state);
        byId.set(entry.id, entry);
        forget(entry.id);
      }
      offset = read.offset;
    });
    reading = done.catch(() => undefined);
    return done;
  };
  return {
    put(entry, options) {
      // This process's writes one after another; the lock orders them with the other processes'.
      const done = writing.then(() =>
        withFileLock({ lock: `${path}.lock`, next: `${path}.next`, ttl: LOCK_TTL_MS }, async (confirm) => {
          await catchUp();
          // Stryker disable next-line ConditionalExpression: equivalent (above)
          const newestId = entry.key === undefined ? undefined : newest.get(entry.key);
          const now = {
            stored: states.get(entry.id),
            // Stryker disable next-line ConditionalExpression: equivalent (above)
            newest: newestId === undefined ? undefined : states.get(newestId),
          };
          if (journalRefuses(now, options)) return false;
          if (!(await confirm()))
            throw new Error(`${path}: this process stalled past the journal's lock, so wrote nothing`);
          await append(JSON.stringify(entry));
          return true;
        }),
      );
      writing = done.catch(() => undefined);
      return done;
    },
    async latest(key) {
      await catchUp();
      const id = newest.get(key);
      // Stryker disable next-line ConditionalExpression: equivalent (above)
      return id === undefined ? undefined : byId.get(id);
    },
    async unfinished() {
      await catchUp();
      return [...byId.values()].filter((entry) => UNFINISHED.includes(entry.state));
    },
  };
}
