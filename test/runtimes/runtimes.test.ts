// The runtime matrix: the package as users install it (the tarball `npm pack` makes of dist/, with its peers
// from the registry; `npm install` for Node and Deno, `bun add` for Bun) pays for real inside Node 20, 22 and
// 24, Bun and Deno (scripts/ensure-runtimes.mjs installs them; one that cannot start fails the run). Each runs
// client.mjs (ESM) and client.cjs (CommonJS) against the reference seller and facilitator on anvil and
// LiteSVM, and the receipt it prints is checked against the chain.
import { getBase58Decoder } from "@solana/kit";
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRICE_ATOMIC, fundedBuyer } from "../localnet/index.js";
import { startSolanaStack, type SolanaStack } from "../localnet/svm/index.js";

const exec = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const here = fileURLToPath(new URL(".", import.meta.url));

type Runtime = "node20" | "node22" | "node24" | "bun" | "deno";
type Chain = "evm" | "svm";
type Format = "esm" | "cjs";
const RUNTIMES = ["node20", "node22", "node24", "bun", "deno"] as const;
const MATRIX: [Runtime, Chain, Format][] = RUNTIMES.flatMap((runtime) =>
  (["evm", "svm"] as const).flatMap((chain) =>
    (["esm", "cjs"] as const).map((format): [Runtime, Chain, Format] => [runtime, chain, format]),
  ),
);

/** How each runtime runs a script; Deno reads node_modules through the project's package.json. */
function command(runtime: Runtime, bin: string, script: string): [string, string[]] {
  if (runtime === "deno") return [bin, ["run", "--no-lock", "--allow-net", "--allow-env", "--allow-read", script]];
  return [bin, [script]];
}

/** The version a peer is installed at here, so the temporary project resolves the same one. */
function installedVersion(name: string): string {
  return JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version;
}

let stack: SolanaStack;
let work: string;
let runtimes: Record<Runtime, { bin: string; version: string }>;
/** Where each runtime runs: Bun in a project `bun add` installed, the others in one npm installed. */
const projectOf = (runtime: Runtime) => join(work, runtime === "bun" ? "bun" : "npm");

/** A project with the clients, the tarball and the peers at this checkout's versions (so the caches have them). */
async function project(dir: string, tarball: string, install: (packages: string[]) => Promise<unknown>) {
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true }));
  for (const file of ["client.mjs", "client.cjs"]) copyFileSync(join(here, file), join(dir, file));
  await install([tarball, ...["viem", "@solana/kit"].map((name) => `${name}@${installedVersion(name)}`)]);
}

beforeAll(async () => {
  if (!existsSync(join(root, "dist", "index.js"))) throw new Error("No dist/: run `npm run build` first.");
  work = mkdtempSync(join(tmpdir(), "x402-pay-runtimes-"));
  const packed = await exec("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: root });
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  const tarball = join(work, filename);
  const npm = project(projectOf("node22"), tarball, (packages) =>
    exec("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packages], { cwd: projectOf("node22") }),
  );
  const bun = (async () => {
    const { stdout } = await exec(process.execPath, [join(root, "scripts", "ensure-runtimes.mjs"), "--json"]);
    runtimes = JSON.parse(stdout);
    await project(projectOf("bun"), tarball, (packages) =>
      exec(runtimes.bun.bin, ["add", ...packages], { cwd: projectOf("bun") }),
    );
  })();
  const start = async () => {
    stack = await startSolanaStack();
  };
  await Promise.all([npm, bun, start()]);
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("runtime matrix", () => {
  it.each(MATRIX)(
    "%s pays exact on %s through the package's %s entry",
    async (runtime, chain, format) => {
      const { usdc, tokens, seller, rpc } = stack;
      if (!usdc) throw new Error("the stack runs without EVM");
      const evmBuyer = chain === "evm" ? await fundedBuyer(usdc) : undefined;
      const svmBuyer = chain === "svm" ? await stack.fundedBuyer({ mints: [tokens.usdc] }) : undefined;
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? work,
        DENO_DIR: join(work, ".deno"),
        X402_URL: `${seller.url}/weather`,
      };
      if (evmBuyer) env.EVM_PRIVATE_KEY = evmBuyer.privateKey;
      if (svmBuyer) {
        env.SVM_PRIVATE_KEY = getBase58Decoder().decode(svmBuyer.secretKey);
        env.SVM_RPC_URL = rpc.url;
      }
      const [bin, args] = command(runtime, runtimes[runtime].bin, `client.${format === "esm" ? "mjs" : "cjs"}`);
      const { stdout } = await exec(bin, args, { cwd: projectOf(runtime), env, timeout: 50_000 });
      const out = JSON.parse(stdout.trim().split("\n").at(-1) ?? "");

      // The client ran in the runtime named: navigator.userAgent (on Node 20, its version; see client.mjs).
      // Deno's --version says "deno 2.x.y (...)".
      const agent = {
        node20: "Node.js/20",
        node22: "Node.js/22",
        node24: "Node.js/24",
        bun: `Bun/${runtimes.bun.version}`,
        deno: `Deno/${runtimes.deno.version.split(" ")[1]}`,
      };
      expect(out.runtime).toBe(agent[runtime]);
      expect(out.status).toBe(200);
      expect(out.receipt).toMatchObject({ settled: true, scheme: "exact", amount: String(PRICE_ATOMIC) });
      if (evmBuyer) {
        expect(out.receipt).toMatchObject({ network: "eip155:84532", payer: evmBuyer.address });
        expect(out.receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
        expect(await usdc.usdcBalance(evmBuyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
      }
      if (svmBuyer) {
        expect(out.receipt).toMatchObject({ network: expect.stringMatching(/^solana:/), payer: svmBuyer.address });
        expect(await tokens.balance(tokens.usdc, svmBuyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
      }
    },
    60_000,
  );
});
