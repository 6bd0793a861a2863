// The command line, end to end: the built `dist/cli.js` run as a user runs it, against the reference
// seller and facilitator on a local anvil chain. Checks stdout's bytes, stderr's trace, exit codes,
// the ledger file, the chain, and that no key ever shows. The terminal case runs it in tmux.
import { execFile, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PRICE_ATOMIC,
  WEATHER,
  fundedBuyer,
  newBuyer,
  randomAddress,
  startInteropStack,
  type InteropStack,
} from "../localnet/index.js";
import { startFaultProxy } from "../localnet/index.js";
import { startDiscoveryService } from "../localnet/discovery.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const cli = `${root}dist/cli.js`;
let stack: InteropStack;
let dir: string;

beforeAll(async () => {
  stack = await startInteropStack();
  dir = mkdtempSync(join(tmpdir(), "x402-cli-"));
});
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Runs the CLI (`bin`: dist/cli.js, or a copy installed elsewhere) with `args` and only `env` (no inherited keys). */
function run(args: string[], env: Record<string, string> = {}, input?: string, bin = cli): Promise<Run> {
  return new Promise((resolve) => {
    const environment = { PATH: process.env.PATH!, ...env };
    const options = { cwd: root, env: environment, encoding: "buffer", timeout: 30_000 } as const;
    const child = execFile(process.execPath, [bin, ...args], options, (error, stdout, stderr) => {
      resolve({
        code: error ? Number((error as { code?: unknown }).code ?? 1) : 0,
        stdout,
        stderr: stderr.toString("utf8"),
      });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

describe("x402-pay <url>", () => {
  it("pays: the body alone on stdout, the trace on stderr, exit 0, the price moved, the ledger written, the key nowhere", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const ledger = join(dir, "ledger.jsonl");
    const result = await run([`${stack.seller.url}/weather`, "--ledger", ledger], {
      EVM_PRIVATE_KEY: buyer.privateKey,
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout.toString("utf8"))).toEqual(WEATHER);
    expect(result.stderr).toContain("request: 402 Payment Required");
    expect(result.stderr).toContain(`paying 0.001 USDC on eip155:84532 to ${stack.seller.payTo} from ${buyer.address}`);
    expect(result.stderr).toMatch(/settled: transaction 0x[0-9a-f]{64}/);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    const [record] = readFileSync(ledger, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(record).toMatchObject({
      outcome: "settled",
      url: `${stack.seller.url}/weather`,
      payer: buyer.address,
      amount: String(PRICE_ATOMIC),
    });
    expect(`${result.stdout}${result.stderr}${readFileSync(ledger, "utf8")}`).not.toContain(buyer.privateKey.slice(2));

    const shown = await run(["ledger", "--ledger", ledger], {});
    expect(shown.code).toBe(0);
    // Human amounts, as the pay path shows them: the asset's decimals are known.
    expect(shown.stdout.toString()).toContain(`${stack.seller.url}  0.001 USDC on eip155:84532  (1 payment)`);
    expect(shown.stdout.toString()).toContain("Outcomes to reconcile: 0");
  });

  it("-X POST -d @file -H, -i and -o: curl's ways", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const body = join(dir, "body.json");
    const out = join(dir, "out.json");
    writeFileSync(body, JSON.stringify({ hello: "world" }));
    const result = await run(
      [
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "--data",
        `@${body}`,
        "-i",
        "-o",
        out,
        `${stack.seller.url}/echo`,
      ],
      { EVM_PRIVATE_KEY: buyer.privateKey },
    );
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toMatch(/^HTTP 200 OK\r\n/);
    expect(result.stdout.toString().toLowerCase()).toContain("payment-response: ");
    expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({ hello: "world" });
  });

  it("--json: one object with status, headers, body and the payment", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const result = await run(["--json", `${stack.seller.url}/weather`], { EVM_PRIVATE_KEY: buyer.privateKey });
    const output = JSON.parse(result.stdout.toString());
    expect(output).toMatchObject({
      status: 200,
      body: JSON.stringify(WEATHER),
      payment: { settled: true, payer: buyer.address, amount: String(PRICE_ATOMIC) },
    });
    expect(result.stderr).toBe("");
  });

  it("--max under the price: exit 5, nothing signed or moved", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const result = await run(["--max", "$0.0001", `${stack.seller.url}/weather`], {
      EVM_PRIVATE_KEY: buyer.privateKey,
    });
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/NO_PAYABLE_REQUIREMENT: .*over policy.maxAmountPerPayment \(\$0.0001\)/);
    expect(result.stdout.length).toBe(0);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n);
  });

  it("--network elsewhere: exit 5; the seller's network: paid", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const env = { EVM_PRIVATE_KEY: buyer.privateKey };
    expect((await run(["--network", "eip155:8453", `${stack.seller.url}/weather`], env)).code).toBe(5);
    expect((await run(["--network", "eip155:*", `${stack.seller.url}/weather`], env)).code).toBe(0);
  });

  it("--dry-run: the quote and the verdict, nothing signed or moved, with no key at all", async () => {
    const result = await run(["--dry-run", `${stack.seller.url}/weather`]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("asks for payment (x402 v2); nothing was signed");
    expect(result.stderr).toMatch(/#0 would pay: 0.001 USDC on eip155:84532 to 0x/);
    const refused = await run(["--dry-run", "--max", "0.0001", "--json", `${stack.seller.url}/weather`]);
    expect(refused.code).toBe(5);
    expect(JSON.parse(refused.stdout.toString())).toMatchObject({
      status: 402,
      wouldPay: false,
      options: [{ verdict: "refused (policy)" }],
    });
    const buyer = await fundedBuyer(stack.usdc);
    expect((await run(["--dry-run", `${stack.seller.url}/weather`], { EVM_PRIVATE_KEY: buyer.privateKey })).code).toBe(
      0,
    );
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n);
  });

  it("a refused payment (unfunded wallet): exit 7 with the reason; a free URL: exit 0; a 404: exit 4; nobody listening: exit 3", async () => {
    const broke = newBuyer();
    const rejected = await run([`${stack.seller.url}/weather`], { EVM_PRIVATE_KEY: broke.privateKey });
    expect(rejected.code).toBe(7);
    expect(rejected.stderr).toMatch(/PAYMENT_REJECTED: .*insufficient/i);
    expect(rejected.stderr).not.toContain(broke.privateKey.slice(2));
    const buyer = await fundedBuyer(stack.usdc);
    const env = { EVM_PRIVATE_KEY: buyer.privateKey };
    expect((await run([`${stack.seller.url}/free`], env)).code).toBe(0);
    expect((await run([`${stack.seller.url}/nowhere`], env)).code).toBe(4);
    expect((await run(["http://127.0.0.1:9/"], env)).code).toBe(3);
  });

  it("bad input: exit 2, and a malformed key is never echoed", async () => {
    const key = `0x${"ab".repeat(31)}zz`;
    const bad = await run([`${stack.seller.url}/weather`], { EVM_PRIVATE_KEY: key });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("The EVM key (EVM_PRIVATE_KEY) is not 32 bytes of hex.");
    expect(bad.stderr).not.toContain("abab");
    expect((await run([`${stack.seller.url}/weather`])).code).toBe(2);
    expect((await run(["not-a-url"], { EVM_PRIVATE_KEY: newBuyer().privateKey })).code).toBe(2);
    expect((await run(["--frobnicate", `${stack.seller.url}/weather`])).code).toBe(2);
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    const eight =
      "the payment left and its outcome is unknown or pending (or its answer was cut or lost): money may have moved";
    expect(help.stdout.toString()).toContain(`  8  ${eight}`);
  });

  it("reads the key from a file, and pays with it", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const file = join(dir, "evm.key");
    writeFileSync(file, `${buyer.privateKey}\n`);
    const result = await run(["--evm-key-file", file, `${stack.seller.url}/weather`]);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain(buyer.privateKey.slice(2));
  });
});

describe("a large answer streams through: the command's memory stays flat", () => {
  /** A loopback server whose answer is `mib` MiB in 64 KiB chunks, written at the reader's pace. */
  async function largeBody(mib: number) {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const server = createServer(async (_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      for (let sent = 0; sent < mib * 16; sent++) if (!response.write(chunk)) await once(response, "drain");
      response.end();
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/large`, stop: () => new Promise((resolve) => server.close(resolve)) };
  }

  /** The command's exit code and peak resident memory (MiB, bench/cli-memory/peak-rss.mjs); stdout to nowhere. */
  async function peak(args: string[]): Promise<{ code: number; mib: number }> {
    const file = join(dir, `rss-${args.length}`);
    const child = spawn(process.execPath, ["--import", `${root}bench/cli-memory/peak-rss.mjs`, cli, ...args], {
      env: { PATH: process.env.PATH!, X402_PEAK_RSS_FILE: file, EVM_PRIVATE_KEY: newBuyer().privateKey },
      stdio: ["ignore", "ignore", "ignore"],
    });
    const [code] = (await once(child, "exit")) as [number];
    return { code, mib: Number(readFileSync(file, "utf8")) / 1024 };
  }

  // 256 MiB: buffered whole, -o peaked at 877 MiB and --json at 1659 MiB; streamed, both stay near the
  // ~100 MiB an idle run takes (bench/cli-memory: 1 GiB peaked at 3163 and 5556 MiB, now 116 and 113).
  it("256 MiB with -o and with --json: under 200 MiB of resident memory, exit 0", async () => {
    const server = await largeBody(256);
    try {
      const toFile = await peak(["-s", "-o", "/dev/null", server.url]);
      const json = await peak(["--json", server.url]);
      expect(toFile.code).toBe(0);
      expect(json.code).toBe(0);
      expect(toFile.mib).toBeLessThan(200);
      expect(json.mib).toBeLessThan(200);
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe("money that may have moved: exit 8, end to end", () => {
  it("a paid answer cut after the seller settled: exit 8, said loudly; money moved; the ledger has it to reconcile", async () => {
    const proxy = await startFaultProxy(stack.seller.url);
    try {
      const buyer = await fundedBuyer(stack.usdc);
      const ledger = join(dir, "cut.jsonl");
      const out = join(dir, "cut.json");
      proxy.cutPaidResponses(1);
      const env = { EVM_PRIVATE_KEY: buyer.privateKey };
      const result = await run([`${proxy.url}/weather`, "--ledger", ledger, "-o", out], env);
      expect(result.code).toBe(8);
      expect(result.stderr).toContain("PAYMENT_OUTCOME_UNKNOWN");
      expect(result.stderr).toContain("MONEY MAY HAVE MOVED");
      expect(proxy.paidRequests.map((r) => r.cut)).toEqual([true]);
      // It did move: the seller settled before the proxy cut the answer.
      expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
      expect(result.stderr).not.toContain(buyer.privateKey.slice(2));
      const shown = await run(["ledger", "--ledger", ledger]);
      expect(shown.stdout.toString()).toContain("Outcomes to reconcile: 1");
      const line = `GET ${proxy.url}/weather  0.001 USDC on eip155:84532  payer ${buyer.address}`;
      expect(shown.stdout.toString()).toContain(line);
    } finally {
      await proxy.stop();
    }
  });
});

/**
 * A project that installed x402-pay with only its dependencies (and, for EVM, viem): dist and
 * package.json copied into node_modules/x402-pay of a temporary directory, each other package a link
 * to this repository's copy. Nothing else is reachable from there (no node_modules above it).
 */
function installWithout(missing: string[]): string {
  const project = mkdtempSync(join(tmpdir(), "x402-cli-peers-"));
  const home = join(project, "node_modules", "x402-pay");
  mkdirSync(home, { recursive: true });
  cpSync(`${root}dist`, join(home, "dist"), { recursive: true });
  cpSync(`${root}package.json`, join(home, "package.json"));
  const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
  for (const name of [...Object.keys(pkg.dependencies), "viem"].filter((name) => !missing.includes(name))) {
    mkdirSync(join(project, "node_modules", name, ".."), { recursive: true });
    symlinkSync(`${root}node_modules/${name}`, join(project, "node_modules", name), "dir");
  }
  const cliCopy = join(home, "dist", "cli.js");
  // What the test rests on: from there, the missing packages cannot be found.
  for (const name of ["@solana/kit", ...missing]) expect(() => createRequire(cliCopy).resolve(name)).toThrow();
  return cliCopy;
}

describe("optional peers: the command starts without them, and says what to install", () => {
  it("without @solana/kit: pays on EVM; a Solana key is told to install it", async () => {
    const bin = installWithout([]);
    try {
      const buyer = await fundedBuyer(stack.usdc);
      const paid = await run([`${stack.seller.url}/weather`], { EVM_PRIVATE_KEY: buyer.privateKey }, undefined, bin);
      expect(paid.stderr).not.toContain("ERR_MODULE_NOT_FOUND");
      expect(paid.code).toBe(0);
      expect(JSON.parse(paid.stdout.toString("utf8"))).toEqual(WEATHER);
      expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
      expect((await run(["--dry-run", `${stack.seller.url}/weather`], {}, undefined, bin)).code).toBe(0);
      const solana = await run([`${stack.seller.url}/weather`], { SVM_PRIVATE_KEY: "4".repeat(88) }, undefined, bin);
      expect(solana.code).toBe(2);
      const install = "install @solana/kit to pay on Solana: npm install @solana/kit (next to x402-pay).";
      expect(solana.stderr).toBe(`x402-pay: ${install}\n`);
    } finally {
      rmSync(join(bin, "../../../.."), { recursive: true, force: true });
    }
  });

  it("without viem either: --dry-run quotes with no key; an EVM key is told to install viem", async () => {
    const bin = installWithout(["viem"]);
    try {
      const dry = await run(["--dry-run", `${stack.seller.url}/weather`], {}, undefined, bin);
      expect(dry.code).toBe(0);
      expect(dry.stderr).toMatch(/#0 would pay: 0.001 USDC on eip155:84532/);
      const key = { EVM_PRIVATE_KEY: newBuyer().privateKey };
      const evm = await run([`${stack.seller.url}/weather`], key, undefined, bin);
      expect(evm.code).toBe(2);
      expect(evm.stderr).toBe("x402-pay: install viem to pay on EVM: npm install viem (next to x402-pay).\n");
    } finally {
      rmSync(join(bin, "../../../.."), { recursive: true, force: true });
    }
  });
});

describe("x402-pay discover", () => {
  it("lists and quotes a facilitator's catalogue", async () => {
    const service = await startDiscoveryService();
    try {
      service.add({
        resource: `${stack.seller.url}/forecast`,
        type: "http",
        x402Version: 2,
        accepts: [
          {
            scheme: "exact",
            network: "eip155:84532",
            amount: "1000",
            asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            payTo: randomAddress(),
            maxTimeoutSeconds: 300,
            extra: { name: "USDC", version: "2" },
          },
        ],
        serviceName: "Forecasts\u202E",
        lastUpdated: 1_763_632_800,
      });
      const listed = await run(["discover", service.url]);
      expect(listed.code).toBe(0);
      expect(listed.stdout.toString()).toBe(
        `${stack.seller.url}/forecast  Forecasts\n  0.001 USDC on eip155:84532: would pay\n`,
      );
      const stingy = await run(["discover", service.url, "forecast", "--max", "0.0001", "--json"]);
      expect(JSON.parse(stingy.stdout.toString())).toMatchObject({
        key: `${stack.seller.url}/forecast`,
        wouldPay: false,
      });
      expect((await run(["discover", "http://127.0.0.1:9"])).code).toBe(3);
    } finally {
      await service.stop();
    }
  });
});

const hasTmux = (() => {
  try {
    execFileSync("tmux", ["-V"]);
    return true;
  } catch {
    return false;
  }
})();

// npm test installs tmux where it is missing (scripts/ensure-tools.sh); a bare `vitest run` without it skips this.
describe.runIf(hasTmux)("in a terminal (tmux)", () => {
  it("shows the progress and the trace as a person sees it, then the body", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const session = `x402-cli-${process.pid}`;
    const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
    tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "30", "-e", `EVM_PRIVATE_KEY=${buyer.privateKey}`);
    try {
      tmux(
        "send-keys",
        "-t",
        session,
        `${process.execPath} ${cli} ${stack.seller.url}/weather; echo "exit=$?"`,
        "Enter",
      );
      let screen = "";
      for (let i = 0; i < 100 && !/exit=\d+/.test(screen); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        screen = tmux("capture-pane", "-p", "-t", session);
      }
      expect(screen).toContain("exit=0");
      expect(screen).toContain("✔ request: 402 Payment Required");
      expect(screen).toContain("✔ paying 0.001 USDC on eip155:84532");
      expect(screen).toMatch(/✔ settled: transaction 0x[0-9a-f]{64}/);
      expect(screen).toContain(JSON.stringify(WEATHER));
      // The spinner's line is cleared, not left behind.
      expect(screen).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
      expect(screen).not.toContain(buyer.privateKey.slice(2));
    } finally {
      tmux("kill-session", "-t", session);
    }
  });
});
