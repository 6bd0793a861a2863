/**
 * The files the CLI reads (keys, `-d @file`) and the ledger it writes: bounded reads, checked before
 * anything is sent. Paths are named in messages through the CLI's redaction only.
 */
import { open, stat } from "node:fs/promises";
import { refuseKeyShapedPath, UsageError } from "./output";

/** Largest key file read: a JSON byte array of a Solana key is under 400 bytes. */
export const KEY_FILE_BYTES = 64 * 1024;
/** Largest request body (`-d @file`, `-d @-`): it is held in memory, so the paid retry resends it byte for byte. */
export const DATA_BYTES = 100 * 1024 * 1024;

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException)?.code ?? "error";

/** A file's bytes, at most `maxBytes` (`/dev/zero` or a huge file is refused as it is read, not after). */
export async function readBounded(path: string, maxBytes: number, flag: string): Promise<Uint8Array> {
  const unreadable = (error: unknown) => new UsageError(`${flag} ${path}: the file cannot be read (${codeOf(error)}).`);
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw unreadable(error);
  }
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const buffer = new Uint8Array(Math.min(64 * 1024, maxBytes + 1 - size));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null).catch((error: unknown) => {
        throw unreadable(error);
      });
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      if ((size += bytesRead) > maxBytes) {
        throw new UsageError(`${flag} ${path}: the file is larger than ${maxBytes} bytes.`);
      }
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  } finally {
    await handle.close().catch(() => {});
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
