// The payment journal against the unmodified reference seller and facilitator on anvil: a paid request whose answer
// is lost after the seller settled leaves an `unknown` entry; recovery asks the chain (the authorization used) and
// ends it settled, recorded in the ledger; a payment signed and never sent is dropped, its money never moved.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createX402Client,
  memoryJournalStore,
  memoryLedger,
  paymentJournal,
  recoverPayments,
  type JournalStore,
} from "../../src";
import { evmSettlement, exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { PRICE_ATOMIC, fundedBuyer, startInteropStack, type Buyer, type InteropStack } from "../localnet/index.js";

let stack: InteropStack;
beforeAll(async () => {
  stack = await startInteropStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A client of `buyer` with a journal over `store`, a ledger, and a chain to ask. */
function life(buyer: Buyer, store: JournalStore) {
  const ledger = memoryLedger();
  const settlement = evmSettlement({ rpc: stack.anvil.rpcUrl });
  const client = createX402Client({
    schemes: [exactEvm({ signer: buyer.account, settlement })],
    plugins: [paymentJournal(store), ledger],
  });
  return { client, ledger };
}

describe("recoverPayments on anvil", () => {
  it("an answer lost after the seller settled: recovery finds the authorization used, ends it settled, records it", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const store = memoryJournalStore();
    const { client } = life(buyer, store);
    // The seller answers, and the answer is lost on its way back (every time it is asked).
    const losing = async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await fetch(input, init);
      if (new Headers(init?.headers).has("payment-signature")) throw new TypeError("fetch failed: connection reset");
      return response;
    };
    const pay = wrapFetchWithPayment(losing, client);
    await expect(pay(`${stack.seller.url}/weather`)).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    expect(store.entries()).toEqual([expect.objectContaining({ state: "unknown" })]);

    // The process comes back.
    const restarted = life(buyer, store);
    const done = await recoverPayments(restarted.client, { staleAfterMs: 0 });
    expect(done).toEqual([expect.objectContaining({ action: "settled" })]);
    expect(store.entries()).toEqual([expect.objectContaining({ state: "settled" })]);
    expect(await store.unfinished()).toEqual([]);
    expect(restarted.ledger.list).toEqual([
      expect.objectContaining({ outcome: "settled", amount: String(PRICE_ATOMIC), payer: buyer.address }),
    ]);
  });

  it("signed and never sent (the process died before it left): the chain says still valid, so it is kept, unmoved", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const store = memoryJournalStore();
    const { client } = life(buyer, store);
    const hang = (input: RequestInfo | URL, init?: RequestInit) =>
      new Headers(init?.headers).has("payment-signature") ? new Promise<Response>(() => {}) : fetch(input, init);
    const stop = new AbortController();
    void wrapFetchWithPayment(hang, client)(`${stack.seller.url}/weather`, { signal: stop.signal }).catch(() => {});
    await expect.poll(() => store.entries()[0]?.state).toBe("signed");
    const done = await recoverPayments(life(buyer, store).client, { staleAfterMs: 0 });
    expect(done).toEqual([expect.objectContaining({ action: "kept" })]);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n);
    stop.abort();
  });
});
