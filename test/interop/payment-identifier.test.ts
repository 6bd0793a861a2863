// payment-identifier against the reference seller (its declaration from @x402/extensions, and the
// idempotency cache a seller builds with its helpers: localnet/extensions.ts) behind a proxy that
// cuts the answer after the seller settled. x402-pay resends the identical signed header once and is
// served from the cache: exactly one transfer on chain. Another payment under the same id is the
// typed 409. Balances are read on anvil.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt } from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  PRICE_ATOMIC,
  fundedBuyer,
  startExtensionSeller,
  startFaultProxy,
  startInteropStack,
  type Buyer,
  type ExtensionSeller,
  type FaultProxy,
  type InteropStack,
} from "../localnet/index.js";

let stack: InteropStack;
let seller: ExtensionSeller;
let proxy: FaultProxy;

beforeAll(async () => {
  stack = await startInteropStack();
  seller = await startExtensionSeller({ facilitatorUrl: stack.facilitator.url, payTo: stack.seller.payTo });
  proxy = await startFaultProxy(seller.url);
}, 120_000);
afterAll(async () => {
  await proxy?.stop();
  await seller?.stop();
  await stack?.stop();
});

const balance = (buyer: Buyer) => stack.usdc.usdcBalance(buyer.address);

function payingFetch(buyer: Buyer) {
  const signed: unknown[] = [];
  const signer = {
    address: buyer.address,
    signTypedData: (request: never) => (signed.push(request), buyer.account.signTypedData(request)),
  };
  return { pay: wrapFetchWithPayment(fetch, createX402Client({ schemes: [exactEvm({ signer })] })), signed };
}

describe("payment-identifier against the reference seller", () => {
  it("the answer is cut after the seller settled: the identical header is resent once and served from the cache; one transfer", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balance(buyer);
    const settledBefore = seller.settlements.length;
    const { pay, signed } = payingFetch(buyer);
    proxy.cutPaidResponses(1);

    const answer = await pay(`${proxy.url}/idempotent/weather`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ cached: true });
    expect(signed).toHaveLength(1);

    const [first, second] = proxy.paidRequests.slice(-2);
    expect(first).toMatchObject({ cut: true });
    expect(second).toMatchObject({ cut: false, paymentHeader: first!.paymentHeader });
    const payload = JSON.parse(Buffer.from(first!.paymentHeader, "base64").toString());
    expect(payload.extensions["payment-identifier"].info).toEqual({
      required: false,
      id: expect.stringMatching(/^pay_[0-9a-f]{32}$/),
    });

    expect(seller.settlements.length).toBe(settledBefore + 1);
    expect(seller.idempotency.served).toBeGreaterThan(0);
    expect(await balance(buyer)).toBe(before - PRICE_ATOMIC);
    expect(getPaymentReceipt(answer)).toMatchObject({ settled: true });
  });

  it("the caller's own id, reused for another payment: the seller's 409 is PAYMENT_ID_CONFLICT, and only the first moved money", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balance(buyer);
    const { pay } = payingFetch(buyer);
    const id = `order_${crypto.randomUUID().replaceAll("-", "")}`;

    const first = await pay(`${seller.url}/idempotent/weather`, { x402: { paymentId: id } });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ cached: false });

    const error = await pay(`${seller.url}/idempotent/weather`, { x402: { paymentId: id } }).catch((e) => e);
    expect(error.code).toBe("PAYMENT_ID_CONFLICT");
    expect(error.details.paymentId).toBe(id);
    expect(await balance(buyer)).toBe(before - PRICE_ATOMIC);
  });

  it("a malformed id is refused before anything is signed or paid", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balance(buyer);
    const { pay, signed } = payingFetch(buyer);
    const error = await pay(`${seller.url}/idempotent/weather`, { x402: { paymentId: "short" } }).catch((e) => e);
    expect(error.code).toBe("INVALID_CONFIG");
    expect(signed).toHaveLength(0);
    expect(await balance(buyer)).toBe(before);
  });
});
