/**
 * Every store against its kind's contract (test/support/store-contracts.ts): budget stores in memory
 * and in Redis, ledgers in memory, in a file and in Redis, sign-in stores in memory and in Redis, channel
 * stores in memory, in a directory and in Redis, journal stores in memory, in a file and in Redis, each Redis store
 * against a real redis-server.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { memoryBudgetStore, memoryJournalStore, memoryLedger } from "../../src";
import { memoryStore } from "../../src/extensions/sign-in-with-x/store";
import type { ChannelState } from "../../src/contracts";
import { memoryChannelStore } from "../../src/evm";
import { channelStateJson } from "../../src/contracts";
import { fileChannelStore, fileJournalStore, fileLedger } from "../../src/file";
import { redisBudgetStore, redisChannelStore, redisJournalStore, redisLedger, redisSignInStore } from "../../src/redis";
import { connectRedis, startRedis, type RedisServer } from "../support/redis";
import {
  budgetStoreContract,
  channelStoreContract,
  journalStoreContract,
  ledgerContract,
  signInStoreContract,
} from "../support/store-contracts";

let server: RedisServer;
let redis: Awaited<ReturnType<typeof connectRedis>>;
const connections: Awaited<ReturnType<typeof connectRedis>>[] = [];
let run = 0;
/** A fresh key prefix per store, so stores share the server and not their state. */
const fresh = () => `contract:${++run}:`;
const dir = mkdtempSync(join(tmpdir(), "x402-contract-"));

beforeAll(async () => {
  server = await startRedis();
  redis = await connectRedis(server.url);
});
afterAll(async () => {
  for (const connection of connections) connection.destroy();
  redis?.destroy();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

budgetStoreContract("memory budget store", (now) => memoryBudgetStore(now));
let shared = "";
budgetStoreContract(
  "redis budget store",
  (now) => redisBudgetStore(redis, { prefix: (shared = fresh()), now, timeoutMs: 30_000 }),
  {
    // Three more connections on the same prefix: atomic across processes, not only within one.
    others: async () => {
      const more = await Promise.all([1, 2, 3].map(() => connectRedis(server.url)));
      connections.push(...more);
      return more.map((connection) => redisBudgetStore(connection, { prefix: shared, timeoutMs: 30_000 }));
    },
  },
);

ledgerContract("memory ledger", () => memoryLedger());
ledgerContract("file ledger", () => fileLedger(join(dir, `${fresh().replaceAll(":", "-")}.jsonl`), { sync: false }));
ledgerContract("redis ledger", () => redisLedger(redis, { key: `${fresh()}ledger` }));

signInStoreContract("memory sign-in store", () => memoryStore());
signInStoreContract("redis sign-in store", () => redisSignInStore(redis, { prefix: fresh() }));

channelStoreContract("memory channel store", () => memoryChannelStore());

/** Short, so that the tests of a crashed holder wait little; renewals keep live holders' locks. */
const lockTtlMs = 1000;
let channels = "";
channelStoreContract(
  "file channel store",
  () => fileChannelStore((channels = join(dir, fresh().replaceAll(":", "-"))), { lockTtlMs }),
  {
    // Three more stores on the same directory: as other processes would open it.
    others: async () => [1, 2, 3].map(() => fileChannelStore(channels, { lockTtlMs })),
    tricks: () => ({
      lockTtlMs,
      async crashHolding(id: string, state: ChannelState | undefined) {
        await mkdir(channels, { recursive: true });
        if (state) await writeFile(join(channels, `${id}.json`), channelStateJson(state));
        await writeFile(join(channels, `${id}.lock`), "crashed", { flag: "wx" });
      },
      async steal(id: string) {
        await unlink(join(channels, `${id}.lock`));
        await writeFile(join(channels, `${id}.lock`), "thief", { flag: "wx" });
      },
    }),
  },
);

let channelPrefix = "";
channelStoreContract(
  "redis channel store",
  () => redisChannelStore(redis, { prefix: (channelPrefix = fresh()), lockTtlMs }),
  {
    others: async () => {
      const more = await Promise.all([1, 2, 3].map(() => connectRedis(server.url)));
      connections.push(...more);
      return more.map((connection) => redisChannelStore(connection, { prefix: channelPrefix, lockTtlMs }));
    },
    tricks: () => ({
      lockTtlMs,
      async crashHolding(id: string, state: ChannelState | undefined) {
        // A process of its own (a connection) takes the lock, saves and dies: its renewals fail from then on.
        const doomed = await connectRedis(server.url);
        const hold = await redisChannelStore(doomed, { prefix: channelPrefix, lockTtlMs }).hold(id);
        await hold.save(state);
        doomed.destroy();
      },
      async steal(id: string) {
        await redis.set(`${channelPrefix}{${id}}:lock`, "thief", { PX: lockTtlMs });
      },
    }),
  },
);

journalStoreContract("memory journal store", () => memoryJournalStore());
let journalFile = "";
journalStoreContract(
  "file journal store",
  () => fileJournalStore((journalFile = join(dir, `${fresh().replaceAll(":", "-")}journal.jsonl`)), { sync: false }),
  // Another store on the same file: as another process would open it.
  { others: async () => [fileJournalStore(journalFile, { sync: false })] },
);
let journalPrefix = "";
journalStoreContract(
  "redis journal store",
  () => redisJournalStore(redis, { prefix: (journalPrefix = `{${fresh()}}`) }),
  {
    others: async () => {
      const more = await connectRedis(server.url);
      connections.push(more);
      return [redisJournalStore(more, { prefix: journalPrefix })];
    },
  },
);
