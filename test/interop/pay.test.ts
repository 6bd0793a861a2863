// x402-pay against the unmodified reference seller and facilitator on a local anvil chain.
// Every case asserts what happened on chain, not just the HTTP status.
import axios from "axios";
import { createPublicClient, http, type Hash, type PublicClient } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, type X402Client } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  PRICE_ATOMIC,
  WEATHER,
  fundedBuyer,
  newBuyer,
  startInteropStack,
  type Buyer,
  type InteropStack,
} from "../localnet/index.js";
import { recordingFetch } from "../support/fetches";

let stack: InteropStack;
let chain: PublicClient;

beforeAll(async () => {
  stack = await startInteropStack({ v1: true });
  chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
});
afterAll(async () => {
  await stack?.stop();
});

const clientFor = (buyer: Buyer): X402Client => createX402Client({ schemes: [exactEvm({ signer: buyer.account })] });

async function balances(buyer: Buyer) {
  const [b, s] = await Promise.all([stack.usdc.usdcBalance(buyer.address), stack.usdc.usdcBalance(stack.seller.payTo)]);
  return { buyer: b, seller: s };
}

async function expectMinedTransfer(transaction: string | undefined) {
  expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);
  const receipt = await chain.getTransactionReceipt({ hash: transaction as Hash });
  expect(receipt.status).toBe("success");
}

describe("v2 exact (EIP-3009) with the reference @x402/express seller", () => {
  it.each(["fetch", "axios"] as const)(
    "paid GET through %s moves exactly the price and reports the receipt",
    async (wrapper) => {
      const buyer = await fundedBuyer(stack.usdc);
      const before = await balances(buyer);
      const url = `${stack.seller.url}/weather`;

      let body: unknown;
      let receipt: ReturnType<typeof getPaymentReceipt>;
      if (wrapper === "fetch") {
        const response = await wrapFetchWithPayment(fetch, clientFor(buyer))(url);
        expect(response.status).toBe(200);
        body = await response.json();
        receipt = getPaymentReceipt(response);
      } else {
        const response = await wrapAxiosWithPayment(axios.create(), clientFor(buyer)).get(url);
        expect(response.status).toBe(200);
        body = response.data;
        receipt = getPaymentReceipt(response);
      }

      expect(body).toEqual(WEATHER);
      const after = await balances(buyer);
      expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
      expect(after.seller - before.seller).toBe(PRICE_ATOMIC);
      expect(receipt).toMatchObject({
        x402Version: 2,
        payer: buyer.address,
        amount: String(PRICE_ATOMIC),
        payTo: stack.seller.payTo,
      });
      expect(receipt?.settlement).toMatchObject({ success: true, network: "eip155:84532" });
      await expectMinedTransfer(receipt?.transaction);
    },
  );

  it.each(["fetch", "axios"] as const)("paid POST with a JSON body through %s arrives intact", async (wrapper) => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balances(buyer);
    const payload = { question: "Prémium ✓", n: [1, 2, 3] };
    const url = `${stack.seller.url}/echo`;

    const { status, data, receipt } =
      wrapper === "fetch"
        ? await wrapFetchWithPayment(fetch, clientFor(buyer))(url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(payload),
          }).then(async (r) => ({ status: r.status, data: await r.json(), receipt: getPaymentReceipt(r) }))
        : await wrapAxiosWithPayment(axios.create(), clientFor(buyer))
            .post(url, payload)
            .then((r) => ({ status: r.status, data: r.data, receipt: getPaymentReceipt(r) }));

    expect(status).toBe(200);
    expect(data).toEqual(payload);
    const after = await balances(buyer);
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    await expectMinedTransfer(receipt?.transaction);
  });

  it("a replayed PAYMENT-SIGNATURE is refused and moves no tokens", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const recorder = recordingFetch();
    const url = `${stack.seller.url}/weather`;
    const first = await wrapFetchWithPayment(recorder.fetch, clientFor(buyer))(url);
    expect(first.status).toBe(200);
    const captured = recorder.calls.at(-1)?.headers.get("payment-signature");
    expect(captured).toBeTruthy();

    const before = await balances(buyer);
    const replay = await fetch(url, { headers: { "PAYMENT-SIGNATURE": captured! } });
    expect(replay.status).toBe(402);
    // Through the wrapper, a request that already carries a payment is never signed again.
    await expect(
      wrapFetchWithPayment(fetch, clientFor(buyer))(url, { headers: { "PAYMENT-SIGNATURE": captured! } }),
    ).rejects.toMatchObject({
      code: "PAYMENT_ALREADY_ATTEMPTED",
    });
    expect(await balances(buyer)).toEqual(before);
  });

  it("a buyer without enough tokens gets the facilitator's reason, and nothing moves", async () => {
    const poor = await fundedBuyer(stack.usdc, { amount: PRICE_ATOMIC - 1n });
    const before = await balances(poor);
    const error = await wrapFetchWithPayment(fetch, clientFor(poor))(`${stack.seller.url}/weather`).catch((e) => e);
    expect(error).toMatchObject({ code: "PAYMENT_REJECTED", phase: "settle" });
    expect(error.reason).toMatch(/insufficient_balance/);
    expect(await balances(poor)).toEqual(before);
  });

  it("a price that changes between the 402 and the retry gives a clear error and pays nothing", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balances(buyer);
    const error = await wrapFetchWithPayment(fetch, clientFor(buyer))(`${stack.seller.url}/dynamic`).catch((e) => e);
    expect(error).toMatchObject({ code: "PAYMENT_REJECTED" });
    expect(error.reason).toMatch(/No matching payment requirements/i);
    expect(await balances(buyer)).toEqual(before);
  });

  it("a free route passes through untouched, with no receipt", async () => {
    const buyer = newBuyer();
    const response = await wrapFetchWithPayment(fetch, clientFor(buyer))(`${stack.seller.url}/free`);
    expect(response.status).toBe(200);
    expect(getPaymentReceipt(response)).toBeUndefined();
  });
});

describe("v1 exact with the legacy x402-express seller", () => {
  it.each(["fetch", "axios"] as const)(
    "pays through X-PAYMENT with %s and decodes X-PAYMENT-RESPONSE",
    async (wrapper) => {
      const buyer = await fundedBuyer(stack.usdc);
      const before = await balances(buyer);
      const recorder = recordingFetch();
      const url = `${stack.v1Seller!.url}/weather`;
      const { status, receipt } =
        wrapper === "fetch"
          ? await wrapFetchWithPayment(
              recorder.fetch,
              clientFor(buyer),
            )(url).then((r) => ({ status: r.status, receipt: getPaymentReceipt(r) }))
          : await wrapAxiosWithPayment(axios.create(), clientFor(buyer))
              .get(url)
              .then((r) => ({ status: r.status, receipt: getPaymentReceipt(r) }));
      expect(status).toBe(200);
      if (wrapper === "fetch") {
        expect(recorder.calls.at(-1)?.headers.get("x-payment")).toBeTruthy();
        expect(recorder.calls.at(-1)?.headers.get("payment-signature")).toBeNull();
      }
      expect(receipt).toMatchObject({ x402Version: 1, network: "base-sepolia", amount: String(PRICE_ATOMIC) });
      expect(receipt?.settlement).toMatchObject({ success: true });
      const after = await balances(buyer);
      expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
      expect(after.seller - before.seller).toBe(PRICE_ATOMIC);
      await expectMinedTransfer(receipt?.transaction);
    },
  );
});
