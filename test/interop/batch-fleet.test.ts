// Channels shared by processes, against the unmodified reference seller and facilitator on anvil: four worker
// processes with one buyer key share a channel through a Redis channel store (each call's whole sign, send, answer
// cycle held across all four, so the seller never sees two at once), and a process that restarts on a file channel
// store pays on where the last one stopped, with no corrective round trip.

import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BatchFleetResult, BatchFleetRun } from "../support/batch-fleet-worker";
import { startRedis, type RedisServer } from "../support/redis";
import {
  PRICE_ATOMIC,
  fundedBuyer,
  startInteropStack,
  type BatchSeller,
  type BatchSettlementReader,
  type InteropStack,
} from "../localnet/index.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
let stack: InteropStack;
let batch: BatchSettlementReader;
let seller: BatchSeller;
let url: string;
let redis: RedisServer;
const dir = mkdtempSync(join(tmpdir(), "x402-channels-"));
const workers: ChildProcess[] = [];

beforeAll(async () => {
  [stack, redis] = await Promise.all([startInteropStack({ batchSettlement: true }), startRedis()]);
  batch = stack.batch!;
  seller = stack.seller.batch!;
  url = `${stack.seller.url}/batch/weather`;
}, 120_000);

afterAll(async () => {
  for (const worker of workers) worker.kill();
  await stack?.stop();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A worker process on a Redis or file channel store, ready for runs. */
async function worker(kind: "redis" | "file", where: string): Promise<ChildProcess> {
  const child = fork(`${root}test/support/batch-fleet-worker.ts`, [kind, where, url, stack.anvil.rpcUrl], {
    cwd: root,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  workers.push(child);
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`a fleet worker exited (${code}) before it was ready`)));
  });
  return child;
}

function run(child: ChildProcess, work: BatchFleetRun): Promise<BatchFleetResult> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`a fleet worker exited (${code}) during a run`));
    child.once("exit", exited);
    child.once("message", (result) => {
      child.off("exit", exited);
      resolve(result as BatchFleetResult);
    });
    child.send(work);
  });
}

/** Stops a worker as a crash would: no goodbye, nothing flushed beyond what it already saved. */
async function kill(child: ChildProcess) {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("four processes, one buyer key, one channel in Redis", () => {
  it("400 calls: 400 vouchers, each amount once and in order, none refused or retried; the claim matches", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const fleet = await Promise.all([1, 2, 3, 4].map(() => worker("redis", redis.url)));
    const results = await Promise.all(
      fleet.map((child) => run(child, { privateKey: buyer.privateKey, calls: 100, lanes: 2 })),
    );

    expect(results.flatMap((r) => r.failures)).toEqual([]);
    expect(results.flatMap((r) => r.refusals)).toEqual([]);
    const paid = results.flatMap((r) => r.paid);
    expect(paid.every((p) => p.status === 200)).toBe(true);
    // One deposit (carrying the first voucher), then vouchers only: 400 signed amounts, price × 1 … price × 400.
    expect(paid.filter((p) => p.type === "deposit").map((p) => p.max)).toEqual([String(PRICE_ATOMIC)]);
    expect(paid.filter((p) => p.type === "voucher")).toHaveLength(399);
    const amounts = paid.map((p) => BigInt(p.max)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(amounts).toEqual(Array.from({ length: 400 }, (_, i) => BigInt(i + 1) * PRICE_ATOMIC));
    // Each process signed strictly more each time.
    for (const r of results) {
      const mine = r.paid.map((p) => BigInt(p.max));
      expect(mine.every((max, i) => i === 0 || max > mine[i - 1]!)).toBe(true);
    }

    const channels = [...new Set(results.flatMap((r) => r.channels))];
    expect(channels).toHaveLength(1);
    await seller.manager.claimAndSettle();
    expect(await batch.channel(channels[0] as `0x${string}`)).toMatchObject({ totalClaimed: 400n * PRICE_ATOMIC });
    for (const child of fleet) await kill(child);
  }, 600_000);
});

describe("a process that restarts on a file channel store", () => {
  it("pays on where the last process stopped: one paid request, no corrective 402", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const channels = join(dir, "channels");
    const first = await worker("file", channels);
    const before = await run(first, { privateKey: buyer.privateKey, calls: 3, lanes: 1 });
    expect(before.paid.map((p) => [p.type, p.max, p.status])).toEqual([
      ["deposit", String(PRICE_ATOMIC), 200],
      ["voucher", String(2n * PRICE_ATOMIC), 200],
      ["voucher", String(3n * PRICE_ATOMIC), 200],
    ]);
    await kill(first);

    const second = await worker("file", channels);
    const after = await run(second, { privateKey: buyer.privateKey, calls: 1, lanes: 1 });
    expect(after.failures).toEqual([]);
    expect(after.refusals).toEqual([]);
    // The seller's challenge and one paid request: the voucher the seller expects, at once.
    expect(after.paid).toEqual([{ type: "voucher", max: String(4n * PRICE_ATOMIC), status: 200 }]);
    expect(after.requests).toBe(2);
    await kill(second);
  }, 300_000);
});
