/**
 * The files the CLI reads (keys, `-d @file`) and the ledger it writes: bounded reads, checked before
 * anything is sent. Paths are named in messages through the CLI's redaction only.
 */
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { bodySource, readBytes, type ReadError } from "../io";
import { refuseKeyShapedPath, UsageError } from "./output";

/** Largest key file read: a JSON byte array of a Solana key is under 400 bytes. */
export const KEY_FILE_BYTES = 64 * 1024;
/** Largest request body (`-d @file`, `-d @-`): it is held in memory, so the paid retry resends it byte for byte. */
export const DATA_BYTES = 100 * 1024 * 1024;

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException)?.code ?? "error";

/** A file's bytes, at most `maxBytes` (`/dev/zero` or a huge file is refused as it is read, not after). */
export async function readBounded(path: string, maxBytes: number, flag: string): Promise<Uint8Array> {
  try {
    return await readBytes(bodySource(createReadStream(path)) as ReadableStream, { maxBytes });
  } catch (error) {
    const { reason, cause } = error as ReadError;
    throw new UsageError(
      reason === "size"
        ? `${flag} ${path}: the file is larger than ${maxBytes} bytes.`
        : `${flag} ${path}: the file cannot be read (${codeOf(cause)}).`,
    );
  }
}

/** A ledger to append to: a regular file (made now if missing) this process can write, checked before paying. */
export async function checkLedgerPath(path: string, flag: string): Promise<void> {
  refuseKeyShapedPath(path, flag);
  const kind = await stat(path).then(
    (s) => (s.isFile() ? "file" : "other"),
    () => "missing",
  );
  if (kind === "other") throw new UsageError(`${flag} ${path}: not a regular file; nothing was sent.`);
  try {
    await (await open(path, "a")).close();
  } catch (error) {
    throw new UsageError(`${flag} ${path}: the file cannot be written (${codeOf(error)}); nothing was sent.`);
  }
}

/** A ledger to read: an existing regular file this process can read. */
export async function checkLedgerToRead(path: string, flag: string): Promise<void> {
  const regular = await stat(path).then(
    (s) => s.isFile(),
    () => undefined,
  );
  if (regular === false) throw new UsageError(`${flag} ${path}: not a regular file.`);
  try {
    await (await open(path, "r")).close();
  } catch (error) {
    throw new UsageError(`${flag} ${path}: the file cannot be read (${codeOf(error)}).`);
  }
}
