// A Solana browser wallet pays for real: a wallet-standard wallet with its own Ed25519 key is registered
// on the page through @wallet-standard/app (as Phantom, Solflare or Backpack register themselves), the
// dapp finds it with getWallets(), connects it and pays through x402-pay's walletStandardSigner. The
// seller is the reference @x402/express seller with the reference sign-in-with-x extension
// (test/localnet/extensions.ts, with CORS for the page's origin); the reference facilitator settles on
// LiteSVM, and balances are read there. The page's RPC is LiteSVM's, proxied on the page's origin.
import { describe, expect, it } from "vitest";
import { PRICE_ATOMIC, WEATHER, startExtensionSeller } from "../localnet/index.js";
import { startSolanaStack } from "../localnet/svm/index.js";
import { startSite, useBrowser, withPage } from "./harness";

const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

async function startStack() {
  const stack = await startSolanaStack();
  const seller = await startExtensionSeller({
    facilitatorUrl: stack.facilitator.url,
    payTo: stack.seller.evmPayTo!,
    svmPayTo: stack.seller.payTo,
    cors: true,
  });
  return { ...stack, extensionSeller: seller, stop: () => seller.stop().then(stack.stop) };
}

describe.each(["chromium", "firefox"] as const)("a wallet-standard Solana wallet in headless %s", (name) => {
  const h = useBrowser(name, startStack);

  /** A page with the wallet installed and funded with 1 USDC on LiteSVM; its site proxies `/rpc` to LiteSVM. */
  async function walletPage<T>(
    fn: (page: Parameters<Parameters<typeof withPage>[1]>[0], address: string) => Promise<T>,
  ) {
    const site = await startSite({ routes: { "/rpc": h.stack.rpc.url } });
    return withPage(site.url, async (page) => {
      const address = await page.solana.install();
      await h.stack.tokens.mintTo(h.stack.tokens.usdc, address as never, 1_000_000n);
      return fn(page, address);
    });
  }
  const balance = (address: string) => h.stack.tokens.balance(h.stack.tokens.usdc, address as never);
  const url = (path: string) => `${h.stack.extensionSeller.url}${path}`;

  it("pays Solana exact through walletStandardSigner: signed in the page, settled on LiteSVM", async () => {
    await walletPage(async (page, address) => {
      const payTo = h.stack.seller.payTo;
      const sellerBefore = await balance(payTo);
      const result = await page.solana.pay({ url: url("/siwx/weather"), rpc: "/rpc" });
      expect(result).toMatchObject({
        ok: true,
        status: 200,
        body: WEATHER,
        receipt: { scheme: "exact", network: SOLANA_DEVNET, payer: address, settled: true },
        wallet: { connect: 1, signTransaction: 1, signMessage: 0 },
      });
      expect(await balance(address)).toBe(1_000_000n - PRICE_ATOMIC);
      expect(await balance(payTo)).toBe(sellerBefore + PRICE_ATOMIC);
    });
  });

  it("signs in with x on Solana through the same wallet (solana:signMessage): paid once, then no payment", async () => {
    await walletPage(async (page, address) => {
      const first = await page.solana.pay({ url: url("/siwx/weather"), rpc: "/rpc", signIn: true });
      expect(first).toMatchObject({ ok: true, status: 200, wallet: { signTransaction: 1 } });
      const second = await page.solana.pay({ url: url("/siwx/weather"), rpc: "/rpc", signIn: true });
      expect(second).toMatchObject({
        ok: true,
        status: 200,
        body: WEATHER,
        wallet: { signTransaction: 0, signMessage: 1 },
      });
      if (!second.ok) throw new Error("unreachable");
      expect(second.receipt).toBeUndefined();
      expect(await balance(address)).toBe(1_000_000n - PRICE_ATOMIC);
      expect(h.stack.extensionSeller.signIns).toContainEqual({ path: "/siwx/weather", address });
    });
  });

  it("the user rejects in the wallet: USER_REJECTED, nothing paid", async () => {
    await walletPage(async (page, address) => {
      const result = await page.solana.pay({ url: url("/siwx/weather"), rpc: "/rpc", user: "reject" });
      expect(result).toMatchObject({
        ok: false,
        error: { code: "USER_REJECTED", isX402Error: true },
        wallet: { signTransaction: 1 },
      });
      expect(await balance(address)).toBe(1_000_000n);
    });
  });

  it("an abort while the wallet's prompt is open ends the wait: ABORTED, nothing paid", async () => {
    await walletPage(async (page, address) => {
      const result = await page.solana.pay({
        url: url("/siwx/weather"),
        rpc: "/rpc",
        user: "leave open",
        abortWhenAsked: true,
      });
      expect(result).toMatchObject({
        ok: false,
        error: { name: "AbortError", code: "ABORTED", isX402Error: true },
        wallet: { signTransaction: 1 },
      });
      expect(await balance(address)).toBe(1_000_000n);
    });
  });
});
