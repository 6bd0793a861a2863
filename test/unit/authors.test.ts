// Authors of schemes, plug-ins and channel stores build on x402-pay's public entries alone: test/support/authors-app.ts
// writes one of each importing only `x402-pay` and `x402-pay/fetch`, type-checked here against dist's declarations
// (strict, exactOptionalPropertyTypes) and run by Node against an msw seller, its imports resolved through
// package.json "exports" to dist (the tsconfig `paths` to src are not used).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { distProgram, problemsOf } from "../support/dist-types";

const root = fileURLToPath(new URL("../../", import.meta.url));
const app = `${root}test/support/authors-app.ts`;

describe("a scheme, a plug-in and a channel store written against the public entries", () => {
  beforeAll(() => {
    if (!existsSync(`${root}dist/index.d.ts`))
      throw new Error("dist/ is missing: run `npm run build` (npm test does).");
  });

  it("type-check against dist's declarations under strict and exactOptionalPropertyTypes", () => {
    const program = distProgram([app], {
      types: ["node"],
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
    });
    const problems = problemsOf(program);
    const read = program.getSourceFiles().map((file) => file.fileName.replace(root, ""));
    expect(problems).toEqual([]);
    // What it compiled against: the published declarations, never src.
    expect(read).toContain("dist/index.d.ts");
    expect(read.filter((file) => file.startsWith("src/"))).toEqual([]);
  }, 60_000);

  it("pay twice through createX402Client: the scheme's open payment, the plug-in's steps, the store's channel", () => {
    // tsx would map `x402-pay` to src through tsconfig.json's paths: give it a tsconfig without them.
    const dir = `${root}node_modules/.cache/x402-pay-authors-${process.pid}/`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}tsconfig.json`, JSON.stringify({ compilerOptions: { target: "ES2022", module: "ESNext" } }));
    let out: string;
    try {
      out = execFileSync(process.execPath, ["--import", "tsx", app], {
        cwd: root,
        encoding: "utf8",
        env: { ...process.env, TSX_TSCONFIG_PATH: `${dir}tsconfig.json` },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const run = JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
    expect(run.resolved).toBe(`file://${root}dist/index.js`);
    expect(run.statuses).toEqual([200, 200]);
    // The plug-in refused the first payee; the hook approved the other, twice.
    expect(run.approved).toEqual(["0xseller 2500", "0xseller 2500"]);
    // The open payment signed cumulative vouchers on one channel; the plug-in stamped each payload.
    expect(run.seen.map((p: { payload: { cumulative: string } }) => p.payload.cumulative)).toEqual(["2500", "5000"]);
    expect(run.seen.map((p: { extensions: unknown }) => p.extensions)).toEqual([
      { stamp: { info: { by: "0xbuyer" } } },
      { stamp: { info: { by: "0xbuyer" } } },
    ]);
    // The store kept the channel as the scheme saved it; the plug-in's store the outcome.
    expect(Object.values(run.channels)).toEqual([{ balance: "1000000", charged: "5000", signed: "5000" }]);
    expect(run.outcomes).toEqual([["https://seller.example/premium", "2500"]]);
  }, 60_000);
});
