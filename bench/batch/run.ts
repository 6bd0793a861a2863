// 100 sequential paid calls to one seller that answers after 20 ms: x402-pay's batch-settlement beside its
// exact, and beside the reference's batch-settlement client (@x402/evm batch-settlement/client + @x402/fetch).
// Everything is real but the delay: anvil, our settlement contract, the unmodified reference facilitator and
// seller (test/localnet), with a proxy in front of the seller that holds every answer 20 ms. Each client runs
// in its own process (client.mjs), one per sample. README.md here says what each row measures.
//
//   npm run build && npm run bench:batch              (-- --quick: one sample; -- --markdown: the docs table)
//
// A report, not a test: it exits 1 only when a call was not answered 200 or the seller was not paid exactly
// the price of every call.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { once } from "node:events";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { createPublicClient, http, type PublicClient } from "viem";
import { listenOnLoopback, type LoopbackServer } from "../../test/localnet/listen.js";
import {
  PRICE_ATOMIC,
  USDC_BASE_SEPOLIA,
  fundedBuyer,
  startInteropStack,
  type InteropStack,
} from "../../test/localnet/index.js";

const quick = process.argv.includes("--quick");
const markdown = process.argv.includes("--markdown");
const SAMPLES = quick ? 1 : 5;
const CALLS = 100;
const WARMUP = 20;
const DELAY_MS = 20;
const SIDES = ["ours-batch", "ours-batch-cached", "ours-exact", "reference-batch"] as const;
type Side = (typeof SIDES)[number];
const ROUTE: Record<Side, string> = {
  "ours-batch": "/batch/weather",
  "ours-batch-cached": "/batch/weather",
  "ours-exact": "/weather",
  "reference-batch": "/batch/weather",
};
const root = fileURLToPath(new URL("../../", import.meta.url));
const clientPath = fileURLToPath(new URL("client.mjs", import.meta.url));
const log = (text: string) =>
  console.error(`[bench:batch ${(performance.now() / 1000).toFixed(0).padStart(3)} s] ${text}`);

/** Requests and paid requests (a payment header) the proxy passed on, by the `who` of their query. */
interface Counts {
  requests: number;
  paid: number;
}

/**
 * A proxy in front of the seller that holds every answer `delayMs` once the seller has given it: the
 * seller's work (and its facilitator's) plus the delay is what a call waits for.
 */
async function delayingProxy(target: string, delayMs: number) {
  const { hostname, port } = new URL(target);
  const counts = new Map<string, Counts>();
  const server: LoopbackServer = await listenOnLoopback((incoming, outgoing) => {
    const who = new URL(incoming.url ?? "/", "http://proxy").searchParams.get("who") ?? "";
    const count = counts.get(who) ?? { requests: 0, paid: 0 };
    counts.set(who, count);
    count.requests++;
    if (incoming.headers["payment-signature"] || incoming.headers["x-payment"]) count.paid++;
    const forward = httpRequest(
      { hostname, port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      async (answer) => {
        const chunks: Buffer[] = [];
        for await (const chunk of answer) chunks.push(chunk as Buffer);
        const body = Buffer.concat(chunks);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        const headers: IncomingHttpHeaders = { ...answer.headers, "content-length": String(body.length) };
        delete headers["transfer-encoding"];
        outgoing.writeHead(answer.statusCode ?? 502, headers).end(body);
      },
    );
    forward.on("error", (error) => outgoing.writeHead(502).end(String(error)));
    incoming.pipe(forward);
  });
  return { url: server.url, counts: (who: string) => ({ ...(counts.get(who) ?? { requests: 0, paid: 0 }) }), server };
}

/** Transactions and gas in blocks `from`..`to` (inclusive); anvil mines one block per transaction. */
async function onChain(chain: PublicClient, from: bigint, to: bigint) {
  let transactions = 0;
  let gas = 0n;
  for (let n = from; n <= to; n++) {
    const block = await chain.getBlock({ blockNumber: n });
    transactions += block.transactions.length;
    gas += block.gasUsed;
  }
  return { transactions, gas };
}

/** One sample of one side: its client process, the chain and the seller's counts around its measured calls. */
interface Sample {
  ms: number[];
  cpuUs: number;
  requests: number;
  paid: number;
  facilitatorRequests: number;
  callTransactions: number;
  callGas: bigint;
  claimTransactions: number;
  claimGas: bigint;
}

const failures: string[] = [];

async function sample(
  stack: InteropStack,
  proxyUrl: string,
  proxy: Awaited<ReturnType<typeof delayingProxy>>,
  side: Side,
) {
  // cacheTime 0: viem would otherwise answer getBlockNumber from a 4 s cache.
  const chain = createPublicClient({ transport: http(stack.anvil.rpcUrl), cacheTime: 0 }) as PublicClient;
  const [warm, measured] = [await fundedBuyer(stack.usdc), await fundedBuyer(stack.usdc)];
  const who = `${side}-${measured.address}`;
  const url = `${proxyUrl}${ROUTE[side]}?who=${who}`;
  const args = [clientPath, "--side", side, "--url", url, "--rpc", stack.anvil.rpcUrl];
  const child: ChildProcessByStdio<Writable, Readable, null> = spawn(
    process.execPath,
    [...args, "--n", String(CALLS), "--warmup", String(WARMUP)],
    {
      cwd: root,
      env: { ...process.env, BENCH_WARMUP_KEY: warm.privateKey, BENCH_KEY: measured.privateKey },
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`${side}: the client exited early (code ${(await exited)[0]})`);
    return JSON.parse(value as string);
  };
  const batch = side !== "ours-exact";
  const seller = stack.seller.batch!.manager;
  await next(); // warmed up
  if (batch) await seller.claimAndSettle(); // the warm-up channel's vouchers, so the claim below is this run's
  const payee = (await stack.batch!.tokenBalance(USDC_BASE_SEPOLIA, stack.seller.payTo)) as bigint;
  const start = await chain.getBlockNumber();
  const facilitatorBefore = stack.facilitator.requests.length;
  const countsBefore = proxy.counts(who);
  child.stdin.end("go\n");
  const { ms, cpuUs } = (await next()) as { ms: number[]; cpuUs: number };
  await exited;
  const callsEnd = await chain.getBlockNumber();
  const facilitatorRequests = stack.facilitator.requests.length - facilitatorBefore;
  const counts = proxy.counts(who);
  if (batch) await seller.claimAndSettle();
  const claimEnd = await chain.getBlockNumber();
  const calls = await onChain(chain, start + 1n, callsEnd);
  const claim = await onChain(chain, callsEnd + 1n, claimEnd);
  const paid = (await stack.batch!.tokenBalance(USDC_BASE_SEPOLIA, stack.seller.payTo)) - payee;
  if (paid !== BigInt(CALLS) * PRICE_ATOMIC) failures.push(`${side}: the seller was paid ${paid}, not ${CALLS} calls`);
  return {
    ms,
    cpuUs,
    requests: counts.requests - countsBefore.requests,
    paid: counts.paid - countsBefore.paid,
    facilitatorRequests,
    callTransactions: calls.transactions,
    callGas: calls.gas,
    claimTransactions: claim.transactions,
    claimGas: claim.gas,
  } satisfies Sample;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

log(`${quick ? "quick" : "full"} run: ${SAMPLES} sample(s) per side, ${CALLS} calls each after ${WARMUP} warm-up`);
const stack = await startInteropStack({ batchSettlement: true });
const proxy = await delayingProxy(stack.seller.url, DELAY_MS);
const samples = Object.fromEntries(SIDES.map((side) => [side, [] as Sample[]])) as Record<Side, Sample[]>;
try {
  for (let s = 0; s < SAMPLES; s++) {
    // The order rotates every sample.
    for (const side of [...SIDES.slice(s % SIDES.length), ...SIDES.slice(0, s % SIDES.length)]) {
      log(`sample ${s + 1}/${SAMPLES}: ${side}`);
      try {
        samples[side].push(await sample(stack, proxy.url, proxy, side));
      } catch (error) {
        failures.push(`${side}: ${(error as Error).message}`);
      }
    }
  }
} finally {
  await proxy.server.stop();
  await stack.stop();
}

/** A measure of each side: the median over its samples of `of(sample)`. */
const measure = (of: (sample: Sample) => number) =>
  SIDES.map((side) => (samples[side].length ? median(samples[side].map(of)) : Number.NaN));
const rows: [string, number[], number][] = [
  ["latency per call, median (ms)", SIDES.map((side) => median(samples[side].flatMap((s) => s.ms))), 1],
  ["latency per call, mean of the 100 (ms)", measure((s) => mean(s.ms)), 1],
  ["… the first call, with the deposit (ms)", measure((s) => s.ms[0]!), 1],
  ["client CPU per call (ms)", measure((s) => s.cpuUs / 1000 / CALLS), 3],
  ["HTTP requests per call", measure((s) => s.requests / CALLS), 2],
  ["facilitator requests per call", measure((s) => s.facilitatorRequests / CALLS), 2],
  ["on-chain transactions, the 100 calls", measure((s) => s.callTransactions), 0],
  ["on-chain transactions, claim + settle", measure((s) => s.claimTransactions), 0],
  ["gas, the 100 calls + claim + settle (k)", measure((s) => Number(s.callGas + s.claimGas) / 1000), 0],
];
const header = [
  "measure",
  "ours batch",
  "ours batch, quote cache",
  "ours exact",
  "reference batch",
  "ours batch / ours exact",
  "ours batch / ref batch",
  "ours batch, quote cache / ref batch",
];
const ratio = (a: number, b: number) => (b ? (a / b).toFixed(2) : "-");
const cells = rows.map(([label, [batch, cached, exact, reference], digits]) => [
  label,
  ...[batch!, cached!, exact!, reference!].map((value) => value.toFixed(digits)),
  ratio(batch!, exact!),
  ratio(batch!, reference!),
  ratio(cached!, reference!),
]);
if (markdown) {
  console.log(
    `| ${header.join(" | ")} |\n| --- | ${header
      .slice(1)
      .map(() => "---:")
      .join(" | ")} |`,
  );
  for (const row of cells) console.log(`| ${row.join(" | ")} |`);
} else {
  const widths = header.map((_, i) => Math.max(...[header, ...cells].map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => (i ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)));
  console.log(`\n${line(header).join("  ")}\n${widths.map((w) => "-".repeat(w)).join("  ")}`);
  for (const row of cells) console.log(line(row).join("  "));
}
if (failures.length > 0) {
  console.error(`\n!!! ${failures.length} CORRECTNESS FAILURE(S) !!!`);
  for (const failure of failures) console.error(`!!! ${failure}`);
  process.exit(1);
}
