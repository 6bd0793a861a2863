// The setup every browser test file shares: the local stack (anvil, the reference facilitator and
// @x402/express seller), test/browser/page.ts bundled by esbuild for the browser, and a headless
// browser driven by puppeteer-core: Debian's Chromium over the DevTools protocol, Debian's Firefox ESR
// over WebDriver BiDi (built into Firefox: no separate driver). Call `useBrowserHarness(name)` once
// per describe block. puppeteer-core downloads no browser; playwright-core was dropped for this: its
// BiDi Firefox needs commands Firefox ESR lacks (emulation.setMediaFeaturesOverride), and its
// own Firefox build is a download.
//
// The page gets x402-pay the way a dapp does: it imports `x402-pay`, `x402-pay/evm`, ..., and esbuild
// resolves them through the package's own `exports` to the built ESM in dist/ (what the tarball ships),
// not to src (tsconfig's paths are not read).
//
// Chromium is /usr/bin/chromium (CHROMIUM_PATH overrides), Firefox /usr/bin/firefox-esr (FIREFOX_PATH);
// scripts/ensure-tools.sh installs both from Debian when missing.
//
// Origins. The reference seller sends no CORS headers, so a page is served SAME-ORIGIN with it: a
// small node:http server (`startSite`) serves `/` and `/page.js` and reverse-proxies every other
// path to the seller, passing the browser's Host header through unchanged. The seller builds
// `resource.url` from that Host header, so the challenge names the page's origin, the one the
// browser asked. Another `startSite` on another port is another origin: with an upstream, a seller
// there (with the CORS headers of its choice); without, a bystander that records what reaches it.
import { existsSync } from "node:fs";
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import puppeteer, { type Browser } from "puppeteer-core";
import { createPublicClient, http, type Hash, type PublicClient } from "viem";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { PRICE_ATOMIC, startInteropStack, type Buyer, type InteropStack } from "../localnet/index.js";
import { listenOnLoopback, type LoopbackServer } from "../localnet/listen.js";
import type { PageRequest, PageResult } from "./page";
import type { SolanaPageRequest, SolanaPageResult } from "./solana-page";

export type BrowserName = "chromium" | "firefox";

/** How each browser is found and started; the flags keep Chromium off this machine's closed network. */
const BROWSERS = {
  chromium: {
    path: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    package: "chromium",
    env: "CHROMIUM_PATH",
    product: "chrome",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  },
  firefox: {
    path: process.env.FIREFOX_PATH || "/usr/bin/firefox-esr",
    package: "firefox-esr",
    env: "FIREFOX_PATH",
    product: "firefox",
    args: [],
  },
} as const;
const root = fileURLToPath(new URL("../../", import.meta.url));

export type Bundle = { code: string; inputs: string[]; imports: { path: string; external?: boolean }[] };

/** A browser and a local stack, for the tests of one describe block. */
export interface BrowserHarness<S> {
  name: BrowserName;
  stack: S;
  browser: Browser;
  bundle: Bundle;
}

/** The EVM harness: the stack of test/localnet (anvil, reference facilitator and seller) and a client of its chain. */
export interface Harness extends BrowserHarness<InteropStack> {
  chain: PublicClient;
}

/**
 * Registers the hooks that start (and stop) the EVM stack, the page bundle and the browser for the calling
 * describe block (or file), and returns the harness they fill in (usable inside tests, not at collection time).
 */
export function useBrowserHarness(name: BrowserName = "chromium"): Harness {
  const h = useBrowser(name, startInteropStack) as Harness;
  beforeAll(() => {
    if (h.stack) h.chain = createPublicClient({ chain: h.stack.anvil.chain, transport: http(h.stack.anvil.rpcUrl) });
  });
  return h;
}

/** `useBrowserHarness` with the stack `start` makes (shared by every harness of the file that passes the same one). */
export function useBrowser<S extends { stop(): Promise<void> }>(
  name: BrowserName,
  start: () => Promise<S>,
): BrowserHarness<S> {
  const h = { name } as BrowserHarness<S>;
  const servers: LoopbackServer[] = [];
  const mine = { harness: h as BrowserHarness<unknown>, servers };
  const browser = BROWSERS[name];
  const shared = stacks.get(start) ?? { users: 0 };
  stacks.set(start, shared);
  shared.users++;

  // Fail, do not skip: a machine without the browser cannot prove the browser build works there. Thrown
  // from beforeEach, so every test is reported failed with this message (a failing beforeAll would only
  // fail the file and list the tests as skipped).
  const missing = existsSync(browser.path)
    ? undefined
    : `${name} not found at ${browser.path}. The browser tests need it: on Debian/Ubuntu run ` +
      `\`apt-get update && apt-get install -y --no-install-recommends ${browser.package}\` (as root; ` +
      `scripts/ensure-tools.sh does this), or set ${browser.env} to its binary.`;

  beforeEach(() => {
    current = mine;
    if (missing) throw new Error(missing);
  });

  beforeAll(async () => {
    current = mine;
    if (missing) return;
    shared.started ??= start();
    bundled ??= bundlePage();
    const started = await Promise.allSettled([
      shared.started.then((stack) => (h.stack = stack as S)),
      bundled.then((bundle) => (h.bundle = bundle)),
      puppeteer
        .launch({
          browser: browser.product,
          executablePath: browser.path,
          args: [...browser.args],
          headless: true,
          timeout: 60_000,
        })
        .then((b) => (h.browser = b)),
    ]);
    const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  });

  afterAll(async () => {
    await h.browser?.close().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
    if (--shared.users === 0) await h.stack?.stop();
  });

  return h;
}

/**
 * One stack per start function for every harness of a test file (one per browser), stopped after the last: a
 * second stack started in the same process after the first stopped left the reference facilitator's settlements
 * hanging. And one page bundle.
 */
const stacks = new Map<() => Promise<unknown>, { users: number; started?: Promise<unknown> }>();
let bundled: Promise<Bundle> | undefined;

let current: { harness: BrowserHarness<unknown>; servers: LoopbackServer[] } | undefined;

function harness(): BrowserHarness<unknown> {
  if (!current) throw new Error("useBrowserHarness() was not called in this test file");
  return current.harness;
}

/** The EVM harness of the running test. */
const evmHarness = () => harness() as Harness;

/** test/browser/page.ts bundled for the browser, in memory. */
async function bundlePage(): Promise<Bundle> {
  const result = await build({
    entryPoints: ["test/browser/page.ts"],
    absWorkingDir: root,
    bundle: true,
    write: false,
    platform: "browser",
    format: "esm",
    target: "es2022",
    metafile: true,
    // Not tsconfig.json: its paths point x402-pay at src; the page must get the package's built entries.
    tsconfigRaw: "{}",
    logLevel: "silent",
  });
  return {
    code: result.outputFiles[0]!.text,
    inputs: Object.keys(result.metafile.inputs),
    imports: Object.values(result.metafile.inputs).flatMap((input) => input.imports),
  };
}

/** One request that reached a site (the page's own `/` and `/page.js` are not recorded). */
export interface Seen {
  method: string;
  path: string;
  host: string | undefined;
  /** The PAYMENT-SIGNATURE header it carried. */
  paymentSignature: string | undefined;
  /** A preflight's Access-Control-Request-Headers, lower case. */
  requestHeaders: string | undefined;
  /** The status it was answered with (set once answered). */
  status?: number;
  /** The PAYMENT-RESPONSE the upstream answered with (proxied requests only; set once answered). */
  paymentResponse?: string;
}

/**
 * How a site answers a request itself instead of proxying it: a redirect; a proxy to another
 * upstream path (`rewrite`); or a proxy whose answer never reaches the browser (`hangUp`: the
 * upstream answers in full, then the browser's connection is dropped). `undefined` proxies it as it is.
 */
export type Answer = { redirect: number; location: string } | { rewrite: string } | { hangUp: true } | undefined;

/**
 * CORS headers a site adds to what it answers:
 * - "none": no CORS headers at all;
 * - "allow-origin": only Access-Control-Allow-Origin (the page reads the response, but not its
 *   non-safelisted headers);
 * - "expose": also Access-Control-Expose-Headers for the x402 headers, and a preflight answer that
 *   allows PAYMENT-SIGNATURE;
 * - "expose-no-payment-header": as "expose", but the preflight allows Content-Type only;
 * - "any": a bystander that lets any origin send it anything (allow-origin, allow-headers and
 *   allow-methods `*`), so a header that does not reach it was never sent, not refused by CORS.
 */
export type Cors = "none" | "allow-origin" | "expose" | "expose-no-payment-header" | "any";

const EXPOSED = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "PAYMENT-REQUIRED, PAYMENT-RESPONSE",
};
const RESPONSE_CORS: Record<Cors, Record<string, string>> = {
  none: {},
  "allow-origin": { "access-control-allow-origin": "*" },
  expose: EXPOSED,
  "expose-no-payment-header": EXPOSED,
  any: { "access-control-allow-origin": "*", "access-control-expose-headers": "*" },
};
const PREFLIGHT_CORS: Record<Cors, Record<string, string> | undefined> = {
  none: undefined,
  "allow-origin": undefined,
  expose: {
    ...EXPOSED,
    "access-control-allow-methods": "GET, POST",
    "access-control-allow-headers": "content-type, payment-signature",
  },
  "expose-no-payment-header": {
    ...EXPOSED,
    "access-control-allow-methods": "GET, POST",
    "access-control-allow-headers": "content-type",
  },
  any: { "access-control-allow-origin": "*", "access-control-allow-methods": "*", "access-control-allow-headers": "*" },
};

export interface Site {
  /** `http://127.0.0.1:<port>`: the site's origin. */
  url: string;
  /** Every request that reached it, in order, preflights included. */
  seen: Seen[];
  /** `seen` without preflights. */
  requests(): Seen[];
}

/**
 * A loopback server that serves the page (`/`, `/page.js`) and, given `upstream`, reverse-proxies
 * every other path there (or to its `routes` upstream) with the request's own Host header; without
 * one, it answers 200 `{"elsewhere": <path>}`. `answer` lets it redirect, rewrite or hang up on a request instead; `cors`
 * adds CORS headers to everything it answers and decides what its preflight answer allows.
 */
export async function startSite({
  upstream,
  routes = {},
  cors = "none",
  answer,
}: {
  upstream?: string;
  /** Paths proxied to another upstream than `upstream` (a Solana RPC at `/rpc`, say), by exact path. */
  routes?: Record<string, string>;
  cors?: Cors;
  answer?: (seen: Seen) => Answer;
} = {}): Promise<Site> {
  const seen: Seen[] = [];
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>x402-pay browser test</title><link rel="icon" href="data:,"></head>
<body><script type="module" src="/page.js"></script></body></html>`;
  const corsHeaders = RESPONSE_CORS[cors];

  const server = await listenOnLoopback((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "/";
    if (req.method === "GET" && path === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(html);
      return;
    }
    if (req.method === "GET" && path === "/page.js") {
      res
        .writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-store" })
        .end(harness().bundle.code);
      return;
    }
    const signature = req.headers["payment-signature"];
    const requestHeaders = req.headers["access-control-request-headers"];
    const entry: Seen = {
      method: req.method ?? "",
      path,
      host: req.headers.host,
      paymentSignature: typeof signature === "string" ? signature : undefined,
      requestHeaders: typeof requestHeaders === "string" ? requestHeaders.toLowerCase() : undefined,
    };
    seen.push(entry);
    res.on("finish", () => (entry.status = res.statusCode));
    if (req.method === "OPTIONS" && PREFLIGHT_CORS[cors]) {
      res.writeHead(204, { ...PREFLIGHT_CORS[cors], "access-control-max-age": "0" }).end();
      return;
    }
    const answered = answer?.(entry);
    if (answered && "redirect" in answered) {
      req.resume();
      res.writeHead(answered.redirect, { ...corsHeaders, location: answered.location, "content-length": "0" }).end();
      return;
    }
    const routed = routes[path] ?? upstream;
    if (!routed) {
      req.resume();
      res
        .writeHead(200, { ...corsHeaders, "content-type": "application/json" })
        .end(JSON.stringify({ elsewhere: path }));
      return;
    }
    const target = new URL(routed);
    const upstreamPath = (answered && "rewrite" in answered && answered.rewrite) || path;
    const hangUp = Boolean(answered && "hangUp" in answered);
    // req.headers still holds the browser's Host (this server's 127.0.0.1:<port>): passed on as is.
    const out = httpRequest(
      { hostname: target.hostname, port: target.port, method: req.method, path: upstreamPath, headers: req.headers },
      (upstreamRes) => {
        const settlement = upstreamRes.headers["payment-response"];
        if (typeof settlement === "string") entry.paymentResponse = settlement;
        if (hangUp) {
          upstreamRes.resume().on("end", () => req.socket.destroy());
          return;
        }
        const headers = { ...upstreamRes.headers, ...corsHeaders };
        for (const hopByHop of ["connection", "keep-alive", "transfer-encoding"]) delete headers[hopByHop];
        res.writeHead(upstreamRes.statusCode ?? 502, headers);
        upstreamRes.pipe(res);
      },
    );
    out.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy error: ${error.message}`);
    });
    req.pipe(out);
  });
  current!.servers.push(server);
  return { url: server.url, seen, requests: () => seen.filter((s) => s.method !== "OPTIONS") };
}

/**
 * A site's answers when its `from` path moves to `location` once paid: the unpaid request is proxied
 * upstream to the path of `location` (so the 402 comes from `from`), and the request that carries
 * PAYMENT-SIGNATURE is redirected there with `status`, before any seller saw it.
 */
export function redirectPaid(from: string, status: number, location: string): (seen: Seen) => Answer {
  const upstreamPath = new URL(location, "http://upstream").pathname;
  return (seen) =>
    seen.path !== from ? undefined : seen.paymentSignature ? { redirect: status, location } : { rewrite: upstreamPath };
}

/** A site's answers when its `from` path moved to `location`: every request there is redirected with `status`. */
export function redirectAll(from: string, status: number, location: string): (seen: Seen) => Answer {
  return (seen) => (seen.path === from ? { redirect: status, location } : undefined);
}

/** A fresh browser context (no cache, no cookies) on `${origin}/`, with the page script loaded. */
export async function openPage(origin: string) {
  const context = await harness().browser.createBrowserContext();
  const page = await context.newPage();
  const logs: string[] = [];
  page.on("console", (message) => logs.push(`[${message.type()}] ${message.text()}`));
  page.on("pageerror", (error) => logs.push(`[pageerror] ${(error as Error).message}`));
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => typeof window.x402Page?.pay === "function", { timeout: 5_000 });
  expect(await page.evaluate(() => window.isSecureContext)).toBe(true); // loopback http is a secure context
  return {
    logs,
    pay: (buyer: Buyer, request: PageRequest): Promise<PageResult> =>
      page.evaluate((key, req) => window.x402Page.pay(key, req), buyer.privateKey, request),
    solana: {
      install: () => page.evaluate(() => window.x402Page.solana.install()),
      pay: (request: SolanaPageRequest): Promise<SolanaPageResult> =>
        page.evaluate((req) => window.x402Page.solana.pay(req), request),
    },
    close: () => context.close(),
  };
}

export type PageSession = Awaited<ReturnType<typeof openPage>>;

/** Opens a page on `origin`, runs `fn`, closes it; a failure carries the page's console. */
export async function withPage<T>(origin: string, fn: (page: PageSession) => Promise<T>): Promise<T> {
  const page = await openPage(origin);
  try {
    return await fn(page);
  } catch (error) {
    throw new Error(`${(error as Error).message}\npage console:\n${page.logs.join("\n")}`, { cause: error });
  } finally {
    await page.close();
  }
}

export async function balances(buyer: Buyer) {
  const { stack } = evmHarness();
  const [b, s] = await Promise.all([stack.usdc.usdcBalance(buyer.address), stack.usdc.usdcBalance(stack.seller.payTo)]);
  return { buyer: b, seller: s };
}

/** What moved from the buyer to the seller since `before`. */
export async function paidSince(buyer: Buyer, before: { buyer: bigint; seller: bigint }) {
  const after = await balances(buyer);
  expect(after.seller - before.seller).toBe(before.buyer - after.buyer);
  return before.buyer - after.buyer;
}

export async function expectMinedTransfer(transaction: string | undefined) {
  expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);
  const receipt = await evmHarness().chain.getTransactionReceipt({ hash: transaction as Hash });
  expect(receipt.status).toBe("success");
}

/** The `resource.url` a PAYMENT-SIGNATURE header (base64 JSON, v2) echoes. */
export function signedResourceUrl(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return (JSON.parse(Buffer.from(header, "base64").toString("utf8")) as { resource?: { url?: string } }).resource?.url;
}

/** The decoded PAYMENT-RESPONSE a site passed on (a settlement the page may never see). */
export function settlementOf(
  seen: Seen | undefined,
): { success: boolean; transaction: string; payer?: string } | undefined {
  return seen?.paymentResponse ? JSON.parse(Buffer.from(seen.paymentResponse, "base64").toString("utf8")) : undefined;
}

/** Checks a paid result: the status and body, one price moved on chain, a receipt with a mined settlement. */
export async function expectPaid(
  result: PageResult,
  buyer: Buyer,
  before: { buyer: bigint; seller: bigint },
  expectedBody: unknown,
) {
  const { stack } = evmHarness();
  expect(result).toMatchObject({ ok: true, status: 200, body: expectedBody });
  if (!result.ok) throw new Error("unreachable");
  expect(await paidSince(buyer, before)).toBe(PRICE_ATOMIC);
  expect(result.receipt).toMatchObject({
    x402Version: 2,
    scheme: "exact",
    network: "eip155:84532",
    amount: String(PRICE_ATOMIC),
    payTo: stack.seller.payTo,
    payer: buyer.address,
    settled: true,
    settlement: { success: true, network: "eip155:84532", payer: buyer.address },
  });
  expect(result.receipt?.settlement?.transaction).toBe(result.receipt?.transaction);
  await expectMinedTransfer(result.receipt?.transaction);
  return result;
}

/** Pays one request through the page and checks the result, the chain and the receipt. */
export async function payAndCheck(pay: PageSession["pay"], buyer: Buyer, request: PageRequest, expectedBody: unknown) {
  const before = await balances(buyer);
  return expectPaid(await pay(buyer, request), buyer, before, expectedBody);
}
