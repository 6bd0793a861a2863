/**
 * axios pays beneath the instance's interceptor chain: whatever the order and kind of interceptors
 * and transforms, request interceptors and transformRequest run once, the paid retry carries exactly
 * the bytes of the first request, and every response interceptor sees the final response once.
 */
import axios, { type AxiosHeaders, type AxiosInstance, type AxiosResponse } from "axios";
import { describe, expect, it } from "vitest";
import { PaymentRejectedError } from "../../src/entries/errors";
import { createX402Client, getPaymentReceipt, quoteCache, type PaymentReceipt } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import { exactEvm } from "../../src/evm";
import { HttpResponse } from "msw";
import { PATH, SELLER, TX_HASH, account, challengeResponse, createSeller, v2Challenge } from "../support/seller";
import { rejection } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

function client(settled: PaymentReceipt[] = []) {
  return createX402Client({ schemes: [exactEvm({ signer: account })], onPaymentSettled: (r) => void settled.push(r) });
}

/** Interceptors that record what they saw, installed `before` or after wrapping. */
function recordingInterceptors(instance: AxiosInstance, log: string[], tag: string) {
  instance.interceptors.request.use((config) => (log.push(`${tag} request`), config));
  instance.interceptors.response.use(
    (response) => (log.push(`${tag} response ${response.status}`), response),
    (error) => (log.push(`${tag} error ${error?.code}`), Promise.reject(error)),
  );
}

describe("axios: interceptors installed before wrapping", () => {
  it("`r => r.data` turns the paid response into its data: no error, paid once, settled once", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const instance = axios.create();
    instance.interceptors.response.use((r) => r.data);
    const settled: PaymentReceipt[] = [];
    wrapAxiosWithPayment(instance, client(settled));

    const data = await instance.get(url);

    expect(data).toEqual({ data: "premium" });
    expect(seller.requests).toHaveLength(2);
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({ settled: true, transaction: TX_HASH });
  });

  it.each(["before", "after"])(
    "every interceptor installed %s wrapping runs once and sees the final response",
    async (when) => {
      server.use(createSeller().handler);
      const log: string[] = [];
      const instance = axios.create();
      if (when === "before") recordingInterceptors(instance, log, "user");
      wrapAxiosWithPayment(instance, client());
      if (when === "after") recordingInterceptors(instance, log, "user");

      const response = await instance.get(url);

      expect(response.status).toBe(200);
      expect(log).toEqual(["user request", "user response 200"]);
      expect(getPaymentReceipt(response)?.transaction).toBe(TX_HASH);
    },
  );

  it("an error interceptor sees a rejected payment once, as PaymentRejectedError", async () => {
    const challenge = v2Challenge();
    server.use(
      createSeller({
        challenge,
        intercept: (request) =>
          request.headers.has("payment-signature")
            ? challengeResponse({ ...challenge, error: "insufficient_funds" })
            : undefined,
      }).handler,
    );
    const log: string[] = [];
    const instance = axios.create();
    recordingInterceptors(instance, log, "user");
    wrapAxiosWithPayment(instance, client());

    const error = await rejection(instance.get(url));

    expect(error).toBeInstanceOf(PaymentRejectedError);
    expect(log).toEqual(["user request", "user error PAYMENT_REJECTED"]);
  });
});

describe("axios: transforms run once, and the paid retry carries the first request's bytes", () => {
  it("a custom transformRequest (not idempotent) is applied once; the paid body and its Content-Length match the first", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    let transforms = 0;
    const instance = axios.create({
      transformRequest: [
        (data: { n: number }, headers: AxiosHeaders) => {
          transforms++;
          headers.set("Content-Type", "application/json");
          // Appends on every call: applied twice, the body would change.
          return JSON.stringify({
            ...data,
            stamped: [...((data as { stamped?: number[] }).stamped ?? []), transforms],
          });
        },
      ],
    });
    wrapAxiosWithPayment(instance, client());

    const response = await instance.post(url, { n: 1 });

    expect(response.status).toBe(200);
    expect(transforms).toBe(1);
    const [first, paid] = seller.requests;
    const body = new TextDecoder().decode(paid!.body);
    expect(body).toBe('{"n":1,"stamped":[1]}');
    expect(paid!.body).toEqual(first!.body);
    expect(paid!.headers["content-length"]).toBe(String(paid!.body.length));
  });

  it("a request interceptor that rewrites the body runs once", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const instance = axios.create();
    instance.interceptors.request.use((config) => ({ ...config, data: `${config.data}+signed` }));
    wrapAxiosWithPayment(instance, client());

    await instance.post(url, "payload", { headers: { "Content-Type": "text/plain" } });

    expect(seller.requests.map((r) => new TextDecoder().decode(r.body))).toEqual(["payload+signed", "payload+signed"]);
  });

  it("transformResponse runs once, on the final response", async () => {
    server.use(createSeller().handler);
    const seen: number[] = [];
    const instance = axios.create({
      transformResponse: [(data: string, _headers, status) => (seen.push(status!), JSON.parse(data))],
    });
    wrapAxiosWithPayment(instance, client());
    const response = await instance.get(url);
    expect(response.data).toEqual({ data: "premium" });
    expect(seen).toEqual([200]);
  });
});

describe("axios: wrapping", () => {
  it("the same instance wrapped twice pays once", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const instance = axios.create();
    wrapAxiosWithPayment(wrapAxiosWithPayment(instance, client()), client());
    const response: AxiosResponse = await instance.get(url);
    expect(response.status).toBe(200);
    expect(seller.requests).toHaveLength(2);
  });

  it("a config sent again as it was (axios-retry's way) is not wrapped again: with a quote cache it does not wait on itself, and pays once", async () => {
    // The first answer is a 503; an error interceptor sends the failed request's config again, whose adapter is
    // already the paying one. Wrapped again, its outer layer would probe the route and its inner one wait for that
    // probe to end: for ever.
    const seller = createSeller({
      intercept: (_request, index) => (index === 0 ? new HttpResponse(null, { status: 503 }) : undefined),
    });
    server.use(seller.handler);
    const settled: PaymentReceipt[] = [];
    const payer = createX402Client({
      schemes: [exactEvm({ signer: account })],
      plugins: [quoteCache()],
      onPaymentSettled: (r) => void settled.push(r),
    });
    const instance = wrapAxiosWithPayment(axios.create(), payer);
    let retried = 0;
    instance.interceptors.response.use(undefined, (error) =>
      error.response?.status === 503 && retried++ === 0 ? instance.request(error.config) : Promise.reject(error),
    );
    const response = await instance.get(url, { signal: AbortSignal.timeout(5_000) });
    expect(response.status).toBe(200);
    expect(retried).toBe(1);
    // The 503, the 402, the paid request: one payment.
    expect(seller.requests.map((r) => Boolean(r.headers["payment-signature"]))).toEqual([false, false, true]);
    expect(settled).toHaveLength(1);
  });

  it("a per-request adapter is paid through as well", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const instance = wrapAxiosWithPayment(axios.create(), client());
    const response = await instance.get(url, { adapter: "fetch" });
    expect(response.status).toBe(200);
    expect(getPaymentReceipt(response)?.transaction).toBe(TX_HASH);
    expect(seller.requests).toHaveLength(2);
  });
});
