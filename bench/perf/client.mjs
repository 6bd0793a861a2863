// One client in its own process, so its CPU time and memory are its own (run.mjs starts it).
//   --task cpu    --n N: N sequential GETs after a warm-up; prints the process's CPU µs per request
//   --task burst  --n N: N concurrent GETs at once; prints how many got 200, the wall ms and the peak RSS
//   --task first  the same, for the first paid GETs to the seller (the bench counts their connections)
// --side ours | reference pays /evm (cached: ours with the quote cache on; tool: ours through the agent tool,
// x402-pay/ai-sdk's paidFetchTool, as a framework calls it; journal-file, journal-redis: ours with the payment journal
// over fileJournalStore in a fresh temp dir, or redisJournalStore on --redis URL, each GET keyed by a fresh
// x402: { paymentId }); --side plain sends unpaid GETs to /plain (cpu only). One JSON line.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { evmFetch, journalFetch, toolCall } from "./clients.mjs";

const { values } = parseArgs({
  options: {
    side: { type: "string" },
    task: { type: "string" },
    base: { type: "string" },
    n: { type: "string" },
    warmup: { type: "string", default: "50" },
    redis: { type: "string" },
  },
});
const n = Number(values.n);
const tool = values.side === "tool" ? await toolCall() : undefined;
const journal = values.side.startsWith("journal-")
  ? await journalFetch(values.side.slice("journal-".length), values.redis)
  : undefined;
const [get, path] =
  values.side === "plain"
    ? [fetch, "/plain"]
    : values.side === "cached"
      ? [await evmFetch("ours", { quoteCache: true }), "/evm"]
      : [tool ?? journal?.get ?? (await evmFetch(values.side)), "/evm"];
const url = `${values.base}${path}?who=${values.side}-${values.task}`;

/**
 * CPU µs of this process's main thread (the JavaScript), where Linux tells it (/proc, in clock ticks of 10 ms): the
 * rest of the process's CPU is V8's own threads (optimising compilers, the collector's helpers). Else undefined.
 */
function mainThreadUs() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/** One GET, its body read (so the connection is free again); its status. The tool reads the body itself. */
async function request() {
  if (tool) return tool(url);
  const response = await get(url);
  await response.arrayBuffer();
  return response.status;
}

let failed = 0;
if (values.task === "cpu") {
  for (let i = 0; i < Number(values.warmup); i++) if ((await request()) !== 200) failed++;
  const before = process.cpuUsage();
  const mainBefore = mainThreadUs();
  for (let i = 0; i < n; i++) if ((await request()) !== 200) failed++;
  const { user, system } = process.cpuUsage(before);
  const mainUs = mainThreadUs();
  const mainThreadUsPerRequest = mainUs === undefined ? undefined : (mainUs - mainBefore) / n;
  // After the timing: what the journal wrote, read back (every key's latest entry; the file's lines).
  const written = await journal?.check();
  await journal?.close();
  console.log(
    JSON.stringify({ failed, cpuUsPerRequest: (user + system) / n, mainThreadUsPerRequest, journal: written }),
  );
} else {
  // The JS heap in use, sampled: what the client itself holds, beside the RSS (which also counts
  // undici's sockets and parsers, and memory V8 keeps after collecting).
  let peakHeap = 0;
  const sampler = setInterval(() => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)), 5);
  const start = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: n }, () => request().catch((error) => String(error?.cause ?? error))),
  );
  const wallMs = performance.now() - start;
  clearInterval(sampler);
  await journal?.close();
  const ok = statuses.filter((status) => status === 200).length;
  const others = [...new Set(statuses.filter((status) => status !== 200))].slice(0, 3);
  console.log(
    JSON.stringify({
      ok,
      failed: n - ok,
      others,
      wallMs,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      peakHeapMb: peakHeap / 1048576,
    }),
  );
}
