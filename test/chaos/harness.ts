/**
 * The chaos run: worker processes (test/chaos/worker.ts) pay keyed GETs through one Redis (budget, ledger, journal)
 * and one seller, the reference's (its facilitator, payment-identifier and an idempotency cache built with its
 * helpers) on anvil, behind a proxy that can cut the seller's answer after it settled. A supervisor SIGKILLs the
 * workers at random moments and has them die at forced points of a payment, restarts them on the same stores, kills
 * and restarts Redis, leaves one worker dead for good, and asks again for every key it has not seen answered. At the
 * end it checks the chain, the journal, the ledger and the budget against each other.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "redis";
import { createPublicClient, http, parseAbiItem, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  budget,
  createX402Client,
  paymentJournal,
  recoverPayments,
  type JournalEntry,
  type LedgerRecord,
} from "../../src";
import { evmSettlement, exactEvm } from "../../src/evm";
import { redisBudgetStore, redisJournalStore, redisLedger } from "../../src/redis";
import {
  PRICE_ATOMIC,
  fundedBuyer,
  localChain,
  startExtensionSeller,
  startFaultProxy,
  startInteropStack,
  type ExtensionSeller,
  type FaultProxy,
  type InteropStack,
} from "../localnet/index.js";
import { freePort, startRedisOn, type RedisServer } from "../support/redis";
import {
  CHAOS_BUDGET,
  KILL_POINTS,
  chaosBatch,
  chaosStores,
  type ChaosWorkerMessage,
  type ChaosWorkerSetup,
  type KillPoint,
} from "./worker";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The world a run pays in: anvil, the reference seller and facilitator, the proxy, and a Redis that keeps its data. */
export interface ChaosWorld {
  readonly stack: InteropStack;
  readonly seller: ExtensionSeller;
  readonly proxy: FaultProxy;
  /** In front of the reference batch-settlement seller (`stack.seller`'s `/batch/weather`). */
  readonly batchProxy: FaultProxy;
  /** The Redis of the run: killed (SIGKILL) and started again on the same port and data. */
  redis: RedisServer;
  readonly redisPort: number;
  readonly redisDir: string;
  stop(): Promise<void>;
}

/** Redis with an append-only file synced on every write: a kill loses nothing it acknowledged. */
const durable = (dir: string) => ["--dir", dir, "--appendonly", "yes", "--appendfsync", "always"];

export async function startChaosWorld(): Promise<ChaosWorld> {
  const redisDir = mkdtempSync(join(tmpdir(), "x402-chaos-redis-"));
  const redisPort = await freePort();
  const [stack, redis] = await Promise.all([
    startInteropStack({ batchSettlement: true }),
    startRedisOn(redisPort, durable(redisDir)),
  ]);
  const seller = await startExtensionSeller({ facilitatorUrl: stack.facilitator.url, payTo: stack.seller.payTo });
  const proxy = await startFaultProxy(seller.url);
  const batchProxy = await startFaultProxy(stack.seller.url);
  const world: ChaosWorld = {
    stack,
    seller,
    proxy,
    batchProxy,
    redis,
    redisPort,
    redisDir,
    async stop() {
      await proxy.stop();
      await batchProxy.stop();
      await seller.stop();
      await world.redis.stop();
      await stack.stop();
      rmSync(redisDir, { recursive: true, force: true });
    },
  };
  return world;
}

export interface ChaosOptions {
  /** Logical requests: keys, each to be paid exactly once. */
  readonly requests: number;
  /** More keys, paid over one batch-settlement channel (a buyer of its own). Default requests / 5. */
  readonly batchRequests?: number;
  /** Worker processes at once. Default 4. */
  readonly workers?: number;
  /** Requests each worker pays at once. Default 3. */
  readonly lanes?: number;
  /** Kills at forced points, cycling through them. Default requests / 25. */
  readonly forcedKills?: number;
  /** Kills at random moments, by the supervisor. Default requests / 100. */
  readonly randomKills?: number;
  /** Times Redis is killed and started again. Default 3. */
  readonly redisRestarts?: number;
  /** Paid answers cut after the seller settled. Default requests / 50. */
  readonly cuts?: number;
  /** Progress lines. */
  readonly log?: (line: string) => void;
}

export interface ChaosFigures {
  readonly requests: number;
  readonly durationMs: number;
  /** Kills by forced point, and `random` (the supervisor's, at any moment). */
  readonly kills: Readonly<Record<KillPoint | "random", number>>;
  readonly lives: number;
  readonly redisRestarts: number;
  readonly answersCut: number;
  /** Times a key was asked again after a kill or an error. */
  readonly reasked: number;
  /** What recovery did, on the workers' starts and at the end. */
  readonly recovered: Readonly<Record<string, number>>;
  /** Authorizations of the buyer used on chain, and the buyer's transfers to the seller. */
  readonly paidOnChain: number;
  readonly transfers: number;
  /** Keys paid on chain more than once. */
  readonly doublePayments: number;
  /** Keys never paid on chain, though answered. */
  readonly unpaid: number;
  /** Authorizations used on chain that no journal entry holds. */
  readonly unjournaled: number;
  /** Settled payments the ledger lacks, and settled records beyond one per payment (or of nothing paid). */
  readonly lostRecords: number;
  readonly extraRecords: number;
  /** Keys signed again without the earlier signed payment having ended with nothing moved. */
  readonly signedTwice: number;
  /** Payments signed again after one ended with nothing moved (expired, refused). */
  readonly signedAfresh: number;
  /** The budget: spent against what the chain moved (micro-dollars), and what is left reserved. */
  readonly budgetSpent: number;
  readonly chainSpent: number;
  readonly leftoverReservations: number;
  /** Journal entries left unfinished after the final recovery. */
  readonly unfinished: number;
  /** The batch-settlement channel: see {@link BatchFigures}. */
  readonly batch: BatchFigures;
}

/** What the batch-settlement keys came to, by the seller's count and the stores'. */
export interface BatchFigures {
  readonly requests: number;
  /** Keys whose charge was answered, and keys charged whose answer was lost for good (PAYMENT_ALREADY_ATTEMPTED). */
  readonly answered: number;
  readonly paidUnanswered: number;
  /** Keys the seller charged (its 200s reporting a settlement, cut or not) more than once, and never. */
  readonly chargedTwice: number;
  readonly uncharged: number;
  /** The seller's count on the channel, what it claimed on chain after a final claim, and what the channel holds. */
  readonly sellerCharged: number;
  readonly claimedOnChain: number;
  readonly balance: number;
  /** Keys without exactly one settled ledger record (of a channel payment). */
  readonly recordsOff: number;
  /** Keys with another attempt signed that did not end with nothing moved (failed, expired). */
  readonly signedTwice: number;
  /** The budget's standing hold on the channel (micro-dollars): what it holds beyond what it was charged. */
  readonly held: number;
}

interface Life {
  readonly child: ChildProcess;
  readonly die: ChaosWorkerSetup["die"];
  readonly inFlight: Set<string>;
  killedBySupervisor: boolean;
  ready: boolean;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One run in `world`; resolves with what it counted and checked once every key is answered. */
export async function runChaos(world: ChaosWorld, options: ChaosOptions): Promise<ChaosFigures> {
  const started = Date.now();
  const { requests, workers = 4, lanes = 3, log = () => undefined } = options;
  const forcedTarget = options.forcedKills ?? Math.ceil(requests / 25);
  const randomTarget = options.randomKills ?? Math.ceil(requests / 100);
  const redisTarget = options.redisRestarts ?? 3;
  const cutTarget = options.cuts ?? Math.ceil(requests / 50);
  const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  const prefix = `chaos:${run}:`;
  const buyer = await fundedBuyer(world.stack.usdc, { amount: BigInt(requests) * PRICE_ATOMIC * 2n + 1_000_000n });
  const batchBuyer = await fundedBuyer(world.stack.usdc, { amount: 10_000_000n });
  const url = `${world.proxy.url}/idempotent/weather`;
  const exactKeys = Array.from({ length: requests }, (_, i) => `chaos_${run}_${String(i).padStart(6, "0")}`);
  const batchKeys = Array.from(
    { length: options.batchRequests ?? Math.ceil(requests / 5) },
    (_, i) => `chaos_${run}_batch_${String(i).padStart(6, "0")}`,
  );
  const isBatch = new Set(batchKeys);
  // Batch keys among the others, one in six.
  const keys = exactKeys.flatMap((key, i) =>
    i % 5 === 4 && batchKeys[(i - 4) / 5] ? [key, batchKeys[(i - 4) / 5]!] : [key],
  );
  keys.push(...batchKeys.filter((key) => !keys.includes(key)));
  const queue = [...keys];
  const done = new Set<string>();
  const paidUnanswered = new Set<string>();
  const kills: Record<KillPoint | "random", number> = {
    intent: 0,
    signed: 0,
    sent: 0,
    answered: 0,
    ledger: 0,
    random: 0,
  };
  const recovered: Record<string, number> = {};
  let [forcedGiven, lives, reasked, redisRestarts, answersCut] = [0, 0, 0, 0, 0];
  const slots: (Life | undefined)[] = Array.from({ length: workers }, () => undefined);
  /** The slot whose worker stays dead, once it has died. */
  let gone: number | undefined;
  let finished: () => void;
  const allDone = new Promise<void>((resolve) => (finished = resolve));

  const giveBack = (key: string) => {
    if (done.has(key)) return;
    reasked++;
    queue.push(key);
  };
  const feed = (slot: number) => {
    const life = slots[slot];
    if (!life?.ready) return;
    while (life.child.connected && life.inFlight.size < lanes && queue.length > 0) {
      const key = queue.shift()!;
      if (done.has(key)) continue;
      // A worker that dies as it is sent a key gives it back when it exits (the send's EPIPE is its own).
      life.inFlight.add(key);
      life.child.send({ key, batch: isBatch.has(key) }, (error) => error && undefined);
    }
  };
  const feedAll = () => {
    for (let slot = 0; slot < slots.length; slot++) feed(slot);
  };

  const start = (slot: number) => {
    lives++;
    // Forced points, in turn, until the target is reached; each life dies at the first to third time it gets there.
    const forced = KILL_POINTS.reduce((sum, point) => sum + kills[point], 0);
    const die =
      forced < forcedTarget
        ? { point: KILL_POINTS[forcedGiven++ % KILL_POINTS.length]!, at: 1 + Math.floor(Math.random() * 3) }
        : undefined;
    const child = fork(`${root}test/chaos/worker.ts`, [], {
      cwd: root,
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    // A send to a worker that just died fails (EPIPE): its keys go back when it exits.
    child.on("error", () => undefined);
    const life: Life = { child, die, inFlight: new Set(), killedBySupervisor: false, ready: false };
    slots[slot] = life;
    child.on("message", (message: ChaosWorkerMessage) => {
      if (message.type === "ready") {
        for (const action of message.recovered) recovered[action] = (recovered[action] ?? 0) + 1;
        life.ready = true;
      } else {
        life.inFlight.delete(message.key);
        if (message.type === "done") done.add(message.key);
        else if (message.type === "paid") done.add(message.key) && paidUnanswered.add(message.key);
        else giveBack(message.key);
        if (done.size === keys.length) finished();
      }
      feed(slot);
    });
    child.once("exit", (_code, signal) => {
      if (signal === "SIGKILL") {
        if (life.killedBySupervisor) kills.random++;
        else if (die && signal === "SIGKILL") kills[die.point]++;
      }
      // The app asks again, later, for what the dead process was paying.
      for (const key of life.inFlight) giveBack(key);
      if (slots[slot] !== life || stopping) return;
      slots[slot] = undefined;
      // One worker, after its first death past a fifth of the run, never comes back: the others recover its entries.
      if (gone === undefined && done.size > requests / 5) {
        gone = slot;
        log(`worker ${slot} stays dead`);
        feedAll();
        return;
      }
      start(slot);
    });
    const setup: ChaosWorkerSetup = {
      rpc: world.stack.anvil.rpcUrl,
      url,
      redisUrl: world.redis.url,
      privateKey: buyer.privateKey,
      batch: { url: `${world.batchProxy.url}/batch/weather`, privateKey: batchBuyer.privateKey },
      prefix,
      staleAfterMs: 10_000,
      die,
    };
    child.send(setup);
  };

  let stopping = false;
  for (let slot = 0; slot < workers; slot++) start(slot);
  // The supervisor's own chaos, paced by progress: random kills, Redis killed and restarted, answers cut.
  const chaos = (async () => {
    let lastProgress = -1;
    let logged = -1;
    while (!stopping) {
      await sleep(150);
      if (stopping) return;
      feedAll();
      const progress = done.size / requests;
      if (progress === lastProgress) continue;
      lastProgress = progress;
      // Paced to end before the run does: all of them by three quarters of the keys answered.
      if (kills.random < randomTarget && progress >= (0.75 * kills.random) / randomTarget) {
        const busy = slots.filter((life): life is Life => !!life?.ready && life.inFlight.size > 0);
        if (busy.length > 0) {
          const life = pick(busy);
          life.killedBySupervisor = true;
          // A moment into its work: anywhere in a payment.
          await sleep(Math.random() * 40);
          life.child.kill("SIGKILL");
        }
      }
      if (answersCut < cutTarget && Math.random() < 0.5) {
        const count = Math.random() < 0.7 ? 1 : 2;
        // One cut in four on the batch channel's seller.
        (Math.random() < 0.25 ? world.batchProxy : world.proxy).cutPaidResponses(count);
        answersCut += count;
      }
      if (redisRestarts < redisTarget && progress >= (redisRestarts + 1) / (redisTarget + 1)) {
        redisRestarts++;
        log(`killing Redis (${redisRestarts}/${redisTarget}) at ${done.size}/${requests}`);
        await killRedis(world);
        await sleep(300);
        world.redis = await startRedisOn(world.redisPort, durable(world.redisDir));
      }
      if (Math.floor(progress * 10) > logged) {
        logged = Math.floor(progress * 10);
        log(`${done.size}/${requests} answered, ${lives} lives, kills ${JSON.stringify(kills)}`);
      }
    }
  })();
  await allDone;
  stopping = true;
  await chaos;
  for (const life of slots) {
    if (!life) continue;
    const exited = new Promise((resolve) => life.child.once("exit", resolve));
    life.child.kill("SIGKILL");
    await exited;
  }
  log(`all ${requests} answered in ${Date.now() - started} ms; checking`);
  const figures = await check(world, {
    prefix,
    keys: exactKeys,
    batchKeys,
    buyer: buyer.address,
    privateKey: buyer.privateKey,
    batchPrivateKey: batchBuyer.privateKey,
  });
  for (const [action, count] of Object.entries(figures.recovered))
    recovered[`final ${action}`] = (recovered[`final ${action}`] ?? 0) + count;
  return {
    requests,
    durationMs: Date.now() - started,
    kills,
    lives,
    redisRestarts,
    answersCut,
    reasked,
    recovered,
    ...figures.counts,
    batch: { ...figures.batch, answered: batchKeys.length - paidUnanswered.size, paidUnanswered: paidUnanswered.size },
  };
}

/** Kills the Redis server as a crash would (SIGKILL), and waits for it to be gone. */
async function killRedis(world: ChaosWorld) {
  const redis = createClient({ url: world.redis.url });
  redis.on("error", () => undefined);
  await redis.connect();
  const info = await redis.info("server");
  redis.destroy();
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  process.kill(pid, "SIGKILL");
  await world.redis.stop();
}

const AUTHORIZATION_USED = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");
const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

/** The nonce of the EIP-3009 authorization a kept header carries. */
function nonceOf(entry: JournalEntry): string | undefined {
  if (!entry.paymentHeader) return undefined;
  const payload = JSON.parse(Buffer.from(entry.paymentHeader.value, "base64").toString("utf8"));
  return String(payload?.payload?.authorization?.nonce ?? "").toLowerCase() || undefined;
}

/** Ends what is left (every worker is dead now), then holds the chain, the journal, the ledger and the budget up. */
async function check(
  world: ChaosWorld,
  run: {
    prefix: string;
    keys: readonly string[];
    batchKeys: readonly string[];
    buyer: Address;
    privateKey: Hex;
    batchPrivateKey: Hex;
  },
) {
  const redis = createClient({ url: world.redis.url });
  redis.on("error", () => undefined);
  await redis.connect();
  try {
    const names = chaosStores(run.prefix);
    const journal = redisJournalStore(redis, names.journal);
    const ledger = redisLedger(redis, names.ledger);
    const budgetStore = redisBudgetStore(redis, names.budget);
    const rpc = world.stack.anvil.rpcUrl;
    const client = createX402Client({
      schemes: [
        exactEvm({ signer: privateKeyToAccount(run.privateKey), settlement: evmSettlement({ rpc }) }),
        chaosBatch(redis, { rpc, prefix: run.prefix, privateKey: run.batchPrivateKey }),
      ],
      plugins: [budget({ ...CHAOS_BUDGET, store: budgetStore }), ledger, paymentJournal(journal)],
    });
    // The batch seller claims what it charged: the chain then holds its count.
    await world.stack.seller.batch!.manager.claim();
    const final = await recoverPayments(client, { staleAfterMs: 0 });
    const recovered: Record<string, number> = {};
    for (const { action } of final) recovered[action] = (recovered[action] ?? 0) + 1;

    // Every entry of the journal: each attempt's latest.
    const entries: JournalEntry[] = [];
    for await (const name of redis.scanIterator({ MATCH: `${names.journal.prefix}entry:*`, COUNT: 500 }))
      for (const key of [name].flat()) entries.push(JSON.parse((await redis.get(key))!));
    const unfinished = (await journal.unfinished()).length;

    const chain = createPublicClient({
      chain: localChain(world.stack.anvil.rpcUrl),
      transport: http(world.stack.anvil.rpcUrl),
    });
    const token = world.stack.usdc.address;
    const used = await chain.getLogs({
      address: token,
      event: AUTHORIZATION_USED,
      args: { authorizer: run.buyer },
      fromBlock: 0n,
    });
    const transfers = await chain.getLogs({
      address: token,
      event: TRANSFER,
      args: { from: run.buyer, to: world.seller.payTo },
      fromBlock: 0n,
    });
    const usedNonces = new Set(used.map((log) => String(log.args.nonce).toLowerCase()));

    const byNonce = new Map<string, JournalEntry>();
    const byKey = new Map<string, JournalEntry[]>();
    for (const entry of entries) {
      const nonce = nonceOf(entry);
      if (nonce) byNonce.set(nonce, entry);
      if (entry.key !== undefined) byKey.set(entry.key, [...(byKey.get(entry.key) ?? []), entry]);
    }
    let [doublePayments, unpaid, signedTwice, signedAfresh] = [0, 0, 0, 0];
    for (const key of run.keys) {
      const attempts = (byKey.get(key) ?? []).filter((e) => e.paymentHeader);
      const paid = attempts.filter((e) => usedNonces.has(nonceOf(e)!));
      if (paid.length > 1) doublePayments++;
      if (paid.length === 0) unpaid++;
      // Signed more than once: each but the paid one must have ended with nothing moved.
      const others = attempts.filter((e) => !paid.includes(e));
      if (others.some((e) => e.state !== "expired" && e.state !== "failed")) signedTwice++;
      signedAfresh += others.length;
    }
    const unjournaled = [...usedNonces].filter((nonce) => !byNonce.has(nonce)).length;

    // The ledger: one settled record per payment that moved money, naming its attempt; none for anything else.
    const settledRecords = new Map<string, number>();
    let strays = 0;
    const batchRecords: LedgerRecord[] = [];
    for await (const record of ledger.records() as AsyncIterable<LedgerRecord>) {
      if (record.outcome !== "settled") continue;
      if (record.scheme === "batch-settlement") {
        batchRecords.push(record);
        continue;
      }
      if (record.attempt === undefined || !record.transaction) {
        strays++;
        continue;
      }
      settledRecords.set(record.attempt, (settledRecords.get(record.attempt) ?? 0) + 1);
    }
    const paidAttempts = new Set([...usedNonces].map((nonce) => byNonce.get(nonce)?.id).filter(Boolean) as string[]);
    let [lostRecords, extraRecords] = [0, strays];
    for (const id of paidAttempts) {
      const count = settledRecords.get(id) ?? 0;
      if (count === 0) lostRecords++;
      extraRecords += Math.max(0, count - 1);
    }
    for (const [id, count] of settledRecords) if (!paidAttempts.has(id)) extraRecords += count;

    const usage = await budgetStore.usage({ key: `${CHAOS_BUDGET.name}:client`, limit: 1e9, windowMs: undefined });
    const moved = transfers.reduce((sum, log) => sum + (log.args.value ?? 0n), 0n);
    const batch = await checkBatch(world, {
      keys: run.batchKeys,
      entries,
      records: batchRecords,
      held: usage.reserved,
    });
    return {
      recovered,
      batch,
      counts: {
        paidOnChain: usedNonces.size,
        transfers: transfers.length,
        doublePayments,
        unpaid,
        unjournaled,
        lostRecords,
        extraRecords,
        signedTwice,
        signedAfresh,
        budgetSpent: usage.spent,
        // The asset has 6 decimals: base units are micro-dollars. What the batch seller claimed moved too.
        chainSpent: Number(moved) + batch.claimedOnChain,
        // Reserved beyond the channel's standing hold (what it holds and was not charged).
        leftoverReservations: usage.reserved - (batch.balance - batch.claimedOnChain),
        unfinished,
      },
    };
  } finally {
    redis.destroy();
  }
}

/**
 * The batch-settlement keys held up against the seller's count: its charges per key (seen by the proxy), its record of
 * the channel, its claim on chain; the ledger's settled records and the journal's attempts per key.
 */
async function checkBatch(
  world: ChaosWorld,
  run: { keys: readonly string[]; entries: readonly JournalEntry[]; records: readonly LedgerRecord[]; held: number },
): Promise<Omit<BatchFigures, "answered" | "paidUnanswered">> {
  const charges = new Map<string, number>();
  for (const seen of world.batchProxy.paidRequests) {
    const key = /[?&]key=([\w-]+)/.exec(seen.path)?.[1];
    if (key && seen.status === 200 && seen.settled) charges.set(key, (charges.get(key) ?? 0) + 1);
  }
  const byKey = new Map<string, JournalEntry[]>();
  for (const entry of run.entries)
    if (entry.key !== undefined && entry.scheme === "batch-settlement")
      byKey.set(entry.key, [...(byKey.get(entry.key) ?? []), entry]);
  const keyOf = new Map(run.entries.map((entry) => [entry.id, entry.key]));
  const records = new Map<string, number>();
  for (const record of run.records) {
    const key = keyOf.get(record.attempt ?? "");
    if (key !== undefined) records.set(key, (records.get(key) ?? 0) + 1);
  }
  let [chargedTwice, uncharged, recordsOff, signedTwice] = [0, 0, 0, 0];
  for (const key of run.keys) {
    const count = charges.get(key) ?? 0;
    if (count > 1) chargedTwice++;
    if (count === 0) uncharged++;
    if (records.get(key) !== 1) recordsOff++;
    const attempts = (byKey.get(key) ?? []).filter((e) => e.paymentHeader);
    const settled = attempts.filter((e) => e.state === "settled");
    if (settled.length !== 1 || attempts.some((e) => !settled.includes(e) && !["failed", "expired"].includes(e.state)))
      signedTwice++;
  }
  const channel = run.entries.find((entry) => entry.channel !== undefined)?.channel as Hex | undefined;
  const record = channel && (await world.stack.seller.batch!.scheme.getStorage().get(channel));
  const onChain = channel ? await world.stack.batch!.channel(channel) : { balance: 0n, totalClaimed: 0n };
  return {
    requests: run.keys.length,
    chargedTwice,
    uncharged,
    sellerCharged: Number(record ? record.chargedCumulativeAmount : 0),
    claimedOnChain: Number(onChain.totalClaimed),
    balance: Number(onChain.balance),
    recordsOff,
    signedTwice,
    held: run.held,
  };
}

/** What must hold after a run, as sentences; none when it all does. */
export function violations(figures: ChaosFigures): string[] {
  const wrong: string[] = [];
  const expect = (holds: boolean, what: string) => holds || wrong.push(what);
  expect(figures.doublePayments === 0, `${figures.doublePayments} keys paid more than once on chain`);
  expect(figures.unpaid === 0, `${figures.unpaid} keys answered 200 but never paid on chain`);
  expect(figures.unjournaled === 0, `${figures.unjournaled} authorizations used on chain that no journal entry holds`);
  expect(figures.paidOnChain === figures.requests, `${figures.paidOnChain} paid on chain for ${figures.requests} keys`);
  expect(figures.transfers === figures.requests, `${figures.transfers} transfers for ${figures.requests} keys`);
  expect(figures.lostRecords === 0, `${figures.lostRecords} settled payments missing from the ledger`);
  expect(figures.extraRecords === 0, `${figures.extraRecords} settled records beyond one per payment`);
  expect(figures.signedTwice === 0, `${figures.signedTwice} keys signed again while a payment could still move money`);
  expect(
    figures.budgetSpent === figures.chainSpent,
    `the budget spent ${figures.budgetSpent} micro-dollars, the chain moved ${figures.chainSpent}`,
  );
  expect(figures.leftoverReservations === 0, `${figures.leftoverReservations} micro-dollars left reserved`);
  expect(figures.unfinished === 0, `${figures.unfinished} journal entries left unfinished`);
  const { batch } = figures;
  expect(batch.chargedTwice === 0, `${batch.chargedTwice} batch keys charged more than once by the seller`);
  expect(batch.uncharged === 0, `${batch.uncharged} batch keys never charged by the seller`);
  const price = Number(PRICE_ATOMIC);
  expect(
    batch.sellerCharged === batch.requests * price,
    `the batch seller counts ${batch.sellerCharged} charged for ${batch.requests} keys`,
  );
  expect(
    batch.claimedOnChain === batch.sellerCharged,
    `the batch seller claimed ${batch.claimedOnChain} on chain, its count is ${batch.sellerCharged}`,
  );
  expect(batch.recordsOff === 0, `${batch.recordsOff} batch keys without exactly one settled ledger record`);
  expect(batch.signedTwice === 0, `${batch.signedTwice} batch keys signed again while a voucher could still pay`);
  return wrong;
}
