/**
 * The Redis journal store's own edges, against a real redis-server (the contract it shares with the memory and file
 * stores is in test/support/store-contracts.ts): where its keys live by default, an entry that is not one (another
 * writer's value) read as none, and a client that is not connected named in the error with what was not sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisJournalStore } from "../../src/redis";
import { connectRedis, startRedis, type RedisServer } from "../support/redis";
import { journaled } from "../support/store-contracts";

let server: RedisServer;
let redis: Awaited<ReturnType<typeof connectRedis>>;
beforeAll(async () => {
  server = await startRedis();
  redis = await connectRedis(server.url);
});
afterAll(async () => {
  redis?.destroy();
  await server?.stop();
});

const KEY = "order_0000000000000042";

describe("redisJournalStore", () => {
  it("keeps its keys under {x402:journal}: by default (one Cluster slot): the entry, the unfinished set, the key", async () => {
    const store = redisJournalStore(redis);
    expect(await store.put(journaled("a"))).toBe(true);
    expect(JSON.parse(String(await redis.get("{x402:journal}:entry:a")))).toEqual(journaled("a"));
    expect(await redis.sMembers("{x402:journal}:unfinished")).toEqual(["a"]);
    expect(await redis.get(`{x402:journal}:key:${KEY}`)).toBe("a");
    // Another store on the default prefix is the same journal.
    expect((await redisJournalStore(redis).latest(KEY))?.id).toBe("a");
    expect(await redisJournalStore(redis).put(journaled("b"))).toBe(false);
  });

  it("an entry that is not one (another writer's value) is read as none: not a key's latest, not unfinished", async () => {
    const prefix = "{foreign}:";
    const store = redisJournalStore(redis, { prefix });
    expect(await store.put(journaled("a"))).toBe(true);
    expect(await store.put(journaled("b", { key: "order_0000000000000043" }))).toBe(true);
    await redis.set(`${prefix}entry:a`, "{ not an entry");
    expect(await store.latest(KEY)).toBeUndefined();
    expect((await store.unfinished()).map((entry) => entry.id)).toEqual(["b"]);
  });

  it("a client that is not connected: each call fails at once, naming what was not sent", async () => {
    const closed = await connectRedis(server.url);
    closed.destroy();
    const store = redisJournalStore(closed, { prefix: "{closed}:" });
    await expect(store.put(journaled("a"))).rejects.toThrow("Redis is not connected: a journal write was not sent.");
    await expect(store.latest(KEY)).rejects.toThrow("Redis is not connected: a journal read was not sent.");
    await expect(store.unfinished()).rejects.toThrow("Redis is not connected: a journal read was not sent.");
  });
});
