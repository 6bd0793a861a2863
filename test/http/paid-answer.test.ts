/**
 * How the answer to the paid request is classified, through both wrappers: the table of README's
 * "What happens on a 402", step 8. A rejection says nothing was charged, so it is given only where
 * the server said so directly; anything that may have settled is PAYMENT_OUTCOME_UNKNOWN, and a
 * successful settlement report wins over any status. And what the errors carry for the caller.
 */
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { PaymentRejectedError } from "../../src/entries/errors";
import { getPaymentReceipt, isX402Error, type AnyX402Error, type PaymentReceipt } from "../../src";
import {
  PATH,
  SELLER,
  TX_HASH,
  account,
  challengeResponse,
  createSeller,
  encodeHeader,
  payingClient,
  settlementHeader,
  v1Challenge,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { rejection, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

const settled = settlementHeader(2, { success: true, transaction: TX_HASH, network: "eip155:84532" });
const failedSettlement = (over: Record<string, unknown> = {}) =>
  settlementHeader(2, { success: false, transaction: "", network: "eip155:84532", ...over });
const challengeHeader = (error: string) => ({ "PAYMENT-REQUIRED": encodeHeader(v2Challenge({ error })) });

interface Row {
  answer: string;
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** settled: onPaymentSettled; rejected: PaymentRejectedError; unknown: PAYMENT_OUTCOME_UNKNOWN. */
  outcome: "settled" | "rejected" | "unknown";
}

const table: Row[] = [
  { answer: "200 with a successful settlement", status: 200, headers: settled, outcome: "settled" },
  { answer: "200 without a settlement report", status: 200, outcome: "settled" },
  { answer: "500 with a successful settlement", status: 500, headers: settled, outcome: "settled" },
  { answer: "400 without a settlement report", status: 400, outcome: "unknown" },
  { answer: "500 without a settlement report", status: 500, outcome: "unknown" },
  {
    answer: "402 with a new challenge",
    status: 402,
    headers: challengeHeader("insufficient_funds"),
    outcome: "rejected",
  },
  {
    answer: "402 with a failed settlement",
    status: 402,
    headers: failedSettlement({ errorReason: "insufficient_funds" }),
    outcome: "rejected",
  },
  { answer: "402 with a successful settlement", status: 402, headers: settled, outcome: "unknown" },
  { answer: "402 with an HTML page", status: 402, body: "<html>pay here</html>", outcome: "rejected" },
  {
    answer: "412 with a new challenge",
    status: 412,
    headers: challengeHeader("invalid_exact_evm_payload_signature"),
    outcome: "rejected",
  },
  { answer: "412 without a challenge", status: 412, outcome: "unknown" },
  {
    answer: "400 with a challenge header",
    status: 400,
    headers: challengeHeader("invalid_payment"),
    outcome: "unknown",
  },
  {
    answer: "500 with a challenge header",
    status: 500,
    headers: challengeHeader("invalid_payment"),
    outcome: "unknown",
  },
  {
    answer: "200 with a failed settlement",
    status: 200,
    headers: failedSettlement({ errorReason: "insufficient_funds" }),
    outcome: "rejected",
  },
];

/** A client whose outcome hooks record every call. */
function observedClient() {
  const settledReceipts: PaymentReceipt[] = [];
  const failed: AnyX402Error[] = [];
  const { client, signs } = payingClient({
    onPaymentSettled: (receipt) => void settledReceipts.push(receipt),
    onPaymentFailed: (error) => void failed.push(error),
  });
  return { client, signs, settled: settledReceipts, failed };
}

/** A seller answering the paid request with `status`, `headers` and `body`. */
function answering(status: number, headers: Record<string, string> = {}, body = "{}") {
  const seller = createSeller({
    paid: () => new HttpResponse(body, { status, headers: { "content-type": "text/plain", ...headers } }),
  });
  server.use(seller.handler);
  return seller;
}

describe.each(wrappers)("$name: the answer to the paid request, classified", (wrapper) => {
  it.each(table)("$answer: $outcome", async ({ status, headers, body, outcome }) => {
    const seller = answering(status, headers, body);
    const observed = observedClient();

    const result = await wrapper.send(observed.client, { url }).then(
      (reply) => ({ reply, error: undefined }),
      (error: any) => ({ reply: undefined, error }),
    );

    expect(seller.requests).toHaveLength(2);
    expect(observed.signs).toHaveLength(1);
    if (outcome === "settled") {
      expect(observed.failed).toEqual([]);
      expect(observed.settled).toHaveLength(1);
      expect(observed.settled[0]).toMatchObject({ status, settled: headers === settled });
      // An error status still reaches the caller as the library reports it (axios: an AxiosError).
      expect(isX402Error(result.error)).toBe(false);
    } else if (outcome === "rejected") {
      expect(result.error).toBeInstanceOf(PaymentRejectedError);
      expect(result.error.details.status).toBe(status);
      expect(observed.failed).toEqual([result.error]);
      expect(observed.settled).toEqual([]);
    } else {
      expect(observed.settled).toEqual([]);
      expect(observed.failed.map((e) => e.code)).toEqual(["PAYMENT_OUTCOME_UNKNOWN"]);
      expect(observed.failed[0]!.details).toMatchObject({ url, method: "GET", status });
      if (status === 402) {
        expect(result.error).toBe(observed.failed[0]);
      } else {
        // Returned as the caller's library returns an error status, its receipt saying `settled: false`.
        expect(isX402Error(result.error)).toBe(false);
        const response = result.reply?.raw ?? result.error?.response;
        expect(getPaymentReceipt(response)).toMatchObject({ status, settled: false, payer: account.address });
      }
    }
  });

  it("a 402 beside a successful settlement report says the payment was reported settled", async () => {
    answering(402, settled);
    const error = await rejection(wrapper.send(payingClient().client, { url }));
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.message).toMatch(/reported settled.*402/);
    expect(error.details.settlement).toMatchObject({ success: true, transaction: TX_HASH });
  });

  it("a 402 after a redirect of the paid request says it was redirected", async () => {
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? new HttpResponse(null, { status: 307, headers: { Location: `${PATH}/paywall` } })
          : undefined,
    });
    const paywall = createSeller({ path: `${PATH}/paywall`, intercept: () => challengeResponse(v2Challenge()) });
    server.use(seller.handler, paywall.handler);
    const error = await rejection(wrapper.send(payingClient().client, { url }));
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.message).toMatch(/redirected.*402/);
    expect(error.message).not.toMatch(/reported settled/);
  });

  it("an error status without a settlement report: the outcome names the status", async () => {
    answering(503);
    const observed = observedClient();
    await wrapper.send(observed.client, { url }).catch(() => undefined);
    expect(observed.failed[0]!.message).toMatch(/answered 503/);
    expect(observed.failed[0]!.details).toMatchObject({ status: 503, receipt: { status: 503, settled: false } });
  });
});

describe.each(wrappers)("$name: what a rejection carries", (wrapper) => {
  it("where, what was paid and by whom, in details; the signed header hidden there too", async () => {
    const seller = answering(402, challengeHeader("insufficient_funds"));
    const error = await rejection(wrapper.send(payingClient().client, { url, method: "POST", body: "order" }));

    expect(error.details).toMatchObject({
      url,
      method: "POST",
      requirement: v2Requirement(),
      payer: account.address,
      reason: "insufficient_funds",
      status: 402,
    });
    expect(Object.keys(error.details)).not.toContain("paymentHeader");
    expect(error.details.paymentHeader).toEqual({
      name: "PAYMENT-SIGNATURE",
      value: seller.requests[1]!.headers["payment-signature"],
    });
    expect(error.details.payload).toMatchObject({ x402Version: 2, accepted: v2Requirement() });
  });

  it("the message is the reason's sentence and nothing more when the server gave no words", async () => {
    answering(402, challengeHeader("insufficient_funds"));
    const error = await rejection(wrapper.send(payingClient().client, { url }));
    expect(error.message).toBe("The server rejected the payment (insufficient_funds): the payer's balance is too low.");
  });

  it("the server's own words (a failed settlement's errorMessage) follow the sentence", async () => {
    answering(402, failedSettlement({ errorReason: "insufficient_funds", errorMessage: "balance 0.001 USDC" }));
    const error = await rejection(wrapper.send(payingClient().client, { url }));
    expect(error.message).toBe(
      'The server rejected the payment (insufficient_funds): the payer\'s balance is too low. The server said: "balance 0.001 USDC".',
    );
  });

  it("a failed settlement without a reason: reason settlement_failed", async () => {
    answering(402, failedSettlement());
    const error = await rejection(wrapper.send(payingClient().client, { url }));
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.details.reason).toBe("settlement_failed");
  });

  it("a second 402 with no readable challenge: an empty reason, and a message that says none was given", async () => {
    answering(402, {}, "<html>pay here</html>");
    const error = await rejection(wrapper.send(payingClient().client, { url }));
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.details.reason).toBe("");
    expect(error.message).toBe("The server answered the paid request with another 402 and gave no reason.");
  });

  it.each([
    { length: 200, clipped: false },
    { length: 201, clipped: true },
  ])(
    "a reason of $length characters: clipped in the message: $clipped; whole in details",
    async ({ length, clipped }) => {
      const reason = `insufficient_funds_${"x".repeat(length - 19)}`;
      expect(reason).toHaveLength(length);
      answering(402, challengeHeader(reason));
      const error = await rejection(wrapper.send(payingClient().client, { url }));
      expect(error.details.reason).toBe(reason);
      const shown = clipped ? `${reason.slice(0, 200)}…` : reason;
      expect(error.message).toBe(`The server rejected the payment (${shown}): the payer's balance is too low.`);
    },
  );
});

describe.each(wrappers)("$name: a request that already carried a payment", (wrapper) => {
  it("the error names the request and the server's reason; nothing is signed", async () => {
    const seller = createSeller({
      intercept: () => challengeResponse(v2Challenge({ error: "invalid_exact_evm_payload_signature" })),
    });
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const stale = encodeHeader({ x402Version: 2, payload: {}, accepted: {} });

    const error = await rejection(
      wrapper.send(client, { url, method: "PUT", body: "x", headers: { "PAYMENT-SIGNATURE": stale } }),
    );

    expect(error.code).toBe("PAYMENT_ALREADY_ATTEMPTED");
    expect(error.details).toEqual({ url, method: "PUT", reason: "invalid_exact_evm_payload_signature" });
    expect(error.message).toBe(
      "The request already carried a payment and the server still answered 402 (invalid_exact_evm_payload_signature); x402-pay will not sign another.",
    );
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });

  it("a 402 without a reason: the message says no more than that", async () => {
    const seller = createSeller({ intercept: () => HttpResponse.text("no", { status: 402 }) });
    server.use(seller.handler);
    const error = await rejection(wrapper.send(payingClient().client, { url, headers: { "X-PAYMENT": "e30=" } }));
    expect(error.code).toBe("PAYMENT_ALREADY_ATTEMPTED");
    expect(error.details.reason).toBeUndefined();
    expect(error.message).toBe(
      "The request already carried a payment and the server still answered 402; x402-pay will not sign another.",
    );
  });

  it("v1: the reason of a body challenge is named too", async () => {
    const seller = createSeller({ intercept: () => challengeResponse(v1Challenge({ error: "invalid_payment" })) });
    server.use(seller.handler);
    const error = await rejection(wrapper.send(payingClient().client, { url, headers: { "X-PAYMENT": "e30=" } }));
    expect(error.details.reason).toBe("invalid_payment");
  });
});

describe.each(wrappers)("$name: the receipt's payer", (wrapper) => {
  it("is the payer the settlement names, when it names one (a smart wallet settles for its owner's key)", async () => {
    const smartWallet = "0x1111111111111111111111111111111111111111";
    answering(
      200,
      settlementHeader(2, { success: true, transaction: TX_HASH, network: "eip155:84532", payer: smartWallet }),
    );
    const reply = await wrapper.send(payingClient().client, { url });
    expect(getPaymentReceipt(reply.raw)?.payer).toBe(smartWallet);
  });

  it("is the signer's address without a settlement report", async () => {
    answering(200);
    const reply = await wrapper.send(payingClient().client, { url });
    expect(getPaymentReceipt(reply.raw)).toMatchObject({
      payer: account.address,
      settlement: undefined,
      settled: false,
    });
  });
});
