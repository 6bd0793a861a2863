// The browser build pays end to end, in a real headless Chromium: test/browser/page.ts (x402-pay from
// src + viem's privateKeyToAccount) is bundled by esbuild for the browser, served to Chromium, and
// pays the unmodified reference @x402/express seller on the local anvil chain. Every paid case
// asserts the token movement and the mined settlement on chain.
//
// Chromium is Debian's (`apt-get install chromium`, /usr/bin/chromium; CHROMIUM_PATH overrides),
// driven by playwright-core: the playwright package's own browser download is not used.
//
// Origins. The reference seller sends no CORS headers, so the page is served SAME-ORIGIN with it:
// a small node:http server serves `/` and `/page.js` and reverse-proxies every other path to the
// seller, passing the browser's Host header through unchanged. The seller builds `resource.url`
// from that Host header, so the challenge names the page's origin, the one the browser asked; the
// buyer's default policy check (resource host = request host) holds, and the signed payload echoes
// the URL the browser really used. The cross-origin cases show what a browser makes of a seller on
// another origin: without CORS headers, without Access-Control-Expose-Headers, and with both.
import { existsSync } from "node:fs";
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { builtinModules } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { createPublicClient, http, type Hash, type PublicClient } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PRICE_ATOMIC, WEATHER, fundedBuyer, startInteropStack, type Buyer, type InteropStack } from "../../localnet/index.js";
import { listenOnLoopback, type LoopbackServer } from "../../localnet/listen.js";
import type { PageRequest, PageResult } from "./page";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const root = fileURLToPath(new URL("../../", import.meta.url));

let stack: InteropStack;
let chain: PublicClient;
let browser: Browser;
let bundle: { code: string; inputs: string[]; imports: { path: string; external?: boolean }[] };
const servers: LoopbackServer[] = [];

// Fail, do not skip: a machine without Chromium cannot prove the browser build works. Thrown from
// beforeEach, so every test is reported failed with this message (a failing beforeAll would only
// fail the file and list the tests as skipped).
const missingChromium = existsSync(CHROMIUM)
  ? undefined
  : `Chromium not found at ${CHROMIUM}. The browser tests need it: on Debian/Ubuntu run ` +
    "`apt-get update && apt-get install -y --no-install-recommends chromium` (as root; .ci/run does this), " +
    "or set CHROMIUM_PATH to a Chromium or Chrome binary.";

beforeEach(() => {
  if (missingChromium) throw new Error(missingChromium);
});

beforeAll(async () => {
  if (missingChromium) return;
  const started = await Promise.allSettled([
    startInteropStack().then((s) => (stack = s)),
    bundlePage().then((b) => (bundle = b)),
    chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 }).then((b) => (browser = b)),
  ]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
  chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await Promise.all(servers.map((s) => s.stop()));
  await stack?.stop();
});

/** test/browser/page.ts bundled for the browser, in memory. */
async function bundlePage() {
  const result = await build({
    entryPoints: ["test/browser/page.ts"],
    absWorkingDir: root,
    bundle: true,
    write: false,
    platform: "browser",
    format: "esm",
    target: "es2022",
    metafile: true,
    logLevel: "silent",
  });
  return {
    code: result.outputFiles[0]!.text,
    inputs: Object.keys(result.metafile.inputs),
    imports: Object.values(result.metafile.inputs).flatMap((input) => input.imports),
  };
}

/** What a proxy saw: one entry per request it forwarded. */
interface Forwarded {
  method: string;
  path: string;
  host: string | undefined;
  paymentSignature: string | undefined;
}

/**
 * A loopback server that serves the page (`/`, `/page.js`) and, given `upstream`, reverse-proxies
 * every other path there with the request's own Host header. `cors` adds CORS headers to what it
 * proxies: "allow-origin" only Access-Control-Allow-Origin (so the browser lets the page read the
 * response but hides its non-safelisted headers), "expose" also Access-Control-Expose-Headers for
 * the x402 headers and a preflight answer that allows PAYMENT-SIGNATURE.
 */
async function startPageServer({ upstream, cors = "none" }: { upstream?: string; cors?: "none" | "allow-origin" | "expose" } = {}) {
  const forwarded: Forwarded[] = [];
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>x402-pay browser test</title><link rel="icon" href="data:,"></head>
<body><script type="module" src="/page.js"></script></body></html>`;
  const corsHeaders: Record<string, string> =
    cors === "none"
      ? {}
      : cors === "allow-origin"
        ? { "access-control-allow-origin": "*" }
        : { "access-control-allow-origin": "*", "access-control-expose-headers": "PAYMENT-REQUIRED, PAYMENT-RESPONSE" };

  const server = await listenOnLoopback((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "/";
    if (req.method === "GET" && path === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(html);
      return;
    }
    if (req.method === "GET" && path === "/page.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-store" }).end(bundle.code);
      return;
    }
    if (!upstream) {
      res.writeHead(404).end();
      return;
    }
    if (cors === "expose" && req.method === "OPTIONS") {
      res
        .writeHead(204, {
          ...corsHeaders,
          "access-control-allow-methods": "GET, POST",
          "access-control-allow-headers": "content-type, payment-signature",
          "access-control-max-age": "0",
        })
        .end();
      return;
    }
    const signature = req.headers["payment-signature"];
    forwarded.push({
      method: req.method ?? "",
      path,
      host: req.headers.host,
      paymentSignature: typeof signature === "string" ? signature : undefined,
    });
    const target = new URL(upstream);
    // req.headers still holds the browser's Host (this server's 127.0.0.1:<port>): passed on as is.
    const out = httpRequest({ hostname: target.hostname, port: target.port, method: req.method, path, headers: req.headers }, (upstreamRes) => {
      const headers = { ...upstreamRes.headers, ...corsHeaders };
      for (const hopByHop of ["connection", "keep-alive", "transfer-encoding"]) delete headers[hopByHop];
      res.writeHead(upstreamRes.statusCode ?? 502, headers);
      upstreamRes.pipe(res);
    });
    out.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy error: ${error.message}`);
    });
    req.pipe(out);
  });
  servers.push(server);
  return { url: server.url, forwarded };
}

/** A fresh browser context (no cache, no cookies) on `${origin}/`, with the page script loaded. */
async function openPage(origin: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const logs: string[] = [];
  page.on("console", (message) => logs.push(`[${message.type()}] ${message.text()}`));
  page.on("pageerror", (error) => logs.push(`[pageerror] ${error.message}`));
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => typeof window.x402Page?.pay === "function", undefined, { timeout: 5_000 });
  expect(await page.evaluate(() => window.isSecureContext)).toBe(true); // loopback http is a secure context
  return {
    logs,
    pay: (buyer: Buyer, request: PageRequest): Promise<PageResult> =>
      page.evaluate(([key, req]) => window.x402Page.pay(key, req), [buyer.privateKey, request] as const),
    close: () => context.close(),
  };
}

async function balances(buyer: Buyer) {
  const [b, s] = await Promise.all([stack.usdc.usdcBalance(buyer.address), stack.usdc.usdcBalance(stack.seller.payTo)]);
  return { buyer: b, seller: s };
}

async function expectMinedTransfer(transaction: string | undefined) {
  expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);
  const receipt = await chain.getTransactionReceipt({ hash: transaction as Hash });
  expect(receipt.status).toBe("success");
}

/** The `resource.url` a PAYMENT-SIGNATURE header (base64 JSON, v2) echoes. */
function signedResourceUrl(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return (JSON.parse(Buffer.from(header, "base64").toString("utf8")) as { resource?: { url?: string } }).resource?.url;
}

/** Pays one request through the page and checks the result, the chain and the receipt. */
async function payAndCheck(pay: (buyer: Buyer, request: PageRequest) => Promise<PageResult>, buyer: Buyer, request: PageRequest, expectedBody: unknown) {
  const before = await balances(buyer);
  const result = await pay(buyer, request);
  expect(result).toMatchObject({ ok: true, status: 200, body: expectedBody });
  if (!result.ok) throw new Error("unreachable");
  const after = await balances(buyer);
  expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
  expect(after.seller - before.seller).toBe(PRICE_ATOMIC);
  expect(result.receipt).toMatchObject({
    x402Version: 2,
    scheme: "exact",
    network: "eip155:84532",
    amount: String(PRICE_ATOMIC),
    payTo: stack.seller.payTo,
    payer: buyer.address,
    settlement: { success: true, network: "eip155:84532", payer: buyer.address },
  });
  expect(result.receipt?.settlement?.transaction).toBe(result.receipt?.transaction);
  await expectMinedTransfer(result.receipt?.transaction);
  return result;
}

describe("x402-pay in headless Chromium (browser bundle)", () => {
  it("bundles for the browser with no Node built-in", () => {
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
    expect(bundle.imports.filter((i) => i.external)).toEqual([]);
    expect(bundle.inputs.filter((path) => builtins.has(path) || path.startsWith("node:") || path.startsWith("(disabled):"))).toEqual([]);
    // Both entries of the package actually made it in, from src.
    expect(bundle.inputs).toEqual(expect.arrayContaining(["src/index.ts", "src/fetch/index.ts", "src/evm/index.ts", "test/browser/page.ts"]));
    const modules = [...builtinModules].sort((a, b) => b.length - a.length).map((m) => m.replace(/[/]/g, "\\/"));
    const nodeImport = new RegExp(`(?:\\bfrom|\\bimport|\\brequire)\\s*\\(?\\s*["'](?:node:[\\w/]+|(?:${modules.join("|")}))["']`);
    expect(bundle.code).not.toMatch(nodeImport);
    expect(bundle.code).not.toMatch(/(?<![\w.])Buffer\s*[.(]/);
  });

  it("pays GET /weather and POST /echo same-origin, and the seller settles on chain", async () => {
    const site = await startPageServer({ upstream: stack.seller.url });
    const buyer = await fundedBuyer(stack.usdc);
    const page = await openPage(site.url);
    try {
      await payAndCheck(page.pay, buyer, { url: "/weather" }, WEATHER);
      const payload = { question: "Prémium ✓", n: [1, 2, 3], nested: { ok: true } };
      await payAndCheck(page.pay, buyer, { url: "/echo", method: "POST", json: payload }, payload);
    } catch (error) {
      throw new Error(`${(error as Error).message}\npage console:\n${page.logs.join("\n")}`, { cause: error });
    } finally {
      await page.close();
    }
    // Each paid request: the unpaid one (402), then one retry with PAYMENT-SIGNATURE. The browser's
    // Host reached the seller, so the challenge, and the payload signed in the page, name the
    // page's origin.
    expect(site.forwarded.map((f) => [f.method, f.path, f.host, Boolean(f.paymentSignature)])).toEqual([
      ["GET", "/weather", new URL(site.url).host, false],
      ["GET", "/weather", new URL(site.url).host, true],
      ["POST", "/echo", new URL(site.url).host, false],
      ["POST", "/echo", new URL(site.url).host, true],
    ]);
    expect(signedResourceUrl(site.forwarded[1]!.paymentSignature)).toBe(`${site.url}/weather`);
    expect(signedResourceUrl(site.forwarded[3]!.paymentSignature)).toBe(`${site.url}/echo`);
  });

  it("cross-origin, a seller without CORS headers: the browser blocks the response and nothing is paid", async () => {
    const site = await startPageServer(); // the page only, on another port than the seller
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balances(buyer);
    const page = await openPage(site.url);
    let result: PageResult;
    try {
      result = await page.pay(buyer, { url: `${stack.seller.url}/weather` });
    } finally {
      await page.close();
    }
    // No Access-Control-Allow-Origin: fetch itself rejects (an opaque network error), before
    // x402-pay sees any status or header. It propagates unchanged; it is not an x402-pay error.
    expect(result).toEqual({
      ok: false,
      error: { name: "TypeError", message: "Failed to fetch", isX402Error: false, isChallengeNotFoundError: false },
    });
    expect(page.logs.join("\n")).toMatch(/blocked by CORS policy: No 'Access-Control-Allow-Origin' header/);
    expect(await balances(buyer)).toEqual(before);
  });

  it("cross-origin, Access-Control-Allow-Origin without Expose-Headers: ChallengeNotFoundError names the fix", async () => {
    const seller = await startPageServer({ upstream: stack.seller.url, cors: "allow-origin" });
    const site = await startPageServer();
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balances(buyer);
    const page = await openPage(site.url);
    let result: PageResult;
    try {
      result = await page.pay(buyer, { url: `${seller.url}/weather` });
    } finally {
      await page.close();
    }
    // The browser reads the 402 but hides PAYMENT-REQUIRED (not CORS-safelisted, not exposed), and
    // the reference seller's body is `{}`: there is no challenge to read.
    expect(result).toMatchObject({
      ok: false,
      error: { name: "ChallengeNotFoundError", code: "CHALLENGE_NOT_FOUND", phase: "challenge", isX402Error: true, isChallengeNotFoundError: true },
    });
    if (result.ok) throw new Error("unreachable");
    expect(result.error.message).toMatch(/PAYMENT-REQUIRED/);
    expect(result.error.message).toMatch(/Access-Control-Expose-Headers/);
    expect(seller.forwarded).toHaveLength(1); // the unpaid request only: nothing was signed
    expect(await balances(buyer)).toEqual(before);
  });

  it("cross-origin with CORS that exposes PAYMENT-REQUIRED and PAYMENT-RESPONSE and allows PAYMENT-SIGNATURE: pays", async () => {
    const seller = await startPageServer({ upstream: stack.seller.url, cors: "expose" });
    const site = await startPageServer();
    const buyer = await fundedBuyer(stack.usdc);
    const page = await openPage(site.url);
    try {
      await payAndCheck(page.pay, buyer, { url: `${seller.url}/weather` }, WEATHER);
    } catch (error) {
      throw new Error(`${(error as Error).message}\npage console:\n${page.logs.join("\n")}`, { cause: error });
    } finally {
      await page.close();
    }
    expect(seller.forwarded.map((f) => [f.method, Boolean(f.paymentSignature)])).toEqual([
      ["GET", false],
      ["GET", true],
    ]);
  });
});
