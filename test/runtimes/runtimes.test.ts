// The runtime matrix: the package as users install it (the tarball `npm pack` makes of dist/, with its peers
// from the registry; `npm install` for Node and Deno, `bun add` for Bun) pays for real inside Node 20, 22 and 24,
// Bun and Deno (scripts/ensure-runtimes.mjs installs them; one that cannot start fails the run). Each runs
// client.mjs (ESM) and client.cjs (CommonJS) against the reference seller and facilitator on anvil and
// LiteSVM, and the receipt it prints is checked against the chain. Cloudflare Workers: worker-evm.mjs and
// worker-svm.mjs, bundled from the npm-installed project as wrangler bundles a Worker, pay from inside workerd
// (miniflare, a devDependency) while the seller stays outside, on loopback.
import { getBase58Decoder } from "@solana/kit";
import { build, type Plugin } from "esbuild";
import { Miniflare } from "miniflare";
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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

/**
 * The Workers: Solana's needs nodejs_compat (worker-svm.mjs says why), EVM's runs without any flag. The date is
 * the one miniflare's workerd was released with (its version says it).
 */
const WORKERS = {
  evm: { script: "worker-evm", flags: [] as string[] },
  svm: { script: "worker-svm", flags: ["nodejs_compat"] },
};
const COMPATIBILITY_DATE = "2026-04-26";

/** How each runtime runs a script; Deno reads node_modules through the project's package.json. */
function command(runtime: Runtime, bin: string, script: string): [string, string[]] {
  if (runtime === "deno") return [bin, ["run", "--no-lock", "--allow-net", "--allow-env", "--allow-read", script]];
  return [bin, [script]];
}

/** The version a peer is installed at here, so the temporary project resolves the same one. */
function installedVersion(name: string): string {
  return JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version;
}

/** With nodejs_compat, wrangler leaves Node's built-ins (`events`, `node:path`) as `node:` imports workerd serves. */
const nodeBuiltins: Plugin = {
  name: "nodejs_compat built-ins",
  setup(builder) {
    const names = new Set(builtinModules);
    builder.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, ({ path }) => {
      const name = path.replace(/^node:/, "");
      return names.has(name) ? { path: `node:${name}`, external: true } : undefined;
    });
  },
};

/**
 * A Worker bundled as wrangler bundles one (its bundleWorker: esbuild, ESM, es2022, the default browser platform
 * and conditions workerd, worker, browser), from the project the tarball is installed in. Without nodejs_compat a
 * built-in fails the build, as with wrangler.
 */
async function bundleWorker(dir: string, script: string, flags: string[]): Promise<string> {
  const outfile = join(dir, "workers", `${script}.js`);
  await build({
    entryPoints: [join(dir, `${script}.mjs`)],
    outfile,
    bundle: true,
    format: "esm",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    plugins: flags.includes("nodejs_compat") ? [nodeBuiltins] : [],
    logLevel: "silent",
  });
  return outfile;
}

let stack: SolanaStack;
let work: string;
let runtimes: Record<Runtime, { bin: string; version: string }>;
/** Where each runtime runs: Bun in a project `bun add` installed, the others in one npm installed. */
const projectOf = (runtime: Runtime) => join(work, runtime === "bun" ? "bun" : "npm");
/** The Workers' bundles. */
const workers: Partial<Record<Chain, string>> = {};

/** A project with the clients, the tarball and the peers at this checkout's versions (so the caches have them). */
async function project(dir: string, tarball: string, install: (packages: string[]) => Promise<unknown>) {
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true }));
  const files = ["client.mjs", "client.cjs", ...Object.values(WORKERS).map(({ script }) => `${script}.mjs`)];
  for (const file of files) copyFileSync(join(here, file), join(dir, file));
  await install([tarball, ...["viem", "@solana/kit"].map((name) => `${name}@${installedVersion(name)}`)]);
}

beforeAll(async () => {
  if (!existsSync(join(root, "dist", "index.js"))) throw new Error("No dist/: run `npm run build` first.");
  work = mkdtempSync(join(tmpdir(), "x402-pay-runtimes-"));
  const packed = await exec("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: root });
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  const tarball = join(work, filename);
  const npm = (async () => {
    const dir = projectOf("node22");
    await project(dir, tarball, (packages) =>
      exec("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packages], { cwd: dir }),
    );
    for (const [chain, { script, flags }] of Object.entries(WORKERS))
      workers[chain as Chain] = await bundleWorker(dir, script, flags);
  })();
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

/** A fresh buyer on the chain with 1 USDC: the keys for the client, and the checks of what the client printed. */
async function buyer(chain: Chain) {
  const { usdc, tokens, seller, rpc } = stack;
  if (!usdc) throw new Error("the stack runs without EVM");
  const keys: Record<string, string> = { X402_URL: `${seller.url}/weather` };
  let onChain: (receipt: Record<string, unknown>) => Promise<void>;
  if (chain === "evm") {
    const evmBuyer = await fundedBuyer(usdc);
    keys.EVM_PRIVATE_KEY = evmBuyer.privateKey;
    onChain = async (receipt) => {
      expect(receipt).toMatchObject({ network: "eip155:84532", payer: evmBuyer.address });
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await usdc.usdcBalance(evmBuyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    };
  } else {
    const svmBuyer = await stack.fundedBuyer({ mints: [tokens.usdc] });
    keys.SVM_PRIVATE_KEY = getBase58Decoder().decode(svmBuyer.secretKey);
    keys.SVM_RPC_URL = rpc.url;
    onChain = async (receipt) => {
      expect(receipt).toMatchObject({ network: expect.stringMatching(/^solana:/), payer: svmBuyer.address });
      expect(await tokens.balance(tokens.usdc, svmBuyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    };
  }
  return {
    keys,
    async check(out: { status: number; receipt: Record<string, unknown> }) {
      expect(out.status).toBe(200);
      expect(out.receipt).toMatchObject({ settled: true, scheme: "exact", amount: String(PRICE_ATOMIC) });
      await onChain(out.receipt);
    },
  };
}

describe("runtime matrix", () => {
  it.each(MATRIX)(
    "%s pays exact on %s through the package's %s entry",
    async (runtime, chain, format) => {
      const { keys, check } = await buyer(chain);
      const env = {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? work,
        DENO_DIR: join(work, ".deno"),
        ...keys,
      };
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
      await check(out);
    },
    60_000,
  );

  it.each(["evm", "svm"] as const)(
    "workerd pays exact on %s from inside a Worker bundled as wrangler does",
    async (chain) => {
      const { keys, check } = await buyer(chain);
      const scriptPath = workers[chain];
      if (!scriptPath) throw new Error(`no ${chain} Worker bundle`);
      const worker = new Miniflare({
        modules: true,
        scriptPath,
        modulesRoot: dirname(scriptPath),
        compatibilityDate: COMPATIBILITY_DATE,
        compatibilityFlags: WORKERS[chain].flags,
        bindings: keys,
      });
      try {
        // The Worker's own answer: a thrown error comes back as a 500 page, shown if this fails.
        const response = await worker.dispatchFetch("http://worker.test/");
        const text = await response.text();
        expect(response.status, text).toBe(200);
        const out = JSON.parse(text);
        expect(out.runtime).toBe("Cloudflare-Workers");
        await check(out);
      } finally {
        await worker.dispose();
      }
    },
    60_000,
  );
});
