/**
 * payment-identifier over HTTP, through both wrappers: the id in every payment to a seller that
 * declares the extension, the caller's own id, the identical signed header resent once when an answer
 * is lost (and only then, and only with the extension), the 409 of an id used twice, aborts, and a
 * payment resent later with `x402: resendPayment(error)`.
 */
import axios, { AxiosError } from "axios";
import { validatePaymentIdentifierRequirement } from "@x402/extensions/payment-identifier";
import { HttpResponse, delay } from "msw";
import { describe, expect, it } from "vitest";
import { PaymentIdConflictError, PaymentOutcomeUnknownError } from "../../src/entries/errors";
import { getPaymentReceipt, resendPayment, type AnyX402Error, type PaymentReceipt } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  PaymentIdentifierDeclarationSchema,
  PaymentIdentifierPayloadSchema,
  problemOf,
} from "../../src/protocol/schemas";
import { idempotentSeller } from "../support/idempotent-seller";
import { useMswServer } from "../support/msw";
import {
  PATH,
  SELLER,
  TX_HASH,
  challengeResponse,
  decodeHeader,
  payingClient,
  settlementHeader,
} from "../support/seller";
import { rejection, wrappers } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

/** A paying client whose outcome hooks record what they were told. */
function recordingClient() {
  const settled: PaymentReceipt[] = [];
  const failed: AnyX402Error[] = [];
  const { client, signs } = payingClient({
    onPaymentSettled: (r) => void settled.push(r),
    onPaymentFailed: (e) => void failed.push(e),
  });
  return { client, signs, settled, failed };
}

const lost = () => HttpResponse.error();
const gateway = (status: number) =>
  new HttpResponse(`<html>${status}</html>`, { status, headers: { "content-type": "text/html" } });

describe.each(wrappers)(
  "$name: the id goes with every payment to a seller that declares payment-identifier",
  (wrapper) => {
    it.each([false, true])("required: %s: the declaration echoed with a fresh pay_ id", async (required) => {
      const seller = idempotentSeller({ required });
      server.use(seller.handler);

      const reply = await wrapper.send(payingClient().client, { url });

      expect(reply.status).toBe(200);
      const [payload] = seller.paymentHeaders.map(decodeHeader);
      expect(payload.extensions["payment-identifier"]).toEqual({
        info: { required, id: expect.stringMatching(/^pay_[0-9a-f]{32}$/) },
        schema: (seller.challenge.extensions as any)["payment-identifier"].schema,
      });
      expect(validatePaymentIdentifierRequirement(payload, required)).toEqual({ valid: true });
      // The reference's declaration and what x402-pay sends are the shapes the published schemas state.
      expect(
        problemOf(PaymentIdentifierDeclarationSchema, (seller.challenge.extensions as any)["payment-identifier"]),
      ).toBeUndefined();
      expect(problemOf(PaymentIdentifierPayloadSchema, payload.extensions["payment-identifier"])).toBeUndefined();
      expect(seller.settlements).toEqual([
        { id: payload.extensions["payment-identifier"].info.id, payer: expect.any(String) },
      ]);
    });

    it("not declared: no id", async () => {
      const seller = idempotentSeller();
      server.use(seller.handler);
      await wrapper.send(payingClient().client, { url, x402: { paymentId: "order-0000000000000001" } });
      expect(decodeHeader(seller.paymentHeaders[0]!)).not.toHaveProperty("extensions");
    });

    it("v1: the X-PAYMENT payload is the four v1 fields, whatever the 402 body carried", async () => {
      const seller = idempotentSeller({ required: true, version: 1 });
      server.use(seller.handler);
      // The seller wants an id (400: fetch returns it, axios rejects), which v1 cannot carry.
      await wrapper.send(payingClient().client, { url }).catch(() => undefined);
      expect(Object.keys(decodeHeader(seller.paymentHeaders[0]!))).toEqual([
        "x402Version",
        "scheme",
        "network",
        "payload",
      ]);
    });

    it("the caller's id, verbatim", async () => {
      const seller = idempotentSeller({ required: false });
      server.use(seller.handler);
      await wrapper.send(payingClient().client, { url, x402: { paymentId: "order-2024-06-01_0042" } });
      expect(decodeHeader(seller.paymentHeaders[0]!).extensions["payment-identifier"].info).toEqual({
        required: false,
        id: "order-2024-06-01_0042",
      });
    });

    it.each([
      { name: "too short", x402: { paymentId: "order-42" } },
      { name: "129 characters", x402: { paymentId: "a".repeat(129) } },
      { name: "a character outside a-z A-Z 0-9 _ -", x402: { paymentId: "order/2024/06/01/0042" } },
      { name: "misspelt option", x402: { paymentID: "order-2024-06-01_0042" } },
    ])("a malformed id ($name): INVALID_CONFIG at once, nothing sent, nothing signed", async ({ x402 }) => {
      const seller = idempotentSeller({ required: true });
      server.use(seller.handler);
      const { client, signs } = payingClient();

      const error = await rejection(wrapper.send(client, { url, x402: x402 as never }));

      expect(error.code).toBe("INVALID_CONFIG");
      expect(error.details.option).toMatch(/^x402\.payment(Id|ID)$/);
      expect(seller.requests).toHaveLength(0);
      expect(signs).toHaveLength(0);
    });
  },
);

describe.each(wrappers)(
  "$name: an answer lost after paying, with payment-identifier: the identical header once more",
  (wrapper) => {
    it.each([
      { name: "connection reset", fault: lost },
      { name: "502", fault: () => gateway(502) },
      { name: "503", fault: () => gateway(503) },
      { name: "504", fault: () => gateway(504) },
    ])(
      "$name after the seller settled: resent once, unchanged, and served from the seller's cache",
      async ({ fault }) => {
        const seller = idempotentSeller({ required: false, after: (n) => (n === 0 ? fault() : undefined) });
        server.use(seller.handler);
        const { client, signs, settled, failed } = recordingClient();

        const reply = await wrapper.send(client, { url });

        expect(reply.status).toBe(200);
        expect(JSON.parse(reply.text)).toEqual({ data: "premium", cached: true });
        expect(signs).toHaveLength(1);
        expect(seller.paymentHeaders).toHaveLength(2);
        expect(seller.paymentHeaders[1]).toBe(seller.paymentHeaders[0]);
        expect(seller.settlements).toHaveLength(1);
        expect(getPaymentReceipt(reply.raw)).toMatchObject({ settled: true, transaction: TX_HASH, status: 200 });
        expect(settled).toHaveLength(1);
        expect(failed).toEqual([]);
      },
    );

    it.each([
      { name: "connection reset", fault: lost },
      { name: "502", fault: () => gateway(502) },
      { name: "504", fault: () => gateway(504) },
    ])("$name from a gateway that never reached the seller: resent once, and paid there once", async ({ fault }) => {
      const seller = idempotentSeller({ required: true, before: (n) => (n === 0 ? fault() : undefined) });
      server.use(seller.handler);
      const { client, signs } = recordingClient();

      const reply = await wrapper.send(client, { url });

      expect(JSON.parse(reply.text)).toEqual({ data: "premium", cached: false });
      expect(signs).toHaveLength(1);
      expect(seller.paymentHeaders).toEqual([seller.paymentHeaders[0], seller.paymentHeaders[0]]);
      expect(seller.settlements).toHaveLength(1);
    });

    it("lost twice: PAYMENT_OUTCOME_UNKNOWN after exactly two sendings of one header, resent: true", async () => {
      const seller = idempotentSeller({ required: false, after: () => lost() });
      server.use(seller.handler);
      const { client, signs, failed } = recordingClient();

      const error = await rejection(wrapper.send(client, { url }));

      expect(error).toBeInstanceOf(PaymentOutcomeUnknownError);
      expect(error.details.resent).toBe(true);
      expect(error.details.paymentHeader).toEqual({ name: "PAYMENT-SIGNATURE", value: seller.paymentHeaders[0] });
      expect(seller.paymentHeaders).toEqual([seller.paymentHeaders[0], seller.paymentHeaders[0]]);
      expect(signs).toHaveLength(1);
      expect(failed).toEqual([error]);
    });

    it("a refusal of the resent header is outcome unknown, never 'nothing charged': the first may have settled", async () => {
      const seller = idempotentSeller({
        required: false,
        after: (n) => (n === 0 ? lost() : undefined),
        // A seller with no cache asks its facilitator again, which knows the authorization was used.
        before: (n) =>
          n === 1
            ? challengeResponse({
                ...idempotentSeller({ required: false }).challenge,
                error: "invalid_exact_evm_payload_authorization_nonce_used",
              })
            : undefined,
      });
      server.use(seller.handler);
      const { client, signs } = recordingClient();

      const error = await rejection(wrapper.send(client, { url }));

      expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
      expect(error.details).toMatchObject({
        status: 402,
        reason: "invalid_exact_evm_payload_authorization_nonce_used",
        resent: true,
      });
      expect(error.message).toContain("may have gone through");
      expect(seller.settlements).toHaveLength(1);
      expect(signs).toHaveLength(1);
    });

    it("a gateway error that reports a settlement is the seller's answer: not resent", async () => {
      const seller = idempotentSeller({
        required: false,
        after: (n, served) =>
          n === 0
            ? new HttpResponse("upstream hiccup", {
                status: 502,
                headers: { "PAYMENT-RESPONSE": served.headers.get("PAYMENT-RESPONSE")! },
              })
            : undefined,
      });
      server.use(seller.handler);
      const { client, settled } = recordingClient();

      const outcome = await wrapper.send(client, { url }).catch((error) => error);

      expect(wrapper.name === "fetch" ? outcome.status : outcome.response.status).toBe(502);
      expect(seller.paymentHeaders).toHaveLength(1);
      expect(settled).toHaveLength(1);
    });

    it("a 500 is the seller's own answer: not resent", async () => {
      const seller = idempotentSeller({
        required: false,
        before: () => HttpResponse.json({ boom: true }, { status: 500 }),
      });
      server.use(seller.handler);
      const { client, failed } = recordingClient();

      await wrapper.send(client, { url }).catch(() => undefined);

      expect(seller.paymentHeaders).toHaveLength(1);
      expect(failed.map((e) => e.code)).toEqual(["PAYMENT_OUTCOME_UNKNOWN"]);
      expect(failed[0]!.details).toMatchObject({ status: 500 });
      expect(failed[0]!.details).not.toHaveProperty("resent");
    });

    it("a 500 to the header resent after a 502: outcome unknown, saying it was sent twice", async () => {
      const seller = idempotentSeller({
        required: false,
        before: (n) => (n === 0 ? gateway(502) : HttpResponse.json({ boom: true }, { status: 500 })),
      });
      server.use(seller.handler);
      const { client, failed, signs } = recordingClient();

      await wrapper.send(client, { url }).catch(() => undefined);

      expect(seller.paymentHeaders).toEqual([seller.paymentHeaders[0], seller.paymentHeaders[0]]);
      expect(signs).toHaveLength(1);
      expect(failed.map((e) => e.code)).toEqual(["PAYMENT_OUTCOME_UNKNOWN"]);
      expect(failed[0]!.details).toMatchObject({ status: 500, resent: true });
      expect(failed[0]!.message).toBe(
        "The paid request was answered 500 without a settlement report: the payment may have settled.",
      );
    });
  },
);

describe.each(wrappers)("$name: without payment-identifier, nothing is resent", (wrapper) => {
  it("a connection reset: PAYMENT_OUTCOME_UNKNOWN after one sending", async () => {
    const seller = idempotentSeller({ after: () => lost() });
    server.use(seller.handler);
    const { client, failed } = recordingClient();

    const error = await rejection(wrapper.send(client, { url }));

    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.details).not.toHaveProperty("resent");
    expect(seller.paymentHeaders).toHaveLength(1);
    expect(failed).toEqual([error]);
  });

  it("a 502: answered as today (returned by fetch, an AxiosError from axios), outcome unknown reported, one sending", async () => {
    const seller = idempotentSeller({ after: () => gateway(502) });
    server.use(seller.handler);
    const { client, failed } = recordingClient();

    const outcome = await wrapper.send(client, { url }).catch((error) => error);

    if (wrapper.name === "fetch") expect(outcome.status).toBe(502);
    else expect(outcome).toBeInstanceOf(AxiosError);
    expect(seller.paymentHeaders).toHaveLength(1);
    expect(failed.map((e) => e.code)).toEqual(["PAYMENT_OUTCOME_UNKNOWN"]);
  });

  it("a 409 is no conflict of ids: the paid answer as today", async () => {
    const seller = idempotentSeller({ before: () => HttpResponse.json({ error: "taken" }, { status: 409 }) });
    server.use(seller.handler);
    const { client, failed } = recordingClient();

    const outcome = await wrapper.send(client, { url }).catch((error) => error);

    expect(outcome).not.toBeInstanceOf(PaymentIdConflictError);
    expect(failed.map((e) => e.code)).toEqual(["PAYMENT_OUTCOME_UNKNOWN"]);
  });
});

describe.each(wrappers)("$name: one id, two payloads: the typed 409", (wrapper) => {
  it("the caller's id used for a second, newly signed payment: PAYMENT_ID_CONFLICT naming the id; nothing resent, nothing charged again", async () => {
    const seller = idempotentSeller({ required: false });
    server.use(seller.handler);
    const { client, signs, failed } = recordingClient();
    const x402 = { paymentId: "order-2024-06-01_0042" };

    await wrapper.send(client, { url, x402 });
    const error = await rejection(wrapper.send(client, { url, x402 }));

    expect(error).toBeInstanceOf(PaymentIdConflictError);
    expect(error).toMatchObject({
      code: "PAYMENT_ID_CONFLICT",
      phase: "settle",
      details: { paymentId: "order-2024-06-01_0042", status: 409, url },
    });
    expect(error.message).toContain("order-2024-06-01_0042");
    expect(error.details.paymentHeader).toEqual({ name: "PAYMENT-SIGNATURE", value: seller.paymentHeaders[1] });
    expect(seller.paymentHeaders).toHaveLength(2);
    expect(seller.paymentHeaders[1]).not.toBe(seller.paymentHeaders[0]);
    expect(signs).toHaveLength(2);
    expect(seller.settlements).toHaveLength(1);
    expect(failed).toEqual([error]);
  });

  it("a 409 after redirects may follow a settlement on the way: outcome unknown", async () => {
    const seller = idempotentSeller({
      required: false,
      before: (n) =>
        n === 0
          ? new HttpResponse(null, { status: 307, headers: { Location: `${PATH}?again` } })
          : HttpResponse.json({}, { status: 409 }),
    });
    server.use(seller.handler);
    const error = await rejection(wrapper.send(payingClient().client, { url }));
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
  });
});

describe.each(wrappers)("$name: the caller's AbortSignal during an idempotent retry", (wrapper) => {
  it("fired while the resent header is in flight: PAYMENT_OUTCOME_UNKNOWN, resent: true, no third sending", async () => {
    const controller = new AbortController();
    const seller = idempotentSeller({
      required: false,
      after: async (n) => {
        if (n === 0) return lost();
        controller.abort(new Error("user gave up"));
        await delay(200);
        return undefined;
      },
    });
    server.use(seller.handler);

    const error = await rejection(wrapper.send(payingClient().client, { url, signal: controller.signal }));

    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.details.resent).toBe(true);
    expect(seller.paymentHeaders).toHaveLength(2);
  });

  it("fired before the header could be resent: no resend, PAYMENT_OUTCOME_UNKNOWN", async () => {
    const controller = new AbortController();
    const seller = idempotentSeller({
      required: false,
      after: () => {
        controller.abort(new Error("user gave up"));
        return lost();
      },
    });
    server.use(seller.handler);

    const error = await rejection(wrapper.send(payingClient().client, { url, signal: controller.signal }));

    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.details).not.toHaveProperty("resent");
    expect(seller.paymentHeaders).toHaveLength(1);
  });
});

describe("timeouts are transport failures too", () => {
  it("axios: a paid request past its `timeout` is resent once and served from the cache", async () => {
    const seller = idempotentSeller({
      required: false,
      after: async (n) => (n === 0 ? (await delay(400), undefined) : undefined),
    });
    server.use(seller.handler);
    const { client, signs } = payingClient();

    const response = await wrapAxiosWithPayment(axios.create({ timeout: 150 }), client).get(url);

    expect(response.data).toEqual({ data: "premium", cached: true });
    expect(seller.paymentHeaders).toEqual([seller.paymentHeaders[0], seller.paymentHeaders[0]]);
    expect(signs).toHaveLength(1);
    expect(seller.settlements).toHaveLength(1);
  });

  it("fetch: undici's headers timeout (a TypeError, the signal untouched) is resent once", async () => {
    const seller = idempotentSeller({ required: false });
    server.use(seller.handler);
    let paidCalls = 0;
    const timingOut: typeof fetch = async (input, init) => {
      const response = await globalThis.fetch(input, init);
      if (new Headers(init?.headers).has("payment-signature") && paidCalls++ === 0) {
        throw new TypeError("fetch failed", {
          cause: Object.assign(new Error("Headers Timeout Error"), { code: "UND_ERR_HEADERS_TIMEOUT" }),
        });
      }
      return response;
    };

    const response = await wrapFetchWithPayment(timingOut, payingClient().client)(url);

    expect(await response.json()).toEqual({ data: "premium", cached: true });
    expect(seller.settlements).toHaveLength(1);
    expect(paidCalls).toBe(2);
  });
});

describe.each(wrappers)("$name: resending later with x402: resendPayment(error)", (wrapper) => {
  /** A payment whose answers were lost twice: the PAYMENT_OUTCOME_UNKNOWN to resend, and the seller that settled it. */
  async function lostPayment(method = "GET", body?: string) {
    let lose = true;
    const seller = idempotentSeller({ required: false, after: () => (lose ? lost() : undefined) });
    server.use(seller.handler);
    const recorded = recordingClient();
    const error: PaymentOutcomeUnknownError = await rejection(
      wrapper.send(recorded.client, { url, method, ...(body !== undefined && { body }) }),
    );
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    lose = false;
    return { seller, error, ...recorded };
  }

  it("the kept header, sent with the request again: served from the cache, with its receipt; nothing signed, no hook called again", async () => {
    const { seller, error, client, signs, settled, failed } = await lostPayment();

    const reply = await wrapper.send(client, { url, x402: resendPayment(error) });

    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ data: "premium", cached: true });
    expect(seller.paymentHeaders).toEqual(Array(3).fill(error.details.paymentHeader.value));
    expect(seller.requests).toHaveLength(4); // the 402, two lost sendings, the resend: no new 402 first
    expect(getPaymentReceipt(reply.raw)).toMatchObject({
      settled: true,
      transaction: TX_HASH,
      url,
      amount: "10000",
      payTo: error.details.requirement.payTo,
    });
    expect(signs).toHaveLength(1);
    expect(seller.settlements).toHaveLength(1);
    expect(settled).toEqual([]);
    expect(failed).toEqual([error]);
  });

  it("a copy kept as JSON does as well", async () => {
    const { seller, error, client } = await lostPayment();
    const { paymentHeader, requirement, payer } = error.details;
    const kept = JSON.parse(JSON.stringify({ details: { paymentHeader, requirement, payer } }));

    const reply = await wrapper.send(client, { url, x402: resendPayment(kept) });

    expect(JSON.parse(reply.text)).toEqual({ data: "premium", cached: true });
    expect(seller.paymentHeaders.at(-1)).toBe(paymentHeader.value);
  });

  it("a POST goes again with its method and body", async () => {
    const { seller, error, client } = await lostPayment("POST", '{"order":42}');

    await wrapper.send(client, {
      url,
      method: "POST",
      body: '{"order":42}',
      headers: { "content-type": "application/json" },
      x402: resendPayment(error),
    });

    const last = seller.requests.at(-1)!;
    expect([last.method, new TextDecoder().decode(last.body), last.headers["payment-signature"]]).toEqual([
      "POST",
      '{"order":42}',
      error.details.paymentHeader.value,
    ]);
  });

  it("refused now: outcome unknown again with the seller's reason, never signed anew", async () => {
    const { error, client, signs } = await lostPayment();
    server.use(
      idempotentSeller({
        required: false,
        before: () =>
          challengeResponse({
            x402Version: 2,
            accepts: [],
            error: "invalid_exact_evm_payload_authorization_valid_before",
          }),
      }).handler,
    );

    const again = await rejection(wrapper.send(client, { url, x402: resendPayment(error) }));

    expect(again.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(again.details).toMatchObject({
      status: 402,
      reason: "invalid_exact_evm_payload_authorization_valid_before",
      resent: true,
    });
    expect(again.details.paymentHeader).toEqual(error.details.paymentHeader);
    expect(signs).toHaveLength(1);
  });

  it("lost again: outcome unknown again, the same header to keep", async () => {
    const { error, client } = await lostPayment();
    server.use(idempotentSeller({ required: false, before: () => lost() }).handler);

    const again = await rejection(wrapper.send(client, { url, x402: resendPayment(error) }));

    expect(again).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN", details: { resent: true } });
    expect(again.details.paymentHeader).toEqual(error.details.paymentHeader);
  });

  it("a seller that settles on answering says so in the receipt", async () => {
    const { error, client } = await lostPayment();
    const settlement = settlementHeader(2, { success: true, transaction: "0x02", network: "eip155:84532" });
    server.use(idempotentSeller({ before: () => HttpResponse.json({ late: true }, { headers: settlement }) }).handler);

    const reply = await wrapper.send(client, { url, x402: resendPayment(error) });

    expect(getPaymentReceipt(reply.raw)).toMatchObject({
      settled: true,
      transaction: "0x02",
      payer: error.details.payer,
    });
  });

  it("a resend option not made by resendPayment: INVALID_CONFIG, nothing sent", async () => {
    const seller = idempotentSeller({ required: false });
    server.use(seller.handler);
    const error = await rejection(
      wrapper.send(payingClient().client, { url, x402: { resend: { details: {} } as never } }),
    );
    expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option: "x402.resend" } });
    expect(seller.requests).toHaveLength(0);
  });
});
