// The browser build pays end to end, in real headless Chromium and Firefox ESR: test/browser/page.ts
// (x402-pay's built entries, viem's privateKeyToAccount, axios) is bundled by esbuild for the browser,
// served to each browser, and pays the unmodified reference @x402/express seller on the local anvil chain. Every paid case
// asserts the token movement and the mined settlement on chain. The setup (Chromium, the stack, the
// sites that serve the page and proxy to the seller) is in ./harness.ts.
//
// Same origin, the page's site proxies to the seller with the browser's Host header, so the
// challenge names the page's origin and the buyer's default policy check (resource host = request
// host) holds. The cross-origin cases show what a browser makes of a seller on another origin:
// without CORS headers, without Access-Control-Expose-Headers, and with both.
import { builtinModules } from "node:module";
import { describe, expect, it } from "vitest";
import { WEATHER, fundedBuyer } from "../localnet/index.js";
import { balances, payAndCheck, signedResourceUrl, startSite, useBrowserHarness, withPage } from "./harness";
import type { PageResult } from "./page";

/** How each browser words a fetch that CORS blocked, to the page and on its console. */
const CORS_BLOCKED = {
  chromium: { message: "Failed to fetch", console: /blocked by CORS policy: No 'Access-Control-Allow-Origin' header/ },
  firefox: { message: "NetworkError when attempting to fetch resource.", console: undefined },
} as const;

describe.each(["chromium", "firefox"] as const)("x402-pay in headless %s (browser bundle)", (name) => {
  const h = useBrowserHarness(name);

  it("bundles for the browser with no Node built-in", () => {
    const { bundle } = h;
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
    expect(bundle.imports.filter((i) => i.external)).toEqual([]);
    expect(
      bundle.inputs.filter((path) => builtins.has(path) || path.startsWith("node:") || path.startsWith("(disabled):")),
    ).toEqual([]);
    // The package's built entries made it in (what its tarball ships), and nothing from src.
    expect(bundle.inputs).toEqual(
      expect.arrayContaining([
        "dist/index.js",
        "dist/fetch.js",
        "dist/axios.js",
        "dist/evm.js",
        "test/browser/page.ts",
      ]),
    );
    expect(bundle.inputs.filter((path) => path.startsWith("src/"))).toEqual([]);
    const modules = [...builtinModules].sort((a, b) => b.length - a.length).map((m) => m.replace(/[/]/g, "\\/"));
    const nodeImport = new RegExp(
      `(?:\\bfrom|\\bimport|\\brequire)\\s*\\(?\\s*["'](?:node:[\\w/]+|(?:${modules.join("|")}))["']`,
    );
    expect(bundle.code).not.toMatch(nodeImport);
    expect(bundle.code).not.toMatch(/(?<![\w.])Buffer\s*[.(]/);
  });

  it("pays GET /weather and POST /echo same-origin, and the seller settles on chain", async () => {
    const site = await startSite({ upstream: h.stack.seller.url });
    const buyer = await fundedBuyer(h.stack.usdc);
    await withPage(site.url, async (page) => {
      await payAndCheck(page.pay, buyer, { url: "/weather" }, WEATHER);
      const payload = { question: "Prémium ✓", n: [1, 2, 3], nested: { ok: true } };
      await payAndCheck(page.pay, buyer, { url: "/echo", method: "POST", json: payload }, payload);
    });
    // Each paid request: the unpaid one (402), then one retry with PAYMENT-SIGNATURE. The browser's
    // Host reached the seller, so the challenge, and the payload signed in the page, name the
    // page's origin.
    const host = new URL(site.url).host;
    expect(site.seen.map((f) => [f.method, f.path, f.host, Boolean(f.paymentSignature)])).toEqual([
      ["GET", "/weather", host, false],
      ["GET", "/weather", host, true],
      ["POST", "/echo", host, false],
      ["POST", "/echo", host, true],
    ]);
    expect(signedResourceUrl(site.seen[1]!.paymentSignature)).toBe(`${site.url}/weather`);
    expect(signedResourceUrl(site.seen[3]!.paymentSignature)).toBe(`${site.url}/echo`);
  });

  it("pays from an injected EIP-1193 wallet through eip1193Signer (eth_signTypedData_v4), settled on chain", async () => {
    const site = await startSite({ upstream: h.stack.seller.url });
    const buyer = await fundedBuyer(h.stack.usdc);
    await withPage(site.url, async (page) => {
      await payAndCheck((b, r) => page.pay(b, { ...r, wallet: "eip1193" }), buyer, { url: "/weather" }, WEATHER);
    });
  });

  it("cross-origin, a seller without CORS headers: the browser blocks the response and nothing is paid", async () => {
    const site = await startSite(); // the page only, on another port than the seller
    const buyer = await fundedBuyer(h.stack.usdc);
    const before = await balances(buyer);
    const { result, logs } = await withPage(site.url, async (page) => ({
      result: await page.pay(buyer, { url: `${h.stack.seller.url}/weather` }),
      logs: page.logs,
    }));
    // No Access-Control-Allow-Origin: fetch itself rejects (an opaque network error), before
    // x402-pay sees any status or header. It propagates unchanged; it is not an x402-pay error.
    expect(result).toMatchObject({
      ok: false,
      error: { name: "TypeError", message: CORS_BLOCKED[name].message, isX402Error: false },
      signed: 0,
      outcomes: [],
    });
    if (CORS_BLOCKED[name].console) expect(logs.join("\n")).toMatch(CORS_BLOCKED[name].console);
    expect(await balances(buyer)).toEqual(before);
  });

  it("cross-origin, Access-Control-Allow-Origin without Expose-Headers: ChallengeNotFoundError names the fix", async () => {
    const seller = await startSite({ upstream: h.stack.seller.url, cors: "allow-origin" });
    const site = await startSite();
    const buyer = await fundedBuyer(h.stack.usdc);
    const before = await balances(buyer);
    const result: PageResult = await withPage(site.url, (page) => page.pay(buyer, { url: `${seller.url}/weather` }));
    // The browser reads the 402 but hides PAYMENT-REQUIRED (not CORS-safelisted, not exposed), and
    // the reference seller's body is `{}`: there is no challenge to read.
    expect(result).toMatchObject({
      ok: false,
      error: {
        name: "ChallengeNotFoundError",
        code: "CHALLENGE_NOT_FOUND",
        phase: "challenge",
        isX402Error: true,
        isChallengeNotFoundError: true,
      },
      signed: 0,
    });
    if (result.ok) throw new Error("unreachable");
    expect(result.error.message).toMatch(/PAYMENT-REQUIRED/);
    expect(result.error.message).toMatch(/Access-Control-Expose-Headers/);
    expect(seller.seen).toHaveLength(1); // the unpaid request only: nothing was signed
    expect(await balances(buyer)).toEqual(before);
  });

  it("cross-origin with CORS that exposes PAYMENT-REQUIRED and PAYMENT-RESPONSE and allows PAYMENT-SIGNATURE: pays", async () => {
    const seller = await startSite({ upstream: h.stack.seller.url, cors: "expose" });
    const site = await startSite();
    const buyer = await fundedBuyer(h.stack.usdc);
    await withPage(site.url, (page) => payAndCheck(page.pay, buyer, { url: `${seller.url}/weather` }, WEATHER));
    expect(seller.requests().map((f) => [f.method, Boolean(f.paymentSignature)])).toEqual([
      ["GET", false],
      ["GET", true],
    ]);
    // The paid request was preflighted, and the preflight asked for the payment header.
    expect(seller.seen.filter((f) => f.method === "OPTIONS").map((f) => f.requestHeaders)).toEqual([
      "payment-signature",
    ]);
  });
});
