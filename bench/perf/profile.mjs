// CPU profiles of both sides' paid GETs (client.mjs --task cpu under `node --cpu-prof`), self time summed by
// function and by group: x402-pay's own code (this repository's dist, its function names are the source's) beside
// the reference's (@x402/*), and what both share (viem, noble, Node's fetch, GC). A guide to where the time goes, not
// a measure: shares move less with the machine's load than milliseconds do. Run (after npx tsup):
//   node bench/perf/profile.mjs [--n 3000] [--top 15] [--keep]   (--keep: leave the .cpuprofile files, path printed)
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "3000" },
    top: { type: "string", default: "15" },
    keep: { type: "boolean" },
  },
});
const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const dist = fileURLToPath(new URL("../../dist/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "x402-pay-profile-"));

/** The group a frame's script belongs to. */
function group(url) {
  if (!url) return "GC, native, program";
  if (url.startsWith("file://") && fileURLToPath(url).startsWith(dist)) return "ours";
  if (url.includes("/@x402/")) return "reference";
  if (url.includes("/viem/") || url.includes("/ox/") || url.includes("/abitype/")) return "viem";
  if (url.includes("/@noble/") || url.includes("/@scure/")) return "noble";
  return url.startsWith("node:") || url.startsWith("wasm:") ? "Node (fetch, streams, timers)" : "other";
}

/** Self ms by group and by function of one profile (idle left out). */
function summarise(file) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const groups = new Map();
  const functions = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = frames.get(id);
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    if (frame.functionName === "(idle)") return;
    total += ms;
    const name = group(frame.url);
    groups.set(name, (groups.get(name) ?? 0) + ms);
    if (name !== "ours" && name !== "reference") return;
    const key = `${frame.functionName || "(anonymous)"} (${frame.url.split("/").pop()}:${frame.lineNumber + 1})`;
    functions.set(key, (functions.get(key) ?? 0) + ms);
  });
  return { total, groups, functions };
}

const seller = spawn(process.execPath, [here("seller.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
try {
  const [line] = await once(createInterface({ input: seller.stdout }), "line");
  const base = `http://127.0.0.1:${JSON.parse(line).port}`;
  for (const side of ["ours", "reference"]) {
    const out = join(dir, side);
    const args = ["--cpu-prof", "--cpu-prof-interval", "100", "--cpu-prof-dir", out, here("client.mjs")];
    const { stdout } = await promisify(execFile)(process.execPath, [
      ...args,
      ...["--side", side, "--task", "cpu", "--base", base, "--n", values.n],
    ]);
    const { failed, cpuUsPerRequest } = JSON.parse(stdout.trim().split("\n").at(-1));
    const { total, groups, functions } = summarise(join(out, readdirSync(out)[0]));
    const gets = Number(values.n) + 50; // client.mjs warms up with 50 GETs, profiled too
    const share = (ms) => `${((100 * ms) / total).toFixed(1).padStart(5)}%`;
    console.log(
      `\n${side}: ${gets} paid GETs profiled, ${failed} not 200; CPU ${(cpuUsPerRequest / 1000).toFixed(3)} ms`,
    );
    console.log(`  self time by group (of ${total.toFixed(0)} ms sampled):`);
    for (const [name, ms] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`    ${share(ms)}  ${name}`);
    const own = groups.get(side) ?? 0;
    const whose = side === "ours" ? "x402-pay's" : "the reference's";
    const perGet = ((own * 1000) / gets).toFixed(0);
    console.log(`  ${whose} own code: ${perGet} µs of self time per paid GET (under the profiler); its top functions:`);
    const top = [...functions].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
    for (const [name, ms] of top)
      console.log(`    ${share(ms)}  ${((ms * 1000) / gets).toFixed(1).padStart(5)} µs  ${name}`);
  }
} finally {
  seller.kill();
  if (values.keep) console.log(`\nprofiles kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
