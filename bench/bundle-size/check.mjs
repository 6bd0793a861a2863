// Size budgets: x402-pay's side of each bench job and capability row, and each browser entry alone,
// bundled by esbuild over dist (minified, gzip -9), against bench/bundle-size/budgets.json. Run by
// test/unit/size-budgets.test.ts in `npm test` (after the build), or alone:
//   node bench/bundle-size/check.mjs          a line per item; exit 1 if one is over its budget
//   node bench/bundle-size/check.mjs --json   the results as JSON
// A budget is raised (or lowered) deliberately, all at once, from a fresh measurement:
//   npm run bench:size -- --update-budgets
import { fileURLToPath } from "node:url";
import { UPDATE_COMMAND, measureBudgeted, readBudgets } from "./measure.mjs";

/** Every measured item with its budget and status ("ok", "over", "missing"), and budgets nothing measures. */
export async function checkBudgets() {
  const budgets = readBudgets();
  const measured = await measureBudgeted();
  const results = measured.map((m) => {
    const budget = budgets[m.kind]?.[m.id];
    const status = budget === undefined ? "missing" : m.gzip > budget ? "over" : "ok";
    return { ...m, budget, status, message: messageOf({ ...m, budget, status }) };
  });
  const stale = Object.entries(budgets)
    .filter(([kind]) => kind === "jobs" || kind === "entries")
    .flatMap(([kind, table]) => Object.keys(table).map((id) => ({ kind, id })))
    .filter((b) => !measured.some((m) => m.kind === b.kind && m.id === b.id));
  return { results, stale };
}

const bytes = (n) => `${n.toLocaleString("en-US")} B`;

function messageOf({ kind, id, gzip, budget, status }) {
  const what = kind === "entries" ? `entry ${id}` : `job "${id}"`;
  if (status === "missing") return `${what}: ${bytes(gzip)} gzip has no budget; add one with: ${UPDATE_COMMAND}`;
  const share = `${((gzip / budget - 1) * 100).toFixed(1)}%`;
  if (status === "ok") return `${what}: ${bytes(gzip)} gzip, budget ${bytes(budget)} (${share})`;
  return (
    `${what}: ${bytes(gzip)} gzip is over its budget of ${bytes(budget)} (+${share}). Make it smaller, or, ` +
    `if the growth is deliberate, raise the budgets from a fresh measurement (${UPDATE_COMMAND}) and commit ` +
    "bench/bundle-size/budgets.json with the change that grew it"
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { results, stale } = await checkBudgets();
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify({ results, stale }));
  } else {
    for (const r of results) console.log(`${r.status === "ok" ? "ok  " : "FAIL"} ${r.message}`);
    for (const s of stale) {
      console.log(`FAIL budget for ${s.kind} "${s.id}" measures nothing: remove it (${UPDATE_COMMAND})`);
    }
    if (results.some((r) => r.status !== "ok") || stale.length > 0) process.exitCode = 1;
  }
}
