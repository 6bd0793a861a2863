/**
 * Budgets in a real redis-server through real clients paying a real HTTP seller: two clients on two
 * connections share one budget, as do two runs of the README's examples/redis-fleet.ts; and a Redis
 * that is down from the start, stops mid-run or does not answer refuses the payment with
 * BUDGET_UNAVAILABLE: nothing signed, nothing paid, nothing left reserved, and no wait past the
 * store's timeout.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createClient } from "redis";
import { generatePrivateKey } from "viem/accounts";
import { BudgetUnavailableError } from "../../src/entries/errors";
import { createX402Client, type BudgetStore } from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { redisBudgetStore } from "../../src/redis";
import { loopbackSeller, type LoopbackSeller } from "../support/loopback-seller";
import { connectRedis, freePort, startRedis, type RedisServer } from "../support/redis";
import { countingSigner } from "../support/wallets";
import { rejection } from "../support/wrappers";
import { budget } from "../../src";

let server: RedisServer;
let redis: Awaited<ReturnType<typeof connectRedis>>;
let seller: LoopbackSeller;
let run = 0;
const fresh = () => `test:client:${++run}:`;
/** $0.001 a payment. */
const PRICE = "1000";
const LIFE = { key: "client/life:client", limit: 3000, windowMs: undefined };

beforeAll(async () => {
  server = await startRedis();
  redis = await connectRedis(server.url);
  seller = await loopbackSeller(PRICE);
});
afterAll(async () => {
  redis?.destroy();
  await seller?.stop();
  await server?.stop();
});

/** A client with a counting signer whose budget of 3 payments lives in `store`, and its paying fetch. */
function buyer(store: BudgetStore) {
  const { calls, signer } = countingSigner();
  const client = createX402Client({ schemes: [exactEvm({ signer })], plugins: [budget({ limit: "$0.003", store })] });
  return { pay: wrapFetchWithPayment(fetch, client), signs: calls };
}

describe("redis budgets through the client", () => {
  it("two clients on two connections share one budget: 3 payments in all, then BUDGET_EXCEEDED for both", async () => {
    const prefix = fresh();
    const other = await connectRedis(server.url);
    try {
      const a = buyer(redisBudgetStore(redis, { prefix }));
      const b = buyer(redisBudgetStore(other, { prefix }));
      const before = seller.paid;
      expect((await a.pay(seller.url)).status).toBe(200);
      expect((await b.pay(seller.url)).status).toBe(200);
      expect((await a.pay(seller.url)).status).toBe(200);
      expect(await rejection(b.pay(seller.url))).toMatchObject({
        code: "BUDGET_EXCEEDED",
        details: { spent: "$0.003", reserved: "$0", limit: "$0.003" },
      });
      expect(await rejection(a.pay(seller.url))).toMatchObject({ code: "BUDGET_EXCEEDED" });
      expect(seller.paid - before).toBe(3);
      expect(a.signs.length + b.signs.length).toBe(3);
      expect(await redisBudgetStore(redis, { prefix }).usage(LIFE)).toEqual({ spent: 3000, reserved: 0 });
    } finally {
      other.destroy();
    }
  });

  it("examples/redis-fleet.ts (the README's) pays; a second process of it shares the budget and the ledger", async () => {
    const root = fileURLToPath(new URL("../../", import.meta.url));
    const env = { ...process.env, REDIS_URL: server.url, EVM_PRIVATE_KEY: generatePrivateKey() };
    const agent = () =>
      promisify(execFile)(process.execPath, ["--import", "tsx", "examples/redis-fleet.ts", seller.url], {
        cwd: root,
        env,
        timeout: 60_000,
      });
    const origin = new URL(seller.url).origin;
    expect((await agent()).stdout).toMatch(
      new RegExp(`^200 .*\\nfleet spend: ${origin} 0\\.001 USDC in 1 payments\\n$`, "s"),
    );
    expect((await agent()).stdout).toMatch(new RegExp(`fleet spend: ${origin} 0\\.002 USDC in 2 payments\\n$`));
    const store = redisBudgetStore(redis);
    expect(await store.usage({ key: "fleet:client", limit: 20_000_000, windowMs: 86_400_000 })).toEqual({
      spent: 2000,
      reserved: 0,
    });
    expect(await store.usage({ key: `origin/hour:origin:${origin}`, limit: 1_000_000, windowMs: 3_600_000 })).toEqual({
      spent: 2000,
      reserved: 0,
    });
  }, 120_000);

  it("examples/redis-fleet.ts (the README's) with no Redis where it should be: exits 1 saying so, at once, nothing paid", async () => {
    const root = fileURLToPath(new URL("../../", import.meta.url));
    const REDIS_URL = `redis://127.0.0.1:${await freePort()}`;
    const env = { ...process.env, REDIS_URL, EVM_PRIVATE_KEY: generatePrivateKey() };
    const before = seller.paid;
    const args = ["--import", "tsx", "examples/redis-fleet.ts", seller.url];
    const agent = promisify(execFile)(process.execPath, args, { cwd: root, env, timeout: 15_000 });
    type Failure = { code?: number; killed?: boolean; stderr?: string };
    const failed = await agent.then(
      () => undefined,
      (error: Failure) => error,
    );
    expect(failed, "node-redis's connect() must not wait for ever").toMatchObject({ code: 1, killed: false });
    expect(failed!.stderr).toMatch(/^Redis cannot be reached: connect ECONNREFUSED 127\.0\.0\.1:\d+\n$/);
    expect(seller.paid).toBe(before);
  });

  it("a request aborted while its reserve is under way: the reservation Redis then makes is released", async () => {
    const prefix = fresh();
    const real = redisBudgetStore(redis, { prefix });
    const controller = new AbortController();
    // The real store, the abort timed to come right after the reserve was sent.
    const store: BudgetStore = {
      ...real,
      reserve(...args) {
        const reserving = real.reserve(...args);
        controller.abort();
        return reserving;
      },
    };
    const { pay, signs } = buyer(store);
    const before = seller.paid;
    expect(await rejection(pay(seller.url, { signal: controller.signal }))).toMatchObject({ code: "ABORTED" });
    await vi.waitFor(async () => expect(await real.usage(LIFE)).toEqual({ spent: 0, reserved: 0 }));
    expect([seller.paid - before, signs.length]).toEqual([0, 0]);
  });

  it("nothing listening where Redis should be: BUDGET_UNAVAILABLE at once, nothing signed or paid", async () => {
    const nowhere = createClient({ url: `redis://127.0.0.1:${await freePort()}` });
    nowhere.on("error", () => undefined);
    const connecting = nowhere.connect().catch(() => undefined);
    try {
      const { pay, signs } = buyer(redisBudgetStore(nowhere, { timeoutMs: 600_000 }));
      const before = seller.paid;
      const error = await rejection(pay(seller.url));
      expect(error).toBeInstanceOf(BudgetUnavailableError);
      expect(error).toMatchObject({ code: "BUDGET_UNAVAILABLE", details: { budget: "client/life", url: seller.url } });
      expect(error.cause.message).toMatch(/Redis is not connected/);
      expect([seller.paid - before, signs.length]).toEqual([0, 0]);
    } finally {
      nowhere.destroy();
      await connecting;
    }
  });

  it("Redis stopped mid-run: the next payment is refused at once, the ones before it stay counted", async () => {
    const own = await startRedis();
    const client = await connectRedis(own.url);
    try {
      const prefix = fresh();
      const { pay, signs } = buyer(redisBudgetStore(client, { prefix, timeoutMs: 600_000 }));
      const before = seller.paid;
      expect((await pay(seller.url)).status).toBe(200);
      await own.stop();
      await vi.waitFor(() => expect(client.isReady).toBe(false));
      expect(await rejection(pay(seller.url))).toMatchObject({ code: "BUDGET_UNAVAILABLE" });
      expect([seller.paid - before, signs.length]).toEqual([1, 1]);
    } finally {
      client.destroy();
      await own.stop();
    }
  });

  it("Redis does not answer (CLIENT PAUSE): refused after timeoutMs; once it answers, nothing is left reserved", async () => {
    const prefix = fresh();
    const { pay, signs } = buyer(redisBudgetStore(redis, { prefix, timeoutMs: 100 }));
    const control = await connectRedis(server.url);
    const before = seller.paid;
    try {
      await control.sendCommand(["CLIENT", "PAUSE", "60000", "WRITE"]);
      const error = await rejection(pay(seller.url));
      expect(error).toMatchObject({ code: "BUDGET_UNAVAILABLE", cause: { name: "TimeoutError" } });
    } finally {
      await control.sendCommand(["CLIENT", "UNPAUSE"]);
      control.destroy();
    }
    expect([seller.paid - before, signs.length]).toEqual([0, 0]);
    expect(await redisBudgetStore(redis, { prefix }).usage(LIFE)).toEqual({ spent: 0, reserved: 0 });
    expect((await pay(seller.url)).status).toBe(200);
  });
});
