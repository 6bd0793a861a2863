// The published shape: every subpath export loads from dist in ESM and CommonJS, and an error
// thrown by one entry is recognised by another (shared chunks, brand check across copies).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const subpaths = ["x402-pay", "x402-pay/fetch", "x402-pay/axios", "x402-pay/evm", "x402-pay/svm"];
const run = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: "utf8" }).trim();

describe("package exports (dist, built by npm test)", () => {
  beforeAll(() => {
    if (!existsSync(`${root}dist/index.js`)) throw new Error("dist/ is missing: run `npm run build` (npm test does).");
  });

  it.each(subpaths)("%s loads with require and import", (subpath) => {
    const cjs = run(["-e", `console.log(Object.keys(require(${JSON.stringify(subpath)})).sort().join(","))`]);
    const esm = run(["--input-type=module", "-e", `const m = await import(${JSON.stringify(subpath)}); console.log(Object.keys(m).sort().join(","))`]);
    expect(cjs.length).toBeGreaterThan(0);
    expect(cjs).toBe(esm);
  });

  it("errors from one entry are X402Errors to another, in both formats", () => {
    const script = (load: string) => `
      ${load}
      try { evm.exactEvm({ signer: {} }); } catch (e) { console.log(root.isX402Error(e), e instanceof root.X402Error, e.code); }`;
    expect(run(["-e", script(`const root = require("x402-pay"); const evm = require("x402-pay/evm");`)])).toBe("true true INVALID_CONFIG");
    expect(run(["--input-type=module", "-e", script(`const root = await import("x402-pay"); const evm = await import("x402-pay/evm");`)])).toBe(
      "true true INVALID_CONFIG",
    );
  });
});
