/**
 * One worker of the chaos run (test/chaos): a process that pays keyed GETs through one Redis (budget, ledger,
 * journal, and the batch-settlement channel's store: some keys are paid over one channel), as an app would, and dies where it is told to: with SIGKILL, sent to itself at a forced point of a
 * payment (after the intent, after signing, after the paid request left, after the answer, before the ledger write).
 * The supervisor gives it keys over IPC and hears back each key it saw answered 200, or the error it got.
 */
import { createClient } from "redis";
import { privateKeyToAccount } from "viem/accounts";
import { budget, createX402Client, paymentJournal, recoverPayments, type JournalStore } from "../../src";
import { batchSettlementEvm, evmSettlement, exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { redisBudgetStore, redisChannelStore, redisJournalStore, redisLedger } from "../../src/redis";

/** Where a worker may be told to die, in the order a payment reaches them. */
export const KILL_POINTS = ["intent", "signed", "sent", "answered", "ledger"] as const;
export type KillPoint = (typeof KILL_POINTS)[number];

export interface ChaosWorkerSetup {
  readonly rpc: string;
  /** The paid resource. */
  readonly url: string;
  readonly redisUrl: string;
  readonly privateKey: `0x${string}`;
  /** The batch-settlement side: its paid resource (a key is named in its query) and its buyer. */
  readonly batch: { readonly url: string; readonly privateKey: `0x${string}` };
  /** Starts every key of this run's stores. */
  readonly prefix: string;
  /** Recovery on start leaves entries younger than this alone: other workers may be paying them. */
  readonly staleAfterMs: number;
  /** Dies (SIGKILL) the `at`-th time this life reaches `point`. */
  readonly die?: { readonly point: KillPoint; readonly at: number } | undefined;
}

export type ChaosWorkerMessage =
  | { readonly type: "ready"; readonly recovered: readonly string[] }
  | { readonly type: "done"; readonly key: string }
  /** A batch key the seller charged whose answer was lost for good: it will not be answered again, nor paid twice. */
  | { readonly type: "paid"; readonly key: string }
  | { readonly type: "failed"; readonly key: string; readonly code: string };

/** The stores of a run, as every process (and the final check) names them. */
export const chaosStores = (prefix: string) => ({
  budget: { prefix: `${prefix}budget:` },
  ledger: { key: `${prefix}ledger` },
  journal: { prefix: `{${prefix}journal}:` },
  channels: { prefix: `${prefix}channel:` },
});
/** Each deposit into the batch channel covers this many calls. */
export const CHAOS_DEPOSIT_CALLS = 200;
/** The chaos run's batch-settlement scheme over the run's shared channel store. */
export function chaosBatch(
  redis: Parameters<typeof redisChannelStore>[0],
  { rpc, prefix, privateKey }: { rpc: string; prefix: string; privateKey: `0x${string}` },
) {
  return batchSettlementEvm({
    signer: privateKeyToAccount(privateKey),
    rpc,
    deposit: { multiple: CHAOS_DEPOSIT_CALLS },
    // A worker killed holding the channel keeps it this long at most; live holders renew it.
    storage: redisChannelStore(redis, { ...chaosStores(prefix).channels, lockTtlMs: 1500, timeoutMs: 5000 }),
  });
}
export const CHAOS_BUDGET = { limit: "$1000", name: "chaos" } as const;

async function main(setup: ChaosWorkerSetup) {
  const redis = createClient({ url: setup.redisUrl });
  // Redis is killed and restarted during the run: the client reconnects; what fails meanwhile fails typed.
  redis.on("error", () => undefined);
  await redis.connect();
  let reached = 0;
  const reach = (point: KillPoint) => {
    if (setup.die?.point === point && ++reached === setup.die.at) process.kill(process.pid, "SIGKILL");
  };
  const names = chaosStores(setup.prefix);
  const journal = redisJournalStore(redis, names.journal);
  const store: JournalStore = {
    latest: (key) => journal.latest(key),
    unfinished: () => journal.unfinished(),
    async put(entry, options) {
      const written = await journal.put(entry, options);
      if (written && (entry.state === "intent" || entry.state === "signed")) reach(entry.state);
      return written;
    },
  };
  const ledger = redisLedger(redis, names.ledger);
  const append = ledger.append.bind(ledger);
  ledger.append = (record) => {
    reach("ledger");
    return append(record);
  };
  const wire = async (input: RequestInfo | URL, init?: RequestInit) => {
    if (!new Headers(init?.headers).has("payment-signature")) return fetch(input, init);
    const answer = fetch(input, init);
    // On its way: the seller may have it, and may settle it, whatever becomes of this process.
    setTimeout(() => reach("sent"), 3);
    const response = await answer;
    reach("answered");
    return response;
  };
  const client = createX402Client({
    schemes: [
      exactEvm({ signer: privateKeyToAccount(setup.privateKey), settlement: evmSettlement({ rpc: setup.rpc }) }),
      chaosBatch(redis, { rpc: setup.rpc, prefix: setup.prefix, privateKey: setup.batch.privateKey }),
    ],
    plugins: [budget({ ...CHAOS_BUDGET, store: redisBudgetStore(redis, names.budget) }), ledger, paymentJournal(store)],
  });
  const recovered = await recoverPayments(client, { staleAfterMs: setup.staleAfterMs }).catch(() => []);
  const pay = wrapFetchWithPayment(wire, client);
  process.on("message", (message: { key: string; batch?: boolean }) => {
    const { key, batch } = message;
    const url = batch ? `${setup.batch.url}?key=${key}` : setup.url;
    pay(url, { x402: { paymentId: key } }).then(
      async (response) => {
        await response.arrayBuffer().catch(() => undefined);
        send(
          response.status === 200 ? { type: "done", key } : { type: "failed", key, code: `HTTP_${response.status}` },
        );
      },
      (error) => {
        const code = String(Object(error).code ?? Object(error).name);
        send(batch && code === "PAYMENT_ALREADY_ATTEMPTED" ? { type: "paid", key } : { type: "failed", key, code });
      },
    );
  });
  send({ type: "ready", recovered: recovered.map((r) => r.action) });
}

const send = (message: ChaosWorkerMessage) => process.send?.(message);

process.once("message", (setup: ChaosWorkerSetup) => {
  main(setup).catch((error) => {
    console.error("chaos worker:", error);
    process.exit(1);
  });
});
