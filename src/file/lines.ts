/** An append-only file of JSON lines, shared by processes on one machine: appends, and reading back what is whole. */
import { open } from "node:fs/promises";

/**
 * Appends lines to `path`, one at a time from this process, in order: each with one `write` to a file opened for
 * appending, flushed to the disk (`fdatasync`) before it resolves when `sync`. A torn last line (a process killed
 * mid-write) is closed off first, so each line starts a line of its own.
 */
export function lineAppender(path: string, sync: boolean): (line: string) => Promise<void> {
  let queue: Promise<unknown> = Promise.resolve();
  return (line) => {
    const done = queue.then(async () => {
      const file = await open(path, "a+");
      try {
        const { size } = await file.stat();
        const last = Buffer.alloc(1);
        const torn = size > 0 && (await file.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== 0x0a;
        await file.write(torn ? `\n${line}\n` : `${line}\n`);
        if (sync) await file.datasync();
      } finally {
        await file.close();
      }
    });
    queue = done.catch(() => undefined);
    return done;
  };
}

/**
 * Reads the whole lines written to `path` since `offset` (bytes): the lines, and the offset after the last whole one
 * (a line still being written is left for the next read). A file that does not exist has none.
 */
export async function readLinesFrom(path: string, offset: number): Promise<{ lines: string[]; offset: number }> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { lines: [], offset };
    throw error;
  }
  try {
    const { size } = await file.stat();
    if (size < offset)
      throw new Error(`${path} shrank while in use (it was truncated or replaced): it is append-only.`);
    if (size === offset) return { lines: [], offset };
    const buffer = Buffer.alloc(size - offset);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, offset);
    const end = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (end < 0) return { lines: [], offset };
    const lines = buffer.subarray(0, end).toString("utf8").split("\n");
    return { lines, offset: offset + end + 1 };
  } finally {
    await file.close();
  }
}
