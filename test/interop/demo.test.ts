// The README's main job: `npm run demo` pays for a resource end to end and exits 0; with --serve
// the same stack stays up for other code until Ctrl-C.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createPublicClient, http, type Hash, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { ANVIL_TEST_KEYS, PRICE_ATOMIC, WEATHER, testUsdcAt } from "../../localnet/index.js";
import { createX402Client, getPaymentReceipt } from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsx = fileURLToPath(new URL("../../node_modules/tsx/dist/cli.mjs", import.meta.url));

describe("npm run demo", () => {
  it.each(["(fetch, v2)", "--axios", "--v1", "--solana", "--permit2"])("demo %s pays exactly the price once and stops everything", async (flag) => {
    const flags = flag.startsWith("--") ? [flag] : [];
    const { stdout } = await promisify(execFile)(process.execPath, [tsx, "examples/demo.ts", ...flags], { cwd: root, timeout: 30_000 });
    expect(stdout).toMatch(/settle\s+transaction (0x[0-9a-f]{64}|[1-9A-HJ-NP-Za-km-z]{64,88}): success/);
    expect(stdout).toMatch(/buyer\s+1 USDC -> 0\.999 USDC/);
    expect(stdout).toMatch(/done\s+paid exactly the price, once/);
  });

  it("demo --upto pays what the metered route used, below the signed maximum", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [tsx, "examples/demo.ts", "--upto"], { cwd: root, timeout: 30_000 });
    expect(stdout).toMatch(/settle\s+transaction 0x[0-9a-f]{64}: success/);
    expect(stdout).toMatch(/buyer\s+1 USDC -> 0\.9975 USDC/);
    expect(stdout).toMatch(/receipt\s+signed up to 0\.01 USDC, settled 0\.0025 USDC/);
    expect(stdout).toMatch(/done\s+paid exactly what was used, once/);
  });
});

describe("npm run demo -- --serve", () => {
  it("keeps the stack up, a printed key pays a printed route, SIGINT stops everything and exits 0", { timeout: 40_000 }, async () => {
    const demo = spawn(process.execPath, [tsx, "examples/demo.ts", "--serve"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolve) => demo.once("exit", (code) => resolve(code)));
    try {
      const listing = await readUntil(demo, /^ready\b/m, 30_000);
      const url = capture(listing, /^ {2}GET +(http:\/\/127\.0\.0\.1:\d+\/weather) +0\.001 USDC +on eip155:84532 /m);
      const key = capture(listing, /EVM_PRIVATE_KEY=(0x[0-9a-f]{64})\b/) as Hex;
      const rpcUrl = capture(listing, /^ {2}chain +(http:\/\/127\.0\.0\.1:\d+) +chain id 84532\b/m);
      const ports = new Set([...listing.matchAll(/http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1])));
      // Only the public Anvil keys are printed, never a secret one.
      expect(ANVIL_TEST_KEYS).toContain(key);

      const buyer = privateKeyToAccount(key);
      const usdc = testUsdcAt(rpcUrl);
      const before = await usdc.usdcBalance(buyer.address);
      const client = createX402Client({ schemes: [exactEvm({ signer: buyer })], policy: { maxAmountPerPayment: "$0.01" } });
      const response = await wrapFetchWithPayment(fetch, client)(url);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(WEATHER);
      const tx = getPaymentReceipt(response)?.transaction;
      expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
      const chain = createPublicClient({ transport: http(rpcUrl) });
      expect((await chain.getTransactionReceipt({ hash: tx as Hash })).status).toBe("success");
      expect(before - (await usdc.usdcBalance(buyer.address))).toBe(PRICE_ATOMIC);

      demo.kill("SIGINT");
      expect(await exited).toBe(0);
      expect(ports.size).toBeGreaterThanOrEqual(3); // seller, facilitator, chain
      for (const port of ports) expect(await refused(port), `port ${port} still open`).toBe(true);
    } finally {
      // On failure: SIGTERM, which the demo (through tsx) turns into the same orderly stop.
      if (demo.exitCode === null && demo.signalCode === null) demo.kill("SIGTERM");
      await exited;
    }
  });
});

/** Collects the child's stdout until `pattern` matches; rejects if it exits or takes too long. */
function readUntil(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new Error(`${why}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
    const timer = setTimeout(() => fail(`no ${pattern} within ${timeoutMs} ms`), timeoutMs);
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      if (pattern.test(stdout)) {
        clearTimeout(timer);
        resolve(stdout);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(`exited (${code}) before ${pattern}`);
    });
  });
}

function capture(text: string, pattern: RegExp): string {
  const found = pattern.exec(text)?.[1];
  if (!found) throw new Error(`no ${pattern} in:\n${text}`);
  return found;
}

/** True when nothing accepts connections on 127.0.0.1:`port` any more. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}
