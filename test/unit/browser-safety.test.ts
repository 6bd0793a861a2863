// The browser entries must build for the browser with no Node-only module and no Buffer.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const entries = [
  "src/index.ts",
  "src/fetch/index.ts",
  "src/axios/index.ts",
  "src/evm/index.ts",
  "src/svm/index.ts",
  "src/schemas/index.ts",
];

describe("browser entries", () => {
  it.each(entries)("%s bundles for the browser without Node built-ins or Buffer", async (entry) => {
    const result = await build({
      entryPoints: [entry],
      absWorkingDir: root,
      bundle: true,
      write: false,
      platform: "browser",
      format: "esm",
      external: ["viem", "viem/*", "zod", "zod/*", "axios", "@solana/kit"],
      logLevel: "silent",
    });
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/(?<![\w.])Buffer\s*[.(]/);
    expect(code).not.toMatch(/from\s+["']node:/);
    expect(code).not.toMatch(/\bprocess\.env\b/);
  });
});
