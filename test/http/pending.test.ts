/**
 * A settlement still on its way is its own outcome. When the seller answers the paid request with a
 * PAYMENT-RESPONSE `{ success: false, errorReason: "settlement_pending", transaction }` (spec v2 §9; the
 * reference server sends it when the facilitator's transaction is not yet confirmed), or with any
 * failure that names a broadcast transaction, the money may still move: it is PAYMENT_PENDING with the
 * hash and the network, never PAYMENT_REJECTED's "nothing was paid"; reported once; the ledger records
 * it as pending; budgets keep it counted. A paid answer that delivers the content while the settlement
 * is pending is returned, its receipt saying pending, not settled.
 */
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { PaymentPendingError } from "../../src/entries/errors";
import {
  budget,
  createX402Client,
  getPaymentReceipt,
  memoryLedger,
  unreconciled,
  type AnyX402Error,
  type PaymentReceipt,
} from "../../src";
import { exactEvm } from "../../src/evm";
import { PATH, SELLER, TX_HASH, countingSigner, createSeller, settlementHeader, v1Challenge } from "../support/seller";
import { rejection, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

/** A seller whose answer to the paid request carries `settlement`, with `status` (402: no content). */
function sellerAnswering(settlement: Record<string, unknown>, status = 402) {
  const seller = createSeller({
    intercept: (request) =>
      request.headers.has("payment-signature")
        ? HttpResponse.json(status === 402 ? {} : { data: "paid content" }, {
            status,
            headers: settlementHeader(2, { network: "eip155:84532", ...settlement }),
          })
        : undefined,
  });
  server.use(seller.handler);
  return seller;
}

/** A client with a ledger, a budget of exactly one payment of the seller's price, and outcome hooks that record. */
function observedClient() {
  const { signer, calls: signs } = countingSigner();
  const ledger = memoryLedger();
  const failed: AnyX402Error[] = [];
  const settled: PaymentReceipt[] = [];
  const client = createX402Client({
    schemes: [exactEvm({ signer })],
    plugins: [ledger, budget({ limit: "$0.01", per: "day" })],
    onPaymentFailed: (error) => void failed.push(error),
    onPaymentSettled: (receipt) => void settled.push(receipt),
  });
  return { client, ledger, failed, settled, signs };
}

const PENDING = {
  success: false,
  errorReason: "settlement_pending",
  errorMessage: "timed out waiting for the receipt",
  transaction: TX_HASH,
};

describe.each(wrappers)("$name: a pending settlement", (wrapper) => {
  it("is PAYMENT_PENDING with the transaction and network, reported once, recorded pending, and its amount stays counted", async () => {
    const seller = sellerAnswering(PENDING);
    const { client, ledger, failed, settled, signs } = observedClient();

    const error = await rejection(wrapper.send(client, { url }));

    expect(error).toBeInstanceOf(PaymentPendingError);
    expect(error.code).toBe("PAYMENT_PENDING");
    expect(error.phase).toBe("settle");
    expect(error.details).toMatchObject({
      transaction: TX_HASH,
      network: "eip155:84532",
      reason: "settlement_pending",
      status: 402,
      url,
    });
    expect(error.details.paymentHeader.value).toBe(seller.requests[1]!.headers["payment-signature"]);
    expect(error.message).toContain(`transaction ${TX_HASH} on eip155:84532 was broadcast and is not yet confirmed`);
    expect(error.message).toContain("may still complete");
    expect(error.message).toContain("checkSettlement(client, error)");
    expect(error.message).toMatch(
      / The server said: "timed out waiting for the receipt"\. Ask the chain with checkSettlement\(client, error\) before paying again; budgets keep the amount counted meanwhile\.$/,
    );
    expect(error.message).not.toMatch(/nothing was (paid|charged)/);
    expect(failed).toEqual([error]);
    expect(settled).toEqual([]);

    expect(ledger.list.map((r) => r.outcome)).toEqual(["pending"]);
    expect(ledger.list[0]).toMatchObject({
      code: "PAYMENT_PENDING",
      transaction: TX_HASH,
      network: "eip155:84532",
      amount: "10000",
    });
    expect((await unreconciled(ledger)).map((r) => r.id)).toEqual([ledger.list[0]!.id]);

    // The day's budget is one payment: still counted, so the next one is refused before signing.
    const next = await rejection(wrapper.send(client, { url }));
    expect(next.code).toBe("BUDGET_EXCEEDED");
    expect(signs).toHaveLength(1);
  });

  it("a failure that names a transaction is pending too, whatever its reason", async () => {
    sellerAnswering({ success: false, errorReason: "transaction_failed", transaction: TX_HASH });
    const { client, ledger } = observedClient();
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("PAYMENT_PENDING");
    expect(error.details.reason).toBe("transaction_failed");
    expect(error.message).toBe(
      `The server reports the settlement failed (transaction_failed) yet names transaction ${TX_HASH} on ` +
        "eip155:84532: until the chain says otherwise, the payment may have gone through. Ask the chain with " +
        "checkSettlement(client, error) before paying again; budgets keep the amount counted meanwhile.",
    );
    expect(ledger.list[0]).toMatchObject({ outcome: "pending", transaction: TX_HASH });
  });

  it("settlement_pending without a transaction is pending, and says no transaction was named", async () => {
    sellerAnswering({ ...PENDING, transaction: "" });
    const { client, ledger } = observedClient();
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("PAYMENT_PENDING");
    expect(error.message).toContain("a transaction it did not name");
    expect(ledger.list[0]).toMatchObject({ outcome: "pending", transaction: undefined });
  });

  it("a failure with neither a transaction nor settlement_pending is still a rejection: nothing was charged", async () => {
    sellerAnswering({ success: false, errorReason: "invalid_exact_evm_insufficient_balance", transaction: "" });
    const { client, ledger } = observedClient();
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(ledger.list[0]).toMatchObject({ outcome: "rejected" });
    // Released: the budget takes the next payment.
    sellerAnswering({ success: true, transaction: TX_HASH }, 200);
    expect((await wrapper.send(client, { url })).status).toBe(200);
  });

  it("content delivered while the settlement is pending is returned; its receipt says pending, never settled", async () => {
    sellerAnswering(PENDING, 200);
    const { client, ledger, failed, settled } = observedClient();

    const reply = await wrapper.send(client, { url });

    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ data: "paid content" });
    const receipt = getPaymentReceipt(reply.raw)!;
    expect(receipt).toMatchObject({ settled: false, pending: true, transaction: TX_HASH, status: 200 });
    expect(settled).toEqual([]);
    expect(failed.map((e) => e.code)).toEqual(["PAYMENT_PENDING"]);
    expect(ledger.list[0]).toMatchObject({ outcome: "pending", transaction: TX_HASH });
  });

  it("a pending settlement answered 400 (no content): thrown, not returned", async () => {
    sellerAnswering(PENDING, 400);
    const { client, ledger } = observedClient();
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("PAYMENT_PENDING");
    expect(error.details).toMatchObject({ status: 400, transaction: TX_HASH });
    expect(ledger.list[0]).toMatchObject({ outcome: "pending", transaction: TX_HASH });
  });

  it("a settlement that names no network: the network is the paid requirement's", async () => {
    sellerAnswering({ ...PENDING, network: undefined });
    const { client } = observedClient();
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.details.network).toBe("eip155:84532");
    expect(error.message).toContain(`transaction ${TX_HASH} on eip155:84532 was broadcast`);
  });

  it("a v1 seller's pending settlement that names no network: the requirement's CAIP-2 id, not its v1 name", async () => {
    const seller = createSeller({
      challenge: v1Challenge(),
      intercept: (request) =>
        request.headers.has("x-payment")
          ? HttpResponse.json({}, { status: 402, headers: settlementHeader(1, { ...PENDING, network: "" }) })
          : undefined,
    });
    server.use(seller.handler);
    const error = await rejection(wrapper.send(observedClient().client, { url }));
    expect(error.code).toBe("PAYMENT_PENDING");
    expect(error.details.network).toBe("eip155:84532");
  });

  it("a settled payment's receipt is settled and not pending", async () => {
    sellerAnswering({ success: true, transaction: TX_HASH }, 200);
    const { client } = observedClient();
    const reply = await wrapper.send(client, { url });
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ settled: true, pending: false, transaction: TX_HASH });
  });
});
