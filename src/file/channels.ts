/**
 * Batch-settlement channels in a directory, shared by the processes of one machine: `<id>.json` holds a channel's
 * state (written whole: a temporary file, flushed, renamed over it, the directory flushed), `<id>.lock` the lock of
 * the payment holding it and `<id>.next` the claim of the process whose turn is next.
 *
 * A lock or claim file is created exclusively (`O_EXCL`) and holds its owner's random token; its modification time is
 * when its owner last renewed it. Owners renew every third of `lockTtlMs`; one not renewed for `lockTtlMs` is stale
 * (its process died or stalled) and a waiter breaks it: renames it aside (one waiter wins), checks that what it moved
 * is the file it judged stale, removes it, and takes its turn. A holder renews, and saves, only while its own clock
 * says its lock is fresh with a third of `lockTtlMs` to spare, and only if the lock still holds its token, so a holder
 * that stalled past its lock never writes over the state of the next.
 */
import { mkdir, open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import {
  backoff,
  channelLines,
  channelStateFrom,
  channelStateJson,
  checkChannelId,
  checkOptions,
  fail,
  pause,
  show,
  type ChannelHold,
  type ChannelState,
  type ChannelStore,
} from "../contracts";
import { fileLock, ignoreMissing, openIfThere } from "./lock";

export interface FileChannelStoreOptions {
  /**
   * How long a lock outlives its last renewal: a holder renews it every third of this while it holds the channel,
   * so this is how long a crashed holder keeps others waiting. Default 10000.
   */
  readonly lockTtlMs?: number | undefined;
  /** Flush each state to the disk (`fdatasync`) before `save` resolves, so a power loss keeps it. Default `true`. */
  readonly sync?: boolean | undefined;
}

const STORE = "fileChannelStore";

/**
 * A `ChannelStore` in `directory` (created if missing), for `batchSettlementEvm({ storage })`: a process that restarts
 * finds its channels as it left them, and processes of one machine that give the same directory share them, each
 * channel held by one payment at a time across all of them. A process that dies while holding a channel keeps it
 * at most `lockTtlMs`; what it saved (the largest voucher it signed, before sending it) is there for the next.
 */
export function fileChannelStore(directory: string, options: FileChannelStoreOptions = {}): ChannelStore {
  if (typeof directory !== "string" || directory === "") fail(`${STORE}.directory`, "must be a non-empty path");
  if (typeof options !== "object" || options === null) fail(STORE, "options must be an object");
  checkOptions(`${STORE}.`, options, {
    lockTtlMs: (value) =>
      Number.isSafeInteger(value) && (value as number) >= 30 && (value as number) <= 86_400_000
        ? undefined
        : "is not a whole number of milliseconds from 30 to 86400000",
    sync: (value) => (typeof value === "boolean" ? undefined : `${show(value)} is not a boolean`),
  });
  const { lockTtlMs: ttl = 10_000, sync = true } = options;
  let made: Promise<unknown> | undefined;
  const ready = () => (made ??= mkdir(directory, { recursive: true }));
  const line = channelLines();
  const path = (id: string, ending: string) => join(directory, `${id}.${ending}`);

  const read = async (id: string): Promise<ChannelState | undefined> => {
    const text = await readText(path(id, "json"));
    return text === undefined ? undefined : channelStateFrom(STORE, id, text);
  };

  return {
    async peek(id) {
      checkChannelId(STORE, id);
      return read(id);
    },
    async hold(id, signal) {
      checkChannelId(STORE, id);
      await ready();
      const leave = await line(id, signal);
      const lock = fileLock(path(id, "lock"), path(id, "next"), ttl);
      let state: ChannelState | undefined;
      try {
        for (let tries = 0; !(await lock.attempt()); tries++) await pause(backoff(tries), signal);
        state = await read(id);
      } catch (error) {
        await lock.unlock().catch(() => undefined);
        leave();
        throw error;
      }
      let held = true;
      lock.renew();
      return {
        state,
        async save(value) {
          if (!held) throw new Error(`${STORE}: the hold on channel ${id} was released before its state was saved.`);
          if (!(await lock.confirm())) {
            throw new Error(
              `${STORE}: the lock on channel ${id} expired or was taken before its state was saved (this process ` +
                "stalled past lockTtlMs); nothing was written.",
            );
          }
          const target = path(id, "json");
          if (value === undefined) await unlink(target).catch(ignoreMissing);
          else await writeAtomic(target, `${channelStateJson(value)}\n`, `${lock.token}.tmp`, sync);
          if (sync) await syncDirectory(directory);
        },
        async release() {
          if (!held) return;
          held = false;
          try {
            await lock.unlock();
          } finally {
            leave();
          }
        },
      } satisfies ChannelHold;
    },
  };
}

/** Writes `text` to `file` whole: to a temporary file beside it, flushed, then renamed over it. */
async function writeAtomic(file: string, text: string, suffix: string, sync: boolean): Promise<void> {
  const temporary = `${file}.${suffix}`;
  const handle = await open(temporary, "w");
  try {
    await handle.writeFile(text, "utf8");
    if (sync) await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
}

/** Flushes the directory, so that a rename in it survives a power loss (where the platform can). */
async function syncDirectory(directory: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(directory, "r");
    await handle.sync();
  } catch {
    // Windows cannot open or flush a directory.
  } finally {
    await handle?.close();
  }
}

async function readText(file: string): Promise<string | undefined> {
  const handle = await openIfThere(file);
  if (!handle) return undefined;
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}
