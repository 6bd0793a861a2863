/**
 * Redirects around a payment, through both wrappers: the retry is the request as it was when the
 * 402 came (a 303 made it a GET), credentials never cross origins on either request, and a paid
 * request redirected to something that is not HTTP fails as fetch would, without a receipt.
 */
import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { getPaymentReceipt } from "../../src";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  OTHER,
  PATH,
  SELLER,
  TX_HASH,
  challengeResponse,
  createSeller,
  payingClient,
  seeRequest,
  settlementHeader,
  v2Challenge,
  redirectingSeller,
  type Seen,
} from "../support/seller";
import { axiosWrapper, rejection, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** `${SELLER}/moved` answers `status` with a Location of `${origin}${PATH}`, where a seller waits. */
function movedTo(origin: string, status: number) {
  const seller = createSeller({ origin, challenge: v2Challenge({ resource: { url: `${origin}${PATH}` } }) });
  const moved: Seen[] = [];
  server.use(
    seller.handler,
    http.all(`${SELLER}/moved`, async ({ request }) => {
      moved.push(await seeRequest(request));
      return new HttpResponse(null, { status, headers: { Location: `${origin}${PATH}` } });
    }),
  );
  return { seller, moved };
}

describe.each(wrappers)("$name: a first request redirected to a 402", (wrapper) => {
  it("POST → 303 → 402: the retry is a GET to the new URL, with no body", async () => {
    const { seller, moved } = movedTo(SELLER, 303);
    const { client, signs } = payingClient();

    const reply = await wrapper.send(client, {
      url: `${SELLER}/moved`,
      method: "POST",
      body: "order",
      headers: { "content-type": "text/plain" },
    });

    expect(reply.status).toBe(200);
    expect(moved).toHaveLength(1);
    expect(seller.requests.map((r) => [r.method, r.url, text(r.body)])).toEqual([
      ["GET", `${SELLER}${PATH}`, ""],
      ["GET", `${SELLER}${PATH}`, ""],
    ]);
    expect(seller.requests[1]!.headers["content-type"]).toBeUndefined();
    expect(seller.requests[1]!.headers["payment-signature"]).toBeTruthy();
    expect(signs).toHaveLength(1);
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ url: `${SELLER}${PATH}`, method: "GET" });
  });

  it("POST → 307 → 402: the retry is the same POST with the same body, to the new URL", async () => {
    const { seller } = movedTo(SELLER, 307);
    const reply = await wrapper.send(payingClient().client, {
      url: `${SELLER}/moved`,
      method: "POST",
      body: "order",
      headers: { "content-type": "text/plain" },
    });

    expect(reply.status).toBe(200);
    expect(seller.requests.map((r) => [r.method, text(r.body)])).toEqual([
      ["POST", "order"],
      ["POST", "order"],
    ]);
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ url: `${SELLER}${PATH}`, method: "POST" });
  });

  it("a redirect to another origin: Authorization and Cookie reach neither request there", async () => {
    const { seller, moved } = movedTo(OTHER, 302);
    const headers = { authorization: "Bearer secret-token", cookie: "session=abc", "x-keep": "1" };

    const reply = await wrapper.send(payingClient().client, { url: `${SELLER}/moved`, headers });

    expect(reply.status).toBe(200);
    expect(moved[0]!.headers).toMatchObject(headers);
    expect(seller.requests).toHaveLength(2);
    for (const request of seller.requests) {
      expect(request.headers.authorization).toBeUndefined();
      expect(request.headers.cookie).toBeUndefined();
      expect(request.headers["x-keep"]).toBe("1");
    }
    expect(seller.requests[1]!.headers["payment-signature"]).toBeTruthy();
  });
});

describe("axios with its fetch adapter: a first request redirected to a 402", () => {
  // fetch follows the redirects and tells where they led, not with which method.
  it("a GET is paid where the 402 came from", async () => {
    const { seller, moved } = movedTo(OTHER, 302);
    const reply = await axiosWrapper.send(payingClient().client, { url: `${SELLER}/moved`, axiosAdapter: "fetch" });
    expect(reply.status).toBe(200);
    expect(moved).toHaveLength(1);
    expect(seller.requests.map((r) => [r.method, r.url])).toEqual([
      ["GET", `${OTHER}${PATH}`],
      ["GET", `${OTHER}${PATH}`],
    ]);
    expect(seller.requests[1]!.headers["payment-signature"]).toBeTruthy();
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ url: `${OTHER}${PATH}` });
  });

  it("a POST cannot be resent exactly: BODY_NOT_REPLAYABLE before anything is signed", async () => {
    const { seller } = movedTo(SELLER, 303);
    const { client, signs } = payingClient();
    const error = await rejection(
      axiosWrapper.send(client, {
        url: `${SELLER}/moved`,
        method: "POST",
        body: "order",
        headers: { "content-type": "text/plain" },
        axiosAdapter: "fetch",
      }),
    );
    expect(error.code).toBe("BODY_NOT_REPLAYABLE");
    expect(error.message).toBe(
      "The request was redirected before the 402 and axios does not say how (a 303 makes it a GET): it cannot be " +
        "resent exactly.",
    );
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });
});

describe.each(wrappers)("$name: the paid request redirected", (wrapper) => {
  /** A seller that answers the paid request with a redirect to `location`; landings record what they got. */
  function redirectingPaid(location: string, status = 302, headers: Record<string, string> = {}) {
    const { seller, landed, handlers } = redirectingSeller(location, status, headers);
    server.use(...handlers);
    return { seller, landed };
  }

  it("to another origin: neither the payment, nor Authorization, nor Cookie goes there", async () => {
    const { landed } = redirectingPaid(`${OTHER}/landing`, 307);
    const headers = { authorization: "Bearer secret-token", cookie: "session=abc", "x-keep": "1" };
    const reply = await wrapper.send(payingClient().client, { url: `${SELLER}${PATH}`, headers });

    expect(reply.status).toBe(200);
    expect(landed).toHaveLength(1);
    expect(landed[0]!.headers["payment-signature"]).toBeUndefined();
    expect(landed[0]!.headers.authorization).toBeUndefined();
    expect(landed[0]!.headers.cookie).toBeUndefined();
    expect(landed[0]!.headers["x-keep"]).toBe("1");
  });

  it("to the same origin: Authorization and Cookie stay", async () => {
    const { landed } = redirectingPaid(`${SELLER}/landing`, 307);
    const headers = { authorization: "Bearer secret-token", cookie: "session=abc" };
    await wrapper.send(payingClient().client, { url: `${SELLER}${PATH}`, headers });
    expect(landed[0]!.headers).toMatchObject(headers);
  });

  // The fetch standard's method rules, applied to the paid request's hops (same origin, so the payment follows).
  it.each([
    { method: "POST", status: 301, then: "GET" },
    { method: "POST", status: 302, then: "GET" },
    { method: "POST", status: 303, then: "GET" },
    { method: "PUT", status: 301, then: "PUT" },
    { method: "PUT", status: 302, then: "PUT" },
    { method: "PUT", status: 303, then: "GET" },
    { method: "POST", status: 307, then: "POST" },
    { method: "PUT", status: 308, then: "PUT" },
  ])("a $method answered $status goes on as a $then, with the payment", async ({ method, status, then }) => {
    const { seller, landed } = redirectingPaid(`${SELLER}/landing`, status);
    const reply = await wrapper.send(payingClient().client, {
      url: `${SELLER}${PATH}`,
      method,
      body: "order",
      headers: { "content-type": "text/plain" },
    });

    expect(reply.status).toBe(200);
    expect(landed).toHaveLength(1);
    expect(landed[0]!.method).toBe(then);
    expect(text(landed[0]!.body)).toBe(then === method ? "order" : "");
    expect(landed[0]!.headers["content-type"]).toBe(then === method ? "text/plain" : undefined);
    expect(landed[0]!.headers["payment-signature"]).toBe(seller.requests[1]!.headers["payment-signature"]);
  });

  it("a HEAD answered 303 stays a HEAD", async () => {
    const { landed } = redirectingPaid(`${SELLER}/landing`, 303);
    const reply = await wrapper.send(payingClient().client, { url: `${SELLER}${PATH}`, method: "HEAD" });
    expect(reply.status).toBe(200);
    expect(landed.map((r) => r.method)).toEqual(["HEAD"]);
  });

  it("then refused at the target, without a settlement report: PAYMENT_OUTCOME_UNKNOWN, never a rejection", async () => {
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? new HttpResponse(null, { status: 302, headers: { Location: `${SELLER}/paywall` } })
          : undefined,
    });
    server.use(
      seller.handler,
      http.all(`${SELLER}/paywall`, () => challengeResponse(v2Challenge({ error: "invalid_payment" }))),
    );
    const error = await rejection(wrapper.send(payingClient().client, { url: `${SELLER}${PATH}` }));
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.details.status).toBe(402);
  });

  it("then refused at the target, after a hop that reported the settlement: PAYMENT_OUTCOME_UNKNOWN with that settlement", async () => {
    const settledHop = settlementHeader(2, { success: true, transaction: TX_HASH, network: "eip155:84532" });
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? new HttpResponse(null, { status: 302, headers: { Location: `${SELLER}/paywall`, ...settledHop } })
          : undefined,
    });
    server.use(
      seller.handler,
      http.all(`${SELLER}/paywall`, () => challengeResponse(v2Challenge())),
    );
    const error = await rejection(wrapper.send(payingClient().client, { url: `${SELLER}${PATH}` }));
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.details).toMatchObject({ status: 402, settlement: { success: true, transaction: TX_HASH } });
  });

  it.each(["data:application/json,%7B%22free%22%3Atrue%7D", "file:///etc/hostname", "ftp://seller.example/x"])(
    "to %s: fails as fetch would (the payment may have settled: PAYMENT_OUTCOME_UNKNOWN), with no receipt",
    async (location) => {
      const { seller } = redirectingPaid(location);
      const error = await rejection(wrapper.send(payingClient().client, { url: `${SELLER}${PATH}` }));

      expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
      expect(error.walk()).toBeInstanceOf(TypeError);
      expect((error.walk() as Error).message).toContain(`a ${new URL(location).protocol} URL`);
      expect(error.details.paymentHeader.value).toBe(seller.requests[1]!.headers["payment-signature"]);
      expect(seller.requests).toHaveLength(2);
    },
  );
});

describe("fetch: a redirected free request looks as fetch makes it", () => {
  it("the final response says it was redirected, and its URL is the last one", async () => {
    server.use(
      http.get(`${SELLER}/old`, () => new HttpResponse(null, { status: 301, headers: { Location: "/new" } })),
      http.get(`${SELLER}/new`, () => HttpResponse.json({ free: true })),
    );
    const response = await wrapFetchWithPayment(
      (i, init) => globalThis.fetch(i, init),
      payingClient().client,
    )(`${SELLER}/old`);
    expect(response.status).toBe(200);
    expect(response.redirected).toBe(true);
    expect(response.url).toBe(`${SELLER}/new`);
    expect(await response.json()).toEqual({ free: true });
  });

  it('redirect: "error" fails on a redirect, as fetch does', async () => {
    server.use(http.get(`${SELLER}/old`, () => new HttpResponse(null, { status: 301, headers: { Location: "/new" } })));
    const error = await rejection(
      wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), payingClient().client)(`${SELLER}/old`, {
        redirect: "error",
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe("fetch failed: redirect not allowed");
  });

  it("a paid retry that lands on a settlement after a same-origin redirect still gets its receipt", async () => {
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature") && !request.url.endsWith("/final")
          ? new HttpResponse(null, { status: 307, headers: { Location: `${SELLER}${PATH}/final` } })
          : undefined,
    });
    const final = createSeller({ path: `${PATH}/final` });
    server.use(seller.handler, final.handler);
    const response = await wrapFetchWithPayment(
      (i, init) => globalThis.fetch(i, init),
      payingClient().client,
    )(`${SELLER}${PATH}`);
    expect(response.status).toBe(200);
    expect(getPaymentReceipt(response)?.transaction).toBe(TX_HASH);
  });
});

describe("fetch: redirect limits, as fetch's", () => {
  /** `${SELLER}/hop/N` redirects to N-1 ... `/hop/0` answers 200. */
  function chain() {
    server.use(
      http.get(`${SELLER}/hop/:n`, ({ params }) => {
        const n = Number(params.n);
        return n === 0
          ? HttpResponse.json({ arrived: true })
          : new HttpResponse(null, { status: 302, headers: { Location: `/hop/${n - 1}` } });
      }),
    );
    return wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), payingClient().client);
  }

  it("20 redirects are followed", async () => {
    const response = await chain()(`${SELLER}/hop/20`);
    expect(response.status).toBe(200);
    expect(response.url).toBe(`${SELLER}/hop/0`);
  });

  it('a 21st fails with a TypeError "redirect limit reached"', async () => {
    const error = await rejection(chain()(`${SELLER}/hop/21`));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe("fetch failed: redirect limit reached");
  });
});

describe("fetch on a page (a browser's fetch and CORS, played in Node; test/browser runs the real thing)", () => {
  const scope = globalThis as { document?: unknown; location?: unknown };
  async function onPage<T>(origin: string, work: () => Promise<T>): Promise<T> {
    try {
      scope.document = { cookie: "" };
      scope.location = { origin };
      return await work();
    } finally {
      delete scope.document;
      delete scope.location;
    }
  }

  /**
   * A browser's fetch: it follows redirects itself (the answer says `redirected`) and hides a
   * redirect from scripts that ask for `redirect: "manual"` (an opaque answer, status 0). A request
   * carrying a header the seller's CORS preflight does not allow never leaves: "Failed to fetch".
   */
  function browserFetch(refusedHeaders: string[] = []) {
    const sent: { url: string; method: string; headers: Headers }[] = [];
    const fetchFn: typeof fetch = async (input, init = {}) => {
      const headers = new Headers(init.headers);
      if (refusedHeaders.some((name) => headers.has(name))) throw new TypeError("Failed to fetch");
      let url = String(input);
      for (let hops = 0; ; hops++) {
        sent.push({ url, method: init.method ?? "GET", headers });
        const response = await globalThis.fetch(url, { ...init, redirect: "manual" });
        const location = response.headers.get("location");
        if (!location || !REDIRECTS.includes(response.status)) {
          if (hops > 0) Object.defineProperties(response, { redirected: { value: true }, url: { value: url } });
          return response;
        }
        if (init.redirect === "manual") return Response.error();
        url = new URL(location, url).href;
      }
    };
    return { fetchFn, sent };
  }
  const REDIRECTS = [301, 302, 303, 307, 308];

  it("a GET redirected to a 402 is left to the browser to follow, then paid where the 402 came from", async () => {
    const { seller } = movedTo(SELLER, 302);
    const { fetchFn } = browserFetch();
    const response = await onPage(SELLER, () =>
      wrapFetchWithPayment(fetchFn, payingClient().client)(`${SELLER}/moved`),
    );

    expect(response.status).toBe(200);
    expect(getPaymentReceipt(response)).toMatchObject({ url: `${SELLER}${PATH}`, settled: true });
    expect(seller.requests.map((r) => [r.url, r.headers["payment-signature"] !== undefined])).toEqual([
      [`${SELLER}${PATH}`, false],
      [`${SELLER}${PATH}`, true],
    ]);
  });

  it("a seller on another origin whose preflight refuses the payment header: PAYMENT_NOT_SENT, nothing reached it", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { fetchFn } = browserFetch(["payment-signature"]);
    const failed: unknown[] = [];
    const client = payingClient({ onPaymentFailed: (e) => void failed.push(e) }).client;
    const error = await onPage(OTHER, () => rejection(wrapFetchWithPayment(fetchFn, client)(`${SELLER}${PATH}`)));

    expect(error).toMatchObject({ code: "PAYMENT_NOT_SENT", details: { url: `${SELLER}${PATH}`, method: "GET" } });
    expect(error.message).toMatch(/PAYMENT-SIGNATURE in Access-Control-Allow-Headers/);
    expect(error.details.paymentHeader.name).toBe("PAYMENT-SIGNATURE");
    expect(failed).toEqual([error]);
    expect(seller.requests.filter((r) => r.headers["payment-signature"] !== undefined)).toEqual([]);
  });
});
