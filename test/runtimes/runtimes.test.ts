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
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRICE_ATOMIC, fundedBuyer, randomAddress } from "../localnet/index.js";
import { startMcpSeller, type McpSeller } from "../localnet/mcp.js";
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
/** The MCP seller of test/localnet, for the Agents SDK's MCP client (on the same chain and facilitator). */
let mcpSeller: McpSeller;
let work: string;
let runtimes: Record<Runtime, { bin: string; version: string }>;
/** Where each runtime runs: Bun in a project `bun add` installed, the others in one npm installed. */
const projectOf = (runtime: Runtime) => join(work, runtime === "bun" ? "bun" : "npm");
/** The Workers' bundles. */
const workers: Partial<Record<Chain, string>> = {};

/**
 * The agent frameworks that need Node 22, at pinned versions (the SDKs' own `openai` 7 and `ai` 7 declare Node >= 22:
 * npm on Node 20 installs them with an engine warning, and Node 22 runs them). zod at this checkout's version.
 */
const NODE22_FRAMEWORKS = ["@openai/agents@0.20.0", "ai@7.0.173"];
/** The agent-door scripts, the user's TypeScript checked against the real frameworks, and the Node 22 example. */
const AGENT_FILES = [
  ...["agents-common.mjs", "agents-openai.mjs", "agents-ai7.mjs", "agents-types.ts"].map((file) => join(here, file)),
  join(root, "examples", "openai-agents.mjs"),
];

/** A project with the clients, the tarball and the peers at this checkout's versions (so the caches have them). */
async function project(
  dir: string,
  tarball: string,
  install: (packages: string[]) => Promise<unknown>,
  extra: { files: string[]; packages: string[] } = { files: [], packages: [] },
) {
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true }));
  const files = ["client.mjs", "client.cjs", ...Object.values(WORKERS).map(({ script }) => `${script}.mjs`)];
  for (const file of [...files.map((name) => join(here, name)), ...extra.files])
    copyFileSync(file, join(dir, basename(file)));
  const peers = ["viem", "@solana/kit"].map((name) => `${name}@${installedVersion(name)}`);
  await install([tarball, ...peers, ...extra.packages]);
}

beforeAll(async () => {
  if (!existsSync(join(root, "dist", "index.js"))) throw new Error("No dist/: run `npm run build` first.");
  work = mkdtempSync(join(tmpdir(), "x402-pay-runtimes-"));
  const packed = await exec("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: root });
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  const tarball = join(work, filename);
  const npm = (async () => {
    const dir = projectOf("node22");
    const agents = { files: AGENT_FILES, packages: [...NODE22_FRAMEWORKS, `zod@${installedVersion("zod")}`] };
    await project(
      dir,
      tarball,
      (packages) => exec("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packages], { cwd: dir }),
      agents,
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
    mcpSeller = await startMcpSeller({ facilitatorUrl: stack.facilitator.url, payTo: randomAddress() });
  };
  await Promise.all([npm, bun, start()]);
}, 600_000);

afterAll(async () => {
  await mcpSeller?.stop();
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

/** What a case of the agent scripts saw: signatures, requests (paid ones apart) and the rest of what it printed. */
type AgentCase = { address: `0x${string}`; signed: number; sent: number; paidSent: number } & Record<string, any>;

describe("agent frameworks that need Node 22, in their own loops", () => {
  /** Runs an agent script on Node 22 with 14 funded buyers; its cases, and each buyer's balance change. */
  async function runAgents(script: string) {
    const { usdc, seller } = stack;
    if (!usdc) throw new Error("the stack runs without EVM");
    // One mint after the other: the minter's transactions take nonces in turn.
    const buyers = [];
    for (let i = 0; i < 14; i++) buyers.push(await fundedBuyer(usdc));
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? work,
      X402_URL: `${seller.url}/weather`,
      X402_MCP_URL: mcpSeller.url,
      BUYER_KEYS: buyers.map((b) => b.privateKey).join(","),
    };
    const { stdout } = await exec(runtimes.node22.bin, [script], { cwd: projectOf("node22"), env, timeout: 90_000 });
    const cases = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as Record<string, AgentCase>;
    const spent = async (name: string) => 1_000_000n - (await usdc.usdcBalance(cases[name]!.address));
    return { cases, spent };
  }
  const PAID = /^0\.001 USDC on eip155:84532 \(transaction 0x[0-9a-f]{64}\)$/;

  it("the OpenAI Agents SDK's run pays once, stops for approval above the rule, and pays nothing refused", async () => {
    const { cases, spent } = await runAgents("agents-openai.mjs");
    const { paid, budget, below, approved, rejected, raised, hostile, aborted, mcp } = cases as Record<
      string,
      AgentCase
    >;
    // The model's next turn reads the body and what was paid; the chain moved exactly the price.
    expect(paid).toMatchObject({ signed: 1, paidSent: 1, finalOutput: "done", interruptions: [] });
    expect(paid!.read).toMatchObject({ ok: true, status: 200, body: { report: { weather: "sunny" } } });
    expect(paid!.read.paid).toMatch(PAID);
    expect(await spent("paid")).toBe(PRICE_ATOMIC);
    // A budget below the price: the model reads the refusal; nothing was signed.
    expect(budget).toMatchObject({ signed: 0, paidSent: 0, read: { ok: false, paid: "nothing" } });
    expect(budget!.read.error).toMatchObject({
      code: "NO_PAYABLE_REQUIREMENT",
      message: expect.stringContaining("budget"),
    });
    // Below the approval rule: paid without an interruption.
    expect(below).toMatchObject({ signed: 1, paidSent: 1, interruptions: [], read: { ok: true } });
    expect(await spent("below")).toBe(PRICE_ATOMIC);
    // Above it: the run stops on the seller's quoted price; approved (through a state saved as text), paid once.
    expect(approved).toMatchObject({
      signed: 1,
      paidSent: 1,
      interruptions: [{ name: "paid_fetch", callId: "call-1" }],
    });
    expect(approved!.approvals).toEqual([expect.objectContaining({ price: "0.001 USDC", amount: "1000" })]);
    expect(approved!.read.paid).toMatch(PAID);
    expect(await spent("approved")).toBe(PRICE_ATOMIC);
    // Rejected: nothing signed or paid, and the model reads the person's message.
    expect(rejected).toMatchObject({ signed: 0, paidSent: 0, read: "The user said no." });
    expect(rejected!.interruptions).toHaveLength(1);
    // A seller that asks twice the approved price on the paid retry is refused before signing.
    expect(raised).toMatchObject({ signed: 0, paidSent: 0, read: { ok: false, paid: "nothing" } });
    expect(raised!.read.error.message).toContain("over x402.maxAmount (0.001 USDC)");
    // 10 MB telling the model to pay someone: cut to the tool's bound, read as data, nothing signed.
    expect(hostile).toMatchObject({ signed: 0, paidSent: 0, bodyLength: 4000, read: { paid: "nothing" } });
    expect(hostile!.read.bodyNote).toMatch(/^cut short/);
    // The run aborted while the model's turn was made: nothing was sent.
    expect(aborted).toMatchObject({ threw: true, sent: 0, signed: 0, error: "the user stopped the run" });
    for (const name of ["budget", "rejected", "raised", "hostile", "aborted"]) expect(await spent(name)).toBe(0n);
    // A paid MCP tool through the SDK's own MCP client (paidMcpServer): paid once, the model reads the weather.
    expect(mcp).toMatchObject({ signed: 1, finalOutput: "done" });
    expect(JSON.stringify(mcp!.read)).toContain("sunny");
    expect(await spent("mcp")).toBe(PRICE_ATOMIC);
    // paidMcpServer(..., { tools: [] }), { servers: [] } and a cap of $0 allow none: nothing signed, nothing spent.
    for (const name of ["mcpToolsNone", "mcpServersNone", "mcpCapZero"]) {
      expect(cases[name]).toMatchObject({ signed: 0, finalOutput: "done" });
      expect(await spent(name)).toBe(0n);
    }
  }, 120_000);

  it("the AI SDK 7's generateText pays once, asks above the rule, and pays nothing denied or raised", async () => {
    const { cases, spent } = await runAgents("agents-ai7.mjs");
    const { paid, budget, approved, denied, raised, aborted } = cases as Record<string, AgentCase>;
    expect(paid).toMatchObject({ signed: 1, paidSent: 1, text: "done", asked: 0, read: { type: "json" } });
    expect(paid!.read.value.paid).toMatch(PAID);
    expect(await spent("paid")).toBe(PRICE_ATOMIC);
    expect(budget).toMatchObject({ signed: 0, paidSent: 0, read: { value: { ok: false, paid: "nothing" } } });
    expect(budget!.read.value.error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(approved).toMatchObject({ signed: 1, paidSent: 1, asked: 1, text: "done" });
    expect(approved!.approvals).toEqual([expect.objectContaining({ price: "0.001 USDC", amount: "1000" })]);
    expect(approved!.read.value.paid).toMatch(PAID);
    expect(await spent("approved")).toBe(PRICE_ATOMIC);
    // Denied: the tool never ran past the quote; the model reads the SDK's denial with the person's reason.
    expect(denied).toMatchObject({ signed: 0, paidSent: 0, asked: 1 });
    expect(denied!.read).toEqual({ type: "execution-denied", reason: "The user said no." });
    expect(raised).toMatchObject({ signed: 0, paidSent: 0, asked: 1 });
    expect(raised!.read.value.error.message).toContain("over x402.maxAmount (0.001 USDC)");
    expect(aborted).toMatchObject({ threw: true, sent: 0, signed: 0, error: "the user stopped the run" });
    for (const name of ["budget", "denied", "raised", "aborted"]) expect(await spent(name)).toBe(0n);
  }, 120_000);

  it("x402-pay/openai-agents loads on Node 22 with import and require, with the real SDK beside it", async () => {
    const names = "console.log(Object.keys(m).sort().join(','))";
    const forms = [
      ["--input-type=module", "-e", `const m = await import("x402-pay/openai-agents"); ${names}`],
      ["-e", `const m = require("x402-pay/openai-agents"); ${names}`],
    ];
    for (const args of forms) {
      const { stdout } = await exec(runtimes.node22.bin, args, { cwd: projectOf("node22") });
      expect(stdout.trim()).toBe("paidFetchTool,paidMcpServer");
    }
  }, 60_000);

  it("examples/openai-agents.mjs on Node 22: the run stops on the price, yes pays once, no pays nothing", async () => {
    const { usdc, seller } = stack;
    if (!usdc) throw new Error("the stack runs without EVM");
    const buyer = await fundedBuyer(usdc);
    const example = (answer: string) =>
      exec(runtimes.node22.bin, ["openai-agents.mjs", `${seller.url}/weather`, answer], {
        cwd: projectOf("node22"),
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? work, EVM_PRIVATE_KEY: buyer.privateKey },
        timeout: 50_000,
      });
    const yes = await example("yes");
    expect(yes.stdout).toMatch(/^approval asked: pay 0\.001 USDC to 0x[0-9a-fA-F]{40} for .*\/weather\? yes$/m);
    expect(yes.stdout).toMatch(/"paid":"0\.001 USDC on eip155:84532 \(transaction 0x[0-9a-f]{64}\)"/);
    expect(await usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    const no = await example("no");
    expect(no.stdout).toMatch(/The tool answered: The person did not approve this payment: nothing was paid\./);
    expect(await usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
  }, 120_000);

  it("a user's TypeScript puts each door's tool where the real SDK takes tools (strict, exactOptionalPropertyTypes)", async () => {
    const dir = projectOf("node22");
    const compilerOptions = {
      target: "ES2022",
      module: "ESNext",
      moduleResolution: "Bundler",
      lib: ["ES2022", "DOM"],
      types: [],
      strict: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: true,
      noEmit: true,
    };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["agents-types.ts"] }));
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const checked = await exec(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }).catch((error) => error);
    expect(checked.stdout ?? "").toBe("");
    expect(checked.code ?? 0).toBe(0);
  }, 60_000);
});
