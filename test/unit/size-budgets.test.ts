// Size budgets: x402-pay's side of each bundle-size bench job and capability row, and each browser entry
// alone, bundled by esbuild over dist (browser, minified, gzip -9), stay within
// bench/bundle-size/budgets.json. A budget moves only deliberately: `npm run bench:size -- --update-budgets`.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
type Kind = "jobs" | "entries";
const budgets = JSON.parse(readFileSync(`${root}bench/bundle-size/budgets.json`, "utf8")) as Record<
  Kind,
  Record<string, number>
>;

interface Result {
  kind: Kind;
  id: string;
  gzip: number;
  budget?: number;
  status: "ok" | "over" | "missing";
  message: string;
}
interface Measured {
  results: Result[];
  stale: { kind: Kind; id: string }[];
}
let measured: Measured;

beforeAll(async () => {
  if (!existsSync(`${root}dist/index.js`)) throw new Error("dist/ is missing: run `npm run build` (npm test does).");
  // In a process of its own: esbuild's service, and the bench's plain JavaScript, stay out of vitest.
  const { stdout } = await promisify(execFile)(process.execPath, ["bench/bundle-size/check.mjs", "--json"], {
    cwd: root,
    maxBuffer: 4 * 1024 * 1024,
  });
  measured = JSON.parse(stdout) as Measured;
}, 120_000);

function withinBudget(kind: Kind, id: string) {
  const result = measured.results.find((r) => r.kind === kind && r.id === id);
  expect(result, `${kind} "${id}" has a budget but the bench no longer measures it`).toBeDefined();
  expect(result!.gzip, result!.message).toBeLessThanOrEqual(result!.budget!);
}

describe("bundle size budgets (esbuild over dist, gzip -9)", () => {
  it.each(Object.keys(budgets.jobs))("job %s", (id) => withinBudget("jobs", id));

  it.each(Object.keys(budgets.entries))("entry %s", (id) => withinBudget("entries", id));

  it("every job, capability row and browser entry the bench measures has a budget", () => {
    expect(measured.results.filter((r) => r.status === "missing").map((r) => r.message)).toEqual([]);
    expect(measured.stale).toEqual([]);
  });
});
