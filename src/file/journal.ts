/**
 * `fileJournalStore(path)`: the payment journal in an append-only JSONL file, one line per write, flushed to the disk
 * before `put` resolves. Several processes on one machine may share it: each reads the lines the others appended.
 */
import { UNFINISHED, parseJournalEntry as parse, type JournalEntry, type JournalStore } from "../contracts";
import { lineAppender, readLinesFrom } from "./lines";

export interface FileJournalStoreOptions {
  /** `fdatasync` after each entry, so a power loss keeps it too. Default `true`. */
  readonly sync?: boolean | undefined;
}

/**
 * A journal store in a JSONL file: each `put` appends the entry whole; reading folds the file (the last line of an
 * attempt wins; a key's newest attempt is the one that appeared last). A line torn by a process killed mid-write is
 * skipped: its `put` never resolved, so its payment never went on.
 */
export function fileJournalStore(path: string, options: FileJournalStoreOptions = {}): JournalStore {
  const append = lineAppender(path, options.sync ?? true);
  const byId = new Map<string, JournalEntry>();
  const newest = new Map<string, string>();
  let offset = 0;
  // One read at a time: each picks up where the last stopped.
  let reading: Promise<void> = Promise.resolve();
  const catchUp = () => {
    const done = reading.then(async () => {
      const read = await readLinesFrom(path, offset);
      for (const line of read.lines) {
        const entry = parse(line);
        if (!entry) continue;
        if (entry.key !== undefined && !byId.has(entry.id)) newest.set(entry.key, entry.id);
        byId.set(entry.id, entry);
      }
      offset = read.offset;
    });
    reading = done.catch(() => undefined);
    return done;
  };
  return {
    put: (entry) => append(JSON.stringify(entry)),
    async latest(key) {
      await catchUp();
      const id = newest.get(key);
      return id === undefined ? undefined : byId.get(id);
    },
    async unfinished() {
      await catchUp();
      return [...byId.values()].filter((entry) => UNFINISHED.includes(entry.state));
    },
  };
}
