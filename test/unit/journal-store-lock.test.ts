/**
 * The file lock at its margins (src/file/lock.ts), on a clock set to the ms (vitest's fake `Date`) and lock files
 * aged to the ms (`utimes`): a lock not renewed for exactly its time to live is still held, one ms more and a waiter
 * breaks it; a next-turn claim likewise; a holder's own lock is its own until a third of the time to live is left,
 * not one ms longer. And the file journal's writes through it: a put waits on a lock held exactly 5 s, and goes on
 * one ms later.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fileJournalStore } from "../../src/file";
import { fileLock } from "../../src/file/lock";
import { journaled } from "../support/store-contracts";

const dir = mkdtempSync(join(tmpdir(), "x402-lock-margin-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let run = 0;
/** A lock and its next-turn claim of their own for each test. */
const place = () => {
  const base = join(dir, `lock-${++run}`);
  return { lock: `${base}.lock`, next: `${base}.next` };
};
const TTL = 3000;
/** A whole second (file times are exact to the ms there), near the real clock so that files made now are recent. */
let T = 0;
beforeEach(() => {
  T = Math.floor(Date.now() / 1000) * 1000;
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T);
});
afterEach(() => vi.useRealTimers());

/** Another process's file (a lock or a claim) holding `token`, last renewed at `at`. */
async function theirs(file: string, token: string, at: number) {
  await writeFile(file, token, { flag: "wx" });
  await utimes(file, at / 1000, at / 1000);
}
const holder = (file: string) => readFile(file, "utf8").catch(() => undefined);

describe("a lock another process took and stopped renewing", () => {
  it.each([
    [TTL - 1, "held"],
    [TTL, "held"],
    [TTL + 1, "broken"],
  ] as const)("%s ms after its last renewal (time to live 3000 ms): %s", async (age, outcome) => {
    const { lock, next } = place();
    await theirs(lock, "crashed", T);
    vi.setSystemTime(T + age);
    const mine = fileLock(lock, next, TTL);
    expect(await mine.attempt()).toBe(false);
    if (outcome === "held") {
      // Left whole, with its time; the waiter claimed the next turn and still waits.
      expect(await holder(lock)).toBe("crashed");
      expect((await stat(lock)).mtimeMs).toBe(T);
      expect(await holder(next)).toBe(mine.token);
      expect(await mine.attempt()).toBe(false);
      expect(await holder(lock)).toBe("crashed");
    } else {
      expect(await holder(lock)).toBeUndefined();
      expect(await mine.attempt()).toBe(true);
      expect(await holder(lock)).toBe(mine.token);
    }
  });
});

describe("another process's claim on the next turn, not renewed", () => {
  it.each([
    [TTL - 1, "keeps the turn: a free lock is not taken by another", false],
    [TTL, "has lost it (a claim lives while younger than its time to live): the free lock is taken", true],
    [TTL + 1, "has lost it: the free lock is taken", true],
  ] as const)("%s ms old: %s", async (age, _, taken) => {
    const { lock, next } = place();
    await theirs(next, "waiting", T);
    vi.setSystemTime(T + age);
    const mine = fileLock(lock, next, TTL);
    expect(await mine.attempt()).toBe(taken);
    expect(await holder(lock)).toBe(taken ? mine.token : undefined);
    // Its claim is not taken over while it lives, and never removed by a lock taken past it.
    expect(await holder(next)).toBe("waiting");
  });

  it.each([
    [TTL - 1, "kept"],
    [TTL, "kept"],
    [TTL + 1, "broken, and the waiter claims the turn"],
  ] as const)("while the lock is held: %s ms old, %s", async (age, outcome) => {
    const { lock, next } = place();
    await theirs(lock, "holder", T + age);
    await theirs(next, "waiting", T);
    vi.setSystemTime(T + age);
    const mine = fileLock(lock, next, TTL);
    expect(await mine.attempt()).toBe(false);
    if (outcome === "kept") {
      expect(await holder(next)).toBe("waiting");
      expect((await stat(next)).mtimeMs).toBe(T);
    } else {
      expect(await holder(next)).toBeUndefined();
      expect(await mine.attempt()).toBe(false);
      expect(await holder(next)).toBe(mine.token);
    }
    expect(await holder(lock)).toBe("holder");
  });
});

describe("a waiter's own claim on the next turn", () => {
  it("is renewed at each try (its time is the try's), so it keeps the turn while the waiter waits", async () => {
    const { lock, next } = place();
    await theirs(lock, "holder", T);
    const mine = fileLock(lock, next, TTL);
    expect(await mine.attempt()).toBe(false);
    vi.setSystemTime(T + 2000);
    await utimes(lock, (T + 2000) / 1000, (T + 2000) / 1000);
    expect(await mine.attempt()).toBe(false);
    expect(await holder(next)).toBe(mine.token);
    expect((await stat(next)).mtimeMs).toBeCloseTo(T + 2000, 0);
  });

  it("is let go once the waiter takes the lock (another's claim, above, is not)", async () => {
    const { lock, next } = place();
    await theirs(lock, "holder", T);
    const mine = fileLock(lock, next, TTL);
    expect(await mine.attempt()).toBe(false);
    expect(await holder(next)).toBe(mine.token);
    rmSync(lock);
    expect(await mine.attempt()).toBe(true);
    expect(await holder(lock)).toBe(mine.token);
    expect(await holder(next)).toBeUndefined();
    // Another waiter claims the next turn meanwhile: the unlock lets the lock go and leaves that claim be.
    await theirs(next, "waiting", T);
    await mine.unlock();
    expect(await holder(lock)).toBeUndefined();
    expect(await holder(next)).toBe("waiting");
  });
});

describe("the holder's own lock, against its margin (a third of the time to live)", () => {
  it.each([
    [TTL - TTL / 3 - 1, true],
    [TTL - TTL / 3, false],
  ] as const)("%s ms after it was taken, still its own: %s", async (later, own) => {
    const { lock, next } = place();
    const mine = fileLock(lock, next, TTL);
    expect(await mine.attempt()).toBe(true);
    const taken = (await stat(lock)).mtimeMs;
    vi.setSystemTime(T + later);
    expect(await mine.confirm()).toBe(own);
    if (own) {
      // Confirmed is renewed: the lock's time is now (to the ms), and a margin runs from it again.
      expect((await stat(lock)).mtimeMs).toBeCloseTo(T + later, 0);
      vi.setSystemTime(T + later + TTL - TTL / 3 - 1);
      expect(await mine.confirm()).toBe(true);
      await mine.unlock();
      expect(await holder(lock)).toBeUndefined();
    } else {
      // Lost for good (a waiter may break it from now on), even back in time, and left for its breaker.
      expect((await stat(lock)).mtimeMs).toBe(taken);
      vi.setSystemTime(T);
      expect(await mine.confirm()).toBe(false);
      await mine.unlock();
      expect(await holder(lock)).toBe(mine.token);
    }
  });

  it("a lock taken by another meanwhile is not its own, however fresh", async () => {
    const { lock, next } = place();
    const mine = fileLock(lock, next, TTL);
    expect(await mine.attempt()).toBe(true);
    rmSync(lock);
    await theirs(lock, "thief", T);
    expect(await mine.confirm()).toBe(false);
    await mine.unlock();
    expect(await holder(lock)).toBe("thief");
  });

  it("a lock moved aside by a waiter checking it is made again by its holder, who keeps it", async () => {
    const { lock, next } = place();
    const mine = fileLock(lock, next, TTL);
    expect(await mine.attempt()).toBe(true);
    rmSync(lock);
    vi.setSystemTime(T + 1000);
    expect(await mine.confirm()).toBe(true);
    expect(await holder(lock)).toBe(mine.token);
    await mine.unlock();
    expect(await holder(lock)).toBeUndefined();
  });
});

describe("the file journal's writes behind a lock left by a process killed holding it (5 s to live)", () => {
  it("a put waits while the lock is exactly 5000 ms old, and goes on once it is 5001 ms old", async () => {
    const path = join(dir, `journal-${++run}.jsonl`);
    await theirs(`${path}.lock`, "killed", T);
    vi.setSystemTime(T + 5000);
    const store = fileJournalStore(path, { sync: false });
    let written: boolean | undefined;
    const put = store.put(journaled("a")).then((result) => (written = result));
    // Dozens of tries (a backoff of at most 25 ms each), all at the lock's last ms.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(written).toBeUndefined();
    expect(await holder(`${path}.lock`)).toBe("killed");
    vi.setSystemTime(T + 5001);
    expect(await put).toBe(true);
    expect((await store.latest("order_0000000000000042"))?.id).toBe("a");
  });
});

it("a journal in a folder that does not exist: the put fails at once (it does not wait on a lock it cannot make)", async () => {
  const store = fileJournalStore(join(dir, "no-such-folder", "journal.jsonl"), { sync: false });
  await expect(store.put(journaled("a"))).rejects.toMatchObject({ code: "ENOENT" });
});

describe("a journal write that stalled while holding the lock (a third of its 5 s left: 3333.3 ms after it was taken)", () => {
  it.each([
    [3333, "still its own: the entry is written"],
    [3334, "past its margin: the put throws and writes nothing, the lock left for a waiter to break"],
  ] as const)("%s ms after the lock was taken: %s", async (later, _) => {
    const path = join(dir, `journal-${++run}.jsonl`);
    const store = fileJournalStore(path, { sync: false });
    // The lock is taken at T; everything after (the check right before the append) reads T + later.
    let calls = 0;
    vi.spyOn(Date, "now").mockImplementation(() => (calls++ === 0 ? T : T + later));
    const put = store.put(journaled("a"));
    if (later === 3333) {
      expect(await put).toBe(true);
      expect(await holder(`${path}.lock`)).toBeUndefined();
    } else {
      await expect(put).rejects.toThrow(/stalled past the journal's lock, so wrote nothing/);
      expect(await holder(`${path}.lock`)).toHaveLength(32);
    }
    vi.restoreAllMocks();
    const fresh = fileJournalStore(path, { sync: false });
    expect((await fresh.latest("order_0000000000000042"))?.id).toBe(later === 3333 ? "a" : undefined);
    if (later === 3334) {
      // The store's next write is not held up by the one that threw; it breaks the lock once it is 5 s old.
      const left = (await stat(`${path}.lock`)).mtimeMs;
      const next = store.put(journaled("b"));
      vi.setSystemTime(Math.ceil(left) + 5001);
      expect(await next).toBe(true);
      expect((await fresh.latest("order_0000000000000042"))?.id).toBe("b");
    }
  });
});
