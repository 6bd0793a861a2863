/**
 * `x402-pay/file` (Node): the receipts ledger as an append-only JSONL file, one line per record, written with one
 * `write` to a file opened for appending and flushed to the disk (`fdatasync`) before `append` resolves. A process
 * killed mid-write can leave at most a torn last line: reading skips a line that is not whole JSON, and the next
 * append starts on a fresh line, so no completed record is lost and no line breaks reading. Several processes may
 * append to one file. Also batch-settlement's channels in a directory (`fileChannelStore`), and the payment journal
 * in a JSONL file of its own (`fileJournalStore`).
 */
import { readFile } from "node:fs/promises";
import type { Ledger, LedgerRecord, X402Plugin } from "../contracts";
import { recordOutcomes, settledAttempt } from "../extensions/ledger";
import { lineAppender } from "./lines";

export { fileChannelStore, type FileChannelStoreOptions } from "./channels";
export { fileJournalStore, type FileJournalStoreOptions } from "./journal";

export interface FileLedgerOptions {
  /** `fdatasync` after each record, so a power loss keeps it too. Default `true`. */
  readonly sync?: boolean | undefined;
  /** Names the ledger among the client's plug-ins (`ledger <name>`): needed when one client has two ledgers. */
  readonly name?: string | undefined;
}

/** The ledger in a JSONL file, as a plug-in: `plugins: [fileLedger("payments.jsonl")]`. */
export function fileLedger(path: string, options: FileLedgerOptions = {}): Ledger & X402Plugin {
  const append = lineAppender(path, options.sync ?? true);
  return recordOutcomes(
    {
      append: (record) => append(JSON.stringify(record)),
      async *records() {
        let text: string;
        try {
          text = await readFile(path, "utf8");
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
          throw error;
        }
        // Two processes that learn one settlement may both append it: it is read once.
        const settled = new Set<string>();
        for (const line of text.split("\n")) {
          const record = parse(line);
          const attempt = record && settledAttempt(record);
          if (attempt !== undefined && settled.has(attempt)) continue;
          if (attempt !== undefined) settled.add(attempt);
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
