/**
 * The receipts ledger in a Redis stream, against a real redis-server: records read back in the order
 * appended across several pages and from another connection, spendBy / unreconciled / reconcile over
 * it, another writer's entries skipped, and a server that is gone failing the call at once.
 */
import { describe, expect, it, vi } from "vitest";
import type { LedgerRecord } from "../../src";
import { redisLedger } from "../../src/redis";
import { USDC_BASE_SEPOLIA } from "../support/seller";
import { connectRedis, startRedis, useRedis } from "../support/redis";

/** The server, a client, and a fresh key prefix per test, so tests share the server and not their keys. */
const live = useRedis((run) => `test:ledger:${run}`);

const record = (i: number, over: Partial<LedgerRecord> = {}): LedgerRecord => ({
  id: `r${i}`,
  time: `2026-11-${String(20 + (i % 3)).padStart(2, "0")}T10:00:00.000Z`,
  outcome: "settled",
  url: `https://${i % 2 ? "a" : "b"}.example/x`,
  method: "GET",
  scheme: "exact",
  network: "eip155:84532",
  asset: USDC_BASE_SEPOLIA,
  amount: "1000",
  payer: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  payee: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
  ...over,
});

async function all(ledger: { records(): AsyncIterable<LedgerRecord> }) {
  const list: LedgerRecord[] = [];
  for await (const r of ledger.records()) list.push(r);
  return list;
}

describe("redis ledger", () => {
  it("a settled attempt is stored once, by its script: sent by its SHA, and again in full after SCRIPT FLUSH", async () => {
    const key = live.fresh();
    const ledger = redisLedger(live.redis, { key });
    await ledger.append(record(1, { attempt: "a1" }));
    await live.redis.scriptFlush();
    await ledger.append(record(2, { attempt: "a1" }));
    await ledger.append(record(3, { attempt: "a2" }));
    expect((await all(ledger)).map((r) => r.id)).toEqual(["r1", "r3"]);
    // Its set of attempts shares the stream's Redis Cluster slot: tagged by the key, or by the key's own tag.
    expect(await live.redis.sMembers(`{${key}}:attempts`)).toEqual(expect.arrayContaining(["a1", "a2"]));
    const tagged = `{${live.fresh()}}:ledger`;
    await redisLedger(live.redis, { key: tagged }).append(record(4, { attempt: "a4" }));
    expect(await live.redis.sMembers(`${tagged}:attempts`)).toEqual(["a4"]);
  });

  it("one stream entry per record, read back in order over several pages, by another connection too", async () => {
    const key = live.fresh();
    const ledger = redisLedger(live.redis, { key });
    const records = Array.from({ length: 1201 }, (_, i) => record(i));
    for (const r of records) await ledger.append(r);
    expect(await live.redis.xLen(key)).toBe(1201);
    expect(await all(ledger)).toEqual(records);
    const other = await connectRedis(live.server.url);
    try {
      expect(await all(redisLedger(other, { key }))).toEqual(records);
    } finally {
      other.destroy();
    }
  });

  it("an empty stream has no records; the default key is x402:ledger", async () => {
    expect(await all(redisLedger(live.redis, { key: live.fresh() }))).toEqual([]);
    await redisLedger(live.redis).append(record(1));
    expect(
      (await live.redis.xRange("x402:ledger", "-", "+"))!.map((entry) => JSON.parse(entry.message.record!)),
    ).toEqual([record(1)]);
  });

  it("named, it is the plug-in `ledger <name>` (a second ledger of one client); a name that is no name is refused", () => {
    expect([redisLedger(live.redis).name, redisLedger(live.redis, { name: "fleet" }).name]).toEqual([
      "ledger",
      "ledger fleet",
    ]);
    expect(() => redisLedger(live.redis, { name: "" })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringMatching(/^redisLedger\.name: /) }),
    );
  });

  it("entries that are not records (another writer's) are skipped", async () => {
    const key = live.fresh();
    const ledger = redisLedger(live.redis, { key });
    await ledger.append(record(1));
    await live.redis.xAdd(key, "*", { other: "field" });
    await live.redis.xAdd(key, "*", { record: "not json" });
    await live.redis.xAdd(key, "*", { record: '{"no":"id"}' });
    await ledger.append(record(2));
    expect(await all(ledger)).toEqual([record(1), record(2)]);
  });

  it("a server that stopped: append and records reject at once", async () => {
    const own = await startRedis();
    const client = await connectRedis(own.url);
    try {
      const ledger = redisLedger(client, { timeoutMs: 600_000 });
      await ledger.append(record(1));
      await own.stop();
      await vi.waitFor(() => expect(client.isReady).toBe(false));
      await expect(ledger.append(record(2))).rejects.toThrow(/Redis is not connected: a ledger append was not sent/);
      await expect(all(ledger)).rejects.toThrow(/not connected/);
    } finally {
      client.destroy();
      await own.stop();
    }
  });

  it.each([
    [{ key: "" }, "redisLedger.key"],
    [{ timeoutMs: -1 }, "redisLedger.timeoutMs"],
    [{ stream: "x" }, "redisLedger.stream"],
  ])("options %j: INVALID_CONFIG naming %s", (options, option) => {
    expect(() => redisLedger(live.redis, options as never)).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", details: { option } }),
    );
  });
});
