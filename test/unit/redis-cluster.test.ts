/**
 * x402-pay/redis on a real Redis Cluster (three redis-server masters) through node-redis's
 * createCluster: a budget entry's keys share one hash slot (a script over keys of two slots is
 * refused with CROSSSLOT), different budgets and scopes spread over the nodes, and concurrent
 * reserves from two cluster clients still take exactly the limit. The ledger and the sign-in store
 * work there too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCluster } from "redis";
import { redisBudgetStore, redisLedger, redisSignInStore } from "../../src/redis";
import { connectRedis, startRedisCluster, type RedisClusterServers } from "../support/redis";

let nodes: RedisClusterServers;
const clients: { destroy(): void }[] = [];

async function clusterClient() {
  const client = createCluster({ rootNodes: nodes.rootNodes });
  client.on("error", () => undefined);
  await client.connect();
  clients.push(client);
  return client;
}

beforeAll(async () => {
  nodes = await startRedisCluster(3);
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await nodes?.stop();
});

describe("x402-pay/redis on a Redis Cluster", () => {
  it("each budget entry lives in one slot, and entries of other scopes spread over the nodes", async () => {
    const store = redisBudgetStore(await clusterClient(), { prefix: "c:" });
    const entries = Array.from({ length: 12 }, (_, i) => ({
      key: `origin/day:origin:https://api${i}.example`,
      limit: 1000,
      windowMs: 86_400_000,
    }));
    for (const entry of entries) {
      expect(await store.reserve(entry, "a", 600)).toEqual({ ok: true, spent: 0, reserved: 0 });
      expect((await store.reserve(entry, "b", 401)).ok).toBe(false);
      await store.commit(entry, "a", 600);
      expect(await store.usage(entry)).toEqual({ spent: 600, reserved: 0 });
    }
    const holding: number[] = [];
    for (const server of nodes.servers) {
      const node = await connectRedis(server.url);
      try {
        const keys = await node.keys("c:*");
        if (keys.length > 0) holding.push(server.port);
        // Both keys of an entry (the hash and the window's times) are on the node that holds either.
        for (const key of keys)
          expect(keys).toContain(key.endsWith(":times") ? key.slice(0, -":times".length) : `${key}:times`);
      } finally {
        node.destroy();
      }
    }
    expect(holding.length).toBeGreaterThan(1);
  });

  it("without a shared hash tag, a script over two keys is refused (CROSSSLOT): the tag is what makes the entry one slot", async () => {
    const client = await clusterClient();
    await expect(
      client.eval("return 1", { keys: ["c:origin/day:a", "c:origin/day:a:times"], arguments: [] }),
    ).rejects.toThrow(/CROSSSLOT/);
  });

  it("300 concurrent reserves of 1 from two cluster clients against a limit of 100 take exactly 100", async () => {
    const stores = [await clusterClient(), await clusterClient()].map((client) =>
      redisBudgetStore(client, { prefix: "race:", timeoutMs: 30_000 }),
    );
    const entry = { key: "client/life:client", limit: 100, windowMs: undefined };
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => stores[i % 2]!.reserve(entry, `r${i}`, 1)));
    expect(answers.filter((a) => a.ok)).toHaveLength(100);
    expect(await stores[0]!.usage(entry)).toEqual({ spent: 0, reserved: 100 });
  });

  it("the ledger and the sign-in store work on the cluster", async () => {
    const client = await clusterClient();
    const ledger = redisLedger(client, { key: "c:ledger" });
    await ledger.append({
      id: "r1",
      time: "2026-11-23T10:00:00.000Z",
      outcome: "settled",
      url: "https://a.example/x",
      method: "GET",
    });
    const read = [];
    for await (const record of ledger.records()) read.push(record.id);
    expect(read).toEqual(["r1"]);
    const store = redisSignInStore(client);
    await store.set("https://a.example/x 0xabc", "eip155:84532");
    expect(await store.get("https://a.example/x 0xabc")).toBe("eip155:84532");
  });
});
