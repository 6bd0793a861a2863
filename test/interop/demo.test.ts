// The README's main job: `npm run demo` pays for a resource end to end and exits 0; with --serve
// the same stack, with the extension, MCP and discovery sellers, stays up for other code until
// Ctrl-C, and keeps accepting payments however long it sat idle.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createPublicClient, http, type Hash, type Hex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANVIL_TEST_KEYS, PRICE_ATOMIC, WEATHER, rpc, testUsdcAt } from "../localnet/index.js";
import { createX402Client, getPaymentReceipt, signInWithX, type PaymentScheme, type X402Plugin } from "../../src";
import { createDiscoveryClient } from "../../src/discovery";
import { authCaptureEvm, batchSettlementEvm, evmSettlement, exactEvm, permit2Allowance, uptoEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { wrapMcpClientWithPayment } from "../../src/mcp";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsx = fileURLToPath(new URL("../../node_modules/tsx/dist/cli.mjs", import.meta.url));

describe("npm run demo", () => {
  it.each(["(fetch, v2)", "--axios", "--v1", "--solana", "--permit2"])(
    "demo %s pays exactly the price once and stops everything",
    async (flag) => {
      const flags = flag.startsWith("--") ? [flag] : [];
      const { stdout } = await promisify(execFile)(process.execPath, [tsx, "examples/demo.ts", ...flags], {
        cwd: root,
        timeout: 30_000,
      });
      expect(stdout).toMatch(/settle\s+transaction (0x[0-9a-f]{64}|[1-9A-HJ-NP-Za-km-z]{64,88}): success/);
      expect(stdout).toMatch(/buyer\s+1 USDC -> 0\.999 USDC/);
      expect(stdout).toMatch(/done\s+paid exactly the price, once/);
    },
  );

  it("demo --upto pays what the metered route used, below the signed maximum", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [tsx, "examples/demo.ts", "--upto"], {
      cwd: root,
      timeout: 30_000,
    });
    expect(stdout).toMatch(/settle\s+transaction 0x[0-9a-f]{64}: success/);
    expect(stdout).toMatch(/buyer\s+1 USDC -> 0\.9975 USDC/);
    expect(stdout).toMatch(/receipt\s+signed up to 0\.01 USDC, settled 0\.0025 USDC/);
    expect(stdout).toMatch(/done\s+paid exactly what was used, once/);
  });

  it("demo --batch pays 100 calls from one deposit, then claims, settles and refunds the rest", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [tsx, "examples/demo.ts", "--batch"], {
      cwd: root,
      timeout: 60_000,
    });
    expect(stdout).toMatch(/deposit\s+the first call deposits 0\.15 USDC into channel 0x[0-9a-f]{64}/);
    expect(stdout).toMatch(
      /vouchers\s+calls 2 to 100: a voucher each, no transaction; the channel has charged 0\.1 USDC of 0\.15 USDC/,
    );
    expect(stdout).toMatch(/refund\s+the buyer asks for the rest back: 0\.05 USDC/);
    expect(stdout).toMatch(/chain\s+4 transactions in all: 1 during the 100 calls/);
    expect(stdout).toMatch(/balances\s+buyer\s+1 USDC -> 0\.9 USDC/);
    expect(stdout).toMatch(/\]\s+seller\s+0 USDC -> 0\.1 USDC$/m);
    expect(stdout).toMatch(/\]\s+contract\s+0 USDC -> 0 USDC$/m);
    expect(stdout).toMatch(/done\s+paid exactly 100 calls, from one deposit, in 4 transactions/);
  }, 90_000);
});

describe("npm run demo's options", () => {
  const demo = (...flags: string[]) =>
    promisify(execFile)(process.execPath, [tsx, "examples/demo.ts", ...flags], { cwd: root, timeout: 30_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  it("--help prints the options and exits 0, starting nothing", async () => {
    const { code, stdout, stderr } = await demo("--help");
    expect([code, stderr]).toEqual([0, ""]);
    expect(stdout).toMatch(/^Usage: npm run demo \[-- <options>\]\n/);
    expect(stdout).toMatch(/^ {2}--serve +keep the stack running/m);
    expect(stdout).not.toMatch(/starting|\[\d/);
  });

  // Every combination: test/unit/demo-flags.test.ts. Here, that the demo acts on the refusal.
  it("--serve --batch is refused: exit 2, the reason and the options on stderr, nothing started", async () => {
    const { code, stdout, stderr } = await demo("--serve", "--batch");
    expect(code).toBe(2);
    expect(stderr).toMatch(/^npm run demo: --serve does not take --batch: it serves every seller the demos pay/);
    expect(stderr).toContain("Usage: npm run demo");
    expect(stdout).toBe("");
  });
});

describe("npm run demo -- --serve", () => {
  let demo: ChildProcess;
  let exited: Promise<number | null>;
  let listing: string;
  let buyer: PrivateKeyAccount;
  let rpcUrl: string;
  let usdc: ReturnType<typeof testUsdcAt>;
  /** The printed route, or service, of `pattern`'s first group. */
  const printed = (pattern: RegExp) => capture(listing, pattern);
  const paying = (plugins: X402Plugin[] = []) => {
    const policy = { maxAmountPerPayment: "$0.01" };
    const client = createX402Client({ schemes: [exactEvm({ signer: buyer })], plugins, policy });
    return wrapFetchWithPayment(fetch, client);
  };
  /** Pays with `pay` and checks the chain: a mined transaction that moved exactly the price. */
  async function paysOnce(pay: typeof fetch, url: string, init?: RequestInit): Promise<Response> {
    const before = await usdc.usdcBalance(buyer.address);
    const response = await pay(url, init);
    expect(response.status, await response.clone().text()).toBe(200);
    const tx = getPaymentReceipt(response)?.transaction;
    expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
    const chain = createPublicClient({ transport: http(rpcUrl) });
    expect((await chain.getTransactionReceipt({ hash: tx as Hash })).status).toBe("success");
    expect(before - (await usdc.usdcBalance(buyer.address))).toBe(PRICE_ATOMIC);
    return response;
  }

  beforeAll(async () => {
    const stdio = ["ignore", "pipe", "pipe"] as const;
    demo = spawn(process.execPath, [tsx, "examples/demo.ts", "--serve"], { cwd: root, stdio: [...stdio] });
    exited = new Promise((resolve) => demo.once("exit", (code) => resolve(code)));
    listing = await readUntil(demo, /^ready\b/m, 40_000);
    const key = printed(/EVM_PRIVATE_KEY=(0x[0-9a-f]{64})\b/) as Hex;
    // Only the public Anvil keys are printed, never a secret one.
    expect(ANVIL_TEST_KEYS).toContain(key);
    buyer = privateKeyToAccount(key);
    rpcUrl = printed(/^ {2}chain +(http:\/\/127\.0\.0\.1:\d+) +chain id 84532\b/m);
    usdc = testUsdcAt(rpcUrl);
  }, 60_000);
  afterAll(async () => {
    // On failure: SIGTERM, which the demo (through tsx) turns into the same orderly stop.
    if (demo && demo.exitCode === null && demo.signalCode === null) demo.kill("SIGTERM");
    await exited;
  });

  it("lists every seller the demos pay, each route with its scheme", () => {
    const routes = [
      ...listing.matchAll(/^ {2}(GET|POST) +http:\/\/127\.0\.0\.1:\d+(\/\S*) +(\S+) +(.+?) +on (\S+) /gm),
    ].map(([, method, path, scheme, price]) => `${method} ${path} ${scheme} ${price}`);
    expect(routes).toEqual(
      expect.arrayContaining([
        "GET /weather exact 0.001 USDC",
        "GET /permit2/weather exact 0.001 USDC",
        "GET /upto/metered?charge=2500 upto up to 0.01 USDC",
        "GET /batch/weather batch-settlement 0.001 USDC",
        "GET /batch/permit2 batch-settlement 0.001 USDC",
        "GET /weather auth-capture 0.01 USDC held",
      ]),
    );
    expect(new Set(routes.map((route) => route.split(" ")[2]))).toEqual(
      new Set(["exact", "upto", "batch-settlement", "auth-capture"]),
    );
  });

  it.each([
    ["exact through Permit2", /(http:\S+\/permit2\/weather) +exact /, 1000n],
    ["upto", /(http:\S+\/upto\/metered\?charge=2500) +upto /, 2500n],
    ["batch-settlement", /(http:\S+\/batch\/weather) +batch-settlement /, undefined],
    ["auth-capture", /(http:\S+\/weather) +auth-capture /, 1000n],
  ])("a printed key pays the %s route as printed", async (kind, pattern, moved) => {
    const url = printed(new RegExp(`^ {2}GET +${pattern.source}`, "m"));
    const rpc = { "eip155:84532": rpcUrl };
    const schemes: Record<string, PaymentScheme> = {
      "exact through Permit2": exactEvm({ signer: buyer, permit2: permit2Allowance({ rpc }) }),
      upto: uptoEvm({ signer: buyer, permit2: permit2Allowance({ rpc }) }),
      "batch-settlement": batchSettlementEvm({ signer: buyer, rpc: rpcUrl }),
      "auth-capture": authCaptureEvm({ signer: buyer, settlement: evmSettlement({ rpc }) }),
    };
    const client = createX402Client({
      schemes: [schemes[kind]!],
      policy: { maxAmountPerPayment: "$0.05", flows: ["authorization", "upfront", "escrow"] },
    });
    const before = await usdc.usdcBalance(buyer.address);
    const response = await wrapFetchWithPayment(fetch, client)(url);
    expect(response.status, await response.clone().text()).toBe(200);
    const receipt = getPaymentReceipt(response);
    expect(receipt?.scheme).toBe(kind === "exact through Permit2" ? "exact" : kind);
    expect(receipt?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // A batch-settlement call deposits into its channel: more than the price leaves the wallet.
    if (moved !== undefined) expect(before - (await usdc.usdcBalance(buyer.address))).toBe(moved);
    else expect(before - (await usdc.usdcBalance(buyer.address))).toBeGreaterThan(PRICE_ATOMIC);
  });

  it("a printed key pays a printed route", async () => {
    const url = printed(/^ {2}GET +(http:\/\/127\.0\.0\.1:\d+\/weather) +exact +0\.001 USDC +on eip155:84532 /m);
    expect(await (await paysOnce(paying(), url)).json()).toEqual(WEATHER);
  });

  it("still pays after the chain sat idle longer than a payment is back-dated (600 s)", async () => {
    const url = printed(/^ {2}GET +(http:\/\/127\.0\.0\.1:\d+\/weather) +exact +0\.001 USDC +on eip155:84532 /m);
    await idle(rpcUrl, 700);
    const latest = await rpc<{ timestamp: string }>(rpcUrl, "eth_getBlockByNumber", ["latest", false]);
    expect(Date.now() / 1000 - Number(latest.timestamp)).toBeGreaterThan(650);
    await paysOnce(paying(), url);
  });

  it("the sign-in-with-x seller: the first visit pays, the next signs in and pays nothing", async () => {
    const url = printed(/^ {2}GET +(http:\/\/127\.0\.0\.1:\d+\/siwx\/weather) +exact +0\.001 USDC +on eip155:84532 /m);
    const pay = paying([signInWithX({ evm: buyer })]);
    await paysOnce(pay, url);
    const before = await usdc.usdcBalance(buyer.address);
    const again = await pay(url);
    expect([again.status, getPaymentReceipt(again)?.settled]).toEqual([200, undefined]);
    expect(await usdc.usdcBalance(buyer.address)).toBe(before);
  });

  it("the discovery service lists a declared route once it was paid", async () => {
    const url = printed(
      /^ {2}GET +(http:\/\/127\.0\.0\.1:\d+\/forecast\?city=Lisbon) +exact +0\.001 USDC +on eip155:84532 /m,
    );
    const discovery = createDiscoveryClient({ url: printed(/^ {2}discovery +(http:\/\/127\.0\.0\.1:\d+) /m) });
    await paysOnce(paying(), url);
    const listed: string[] = [];
    for await (const listing of discovery.resources()) listed.push(new URL(listing.resource).pathname);
    expect(listed).toEqual(["/forecast"]);
  });

  it("the MCP seller sells a tool call", async () => {
    const mcp = new Client({ name: "demo-test", version: "1.0.0" });
    const url = printed(/^ {2}MCP +(http:\/\/127\.0\.0\.1:\d+\/mcp) /m);
    await mcp.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const before = await usdc.usdcBalance(buyer.address);
      const tools = wrapMcpClientWithPayment(mcp, createX402Client({ schemes: [exactEvm({ signer: buyer })] }));
      const result = await tools.callTool({ name: "weather", arguments: {} });
      expect(result.structuredContent).toEqual(WEATHER);
      expect(before - (await usdc.usdcBalance(buyer.address))).toBe(PRICE_ATOMIC);
    } finally {
      await mcp.close();
    }
  });

  it("SIGINT stops everything it started and exits 0", async () => {
    const ports = new Set([...listing.matchAll(/http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1])));
    expect(ports.size).toBeGreaterThanOrEqual(6); // seller, extension seller, MCP, discovery, facilitator, chain
    demo.kill("SIGINT");
    expect(await exited).toBe(0);
    for (const port of ports) expect(await refused(port), `port ${port} still open`).toBe(true);
  });
});

/**
 * Leaves the chain as ten quiet minutes leave anvil: its latest block `seconds` old (mined with its
 * clock set back), its clock current again, no block since.
 */
async function idle(rpcUrl: string, seconds: number): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await rpc(rpcUrl, "anvil_setTime", [now - seconds]);
  await rpc(rpcUrl, "evm_mine", []);
  await rpc(rpcUrl, "anvil_setTime", [now]);
}

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
