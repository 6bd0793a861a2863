// The README's main job: `npm run demo` pays for a resource end to end and exits 0.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsx = fileURLToPath(new URL("../../node_modules/tsx/dist/cli.mjs", import.meta.url));

describe("npm run demo", () => {
  it.each(["(fetch, v2)", "--axios", "--v1", "--solana"])("demo %s pays exactly the price once and stops everything", async (flag) => {
    const flags = flag.startsWith("--") ? [flag] : [];
    const { stdout } = await promisify(execFile)(process.execPath, [tsx, "examples/demo.ts", ...flags], { cwd: root, timeout: 30_000 });
    expect(stdout).toMatch(/settle\s+transaction (0x[0-9a-f]{64}|[1-9A-HJ-NP-Za-km-z]{64,88}): success/);
    expect(stdout).toMatch(/buyer\s+1 USDC -> 0\.999 USDC/);
    expect(stdout).toMatch(/done\s+paid exactly the price, once/);
  });
});
