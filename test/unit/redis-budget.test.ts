/**
 * The Redis budget store against a real redis-server, in what is Redis's own (the store contract,
 * store-contracts.test.ts, covers reserve / commit / release / windows / concurrency): Redis's clock and
 * keys that expire with their window, exact sums up to the largest limit, the script reloaded after
 * SCRIPT FLUSH, and failing closed: a server that is gone or paused rejects, bounded.
 */
import { describe, expect, it, vi } from "vitest";
import type { BudgetEntry } from "../../src";
import { redisBudgetStore } from "../../src/redis";
import { connectRedis, startRedis, useRedis } from "../support/redis";

/** The server, a client, and a fresh key prefix per test, so tests share the server and not their keys. */
const live = useRedis((run) => `test:${run}:`);

const entry = (over: Partial<BudgetEntry> = {}): BudgetEntry => ({
  key: "b:client",
  limit: 1000,
  windowMs: undefined,
  ...over,
});

describe("redis budget store: in Redis", () => {
  it("a window runs on Redis's clock: its keys expire with it, and what it has passed no longer counts", async () => {
    const prefix = live.fresh();
    const store = redisBudgetStore(live.redis, { prefix });
    const e = entry({ key: "w:client", windowMs: 200 });
    await store.reserve(e, "a", 400);
    await store.commit(e, "a", 400);
    await store.reserve(e, "b", 100);
    expect(await live.redis.keys(`${prefix}*`)).toEqual(
      expect.arrayContaining([`${prefix}{w:client}`, `${prefix}{w:client}:times`]),
    );
    for (const key of await live.redis.keys(`${prefix}*`)) expect(await live.redis.pTTL(key)).toBeGreaterThan(0);
    await vi.waitFor(async () => expect(await store.usage(e)).toEqual({ spent: 0, reserved: 0 }), {
      timeout: 10_000,
      interval: 50,
    });
    await vi.waitFor(async () => expect(await live.redis.keys(`${prefix}*`)).toEqual([]), {
      timeout: 10_000,
      interval: 50,
    });
  });

  it("a budget without a window keeps its keys for good", async () => {
    const prefix = live.fresh();
    const store = redisBudgetStore(live.redis, { prefix });
    await store.reserve(entry(), "a", 10);
    await store.commit(entry(), "a", 10);
    expect(await live.redis.keys(`${prefix}*`)).toEqual([`${prefix}{b:client}`]);
    expect(await live.redis.pTTL(`${prefix}{b:client}`)).toBe(-1);
  });

  it("sums stay exact up to the largest limit ($9 billion in micro-dollars), and a payment of 0 reserves and releases", async () => {
    const store = redisBudgetStore(live.redis, { prefix: live.fresh() });
    const e = entry({ limit: 9e15, windowMs: 60_000 });
    expect((await store.reserve(e, "a", 9e15 - 1)).ok).toBe(true);
    expect((await store.reserve(e, "b", 2)).ok).toBe(false);
    expect(await store.reserve(e, "b", 1)).toEqual({ ok: true, spent: 0, reserved: 9e15 - 1 });
    await store.commit(e, "a", 8_999_999_999_999_999);
    await store.commit(e, "b", 1);
    expect(await store.usage(e)).toEqual({ spent: 9e15, reserved: 0 });
    const small = entry({ key: "zero" });
    expect((await store.reserve(small, "z", 0)).ok).toBe(true);
    await store.release(small, "z");
    await store.reserve(small, "y", 0);
    await store.commit(small, "y", 0);
    expect(await store.usage(small)).toEqual({ spent: 0, reserved: 0 });
  });

  it("after SCRIPT FLUSH (a restarted or failed-over Redis) the script is sent again", async () => {
    const store = redisBudgetStore(live.redis, { prefix: live.fresh() });
    await store.reserve(entry(), "a", 1);
    await live.redis.scriptFlush();
    expect(await store.reserve(entry(), "b", 1)).toEqual({ ok: true, spent: 0, reserved: 1 });
    expect(await store.usage(entry())).toEqual({ spent: 0, reserved: 2 });
  });

  it("a reservation id taken already is refused, and the budget is unchanged", async () => {
    const store = redisBudgetStore(live.redis, { prefix: live.fresh() });
    await store.reserve(entry(), "a", 5);
    await expect(store.reserve(entry(), "a", 5)).rejects.toThrow(/reservation a exists/);
    expect(await store.usage(entry())).toEqual({ spent: 0, reserved: 5 });
  });

  it.each([
    [entry(), 1.5],
    [entry(), -1],
    [entry(), 9e15 + 1],
    [entry({ limit: 0 }), 1],
    [entry({ limit: 2.5 }), 1],
    [entry({ windowMs: 0 }), 1],
    [entry({ key: 7 as never }), 1],
  ])("%j, amount %d: rejected with a TypeError, nothing written", async (bad, amount) => {
    const prefix = live.fresh();
    const store = redisBudgetStore(live.redis, { prefix });
    await expect(store.reserve(bad, "a", amount)).rejects.toThrow(TypeError);
    expect(await live.redis.keys(`${prefix}*`)).toEqual([]);
  });

  it.each([
    [{ timeoutMs: 0 }, "redisBudgetStore.timeoutMs"],
    [{ timeoutMs: 1.5 }, "redisBudgetStore.timeoutMs"],
    [{ timeoutMs: "1000" }, "redisBudgetStore.timeoutMs"],
    [{ prefix: "" }, "redisBudgetStore.prefix"],
    [{ now: 5 }, "redisBudgetStore.now"],
    [{ url: "redis://x" }, "redisBudgetStore.url"],
    [null, "redisBudgetStore"],
  ])("options %j: INVALID_CONFIG naming %s", (options, option) => {
    expect(() => redisBudgetStore(live.redis, options as never)).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", details: { option } }),
    );
  });

  it("a value that is no node-redis client: INVALID_CONFIG naming what it lacks", () => {
    expect(() => redisBudgetStore({ get() {} } as never)).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        details: { option: "redisBudgetStore.redis" },
        message: expect.stringMatching(/lacking evalSha, eval/),
      }),
    );
  });
});

describe("redis budget store: failing closed, never hanging", () => {
  it("a server that stopped: calls reject at once (not after timeoutMs), and reconnecting is not waited for", async () => {
    const own = await startRedis();
    const client = await connectRedis(own.url);
    try {
      const store = redisBudgetStore(client, { prefix: live.fresh(), timeoutMs: 600_000 });
      expect((await store.reserve(entry(), "a", 1)).ok).toBe(true);
      await own.stop();
      await vi.waitFor(() => expect(client.isReady).toBe(false));
      // A wait of timeoutMs would outlast the test's own timeout.
      await expect(store.reserve(entry(), "b", 1)).rejects.toThrow(/not connected/);
      await expect(store.usage(entry())).rejects.toThrow(/not connected/);
    } finally {
      client.destroy();
      await own.stop();
    }
  });

  it("a server that does not answer (CLIENT PAUSE): the reserve rejects after timeoutMs, and its release follows it, so nothing stays reserved", async () => {
    const control = await connectRedis(live.server.url);
    const store = redisBudgetStore(live.redis, { prefix: live.fresh(), timeoutMs: 100 });
    try {
      await control.sendCommand(["CLIENT", "PAUSE", "60000", "WRITE"]);
      await expect(store.reserve(entry(), "a", 1)).rejects.toMatchObject({
        name: "TimeoutError",
        message: "Redis did not answer budget reserve within 100 ms.",
      });
    } finally {
      await control.sendCommand(["CLIENT", "UNPAUSE"]);
      control.destroy();
    }
    await vi.waitFor(async () => expect(await store.usage(entry())).toEqual({ spent: 0, reserved: 0 }));
  });
});

describe("redis budget store: each window's length", () => {
  it.each([60_000, 86_400_000, 604_800_000])(
    "window %i ms: a reservation and a commit count for the window, and not one ms more",
    async (windowMs) => {
      let now = 1_700_000_000_000;
      const store = redisBudgetStore(live.redis, { prefix: live.fresh(), now: () => now });
      const e = entry({ windowMs });
      await store.reserve(e, "a", 600);
      await store.commit(e, "a", 600);
      await store.reserve(e, "b", 300);
      now += windowMs - 1;
      expect(await store.usage(e)).toEqual({ spent: 600, reserved: 300 });
      expect((await store.reserve(e, "c", 101)).ok).toBe(false);
      now += 1;
      expect(await store.usage(e)).toEqual({ spent: 0, reserved: 0 });
    },
  );
});
