// x402-pay's Solana scheme against the unmodified reference facilitator and sellers, settling in
// LiteSVM behind a local JSON-RPC endpoint. Every case asserts token balances, not just HTTP 200.
import { createSolanaRpc } from "@solana/kit";
import axios from "axios";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, type PaymentScheme, type SpendPolicy } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { exactSvm } from "../../src/svm";
import { PRICE_ATOMIC, WEATHER, fundedBuyer as fundedEvmBuyer } from "../localnet/index.js";
import {
  SOLANA_DEVNET,
  TOKEN_2022_PRICE_ATOMIC,
  USDC_DEVNET_MINT,
  startSolanaStack,
  type SolanaBuyer,
  type SolanaStack,
} from "../localnet/svm/index.js";
import { recordingFetch } from "../support/fetches";

let stack: SolanaStack;
beforeAll(async () => {
  stack = await startSolanaStack({ v1: true });
});
afterAll(async () => {
  await stack?.stop();
});

const svm = (buyer: SolanaBuyer) => exactSvm({ signer: buyer.signer, rpc: `${stack.rpc.url}/buyer` });
const clientOf = (schemes: PaymentScheme[], policy?: SpendPolicy) => createX402Client({ schemes, policy });

async function solanaBalances(buyer: SolanaBuyer, mint = stack.tokens.usdc) {
  return {
    buyer: await stack.tokens.balance(mint, buyer.address),
    seller: await stack.tokens.balance(mint, stack.seller.payTo),
  };
}

/** The RPC methods the buyer called under `path`, sorted (the reads run in parallel). */
const methodsCalled = (path: string) =>
  stack.rpc.calls
    .filter((c) => c.path.startsWith(path))
    .map((c) => c.method)
    .sort();

function expectLanded(signature: string | undefined) {
  expect(signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  const landed = stack.rpc.getTransaction(signature!);
  expect(landed).toBeDefined();
  expect(landed!.err).toBeNull();
}

describe("Solana exact (v2) with the reference seller and facilitator", () => {
  it.each(["fetch", "axios"] as const)(
    "a buyer with only a Solana signer pays the Solana option of a route that offers Base Sepolia first (%s)",
    async (wrapper) => {
      const buyer = await stack.fundedBuyer();
      const before = await solanaBalances(buyer);
      const evmBefore = await stack.usdc!.usdcBalance(stack.seller.evmPayTo!);
      const client = clientOf([svm(buyer)]);
      const url = `${stack.seller.url}/weather`;
      const { body, receipt } =
        wrapper === "fetch"
          ? await wrapFetchWithPayment(
              fetch,
              client,
            )(url).then(async (r) => ({ body: await r.json(), receipt: getPaymentReceipt(r) }))
          : await wrapAxiosWithPayment(axios.create(), client)
              .get(url)
              .then((r) => ({ body: r.data, receipt: getPaymentReceipt(r) }));

      expect(body).toEqual(WEATHER);
      expect(receipt).toMatchObject({
        x402Version: 2,
        network: SOLANA_DEVNET,
        asset: USDC_DEVNET_MINT,
        payer: buyer.address,
      });
      const after = await solanaBalances(buyer);
      expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
      expect(after.seller - before.seller).toBe(PRICE_ATOMIC);
      expect(await stack.usdc!.usdcBalance(stack.seller.evmPayTo!)).toBe(evmBefore);
      expectLanded(receipt?.transaction);
    },
  );

  it("works with a @solana/kit RPC object as well as a URL", async () => {
    const buyer = await stack.fundedBuyer();
    const before = await solanaBalances(buyer);
    const scheme = exactSvm({ signer: buyer.signer, rpc: createSolanaRpc(`${stack.rpc.url}/kit`) });
    const response = await wrapFetchWithPayment(fetch, clientOf([scheme]))(`${stack.seller.url}/weather`);
    expect(response.status).toBe(200);
    expect(before.buyer - (await solanaBalances(buyer)).buyer).toBe(PRICE_ATOMIC);
    // One RPC for every network: its cluster is checked (devnet's genesis hash here), beside the reads.
    expect(methodsCalled("/kit")).toEqual(["getAccountInfo", "getGenesisHash", "getLatestBlockhash"]);
  });

  it("a map { [network]: URL } serves its network without a genesis-hash read", async () => {
    const buyer = await stack.fundedBuyer();
    const scheme = exactSvm({ signer: buyer.signer, rpc: { [SOLANA_DEVNET]: `${stack.rpc.url}/map` } });
    const response = await wrapFetchWithPayment(fetch, clientOf([scheme]))(`${stack.seller.url}/weather`);
    expect(response.status).toBe(200);
    expect(methodsCalled("/map")).toEqual(["getAccountInfo", "getLatestBlockhash"]);
  });

  it("a buyer with both wallets pays on the chain its policy allows", async () => {
    const solanaBuyer = await stack.fundedBuyer();
    const evmBuyer = await fundedEvmBuyer(stack.usdc!);
    const schemes = [svm(solanaBuyer), exactEvm({ signer: evmBuyer.account })];
    const url = `${stack.seller.url}/weather`;

    const onSolana = await wrapFetchWithPayment(fetch, clientOf(schemes, { networks: ["solana:*"] }))(url);
    expect(getPaymentReceipt(onSolana)?.network).toBe(SOLANA_DEVNET);
    const onEvm = await wrapFetchWithPayment(fetch, clientOf(schemes, { networks: ["eip155:*"] }))(url);
    expect(getPaymentReceipt(onEvm)?.network).toBe("eip155:84532");
    // No preference given: the server's order (Base Sepolia first).
    const byDefault = await wrapFetchWithPayment(fetch, clientOf(schemes))(url);
    expect(getPaymentReceipt(byDefault)?.network).toBe("eip155:84532");

    expect(await stack.tokens.balance(stack.tokens.usdc, solanaBuyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    expect(await stack.usdc!.usdcBalance(evmBuyer.address)).toBe(1_000_000n - 2n * PRICE_ATOMIC);
  });

  it("pays in a Token-2022 mint, once the policy knows it", async () => {
    const buyer = await stack.fundedBuyer();
    const mint = stack.tokens.token2022;
    const url = `${stack.seller.url}/weather-2022`;
    await expect(wrapFetchWithPayment(fetch, clientOf([svm(buyer)]))(url)).rejects.toMatchObject({
      code: "NO_PAYABLE_REQUIREMENT",
      message: expect.stringMatching(/not a known stablecoin/),
    });
    const before = await solanaBalances(buyer, mint);
    const policy = {
      assets: [{ network: SOLANA_DEVNET, address: mint.address, decimals: mint.decimals, symbol: "T22" }],
    };
    const response = await wrapFetchWithPayment(fetch, clientOf([svm(buyer)], policy))(url);
    expect(response.status).toBe(200);
    const after = await solanaBalances(buyer, mint);
    expect(before.buyer - after.buyer).toBe(BigInt(TOKEN_2022_PRICE_ATOMIC));
    expect(after.seller - before.seller).toBe(BigInt(TOKEN_2022_PRICE_ATOMIC));
    expectLanded(getPaymentReceipt(response)?.transaction);
  });

  it("a replayed PAYMENT-SIGNATURE is refused and moves no tokens", async () => {
    const buyer = await stack.fundedBuyer();
    const recorder = recordingFetch();
    const url = `${stack.seller.url}/weather`;
    expect((await wrapFetchWithPayment(recorder.fetch, clientOf([svm(buyer)]))(url)).status).toBe(200);
    const before = await solanaBalances(buyer);
    const replay = await fetch(url, { headers: { "PAYMENT-SIGNATURE": recorder.paymentHeaders.at(-1)! } });
    expect(replay.status).toBe(402);
    expect(await solanaBalances(buyer)).toEqual(before);
  });

  it("a buyer without enough tokens gets a typed rejection and nothing moves", async () => {
    const buyer = await stack.fundedBuyer({ amount: PRICE_ATOMIC - 1n });
    const before = await solanaBalances(buyer);
    const error = await wrapFetchWithPayment(
      fetch,
      clientOf([svm(buyer)]),
    )(`${stack.seller.url}/weather`).catch((e) => e);
    expect(error).toMatchObject({ code: "PAYMENT_REJECTED" });
    expect(error.reason).toMatch(/simulation|insufficient/i);
    expect(await solanaBalances(buyer)).toEqual(before);
  });
});

describe("Solana exact (v1) with the legacy x402-express seller", () => {
  it("pays solana-devnet through X-PAYMENT", async () => {
    const buyer = await stack.fundedBuyer();
    const recorder = recordingFetch();
    const before = {
      buyer: await stack.tokens.balance(stack.tokens.usdc, buyer.address),
      seller: await stack.tokens.balance(stack.tokens.usdc, stack.v1Seller!.payTo),
    };
    const response = await wrapFetchWithPayment(
      recorder.fetch,
      clientOf([svm(buyer)]),
    )(`${stack.v1Seller!.url}/weather`);
    expect(response.status).toBe(200);
    const receipt = getPaymentReceipt(response);
    expect(receipt).toMatchObject({ x402Version: 1, network: "solana-devnet" });
    expect(JSON.parse(atob(recorder.paymentHeaders.at(-1)!))).toMatchObject({
      x402Version: 1,
      scheme: "exact",
      network: "solana-devnet",
    });
    expect(before.buyer - (await stack.tokens.balance(stack.tokens.usdc, buyer.address))).toBe(PRICE_ATOMIC);
    expect((await stack.tokens.balance(stack.tokens.usdc, stack.v1Seller!.payTo)) - before.seller).toBe(PRICE_ATOMIC);
    expectLanded(receipt?.transaction);
  });
});

describe("a seller that quotes a recent blockhash", () => {
  it("is paid without asking the RPC for a blockhash", async () => {
    const quoting = await startSolanaStack({ evm: false, blockhashInRequirements: true });
    try {
      const buyer = await quoting.fundedBuyer();
      const client = createX402Client({
        schemes: [exactSvm({ signer: buyer.signer, rpc: `${quoting.rpc.url}/buyer` })],
      });
      const response = await wrapFetchWithPayment(fetch, client)(`${quoting.seller.url}/weather`);
      expect(response.status).toBe(200);
      expect(getPaymentReceipt(response)?.requirement).toMatchObject({
        extra: { recentBlockhash: expect.any(String) },
      });
      const buyerCalls = quoting.rpc.calls.filter((c) => c.path.startsWith("/buyer")).map((c) => c.method);
      expect(buyerCalls.sort()).toEqual(["getAccountInfo", "getGenesisHash"]);
      expect(await quoting.tokens.balance(quoting.tokens.usdc, quoting.seller.payTo)).toBe(PRICE_ATOMIC);
    } finally {
      await quoting.stop();
    }
  });
});
