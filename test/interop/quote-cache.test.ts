// The quote cache against the unmodified reference seller and facilitator on anvil: a repeat call is
// one round trip; a quote gone stale (the seller raised its price) is refused at no charge and the new
// price is paid: on chain, exactly one transfer per call.
import { createPublicClient, http, type Hash, type PublicClient } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, quoteCache, type AnyX402Error } from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { PRICE_ATOMIC, fundedBuyer, startInteropStack, type InteropStack } from "../localnet/index.js";
import { recordingFetch } from "../support/fetches";

let stack: InteropStack;
let chain: PublicClient;

beforeAll(async () => {
  stack = await startInteropStack();
  chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
});
afterAll(async () => {
  await stack?.stop();
});

describe("quote cache with the reference seller", () => {
  it("repeat calls go out paid at once; after a price rise the stale quote never settles and the new price is paid once", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const recorder = recordingFetch(fetch);
    const failed: AnyX402Error[] = [];
    const client = createX402Client({
      schemes: [exactEvm({ signer: buyer.account })],
      plugins: [quoteCache()],
      onPaymentFailed: (e) => void failed.push(e),
    });
    const paidFetch = wrapFetchWithPayment(recorder.fetch, client);
    const url = `${stack.seller.url}/repriced`;
    const balance = () => stack.usdc.usdcBalance(buyer.address);
    const start = await balance();

    // First call: the usual two round trips.
    expect((await paidFetch(url)).status).toBe(200);
    // Second: one round trip, paid at once.
    const calls = recorder.calls.length;
    const second = await paidFetch(url);
    expect(second.status).toBe(200);
    expect(recorder.calls.slice(calls).map((c) => c.paymentHeader !== null)).toEqual([true]);
    const receipt = getPaymentReceipt(second)!;
    expect((await chain.getTransactionReceipt({ hash: receipt.transaction as Hash })).status).toBe("success");
    expect(await balance()).toBe(start - 2n * PRICE_ATOMIC);

    // The seller doubles its price: the cached quote is stale.
    await fetch(`${stack.seller.url}/repriced/raise`, { method: "POST" });
    const before = await balance();
    const sellerBefore = await stack.usdc.usdcBalance(stack.seller.payTo);
    const third = await paidFetch(url);
    expect(third.status).toBe(200);
    expect(await third.json()).toEqual({ price: 2000 });
    // Paid with the old quote (refused with a 402), then the new price.
    const last = recorder.calls.slice(-2);
    expect(last.map((c) => c.paymentHeader !== null)).toEqual([true, true]);
    expect(last[0]!.response!.status).toBe(402);
    expect(failed.map((e) => [e.code, (e.details as { reason?: string }).reason])).toEqual([
      ["PAYMENT_REJECTED", "quote_stale"],
    ]);
    // Exactly one settlement, at the new price.
    expect(getPaymentReceipt(third)).toMatchObject({ amount: "2000", settled: true });
    expect(await balance()).toBe(before - 2n * PRICE_ATOMIC);
    expect(await stack.usdc.usdcBalance(stack.seller.payTo)).toBe(sellerBefore + 2n * PRICE_ATOMIC);

    // And the new price is the quote now: one round trip again.
    const count = recorder.calls.length;
    expect((await paidFetch(url)).status).toBe(200);
    expect(recorder.calls.length - count).toBe(1);
  }, 60_000);
});
