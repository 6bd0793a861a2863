/**
 * A lock shared by the processes of one machine, in two files: the lock `lock` and the next-turn claim `next`, each
 * created exclusively (`O_EXCL`) holding its owner's random token, its modification time when its owner last renewed
 * it. One not renewed for `ttl` is stale (its process died or stalled) and a waiter breaks it (see `breakStale`).
 */
import { randomBytes } from "node:crypto";
import { link, open, rename, stat, unlink, utimes } from "node:fs/promises";
import { backoff, pause } from "../contracts";

/**
 * One payment's lock on a channel: the lock file `lock` and the next-turn claim `next`, both holding its random
 * token. `attempt` takes the lock (or claims the next turn), `renew` keeps it fresh every third of `ttl` until
 * `unlock`, `confirm` says whether it is still ours (renewing it).
 */
export function fileLock(lock: string, next: string, ttl: number) {
  const token = randomBytes(16).toString("hex");
  /** When the lock was last created or renewed, by this process's clock. */
  let renewed = 0;
  let lost = false;
  let renewal: ReturnType<typeof setInterval> | undefined;
  let renewing: Promise<unknown> = Promise.resolve();
  const fresh = (now: number) => now < renewed + ttl - ttl / 3;

  const confirm = async (): Promise<boolean> => {
    const now = Date.now();
    if (lost || !fresh(now)) return !(lost = true);
    const held = await readClaim(lock);
    if (!held) {
      // Moved aside by a waiter checking it (about to put it back): ours again, as it is fresh.
      if (!(await create(lock, token)) && (await readClaim(lock))?.token !== token) return !(lost = true);
    } else if (held.token !== token) {
      return !(lost = true);
    } else {
      await touch(lock, now);
    }
    renewed = now;
    return true;
  };

  return {
    token,
    confirm,
    /** Takes the lock if it is free and the next turn is not another's; else claims the next turn. */
    async attempt(): Promise<boolean> {
      const now = Date.now();
      const claim = await readClaim(next);
      const claimLive = claim !== undefined && claim.mtimeMs + ttl > now;
      if ((!claimLive || claim.token === token) && (await create(lock, token))) {
        renewed = now;
        if (claim?.token === token) await removeIfOurs(next, token);
        return true;
      }
      const held = await readClaim(lock);
      if (held && held.mtimeMs + ttl < now) await breakStale(lock, held, ttl);
      else if (!claim) await create(next, token);
      else if (!claimLive) await breakStale(next, claim, ttl);
      else if (claim.token === token) await touch(next, now);
      return false;
    },
    renew() {
      renewal = setInterval(() => {
        renewing = renewing.then(() => confirm().catch(() => undefined));
      }, ttl / 3);
      renewal.unref?.();
    },
    /** Lets the lock and the claim go, if ours. A stale lock may be another's by now: it is left to its breaker. */
    async unlock(): Promise<void> {
      clearInterval(renewal);
      await renewing;
      await removeIfOurs(next, token);
      if (renewed > 0 && !lost && fresh(Date.now())) await removeIfOurs(lock, token);
    },
  };
}

interface Claim {
  readonly token: string;
  readonly mtimeMs: number;
  readonly ino: number;
}

/** A lock or claim file: its token (empty while its owner writes it), when it was renewed, and which file it is. */
async function readClaim(file: string): Promise<Claim | undefined> {
  const handle = await openIfThere(file);
  if (!handle) return undefined;
  try {
    const { mtimeMs, ino } = await handle.stat();
    const token = (await handle.readFile("utf8")).slice(0, 64);
    return { token, mtimeMs, ino };
  } finally {
    await handle.close();
  }
}

/** Creates `file` holding `token` if no such file exists; whether it did. */
async function create(file: string, token: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    await handle.write(token);
  } finally {
    await handle.close();
  }
  return true;
}

const touch = (file: string, now: number) => utimes(file, now / 1000, now / 1000).catch(ignoreMissing);

async function removeIfOurs(file: string, token: string): Promise<void> {
  if ((await readClaim(file))?.token === token) await unlink(file).catch(ignoreMissing);
}

/**
 * Removes `file` if it is still the stale `seen`: moved aside first (of several waiters, one moves it), then checked,
 * so a file made or renewed meanwhile is never removed (it is put back, unless another has been made since).
 */
async function breakStale(file: string, seen: Claim, ttl: number): Promise<void> {
  const aside = `${file}.${randomBytes(8).toString("hex")}.stale`;
  try {
    await rename(file, aside);
  } catch (error) {
    return ignoreMissing(error);
  }
  const moved = await stat(aside);
  if (moved.ino !== seen.ino || moved.mtimeMs + ttl >= Date.now()) await link(aside, file).catch(ignoreExisting);
  await unlink(aside).catch(ignoreMissing);
}

export function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}

export function ignoreExisting(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
}

/** `file` opened for reading, or `undefined` when there is none. */
export async function openIfThere(file: string) {
  try {
    return await open(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Runs `work` holding the lock `lock` (with its next-turn claim `next`), waiting for it as long as it takes (a stale
 * one is broken after `ttl`); `work` is given `confirm`, which says whether the lock is still ours, for right before
 * a write.
 */
export async function withFileLock<T>(
  { lock, next, ttl }: { lock: string; next: string; ttl: number },
  work: (confirm: () => Promise<boolean>) => Promise<T>,
): Promise<T> {
  const held = fileLock(lock, next, ttl);
  for (let tries = 0; !(await held.attempt()); tries++) await pause(backoff(tries));
  try {
    return await work(held.confirm);
  } finally {
    await held.unlock();
  }
}
