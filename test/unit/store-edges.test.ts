/**
 * Stores at their edges. Budget stores: a payment counts in a window until exactly windowMs after it, not one ms more
 * (memory and Redis, on an injected clock). Channel stores after a failure: a hold that throws (a stored state that is not one, a wait given up) leaves the
 * channel free, in this process and for the others sharing the store, so the NEXT hold takes it at once, finds what
 * was there and can save. Run against the file store and a real Redis (each store's lock, not only its in-process
 * line). test/support/store-contracts.ts holds the rest of the contract.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChannelStore } from "../../src/contracts";
import { memoryBudgetStore, type BudgetStore } from "../../src";
import { fileChannelStore } from "../../src/file";
import { redisBudgetStore, redisChannelStore } from "../../src/redis";
import { connectRedis, startRedis, type RedisServer } from "../support/redis";

let server: RedisServer;
let redis: Awaited<ReturnType<typeof connectRedis>>;
const dir = mkdtempSync(join(tmpdir(), "x402-after-failure-"));
let run = 0;

beforeAll(async () => {
  server = await startRedis();
  redis = await connectRedis(server.url);
});
afterAll(async () => {
  redis?.destroy();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ID = `0x${"cd".repeat(32)}`;
/** Long: a lock left behind would hold the next holder for a minute, far past the test's time. */
const lockTtlMs = 60_000;

interface Kind {
  name: string;
  /** Two stores sharing one place (two processes), and a way to spoil a channel's stored state. */
  open: () => { stores: [ChannelStore, ChannelStore]; spoil: (id: string) => Promise<void> };
}

const kinds: Kind[] = [
  {
    name: "file channel store",
    open() {
      const place = join(dir, `run-${++run}`);
      return {
        stores: [fileChannelStore(place, { lockTtlMs }), fileChannelStore(place, { lockTtlMs })],
        spoil: async (id) => {
          await mkdir(place, { recursive: true });
          await writeFile(join(place, `${id}.json`), "{ not a channel");
        },
      };
    },
  },
  {
    name: "redis channel store",
    open() {
      const prefix = `after-failure:${++run}:`;
      return {
        stores: [redisChannelStore(redis, { prefix, lockTtlMs }), redisChannelStore(redis, { prefix, lockTtlMs })],
        spoil: async (id) => void (await redis.set(`${prefix}{${id}}`, "{ not a channel")),
      };
    },
  },
];

/** Holds `id` in `store`, or says "waiting" if the hold is not had by the time its wait would have to start. */
async function holdNow(store: ChannelStore, id: string) {
  const controller = new AbortController();
  const hold = store.hold(id, controller.signal);
  // A free channel is taken in a few round trips; a held one waits. 2 s is far past the first, far short of the TTL.
  const timer = setTimeout(() => controller.abort(), 2_000);
  try {
    return await hold;
  } finally {
    clearTimeout(timer);
  }
}

describe.each(kinds)("$name: after a hold that failed, the next one takes the channel at once", ({ open }) => {
  it("a stored state that is not a channel state: the hold throws, and leaves no lock for either store", async () => {
    const { stores, spoil } = open();
    await spoil(ID);
    await expect(stores[0].hold(ID)).rejects.toThrow(/is not a channel state/);
    // Each later hold reads it again and says so at once (a lock left behind would keep it waiting: ABORTED).
    await expect(holdNow(stores[1], ID)).rejects.toThrow(/is not a channel state/);
    await expect(holdNow(stores[0], ID)).rejects.toThrow(/is not a channel state/);
    // Left as it was, for a person to look at.
    await expect(stores[1].peek(ID)).rejects.toThrow(/is not a channel state/);
  });

  it("a wait given up (aborted): the holder's release hands the channel on, and a third hold takes it at once", async () => {
    const { stores } = open();
    const first = await holdNow(stores[0], ID);
    const controller = new AbortController();
    const waiting = stores[1].hold(ID, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: "ABORTED" });
    await first.save({ balance: "10", charged: "1", signed: "2" });
    await first.release();
    const next = await holdNow(stores[1], ID);
    expect(next.state).toMatchObject({ balance: "10", charged: "1", signed: "2" });
    await next.save({ balance: "10", charged: "2", signed: "2" });
    await next.release();
    const again = await holdNow(stores[0], ID);
    expect(again.state).toMatchObject({ charged: "2" });
    await again.release();
  });

  it("a save refused after release changes nothing, and the next hold takes the channel at once", async () => {
    const { stores } = open();
    const first = await holdNow(stores[0], ID);
    await first.save({ balance: "10", charged: "1", signed: "1" });
    await first.release();
    await expect(first.save({ balance: "99", charged: "99", signed: "99" })).rejects.toThrow(/released/);
    const next = await holdNow(stores[1], ID);
    expect(next.state).toMatchObject({ balance: "10", charged: "1" });
    await next.release();
  });
});

describe.each([
  ["memory budget store", (now: () => number): BudgetStore => memoryBudgetStore(now)],
  [
    "redis budget store",
    (now: () => number): BudgetStore => redisBudgetStore(redis, { prefix: `window:${++run}:`, now, timeoutMs: 30_000 }),
  ],
])("%s: a window to the ms", (_, open) => {
  it.each([
    [59_999, { spent: 700, reserved: 0 }],
    [60_000, { spent: 0, reserved: 0 }],
    [60_001, { spent: 0, reserved: 0 }],
  ])("%s ms after a payment", async (later, usage) => {
    let now = 1_000_000;
    const store = open(() => now);
    const entry = { key: "b:client", limit: 1000, windowMs: 60_000 };
    await store.reserve(entry, "a", 700);
    await store.commit(entry, "a", 700);
    now += later;
    expect(await store.usage(entry)).toEqual(usage);
    // What the window let go of is room again: 1000 fits only once the 700 has left it.
    expect((await store.reserve(entry, "b", 1000)).ok).toBe(usage.spent === 0);
  });
});
