/**
 * What happens after the payment leaves: exactly one paid retry, typed rejections with the server's
 * reason, no second signature for a request that already paid, an unknown outcome on a transport
 * failure, and axios's own status handling after the paid retry.
 */
import axios, { AxiosError } from "axios";
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import {
  PaymentAlreadyAttemptedError,
  PaymentOutcomeUnknownError,
  PaymentRejectedError,
} from "../../src/entries/errors";
import { getPaymentReceipt, isX402Error } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  PATH,
  SELLER,
  challengeResponse,
  createSeller,
  decodeHeader,
  encodeHeader,
  payingClient,
  settlementHeader,
  v1Challenge,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { recordingFetch } from "../support/fetches";
import { fetchWrapper, rejection, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();

const url = `${SELLER}${PATH}`;

describe.each(wrappers)("$name: exactly one paid retry", (wrapper) => {
  it("a server that always answers 402 sees two requests; the error carries the new challenge's `error`", async () => {
    const challenge = v2Challenge();
    const seller = createSeller({
      challenge,
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? challengeResponse({ ...challenge, error: "insufficient_funds" })
          : undefined,
    });
    server.use(seller.handler);
    const { client, signs } = payingClient();

    const error = await rejection(wrapper.send(client, { url }));

    expect(error).toBeInstanceOf(PaymentRejectedError);
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.phase).toBe("settle");
    expect(error.reason).toBe("insufficient_funds");
    expect(error.details.reason).toBe("insufficient_funds");
    expect(error.details.status).toBe(402);
    expect(error.details.paymentHeader).toEqual({
      name: "PAYMENT-SIGNATURE",
      value: seller.requests[1]!.headers["payment-signature"],
    });
    expect(error.message).toContain("insufficient_funds");
    expect(seller.requests).toHaveLength(2);
    expect(signs).toHaveLength(1);
  });

  it("a failed settlement (PAYMENT-RESPONSE success:false, no new challenge) gives its errorReason", async () => {
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? HttpResponse.json(
              {},
              {
                status: 402,
                headers: settlementHeader(2, {
                  success: false,
                  errorReason: "invalid_exact_evm_payload_authorization_valid_before",
                  errorMessage: "authorization expired",
                  transaction: "",
                  network: "eip155:84532",
                }),
              },
            )
          : undefined,
    });
    server.use(seller.handler);

    const error = await rejection(wrapper.send(payingClient().client, { url }));

    expect(error).toBeInstanceOf(PaymentRejectedError);
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.reason).toContain("invalid_exact_evm_payload_authorization_valid_before");
    expect(error.details.settlement).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_payload_authorization_valid_before",
    });
    expect(seller.requests).toHaveLength(2);
  });

  it("v1: a second 402 with a body challenge gives its `error`", async () => {
    const challenge = v1Challenge();
    const seller = createSeller({
      challenge,
      intercept: (request) =>
        request.headers.has("x-payment") ? challengeResponse({ ...challenge, error: "invalid_payment" }) : undefined,
    });
    server.use(seller.handler);

    const error = await rejection(wrapper.send(payingClient().client, { url }));

    expect(error).toBeInstanceOf(PaymentRejectedError);
    expect(error.reason).toBe("invalid_payment");
    expect(error.details.paymentHeader.name).toBe("X-PAYMENT");
    expect(seller.requests).toHaveLength(2);
  });

  it("a seller that reprices between the 402 and the paid request rejects once, and nothing is re-signed", async () => {
    // The 402 offers 20000; the paid request is checked against the seller's current price, 10000.
    const repriced = v2Challenge({ accepts: [v2Requirement({ amount: "20000" })] });
    const seller = createSeller({
      challenge: v2Challenge(),
      intercept: (request) => (request.headers.has("payment-signature") ? undefined : challengeResponse(repriced)),
    });
    server.use(seller.handler);
    const { client, signs } = payingClient();

    const error = await rejection(wrapper.send(client, { url }));

    expect(error).toBeInstanceOf(PaymentRejectedError);
    expect(error.reason).toBe("No matching payment requirements");
    expect(seller.requests).toHaveLength(2);
    expect(signs).toHaveLength(1);
  });
});

describe.each(wrappers)("$name: other answers to the paid request", (wrapper) => {
  it("a 412 with a new challenge (permit2_allowance_required) is PERMIT2_ALLOWANCE_REQUIRED with that reason", async () => {
    const challenge = v2Challenge();
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? HttpResponse.json(
              {},
              {
                status: 412,
                headers: { "PAYMENT-REQUIRED": encodeHeader({ ...challenge, error: "permit2_allowance_required" }) },
              },
            )
          : undefined,
    });
    server.use(seller.handler);

    const error = await rejection(wrapper.send(payingClient().client, { url }));

    expect(error.code).toBe("PERMIT2_ALLOWANCE_REQUIRED");
    expect(error.details.reason).toBe("permit2_allowance_required");
    expect(error.details.status).toBe(412);
    expect(seller.requests).toHaveLength(2);
  });

  it("an unreadable PAYMENT-RESPONSE on success still returns the paid response, with no settlement in the receipt", async () => {
    const seller = createSeller({
      paid: () => HttpResponse.json({ data: "premium" }, { headers: { "PAYMENT-RESPONSE": "%%%garbage" } }),
    });
    server.use(seller.handler);

    const reply = await wrapper.send(payingClient().client, { url });

    expect(reply.status).toBe(200);
    const receipt = getPaymentReceipt(reply.raw);
    expect(receipt).toBeDefined();
    expect(receipt?.settlement).toBeUndefined();
    expect(receipt?.transaction).toBeUndefined();
    expect(receipt?.amount).toBe("10000");
  });
});

describe.each(wrappers)("$name: a request that already carries a payment", (wrapper) => {
  it.each(["PAYMENT-SIGNATURE", "X-PAYMENT"])(
    "with %s and a 402 answer: PaymentAlreadyAttemptedError, nothing signed",
    async (name) => {
      const seller = createSeller();
      server.use(seller.handler);
      const { client, signs } = payingClient();
      const stale = encodeHeader({ x402Version: 2, payload: {}, accepted: {} });

      const error = await rejection(wrapper.send(client, { url, headers: { [name]: stale } }));

      expect(error).toBeInstanceOf(PaymentAlreadyAttemptedError);
      expect(error.code).toBe("PAYMENT_ALREADY_ATTEMPTED");
      expect(signs).toHaveLength(0);
      expect(seller.requests).toHaveLength(1);
      expect(seller.requests[0]!.headers[name.toLowerCase()]).toBe(stale);
    },
  );
});

describe.each(wrappers)("$name: transport failure on the paid retry", (wrapper) => {
  it("gives PaymentOutcomeUnknownError with the exact payment header to reconcile", async () => {
    const seller = createSeller({
      intercept: (request) => (request.headers.has("payment-signature") ? HttpResponse.error() : undefined),
    });
    server.use(seller.handler);
    const { client, signs } = payingClient();

    const error = await rejection(wrapper.send(client, { url }));

    expect(error).toBeInstanceOf(PaymentOutcomeUnknownError);
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(signs).toHaveLength(1);
    expect(seller.requests).toHaveLength(2);
    const sent = seller.requests[1]!.headers["payment-signature"];
    expect(error.details.paymentHeader).toEqual({ name: "PAYMENT-SIGNATURE", value: sent });
    expect(decodeHeader(error.details.paymentHeader.value).accepted).toEqual((v2Challenge().accepts as object[])[0]);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it.each([
    { name: "v2 with a resource, no extensions", challenge: v2Challenge(), header: "PAYMENT-SIGNATURE" },
    { name: "v2 without a resource", challenge: v2Challenge({ resource: undefined }), header: "PAYMENT-SIGNATURE" },
    { name: "v1", challenge: v1Challenge(), header: "X-PAYMENT" },
  ])("$name: details.payload is exactly what the header carries, not a key more", async ({ challenge, header }) => {
    const seller = createSeller({
      challenge,
      intercept: (request) => (request.headers.has(header) ? HttpResponse.error() : undefined),
    });
    server.use(seller.handler);

    const error = await rejection(wrapper.send(payingClient().client, { url }));

    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.details.paymentHeader.name).toBe(header);
    expect(error.details.payload).toStrictEqual(decodeHeader(error.details.paymentHeader.value));
  });

  // README: before any payment was signed, the HTTP library's own error reaches the caller unchanged.
  it("a transport failure on the first request is not a payment problem: the library's own error", async () => {
    const seller = createSeller({ intercept: () => HttpResponse.error() });
    server.use(seller.handler);
    const { client, signs } = payingClient();

    const error = await rejection(wrapper.send(client, { url }));

    expect(isX402Error(error)).toBe(false);
    expect(error).toBeInstanceOf(wrapper.name === "fetch" ? TypeError : AxiosError);
    expect(signs).toHaveLength(0);
  });
});

describe("axios: status handling", () => {
  const paidAxios = (client = payingClient().client) => wrapAxiosWithPayment(axios.create(), client);

  it("works with a validateStatus that accepts 402", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const response = await paidAxios(client).get(url, { validateStatus: () => true });

    expect(response.status).toBe(200);
    expect(response.data).toEqual({ data: "premium" });
    expect(signs).toHaveLength(1);
    expect(seller.requests).toHaveLength(2);
    expect(getPaymentReceipt(response)?.settlement?.success).toBe(true);
  });

  it("with validateStatus accepting 402, a rejected payment still throws PaymentRejectedError after one retry", async () => {
    const challenge = v2Challenge();
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature") ? challengeResponse({ ...challenge, error: "nope" }) : undefined,
    });
    server.use(seller.handler);
    const error = await rejection(paidAxios().get(url, { validateStatus: () => true }));

    expect(error).toBeInstanceOf(PaymentRejectedError);
    expect(error.reason).toBe("nope");
    expect(seller.requests).toHaveLength(2);
  });

  it("a paid retry answered 500 rejects with an AxiosError, as axios would", async () => {
    const seller = createSeller({ paid: () => HttpResponse.json({ boom: true }, { status: 500 }) });
    server.use(seller.handler);
    const error = await rejection(paidAxios().get(url));

    expect(error).toBeInstanceOf(AxiosError);
    expect(error.code).toBe(AxiosError.ERR_BAD_RESPONSE);
    expect(error.response.status).toBe(500);
    expect(error.response.data).toEqual({ boom: true });
    expect(error.message).toBe("Request failed with status code 500");
    expect(seller.requests).toHaveLength(2);
  });

  it("a paid retry answered 404 rejects with ERR_BAD_REQUEST", async () => {
    const seller = createSeller({ paid: () => HttpResponse.json({}, { status: 404 }) });
    server.use(seller.handler);
    const error = await rejection(paidAxios().get(url));

    expect(error).toBeInstanceOf(AxiosError);
    expect(error.code).toBe(AxiosError.ERR_BAD_REQUEST);
    expect(error.response.status).toBe(404);
  });

  it("a paid retry answered 500 resolves when the caller's validateStatus accepts it", async () => {
    const seller = createSeller({ paid: () => HttpResponse.json({ boom: true }, { status: 500 }) });
    server.use(seller.handler);
    const response = await paidAxios().get(url, { validateStatus: (s) => s === 402 || s === 500 });
    expect(response.status).toBe(500);
  });

  it("a paid retry answered 500 under the default validateStatus still says what it paid", async () => {
    const seller = createSeller({
      paid: (verdict) =>
        HttpResponse.json(
          {},
          {
            status: 500,
            headers: settlementHeader(2, {
              success: true,
              transaction: "0x01",
              network: "eip155:84532",
              payer: verdict.payer,
            }),
          },
        ),
    });
    server.use(seller.handler);
    const error = await rejection(paidAxios().get(url));
    expect(error).toBeInstanceOf(AxiosError);
    expect(getPaymentReceipt(error.response)?.transaction).toBe("0x01");
  });
});

describe("axios: other response interceptors", () => {
  it("one added after the wrapper (r => r.data) reshapes the paid response once", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const instance = wrapAxiosWithPayment(axios.create(), payingClient().client);
    const seen: number[] = [];
    instance.interceptors.response.use((response) => {
      seen.push(response.status);
      return response.data;
    });

    const data = await instance.get(url);

    expect(data).toEqual({ data: "premium" });
    expect(seller.requests).toHaveLength(2);
    expect(seen).toContain(200);
  });

  it("one added after the wrapper still sees the AxiosError of a paid 500", async () => {
    const seller = createSeller({ paid: () => HttpResponse.json({}, { status: 500 }) });
    server.use(seller.handler);
    const instance = wrapAxiosWithPayment(axios.create(), payingClient().client);
    const failures: unknown[] = [];
    instance.interceptors.response.use(
      (response) => response.data,
      (error: unknown) => {
        failures.push(error);
        return Promise.reject(error);
      },
    );
    const error = await rejection(instance.get(url));
    expect(error).toBeInstanceOf(AxiosError);
    expect(failures).toContain(error);
  });
});

describe("fetch: responses the caller never sees are released", () => {
  it("the 402 body is cancelled; the paid response is left for the caller", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { responses, fetch: fetchFn } = recordingFetch();
    const response = await wrapFetchWithPayment(fetchFn, payingClient().client)(url);

    expect(responses.map((r) => [r.status, r.bodyUsed])).toEqual([
      [402, true],
      [200, false],
    ]);
    expect(response).toBe(responses[1]);
    expect(await response.json()).toEqual({ data: "premium" });
  });

  it("redirect hops and a refusal after them are released too", async () => {
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? new HttpResponse("moved", { status: 307, headers: { Location: `${PATH}/again` } })
          : undefined,
    });
    const again = createSeller({
      path: `${PATH}/again`,
      intercept: () => challengeResponse({ ...v2Challenge(), error: "nope" }),
    });
    server.use(seller.handler, again.handler);
    const { responses, fetch: fetchFn } = recordingFetch();

    const error = await rejection(wrapFetchWithPayment(fetchFn, payingClient().client)(url));

    // The 307 answered the payment; the 402 after it does not prove nothing was charged.
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(responses.map((r) => [r.status, r.bodyUsed])).toEqual([
      [402, true],
      [307, true],
      [402, true],
    ]);
  });
});

describe("fetch: the caller's redirect mode holds on the paid retry", () => {
  it('redirect: "manual" returns the redirect, and nothing goes to its target', async () => {
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? new HttpResponse(null, { status: 307, headers: { Location: "https://other.example/landing" } })
          : undefined,
    });
    server.use(seller.handler);
    const response = await wrapFetchWithPayment((input, init) => globalThis.fetch(input, init), payingClient().client)(
      url,
      { redirect: "manual" },
    );

    expect(response.status).toBe(307);
    expect(response.headers.get("location")).toBe("https://other.example/landing");
    expect(seller.requests).toHaveLength(2);
  });
});

describe("fetch: the paid response is returned whatever its status", () => {
  it("a paid retry answered 500 is returned as a 500 Response with its receipt", async () => {
    const seller = createSeller({ paid: () => HttpResponse.text("server error", { status: 500 }) });
    server.use(seller.handler);
    const reply = await fetchWrapper.send(payingClient().client, { url });
    expect(reply.status).toBe(500);
    expect(reply.text).toBe("server error");
    expect(getPaymentReceipt(reply.raw)?.settlement).toBeUndefined();
    expect(seller.requests).toHaveLength(2);
  });
});
