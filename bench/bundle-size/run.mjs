// Browser bundle size: the same job done with x402-pay and with the reference @x402 packages, then one
// row per capability added to the base EVM job, with two bundlers: esbuild (platform browser, minified,
// NODE_ENV=production) and a Vite production build (Rolldown and its minifier), each then gzip -9.
//
//   npm run bench:size                      builds dist, prints the tables for both bundlers
//   npm run bench:size -- --no-build        measures the dist already built
//   npm run bench:size -- --esbuild         esbuild only (seconds instead of a minute)
//   npm run bench:size -- --markdown        the tables as markdown, both bundlers side by side (for the docs)
//   npm run bench:size -- --contributors    which src/ files weigh most in the base EVM and Solana jobs
//                                           (--contributors="evm + budget",axios: in those jobs and rows)
//   npm run bench:size -- --update-budgets  rewrites bench/bundle-size/budgets.json from this measurement
//
// Jobs and rows are in jobs.mjs; `npm test` holds x402-pay's side of each to budgets.json (check.mjs).
// "floor": what both sides of a job bundle anyway (the signer; axios); "added ratio": each side's code
// above it, x402-pay's over the reference's.
//
// The bundlers disagree most about @solana/kit: esbuild keeps kit's table of error messages (its keys are
// computed, which esbuild treats as possible side effects) although production code never reads it;
// Vite drops it. Both sides carry the same kit code, so the table adds the same bytes to both and
// pulls the ratio toward 1; the "added" ratio (code above the signer alone) leaves it out.
import { execSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { declarationBytes } from "./contributors.mjs";
import { PEERS, capabilities, entries, jobs } from "./jobs.mjs";
import { budgetFor, budgetsFile, measureBudgeted, measureEsbuild, measureVite, readBudgets, root } from "./measure.mjs";

const args = new Set(process.argv.slice(2));
// --contributors=evm,svm,"evm + offerReceipt": the jobs and rows to break down (default: the two base jobs).
const breakDown = process.argv
  .find((a) => a.startsWith("--contributors"))
  ?.split("=")[1]
  ?.split(",") ?? ["evm", "svm"];
const kb = (n) => (n / 1024).toFixed(1);
const plusKb = (n) => `${n >= 0 ? "+" : "−"}${kb(Math.abs(n))}`;

/** Every job and row measured by one bundler: gzip and minified bytes of each side. */
async function measureAll(measure) {
  const cache = new Map();
  // One at a time: Vite builds do not run concurrently in one process; the same floor is built once.
  const weigh = async (contents, external = []) => {
    const key = `${external.join()}\n${contents}`;
    if (!cache.has(key)) cache.set(key, await measure(contents, { external }));
    return cache.get(key);
  };
  const jobRows = [];
  for (const j of jobs) {
    jobRows.push({ ...j, ours: await weigh(j.ours), reference: await weigh(j.reference), floor: await weigh(j.floor) });
  }
  const capabilityRows = [];
  for (const c of capabilities) {
    const ours = await weigh(c.ours, c.external);
    const reference = c.reference && (await weigh(c.reference, c.referenceExternal ?? c.external));
    capabilityRows.push({ ...c, ours, reference });
  }
  return { jobs: jobRows, capabilities: capabilityRows, base: jobRows.find((j) => j.id === "evm") };
}

const ratio = (a, b) => (a / b).toFixed(3);
const addedRatio = (j) => ((j.ours.gzip - j.floor.gzip) / (j.reference.gzip - j.floor.gzip)).toFixed(3);

async function report() {
  const bundlers = [["esbuild", measureEsbuild]];
  if (!args.has("--esbuild")) bundlers.push(["Vite", measureVite]);
  const measured = [];
  for (const [name, measure] of bundlers) measured.push({ name, ...(await measureAll(measure)) });
  // Each entry alone (every export, optional peers left out), esbuild only: what the budgets hold.
  const entrySizes = [];
  for (const e of entries) entrySizes.push({ entry: e.id, ...(await measureEsbuild(e.contents, { external: PEERS })) });
  if (args.has("--markdown")) return console.log(`${markdown(measured)}\n\n${markdownEntries(entrySizes)}`);
  for (const m of measured) {
    console.log(`\n${m.name}: jobs (KB, gzip -9 unless said; ratio = x402-pay / reference)`);
    console.table(
      m.jobs.map((j) => ({
        job: j.name,
        "x402-pay": kb(j.ours.gzip),
        reference: kb(j.reference.gzip),
        ratio: ratio(j.ours.gzip, j.reference.gzip),
        "x402-pay (min)": kb(j.ours.raw),
        floor: kb(j.floor.gzip),
        "added ratio": addedRatio(j),
      })),
    );
    console.log(`${m.name}: capabilities added to the base EVM job (KB, gzip -9; + over the base job of each side)`);
    console.table(
      m.capabilities.map((c) => ({
        capability: c.name,
        "x402-pay": kb(c.ours.gzip),
        "+ over base": plusKb(c.ours.gzip - m.base.ours.gzip),
        reference: c.reference ? kb(c.reference.gzip) : "",
        "reference +": c.reference ? plusKb(c.reference.gzip - m.base.reference.gzip) : "",
      })),
    );
  }
  console.log("\nEach entry alone, every export (esbuild; the optional peers viem, @solana/kit, axios left out; KB)");
  console.table(entrySizes.map((s) => ({ entry: s.entry, minified: kb(s.raw), gzip: kb(s.gzip) })));
}

function markdownEntries(sizes) {
  const lines = [
    "| entry alone, every export (esbuild; viem, kit, axios left out) | minified KB | gzip KB |",
    "| --- | ---: | ---: |",
  ];
  for (const s of sizes) lines.push(`| \`${s.entry}\` | ${kb(s.raw)} | ${kb(s.gzip)} |`);
  return lines.join("\n");
}

function markdown(measured) {
  const lines = [];
  const row = (cells) => lines.push(`| ${cells.join(" | ")} |`);
  const heads = measured.flatMap((m) => [`${m.name} x402-pay`, `${m.name} reference`, `${m.name} ratio`]);
  row(["job (KB, gzip -9)", ...heads]);
  row(["---", ...heads.map(() => "---:")]);
  for (const [i, j] of measured[0].jobs.entries()) {
    row([
      j.name,
      ...measured.flatMap((m) => {
        const { ours, reference } = m.jobs[i];
        return [kb(ours.gzip), kb(reference.gzip), ratio(ours.gzip, reference.gzip)];
      }),
    ]);
  }
  lines.push("");
  const capHeads = measured.flatMap((m) => [`${m.name} x402-pay (+ over base)`, `${m.name} reference (+ over base)`]);
  row(["added to the base EVM job (KB, gzip -9)", ...capHeads]);
  row(["---", ...capHeads.map(() => "---:")]);
  const cell = (size, base) => `${kb(size.gzip)} (${plusKb(size.gzip - base.gzip)})`;
  for (const [i, c] of measured[0].capabilities.entries()) {
    row([
      c.name,
      ...measured.flatMap((m) => {
        const { ours, reference } = m.capabilities[i];
        return [cell(ours, m.base.ours), reference ? cell(reference, m.base.reference) : "—"];
      }),
    ]);
  }
  return lines.join("\n");
}

/** Rewrites budgets.json: every budget from this measurement plus the file's margin. */
async function updateBudgets() {
  const previous = readBudgets();
  const margin = previous.margin ?? 0.025;
  const next = { "//": previous["//"], margin, jobs: {}, entries: {} };
  for (const m of await measureBudgeted()) {
    const budget = budgetFor(m.gzip, margin);
    next[m.kind][m.id] = budget;
    const before = previous[m.kind]?.[m.id];
    const change = before === undefined ? "new" : before === budget ? "same" : `was ${before}`;
    const measured = `${String(m.gzip).padStart(6)} B`;
    console.log(`${m.kind.padEnd(7)} ${m.id.padEnd(26)} ${measured} -> budget ${budget} (${change})`);
  }
  writeFileSync(budgetsFile, `${JSON.stringify(next, null, 2)}\n`);
  console.log(`\nWrote ${budgetsFile}: commit it with the change that moved the sizes (npm test holds them).`);
}

/**
 * The biggest contributors in the base EVM and Solana jobs (esbuild): bytes each input leaves in the
 * minified output (before gzip), by package above what the signer alone bundles (esbuild's metafile);
 * then x402-pay's src/ by folder, file and top-level declaration (contributors.mjs), with the bytes of
 * their string literals (error messages, mostly).
 */
async function contributors() {
  const base = jobs.find((j) => j.id === "evm");
  const rows = [...jobs, ...capabilities.map((c) => ({ ...c, id: `evm + ${c.id}`, floor: base.floor }))];
  for (const j of rows.filter((row) => breakDown.includes(row.id))) {
    const ours = await measureEsbuild(j.ours, { metafile: true, external: j.external });
    const floor = await measureEsbuild(j.floor, { metafile: true });
    const byPackage = (m) => {
      const totals = new Map();
      for (const [path, { bytesInOutput }] of Object.entries(Object.values(m.metafile.outputs)[0].inputs)) {
        const pkg = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1];
        const owner = pkg ?? (/^(src|dist)\//.test(path) ? "x402-pay" : path);
        totals.set(owner, (totals.get(owner) ?? 0) + bytesInOutput);
      }
      return totals;
    };
    const floorPackages = byPackage(floor);
    console.log(`\n${j.name}: ${kb(ours.gzip)} KB gzip, ${kb(ours.raw)} KB minified`);
    console.log(`the signer alone: ${kb(floor.gzip)} KB gzip`);
    console.log("Minified bytes by package, above what the signer alone bundles:");
    console.table(
      [...byPackage(ours)]
        .map(([owner, bytes]) => ({ owner, bytes: bytes - (floorPackages.get(owner) ?? 0) }))
        .filter((r) => r.bytes > 0)
        .sort((a, b) => b.bytes - a.bytes),
    );
    const { gzip, rows, gzipWithout } = await declarationBytes(j.ours, { external: j.external });
    const total = rows.reduce((sum, d) => sum + d.bytes, 0);
    const strings = rows.reduce((sum, d) => sum + d.strings, 0);
    // What a set of rows costs after gzip: the output's gzip size less that of the output without them.
    const cost = (test, options) => gzip - gzipWithout(test, options);
    console.log(
      `x402-pay src/: ${total} B minified (about ${kb(cost(() => true))} KB gzip); ${pct(strings, total)} of it in ` +
        `string literals (about ${kb(cost(() => true, { stringsOnly: true }))} KB gzip). "gzip": what removing it ` +
        "alone would save (rows overlap after gzip: their sum is less than the whole).",
    );
    const group = (keyOf, limit) => {
      const groups = new Map();
      for (const d of rows) {
        const row = groups.get(keyOf(d)) ?? { [keyOf.name]: keyOf(d), bytes: 0, strings: 0 };
        row.bytes += d.bytes;
        row.strings += d.strings;
        groups.set(keyOf(d), row);
      }
      return [...groups.values()]
        .sort((a, b) => b.bytes - a.bytes)
        .slice(0, limit)
        .map((r) => ({ ...r, share: pct(r.bytes, total), gzip: cost((d) => keyOf(d) === r[keyOf.name]) }));
    };
    const folder = (d) =>
      d.file
        .split("/")
        .slice(0, d.file.startsWith("src/extensions/") ? 3 : 2)
        .join("/");
    const file = (d) => d.file;
    const declaration = (d) => `${d.file.slice(4)}: ${d.declaration}`;
    console.table(group(folder));
    console.table(group(file, 25));
    console.table(group(declaration, 40));
  }
}

function pct(part, whole) {
  return `${((part / whole) * 100).toFixed(1)}%`;
}

if (!args.has("--no-build")) execSync("npm run build --silent", { cwd: root, stdio: "inherit" });
if (args.has("--update-budgets")) await updateBudgets();
else if (process.argv.some((a) => a.startsWith("--contributors"))) await contributors();
else await report();
