// The public surface is deliberate: each entry's API report (docs/api/<entry>.api.md, written by
// `npm run api` from dist) matches what dist exports, so a change of the surface is a diff in review;
// and the root entry stays small (what a user of the wrappers needs).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { apiReports, committedReports, entries } from "../../scripts/api-report";

const root = fileURLToPath(new URL("../../", import.meta.url));
const names = entries().map((entry) => entry.name);

describe("API reports (docs/api, from dist built by npm test)", () => {
  let reports: Map<string, string>;
  const committed = committedReports();

  beforeAll(() => {
    if (!existsSync(`${root}dist/index.d.ts`)) {
      throw new Error("dist/ is missing: run `npm run build` (npm test does).");
    }
    reports = apiReports();
  }, 180_000);

  it("one report per entry of package.json exports, and none for an entry that is gone", () => {
    expect(names).toContain("x402-pay");
    expect(names).toContain("protocol");
    expect([...committed.keys()].sort(), "docs/api/*.api.md: run `npm run api` and commit the reports").toEqual(
      [...names].sort(),
    );
  });

  it.each(names)("%s: dist exports what its committed report lists", (name) => {
    const hint =
      `dist's surface differs from docs/api/${name}.api.md. If the change is meant, run` +
      " `npm run build && npm run api` and commit the report with it";
    expect(reports.get(name), hint).toBe(committed.get(name));
  });

  it.each(names)("%s: every type its signatures use is exported (no ae-forgotten-export)", (name) => {
    const forgotten = [...(reports.get(name) ?? "").matchAll(/The symbol "([^"]+)" needs to be exported/g)].map(
      (match) => match[1],
    );
    const hint =
      `docs/api/${name}.api.md: ${[...new Set(forgotten)].join(", ")} ` +
      `${forgotten.length === 1 ? "is" : "are"} used by a public signature of ${name} but not exported, so its ` +
      "users cannot name them. Export each type from that entry (a type shared by the entries goes in " +
      "src/entries/types.ts, which every entry re-exports; keep one declaration), or stop using it there, then run " +
      "`npm run build && npm run api`";
    expect(forgotten, hint).toEqual([]);
  });
});

describe("the root entry", () => {
  it("exports at most 40 runtime names (the client, the plug-ins, receipts, isX402Error)", () => {
    const script = 'const m = await import("x402-pay"); console.log(JSON.stringify(Object.keys(m).sort()))';
    const run = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: "utf8" });
    const esm: string[] = JSON.parse(run(["--input-type=module", "-e", script]));
    const required = 'console.log(JSON.stringify(Object.keys(require("x402-pay")).sort()))';
    const cjs: string[] = JSON.parse(run(["-e", required]));
    expect(cjs).toEqual(esm);
    expect(esm).toEqual(
      expect.arrayContaining([
        "createX402Client",
        "signInWithX",
        "builderCode",
        "getPaymentReceipt",
        "resendPayment",
        "isX402Error",
      ]),
    );
    expect(esm.length, `the root exports ${esm.length} runtime names: ${esm.join(", ")}`).toBeLessThanOrEqual(40);
  });
});
