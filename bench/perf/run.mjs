// Per-request speed, CPU, memory and cold import of x402-pay beside the reference @x402 packages, in
// one run, reported as ratios ours / reference (README.md here). Run: npm run bench (build dist first:
// npx tsup). --quick: fewer rounds. Exits 1 only when a request was not answered as it should be.
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { evmFetch, journalFetch, svmFetch } from "./clients.mjs";
import { startRedis } from "./redis.mjs";

const quick = process.argv.includes("--quick");
const rounds = quick
  ? { loopback: 60, latency: 15, svm: 40, cpuSamples: 2, cpuRequests: 150, warmSamples: 1, imports: 5, bursts: 1 }
  : { loopback: 300, latency: 60, svm: 200, cpuSamples: 9, cpuRequests: 300, warmSamples: 5, imports: 12, bursts: 7 };
/** Rounds of the journal's sequential GETs (bare, file, Redis), after 20 not kept. */
const JOURNAL_ROUNDS = quick ? 60 : 200;
/** The payment journal's stores measured, by the name their rows give them. */
const JOURNALS = { file: "file", redis: "Redis" };
/** GETs a warm process makes before its CPU is measured: past them both sides' code is optimised (V8's tiers). */
const WARM_GETS = 1000;
const BURST = 1000;
const LATENCY_MS = 20;
const root = fileURLToPath(new URL("../../", import.meta.url));
const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const run = promisify(execFile);

const failures = [];
/** Records a request not answered 200: a failure of correctness, not of speed. */
function expect200(what, status) {
  if (status !== 200) failures.push(`${what} answered ${status}`);
}

/**
 * Records a journal that did not write what its paid GETs should have: every key's latest entry settled, and the
 * file (`lines` defined) three lines a GET (intent, signed, settled). `written` is journalFetch's `check()`.
 */
function expectJournaled(what, written) {
  if (!written || written.keys === 0) {
    failures.push(`${what}: the journal reported nothing written`);
    return;
  }
  if (written.settled !== written.keys)
    failures.push(`${what}: ${written.keys - written.settled} of ${written.keys} keys not settled in the journal`);
  if (written.lines !== undefined && written.lines !== 3 * written.keys)
    failures.push(`${what}: the journal file has ${written.lines} lines for ${written.keys} paid GETs (3 each)`);
}

const sorted = (values) => [...values].sort((a, b) => a - b);
const quantile = (values, q) => sorted(values)[Math.min(values.length - 1, Math.floor(q * values.length))];
const median = (values) => quantile(values, 0.5);

/** Starts the stub seller in its own process; its base URL, its stats and a stop. */
async function startSeller(delayMs) {
  const child = spawn(process.execPath, [here("seller.mjs"), "--delay-ms", String(delayMs)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = await once(createInterface({ input: child.stdout }), "line");
  const base = `http://127.0.0.1:${JSON.parse(line).port}`;
  return { base, stats: async () => (await fetch(`${base}/stats`)).json(), stop: () => child.kill() };
}

/**
 * Sequential GETs, one per side each round, the order rotating every round; `warmup` rounds first
 * are not kept. Each side's request durations in ms.
 */
async function sequential(sides, roundCount, warmup) {
  const names = Object.keys(sides);
  const times = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < warmup + roundCount; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length];
      const start = performance.now();
      let status;
      try {
        const response = await sides[name]();
        await response.arrayBuffer();
        status = response.status;
      } catch (error) {
        status = `an error: ${error?.message ?? error}`;
      }
      if (round >= warmup) times[name].push(performance.now() - start);
      expect200(name, status);
    }
  }
  return times;
}

/** Runs client.mjs in a fresh process; its JSON report. `redis`: the URL of the journal-redis side's Redis. */
async function child(side, task, base, n, { warmup, redis } = {}) {
  const args = [here("client.mjs"), "--side", side, "--task", task, "--base", base, "--n", String(n)];
  if (warmup !== undefined) args.push("--warmup", String(warmup));
  if (redis !== undefined) args.push("--redis", redis);
  const { stdout } = await run(process.execPath, args, { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split("\n").at(-1));
}

/**
 * ms to import `specifiers` together in a fresh node process, from the repository (so x402-pay resolves to its dist).
 */
async function importMs(specifiers) {
  const code = `const t = performance.now(); await Promise.all([${specifiers.map((s) => `import(${JSON.stringify(s)})`)}]); console.log(performance.now() - t);`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", code], { cwd: root });
  return Number(stdout);
}

const rows = [];
/** A table row; `goal` is the most ours / reference may be, or `{ text, test() }` for one that is no ratio. */
function row(measure, ours, reference, { unit = "", goal, digits = 2 } = {}) {
  const ratio = typeof ours === "number" && typeof reference === "number" ? ours / reference : undefined;
  const show = (value) => (typeof value === "number" ? `${value.toFixed(digits)}${unit}` : (value ?? "-"));
  let met = "";
  if (typeof goal === "number") met = ratio === undefined ? "n/a" : ratio <= goal ? "yes" : "NO";
  else if (goal) met = goal.test() ? "yes" : "NO";
  rows.push([
    measure,
    show(ours),
    show(reference),
    ratio === undefined ? "-" : ratio.toFixed(2),
    typeof goal === "number" ? `<= ${goal}` : (goal?.text ?? "-"),
    met,
  ]);
}

function printTable() {
  const header = ["measure", "ours", "reference", "ours/ref", "goal", "met"];
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i].length)));
  const line = (cells) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ");
  console.log(`\n${line(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}`);
  for (const r of rows) console.log(line(r));
}

const log = (text) => console.error(`[bench ${(performance.now() / 1000).toFixed(0).padStart(3)} s] ${text}`);
log(`${quick ? "quick" : "full"} run, node ${process.version}`);
const seller = await startSeller(0);
const slowSeller = await startSeller(LATENCY_MS);
// For the journal rows' Redis store: undefined where redis-server is not installed (those rows say n/a).
const redis = await startRedis();
const NO_REDIS = "n/a (redis-server not installed)";
try {
  // Sequential paid GETs on loopback, with the unpaid GET as the floor.
  log("sequential EVM GETs on loopback");
  {
    const [ours, reference] = await Promise.all([evmFetch("ours"), evmFetch("reference")]);
    const times = await sequential(
      {
        plain: () => fetch(`${seller.base}/plain?who=plain`),
        ours: () => ours(`${seller.base}/evm?who=ours`),
        reference: () => reference(`${seller.base}/evm?who=reference`),
      },
      rounds.loopback,
      30,
    );
    row(
      `paid GET, loopback, median (unpaid ${median(times.plain).toFixed(2)} ms)`,
      median(times.ours),
      median(times.reference),
      { unit: " ms", goal: 0.95 },
    );
    row(
      `paid GET, loopback, p90 (unpaid ${quantile(times.plain, 0.9).toFixed(2)} ms)`,
      quantile(times.ours, 0.9),
      quantile(times.reference, 0.9),
      { unit: " ms" },
    );
  }

  // The same with every answer 20 ms late; the quote cache, where this build has it, saves the 402.
  log(`sequential EVM GETs, ${LATENCY_MS} ms per answer`);
  {
    const [ours, reference, cached] = await Promise.all([
      evmFetch("ours"),
      evmFetch("reference"),
      evmFetch("ours", { quoteCache: true }),
    ]);
    const sides = {
      plain: () => fetch(`${slowSeller.base}/plain?who=plain`),
      ours: () => ours(`${slowSeller.base}/evm?who=ours`),
      reference: () => reference(`${slowSeller.base}/evm?who=reference`),
      ...(cached && { cached: () => cached(`${slowSeller.base}/evm?who=cached`) }),
    };
    const times = await sequential(sides, rounds.latency, 5);
    const stats = await slowSeller.stats();
    const trips = (who) => {
      const { answers, paid } = stats[`/evm?who=${who}`];
      return answers / paid;
    };
    row(
      `paid GET, +${LATENCY_MS} ms, median (unpaid ${median(times.plain).toFixed(1)} ms)`,
      median(times.ours),
      median(times.reference),
      { unit: " ms", digits: 1 },
    );
    row(`  answers per paid GET`, trips("ours"), trips("reference"));
    const repeat = `repeat paid GET, +${LATENCY_MS} ms, quote cache on, median`;
    if (cached) {
      row(repeat, median(times.cached), median(times.reference), { unit: " ms", digits: 1, goal: 0.55 });
      row(`  answers per paid GET, quote cache on`, trips("cached"), trips("reference"));
    } else {
      row(repeat, "n/a (quoteCache not available)", median(times.reference), { unit: " ms", digits: 1, goal: 0.55 });
    }
  }

  // Solana: the same sequential measure, each side reading the seller's stand-in RPC.
  log("sequential Solana GETs on loopback");
  {
    const rpc = (who) => `${seller.base}/rpc?who=${who}`;
    const [ours, reference] = await Promise.all([
      svmFetch("ours", rpc("ours")),
      svmFetch("reference", rpc("reference")),
    ]);
    const times = await sequential(
      {
        ours: () => ours(`${seller.base}/svm?who=ours`),
        reference: () => reference(`${seller.base}/svm?who=reference`),
      },
      rounds.svm,
      20,
    );
    const stats = await seller.stats();
    const rpcCalls = (who) => stats[`/rpc?who=${who}`].answers / stats[`/svm?who=${who}`].paid;
    row("Solana paid GET, loopback, median", median(times.ours), median(times.reference), { unit: " ms" });
    row("Solana paid GET, loopback, p90", quantile(times.ours, 0.9), quantile(times.reference, 0.9), { unit: " ms" });
    row("  Solana RPC reads per paid GET", rpcCalls("ours"), rpcCalls("reference"), { digits: 3 });
    // The mint account and the blockhash, per paid GET, warm-up included: a mint read once shows as 1 / GETs.
    const paid = stats["/svm?who=ours"].paid;
    const reads = (method, who) => (stats[`${method}?who=${who}`]?.answers ?? 0) / stats[`/svm?who=${who}`].paid;
    for (const method of ["getAccountInfo", "getLatestBlockhash"]) {
      const sides = [reads(method, "ours"), reads(method, "reference")];
      row(`    ${method} per paid GET (${paid} GETs)`, ...sides, { digits: 3 });
    }
  }

  // The payment journal's wall time: ours bare beside ours journaled (file, Redis), each GET keyed by a fresh
  // paymentId; the journal's cost is mostly waits (the file's fdatasync, Redis's round trips), not CPU.
  log("sequential EVM GETs on loopback, with the payment journal");
  {
    const journals = {
      file: await journalFetch("file"),
      ...(redis && { redis: await journalFetch("redis", redis.url) }),
    };
    try {
      const ours = await evmFetch("ours");
      const times = await sequential(
        {
          ours: () => ours(`${seller.base}/evm?who=ours-bare`),
          ...Object.fromEntries(
            Object.entries(journals).map(([kind, journal]) => [
              `journal-${kind}`,
              () => journal.get(`${seller.base}/evm?who=journal-${kind}`),
            ]),
          ),
        },
        JOURNAL_ROUNDS,
        20,
      );
      for (const [kind, journal] of Object.entries(journals)) expectJournaled(`journal-${kind}`, await journal.check());
      for (const [kind, name] of Object.entries(JOURNALS)) {
        const label = `payment journal (${name}) paid GET, loopback, median, beside our bare wrapped fetch`;
        const journaled = times[`journal-${kind}`] ? median(times[`journal-${kind}`]) : NO_REDIS;
        row(label, journaled, median(times.ours), { unit: " ms" });
      }
    } finally {
      await Promise.all(Object.values(journals).map((journal) => journal.close()));
    }
  }

  // Client CPU per paid request: each client alone in its process, the seller in another.
  log("client CPU per request (a process per sample)");
  {
    // "cached": ours with the quote cache on, every request after the warm-up a repeat call.
    const cached = (await evmFetch("ours", { quoteCache: true })) !== undefined;
    const cpu = {
      ours: [],
      reference: [],
      plain: [],
      tool: [],
      ...(cached && { cached: [] }),
      "journal-file": [],
      ...(redis && { "journal-redis": [] }),
    };
    // The same, on the process's main thread only (where it can be read: Linux), and in warm processes.
    const main = { ours: [], reference: [] };
    const warm = { ours: [], reference: [] };
    const sides = Object.keys(cpu);
    for (let sample = 0; sample < rounds.cpuSamples; sample++) {
      for (const side of [...sides.slice(sample % sides.length), ...sides.slice(0, sample % sides.length)]) {
        const report = await child(side, "cpu", seller.base, rounds.cpuRequests, { redis: redis?.url });
        if (report.failed) failures.push(`${side} (CPU run) had ${report.failed} answers not 200`);
        if (side.startsWith("journal-")) expectJournaled(`${side} (CPU run)`, report.journal);
        cpu[side].push(report.cpuUsPerRequest / 1000);
        if (report.mainThreadUsPerRequest !== undefined) main[side]?.push(report.mainThreadUsPerRequest / 1000);
      }
    }
    for (let sample = 0; sample < rounds.warmSamples; sample++) {
      for (const side of sample % 2 ? ["reference", "ours"] : ["ours", "reference"]) {
        const report = await child(side, "cpu", seller.base, rounds.cpuRequests, { warmup: WARM_GETS });
        if (report.failed) failures.push(`${side} (warm CPU run) had ${report.failed} answers not 200`);
        warm[side].push(report.cpuUsPerRequest / 1000);
      }
    }
    row(
      `client CPU per paid GET (unpaid ${median(cpu.plain).toFixed(3)} ms)`,
      median(cpu.ours),
      median(cpu.reference),
      { unit: " ms", digits: 3, goal: 0.95 },
    );
    if (main.ours.length > 0)
      row("  of which on the main thread", median(main.ours), median(main.reference), { unit: " ms", digits: 3 });
    row(`client CPU per paid GET, after ${WARM_GETS} GETs`, median(warm.ours), median(warm.reference), {
      unit: " ms",
      digits: 3,
    });
    // The agent tool's own cost: the same paid GET through paidFetchTool (body read, bounded and parsed, the answer
    // built), beside the bare wrapped fetch of the same build; its "reference" column is that fetch, not @x402/fetch.
    row("agent tool (paid_fetch) CPU per paid GET, beside our bare wrapped fetch", median(cpu.tool), median(cpu.ours), {
      unit: " ms",
      digits: 3,
    });
    // The payment journal's CPU, beside the bare wrapped fetch as the agent tool's row (its "reference" column is ours).
    for (const [kind, name] of Object.entries(JOURNALS)) {
      const journaled = cpu[`journal-${kind}`] ? median(cpu[`journal-${kind}`]) : NO_REDIS;
      row(`payment journal (${name}) CPU per paid GET, beside our bare wrapped fetch`, journaled, median(cpu.ours), {
        unit: " ms",
        digits: 3,
      });
    }
    if (cached)
      row("client CPU per repeat paid GET, quote cache on", median(cpu.cached), median(cpu.reference), {
        unit: " ms",
        digits: 3,
      });
  }

  // Cold import: a fresh node process per sample, the sides interleaved.
  log("cold imports (a process per sample)");
  {
    // The reference's README imports ExactEvmScheme from @x402/evm; its lighter exact/client entry is shown too.
    const sets = {
      "fetch + evm + viem/accounts": [
        ["x402-pay/fetch", "x402-pay/evm", "viem/accounts"],
        ["@x402/fetch", "@x402/evm", "viem/accounts"],
        0.65,
      ],
      "fetch + evm": [
        ["x402-pay/fetch", "x402-pay/evm"],
        ["@x402/fetch", "@x402/evm"],
      ],
      "fetch + evm + viem/accounts (ref: @x402/evm/exact/client)": [
        ["x402-pay/fetch", "x402-pay/evm", "viem/accounts"],
        ["@x402/fetch", "@x402/evm/exact/client", "viem/accounts"],
      ],
    };
    const floor = [];
    const times = Object.fromEntries(Object.keys(sets).map((name) => [name, { ours: [], reference: [] }]));
    for (let sample = 0; sample < rounds.imports; sample++) {
      floor.push(await importMs(["viem/accounts"]));
      for (const [name, [ours, reference]] of Object.entries(sets)) {
        times[name].ours.push(await importMs(ours));
        times[name].reference.push(await importMs(reference));
      }
    }
    for (const [name, [, , goal]] of Object.entries(sets)) {
      const label = `cold import ${name}, median${goal ? ` (viem/accounts alone ${median(floor).toFixed(0)} ms)` : ""}`;
      row(label, median(times[name].ours), median(times[name].reference), { unit: " ms", digits: 1, goal });
    }
  }

  // A thousand paid GETs at once, each client in its own process so the peak RSS is its own.
  log(`${BURST} concurrent paid GETs (a process per sample)`);
  {
    const bursts = { ours: [], reference: [] };
    for (let sample = 0; sample < rounds.bursts; sample++) {
      for (const side of Object.keys(bursts)) {
        const report = await child(side, "burst", seller.base, BURST);
        if (report.failed)
          failures.push(
            `${side}: ${report.failed} of ${BURST} concurrent paid GETs not 200 (${report.others.join("; ")})`,
          );
        bursts[side].push(report);
      }
    }
    const least = (side) => Math.min(...bursts[side].map((report) => report.ok));
    const all = { text: "all", test: () => least("ours") === BURST && least("reference") === BURST };
    row(
      `${BURST} concurrent paid GETs: answered 200 (fewest)`,
      `${least("ours")}/${BURST}`,
      `${least("reference")}/${BURST}`,
      { goal: all },
    );
    const of = (side, key) => median(bursts[side].map((report) => report[key]));
    row(`${BURST} concurrent: wall time, median`, of("ours", "wallMs"), of("reference", "wallMs"), {
      unit: " ms",
      digits: 0,
    });
    row(`${BURST} concurrent: peak RSS, median`, of("ours", "peakRssMb"), of("reference", "peakRssMb"), {
      unit: " MB",
      digits: 1,
      goal: 1.0,
    });
    row(`  peak JS heap in use, median`, of("ours", "peakHeapMb"), of("reference", "peakHeapMb"), {
      unit: " MB",
      digits: 1,
    });
    /** Connections the seller saw per paid GET of `who`'s child processes. */
    const connections = async (who) => {
      const { connections, paid } = (await seller.stats())[`/evm?who=${who}`];
      return connections / paid;
    };
    row(`  connections opened per paid GET`, await connections("ours-burst"), await connections("reference-burst"));
    // A fresh process's first paid GET to the seller: a second connection is a second TCP (and TLS) handshake.
    for (let sample = 0; sample < rounds.bursts; sample++)
      for (const side of Object.keys(bursts)) await child(side, "first", seller.base, 1);
    row(
      `first paid GET to an origin: connections opened`,
      await connections("ours-first"),
      await connections("reference-first"),
    );
  }
} finally {
  seller.stop();
  slowSeller.stop();
  await redis?.stop();
}

log("done");
printTable();
if (failures.length > 0) {
  console.error(`\n!!! ${failures.length} CORRECTNESS FAILURE(S): requests not answered as they should be !!!`);
  for (const failure of [...new Set(failures)].slice(0, 20)) console.error(`!!! ${failure}`);
  process.exit(1);
}
