/**
 * The proof that a fleet shares one budget: 8 worker processes, each with its own wallet and Redis
 * connection, make 250 paid requests each (8 at a time) through real x402-pay clients against one
 * real HTTP seller, sharing a budget of 1000 payments ($1 at $0.001) in a real redis-server. Half the
 * demand is refused. Each of 3 runs (a fresh budget each) pays exactly 1000: the seller counts 1000
 * paid requests with 1000 distinct nonces, the wallets signed 1000, the other 1000 attempts were
 * BUDGET_EXCEEDED before any signature, and the store holds $1 spent and nothing reserved.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisBudgetStore } from "../../src/redis";
import { loopbackSeller, type LoopbackSeller } from "../support/loopback-seller";
import { connectRedis, startRedis, type RedisServer } from "../support/redis";
import type { FleetResult, FleetRun } from "../support/redis-fleet-worker";

const WORKERS = 8;
const PAYMENTS = 250;
const RUNS = 3;
/** $0.001 in Base Sepolia USDC (6 decimals): the budget of $1 takes 1000 payments. */
const PRICE = "1000";

const root = fileURLToPath(new URL("../../", import.meta.url));
let server: RedisServer;
let redis: Awaited<ReturnType<typeof connectRedis>>;
let seller: LoopbackSeller;
const workers: ChildProcess[] = [];

/** Sends a worker a run and resolves with its answer (or rejects if it exits first). */
function pay(worker: ChildProcess, run: FleetRun): Promise<FleetResult> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`a fleet worker exited (${code}) during a run`));
    worker.once("exit", exited);
    worker.once("message", (result) => {
      worker.off("exit", exited);
      resolve(result as FleetResult);
    });
    worker.send(run);
  });
}

beforeAll(async () => {
  server = await startRedis();
  redis = await connectRedis(server.url);
  seller = await loopbackSeller(PRICE);
  for (let i = 0; i < WORKERS; i++) {
    const worker = fork(`${root}test/support/redis-fleet-worker.ts`, [server.url, seller.url], {
      cwd: root,
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    workers.push(worker);
  }
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((resolve, reject) => {
          worker.once("message", () => resolve());
          worker.once("exit", (code) => reject(new Error(`a fleet worker exited (${code}) before it was ready`)));
        }),
    ),
  );
}, 120_000);

afterAll(async () => {
  for (const worker of workers) worker.kill();
  redis?.destroy();
  await seller?.stop();
  await server?.stop();
});

describe("a fleet sharing one Redis budget", () => {
  it(`${WORKERS} processes × ${PAYMENTS} payments against a budget of 1000 payments pay exactly 1000, run after run`, async () => {
    for (let run = 1; run <= RUNS; run++) {
      const prefix = `fleet:${run}:`;
      const paidBefore = seller.paid;
      const results = await Promise.all(workers.map((worker) => pay(worker, { prefix, payments: PAYMENTS, lanes: 8 })));

      const total = (pick: (r: FleetResult) => number) => results.reduce((sum, r) => sum + pick(r), 0);
      const errors: Record<string, number> = {};
      for (const r of results) for (const [code, n] of Object.entries(r.errors)) errors[code] = (errors[code] ?? 0) + n;
      expect({
        run,
        seller: seller.paid - paidBefore,
        paid: total((r) => r.paid),
        signed: total((r) => r.signed),
        errors,
      }).toEqual({
        run,
        seller: 1000,
        paid: 1000,
        signed: 1000,
        errors: { BUDGET_EXCEEDED: WORKERS * PAYMENTS - 1000 },
      });
      const store = redisBudgetStore(redis, { prefix });
      expect(await store.usage({ key: "client/life:client", limit: 1_000_000, windowMs: undefined })).toEqual({
        spent: 1_000_000,
        reserved: 0,
      });
    }
    expect(seller.nonces.size).toBe(RUNS * 1000);
  }, 120_000);
});
