/**
 * An entry's declarations offer as a value only what its module exports at run time: the error classes every entry
 * names as types (to throw one or test `instanceof`, import it from `x402-pay/errors`) must not type-check as values
 * where they are not there, or a user's `new InvalidConfigError(...)` from `x402-pay` would compile and then fail to
 * link. Against dist (npm test builds it; scripts/type-only-exports.mjs marks the declarations after tsup).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { distProgram, problemsOf } from "../support/dist-types";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { exports: Record<string, unknown> };
// x402-pay/openai-agents loads @openai/agents, which needs Node 22 and is not installed here: the runtime matrix
// loads it there, both ways, and finds its one value (paidFetchTool).
const entries = Object.keys(pkg.exports)
  .filter((key) => key !== "./package.json" && key !== "./openai-agents")
  .map((key) => (key === "." ? "index" : key.slice(2)));
const require = createRequire(import.meta.url);

/** The names an export list of a declaration file gives as values (not marked `type`). */
function declaredValues(declarations: string): string[] {
  const names: string[] = [];
  for (const [, typeOnly, list] of declarations.matchAll(/export\s*(type\s*)?\{([^}]*)\}/g)) {
    if (typeOnly) continue;
    for (const spec of list!.split(",").map((s) => s.trim()))
      if (spec && !spec.startsWith("type ")) names.push(spec.split(/\s+as\s+/).at(-1)!);
  }
  return names;
}

describe("declared values exist at run time", () => {
  it.each(entries)("dist/%s: ESM and CommonJS", async (entry) => {
    const esm = Object.keys(await import(`${root}dist/${entry}.js`));
    const cjs = Object.keys(require(`${root}dist/${entry}.cjs`));
    for (const [extension, runtime] of [
      ["d.ts", esm],
      ["d.cts", cjs],
    ] as const) {
      const offered = declaredValues(readFileSync(`${root}dist/${entry}.${extension}`, "utf8"));
      expect(
        offered.filter((name) => !runtime.includes(name)),
        `${entry}.${extension}`,
      ).toEqual([]);
    }
  });

  it("an error class named by an entry as a type only cannot be used as a value there; from x402-pay/errors it can", () => {
    const file = join(tmpdir(), `x402-declared-values-${process.pid}.ts`);
    writeFileSync(
      file,
      [
        'import { InvalidConfigError, type PaymentRejectedError } from "x402-pay";',
        'import { X402Error } from "x402-pay/fetch";',
        'import { InvalidConfigError as Thrown } from "x402-pay/errors";',
        'export const a = new InvalidConfigError("no");',
        "export const b = (e: unknown) => e instanceof X402Error;",
        'export const c = new Thrown("yes");',
        "export type D = PaymentRejectedError;",
      ].join("\n"),
    );
    const problems = problemsOf(distProgram([file], { strict: true, skipLibCheck: true }));
    expect(problems).toHaveLength(2);
    expect(problems.every((p) => /cannot be used as a value because it was exported using 'export type'/.test(p))).toBe(
      true,
    );
  });
});
