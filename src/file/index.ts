/**
 * `x402-pay/file`: the receipts ledger as an append-only JSONL file (Node). One line per record,
 * written with one `write` to a file opened for appending and flushed to the disk (`fdatasync`) before
 * `append` resolves. A process killed mid-write can leave at most a torn last line: reading skips a
 * line that is not whole JSON, and the next append starts on a fresh line, so no completed record is
 * lost and no line breaks reading. Several processes may append to one file. Also batch-settlement's channels in a
 * directory (`fileChannelStore`).
 */
import { open, readFile } from "node:fs/promises";
import type { Ledger, LedgerRecord, X402Plugin } from "../contracts";
import { recordOutcomes } from "../extensions/ledger";

export { fileChannelStore, type FileChannelStoreOptions } from "./channels";

export interface FileLedgerOptions {
  /** `fdatasync` after each record, so a power loss keeps it too. Default `true`. */
  readonly sync?: boolean | undefined;
  /** Names the ledger among the client's plug-ins (`ledger <name>`): needed when one client has two ledgers. */
  readonly name?: string | undefined;
}

/** The ledger in a JSONL file, as a plug-in: `plugins: [fileLedger("payments.jsonl")]`. */
export function fileLedger(path: string, options: FileLedgerOptions = {}): Ledger & X402Plugin {
  const sync = options.sync ?? true;
  // One append at a time from this process, in order.
  let queue: Promise<unknown> = Promise.resolve();
  return recordOutcomes(
    {
      append(record) {
        const line = `${JSON.stringify(record)}\n`;
        const done = queue.then(async () => {
          const file = await open(path, "a+");
          try {
            // A torn last line (a process killed mid-write) is closed off, so this record starts a line of its own.
            const { size } = await file.stat();
            const last = Buffer.alloc(1);
            const torn = size > 0 && (await file.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== 0x0a;
            await file.write(torn ? `\n${line}` : line);
            if (sync) await file.datasync();
          } finally {
            await file.close();
          }
        });
        queue = done.catch(() => undefined);
        return done;
      },
      async *records() {
        let text: string;
        try {
          text = await readFile(path, "utf8");
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
          throw error;
        }
        for (const line of text.split("\n")) {
          const record = parse(line);
          if (record) yield record;
        }
      },
    },
    options,
  );
}

/** A whole record, or `undefined` for an empty or torn line. */
function parse(line: string): LedgerRecord | undefined {
  if (line === "") return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && typeof (value as LedgerRecord).id === "string"
      ? (value as LedgerRecord)
      : undefined;
  } catch {
    return undefined;
  }
}
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
