/**
 * The paid retry is the same request: method, URL with query, every header, the same body bytes;
 * nothing is added but the payment header. And a redirect never carries the payment to another origin.
 */
import { Readable } from "node:stream";
import axios, { AxiosHeaders } from "axios";
import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { getPaymentReceipt } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  OTHER,
  PATH,
  SELLER,
  TX_HASH,
  createSeller,
  encodeHeader,
  payingClient,
  v2Challenge,
  redirectingSeller,
  type Seen,
} from "../support/seller";
import { useMswServer } from "../support/msw";

const server = useMswServer();

const url = `${SELLER}${PATH}?item=42&sort=desc`;
const PAYMENT_HEADERS = ["payment-signature", "x-payment"];

const paidFetch = (client = payingClient().client) =>
  wrapFetchWithPayment((input, init) => globalThis.fetch(input, init), client);
const paidAxios = (client = payingClient().client) => wrapAxiosWithPayment(axios.create(), client);

const withoutPayment = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !PAYMENT_HEADERS.includes(name)));

/** The paid request is the first one plus exactly one payment header. */
function expectSameRequest(first: Seen | undefined, paid: Seen | undefined, paymentHeader = "payment-signature") {
  expect(first).toBeDefined();
  expect(paid).toBeDefined();
  expect(paid!.method).toBe(first!.method);
  expect(paid!.url).toBe(first!.url);
  expect(Object.keys(first!.headers)).not.toContain(paymentHeader);
  expect(paid!.headers[paymentHeader]).toBeTruthy();
  expect(Object.keys(paid!.headers).sort()).toEqual([...Object.keys(first!.headers), paymentHeader].sort());
  expect(withoutPayment(paid!.headers)).toEqual(first!.headers);
  expect(Buffer.from(paid!.body).equals(Buffer.from(first!.body))).toBe(true);
}

const text = (body: Uint8Array) => Buffer.from(body).toString("utf8");

/** Parses a multipart body with the boundary its own content-type names (fails if they disagree). */
async function parseForm(seen: Seen): Promise<Record<string, string>> {
  const contentType = seen.headers["content-type"] ?? "";
  const boundary = /boundary=([^;]+)/.exec(contentType)?.[1];
  expect(boundary, "multipart content-type names a boundary").toBeTruthy();
  expect(text(seen.body)).toContain(`--${boundary}`);
  const form = await new Response(Buffer.from(seen.body), { headers: { "content-type": contentType } }).formData();
  return Object.fromEntries([...form].map(([k, v]) => [k, typeof v === "string" ? v : `file:${v.name}`]));
}

describe("fetch: the paid retry is the same request", () => {
  const bytes = Uint8Array.from([0, 1, 2, 250, 255, 10, 13]);

  it.each([
    {
      kind: "JSON string",
      body: () => JSON.stringify({ a: 1, b: "x" }),
      expected: '{"a":1,"b":"x"}',
      type: "application/json",
    },
    { kind: "text", body: () => "plain text ✓", expected: "plain text ✓", type: "text/plain;charset=UTF-8" },
    {
      kind: "URLSearchParams",
      body: () => new URLSearchParams({ a: "1", b: "two words" }),
      expected: "a=1&b=two+words",
      type: "application/x-www-form-urlencoded;charset=UTF-8",
    },
  ])("$kind body", async ({ body, expected, type }) => {
    const seller = createSeller();
    server.use(seller.handler);
    const headers: Record<string, string> = { "X-Api-Key": "k" };
    if (type === "application/json") headers["Content-Type"] = type;
    const response = await paidFetch()(url, { method: "POST", headers, body: body() });

    expect(response.status).toBe(200);
    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect(text(paid!.body)).toBe(expected);
    expect(paid!.headers["content-type"]).toBe(type);
    expect(paid!.headers["x-api-key"]).toBe("k");
  });

  it.each([
    { kind: "ArrayBuffer", body: () => bytes.slice().buffer },
    { kind: "Uint8Array", body: () => bytes.slice() },
    {
      kind: "Uint8Array view into a larger buffer",
      body: () => new Uint8Array(Uint8Array.from([9, 9, ...bytes, 9]).buffer, 2, bytes.length),
    },
    {
      kind: "ReadableStream without duplex",
      body: () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes.slice(0, 3));
            controller.enqueue(bytes.slice(3));
            controller.close();
          },
        }),
    },
  ])("$kind body: same bytes", async ({ body }) => {
    const seller = createSeller();
    server.use(seller.handler);
    const response = await paidFetch()(url, { method: "PUT", headers: { "X-Api-Key": "k" }, body: body() as BodyInit });

    expect(response.status).toBe(200);
    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect([...paid!.body]).toEqual([...bytes]);
    expect(paid!.headers["x-api-key"]).toBe("k");
  });

  it("a Request without a body stream (Firefox has no Request.body): the body still goes, on both sends", async () => {
    // Firefox's Request has no `body` getter; this hides Node's for the test (the browser tests run Firefox).
    const seller = createSeller();
    server.use(seller.handler);
    const own = Object.getOwnPropertyDescriptor(Request.prototype, "body")!;
    Object.defineProperty(Request.prototype, "body", { configurable: true, get: () => undefined });
    try {
      const response = await paidFetch()(url, { method: "POST", body: '{"q":1}' });
      expect(response.status).toBe(200);
    } finally {
      Object.defineProperty(Request.prototype, "body", own);
    }
    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect(text(first!.body)).toBe('{"q":1}');
  });

  it("FormData body: same bytes, and the boundary in Content-Type still matches them", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const form = new FormData();
    form.append("field", "value ✓");
    form.append("file", new Blob(["file contents"], { type: "text/plain" }), "notes.txt");
    const response = await paidFetch()(url, { method: "POST", headers: { "X-Api-Key": "k" }, body: form });

    expect(response.status).toBe(200);
    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect(paid!.headers["x-api-key"]).toBe("k");
    expect(await parseForm(paid!)).toEqual({ field: "value ✓", file: "file:notes.txt" });
    expect(await parseForm(first!)).toEqual(await parseForm(paid!));
  });

  it("plain-object headers: every one is resent, and nothing else is added to either request", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const headers = { "X-Api-Key": "k-123", Accept: "application/json", "X-Trace": "a, b", Authorization: "Bearer t" };
    await paidFetch()(url, { headers });

    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect(first!.headers).toEqual({
      "x-api-key": "k-123",
      accept: "application/json",
      "x-trace": "a, b",
      authorization: "Bearer t",
    });
    expect(Object.keys(paid!.headers)).not.toContain("access-control-expose-headers");
  });

  it("a Headers instance, including a repeated header", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const headers = new Headers({ "X-One": "1" });
    headers.append("X-Many", "a");
    headers.append("X-Many", "b");
    await paidFetch()(url, { method: "DELETE", headers, body: "with a body" });

    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect(paid!.method).toBe("DELETE");
    expect(paid!.headers["x-many"]).toBe("a, b");
    expect(paid!.headers["x-one"]).toBe("1");
  });

  it("a Request input with headers and a body", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const request = new Request(url, {
      method: "PATCH",
      headers: { "X-From-Request": "yes", "Content-Type": "application/json" },
      body: '{"patch":true}',
    });
    const response = await paidFetch()(request);

    expect(response.status).toBe(200);
    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect(paid!.method).toBe("PATCH");
    expect(paid!.headers["x-from-request"]).toBe("yes");
    expect(text(paid!.body)).toBe('{"patch":true}');
  });

  it("a URL object input keeps the query", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    await paidFetch()(new URL(url));
    expect(seller.requests.map((r) => r.url)).toEqual([url, url]);
  });
});

interface AxiosBody {
  kind: string;
  data: () => unknown;
  expected: string;
  type: RegExp;
  headers?: Record<string, string>;
}

describe("axios: the paid retry is the same request", () => {
  it.each<AxiosBody>([
    {
      kind: "JSON object",
      data: () => ({ a: 1, nested: { b: [true] } }),
      expected: '{"a":1,"nested":{"b":[true]}}',
      type: /^application\/json/,
    },
    {
      kind: "string",
      data: () => "raw string body",
      expected: "raw string body",
      type: /^application\/x-www-form-urlencoded/,
    },
    {
      kind: "JSON string with a JSON content type",
      data: () => '{"x":1}',
      expected: '{"x":1}',
      type: /^application\/json/,
      headers: { "Content-Type": "application/json" },
    },
    {
      kind: "URLSearchParams",
      data: () => new URLSearchParams({ a: "1", b: "two words" }),
      expected: "a=1&b=two+words",
      type: /^application\/x-www-form-urlencoded/,
    },
  ])("$kind data", async ({ data, expected, type, headers }) => {
    const seller = createSeller();
    server.use(seller.handler);
    const response = await paidAxios().post(url, data(), { headers: { "X-Api-Key": "k", ...headers } });

    expect(response.status).toBe(200);
    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect(text(paid!.body)).toBe(expected);
    expect(paid!.headers["content-type"]).toMatch(type);
    expect(paid!.headers["x-api-key"]).toBe("k");
  });

  it("FormData data: each request's boundary matches its bytes, and the fields are the same", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const form = new FormData();
    form.append("field", "value ✓");
    form.append("file", new Blob(["file contents"], { type: "text/plain" }), "notes.txt");
    const response = await paidAxios().post(url, form);

    expect(response.status).toBe(200);
    const [first, paid] = seller.requests;
    expect(paid!.method).toBe("POST");
    expect(paid!.url).toBe(url);
    expect(Object.keys(withoutPayment(paid!.headers)).sort()).toEqual(Object.keys(first!.headers).sort());
    expect(await parseForm(paid!)).toEqual({ field: "value ✓", file: "file:notes.txt" });
    expect(await parseForm(first!)).toEqual(await parseForm(paid!));
  });

  it("no header beyond the payment header is added, for a GET with custom headers", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    await paidAxios().get(url, { headers: { "X-Api-Key": "k", Authorization: "Bearer t" } });

    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect(Object.keys(paid!.headers)).not.toContain("access-control-expose-headers");
  });

  it("request interceptors run once; what they set is on the paid retry too", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const instance = paidAxios();
    const seen: boolean[] = [];
    instance.interceptors.request.use((config) => {
      seen.push(config.headers instanceof AxiosHeaders);
      config.headers.set("X-Interceptor", "on");
      return config;
    });
    const response = await instance.get(url, { headers: { "X-Api-Key": "k" } });

    expect(response.status).toBe(200);
    expect(seen).toEqual([true]);
    const [first, paid] = seller.requests;
    expectSameRequest(first, paid);
    expect(paid!.headers["x-interceptor"]).toBe("on");
  });

  it("a Node stream body cannot be replayed: BodyNotReplayableError before any signing", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const error = await paidAxios(client)
      .post(url, Readable.from([Buffer.from("streamed")]), { headers: { "Content-Type": "application/octet-stream" } })
      .catch((e: unknown) => e);

    expect(error).toMatchObject({
      name: "BodyNotReplayableError",
      code: "BODY_NOT_REPLAYABLE",
      details: { url, method: "POST" },
    });
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });
});

// ---------------------------------------------------------------- redirects

type Send = (
  client: ReturnType<typeof payingClient>["client"],
  target: string,
) => Promise<{ status: number; raw: object }>;
const senders: { name: string; send: Send }[] = [
  {
    name: "fetch",
    send: async (client, target) => {
      const r = await paidFetch(client)(target, { method: "POST", body: "payload", headers: { "X-Keep": "1" } });
      return { status: r.status, raw: r };
    },
  },
  {
    name: "axios",
    send: async (client, target) => {
      const r = await paidAxios(client).post(target, "payload", {
        headers: { "X-Keep": "1", "Content-Type": "text/plain" },
      });
      return { status: r.status, raw: r };
    },
  },
];

describe.each(senders)("$name: redirects on the paid retry", ({ send }) => {
  /** A seller that answers the paid request with a redirect, and a landing page that records what it got. */
  function redirecting(location: string, status = 307, headers: Record<string, string> = {}) {
    const { seller, landed, handlers } = redirectingSeller(location, status, headers);
    server.use(...handlers);
    return { seller, landed };
  }

  it("a 307 to another origin does not carry PAYMENT-SIGNATURE there", async () => {
    const { seller, landed } = redirecting(`${OTHER}/landing`);
    const { client, signs } = payingClient();
    const reply = await send(client, url);

    expect(reply.status).toBe(200);
    expect(signs).toHaveLength(1);
    expect(seller.requests).toHaveLength(2);
    expect(seller.requests[1]!.headers["payment-signature"]).toBeTruthy();
    expect(landed).toHaveLength(1);
    expect(landed[0]!.url).toBe(`${OTHER}/landing`);
    expect(landed[0]!.headers["payment-signature"]).toBeUndefined();
    expect(landed[0]!.headers["x-payment"]).toBeUndefined();
    expect(landed[0]!.headers, JSON.stringify(landed[0]!.headers)).toHaveProperty("x-keep", "1");
  });

  it.each([301, 302, 303, 308])("a %i to another origin does not carry it either", async (status) => {
    const { landed } = redirecting(`${OTHER}/landing`, status);
    await send(payingClient().client, url);
    expect(landed).toHaveLength(1);
    expect(landed[0]!.headers["payment-signature"]).toBeUndefined();
  });

  it("a 307 to the same origin keeps the payment header and the body", async () => {
    const { seller, landed } = redirecting(`${SELLER}/landing`);
    const reply = await send(payingClient().client, url);

    expect(reply.status).toBe(200);
    expect(landed).toHaveLength(1);
    expect(landed[0]!.method).toBe("POST");
    expect(text(landed[0]!.body)).toBe("payload");
    expect(landed[0]!.headers["payment-signature"]).toBe(seller.requests[1]!.headers["payment-signature"]);
  });

  it("a same-origin redirect that already reported a settlement does not send the payment again", async () => {
    const settled = {
      "PAYMENT-RESPONSE": encodeHeader({ success: true, transaction: TX_HASH, network: "eip155:84532" }),
    };
    const { landed } = redirecting(`${SELLER}/landing`, 307, settled);
    const reply = await send(payingClient().client, url);

    expect(landed).toHaveLength(1);
    expect(landed[0]!.headers["payment-signature"]).toBeUndefined();
    // The settlement came on the redirect, which the caller never sees: the receipt keeps it.
    expect(getPaymentReceipt(reply.raw)?.transaction).toBe(TX_HASH);
    expect(getPaymentReceipt(reply.raw)?.settlement).toMatchObject({ success: true, transaction: TX_HASH });
  });

  it("a settlement reported on a redirect to another origin reaches the receipt too", async () => {
    const settled = {
      "PAYMENT-RESPONSE": encodeHeader({ success: true, transaction: TX_HASH, network: "eip155:84532" }),
    };
    redirecting(`${OTHER}/landing`, 303, settled);
    const reply = await send(payingClient().client, url);
    expect(reply.status).toBe(200);
    expect(getPaymentReceipt(reply.raw)?.transaction).toBe(TX_HASH);
  });

  it("without a settlement anywhere, the receipt has none", async () => {
    redirecting(`${OTHER}/landing`);
    const reply = await send(payingClient().client, url);
    expect(getPaymentReceipt(reply.raw)?.settlement).toBeUndefined();
  });

  it("a same-origin redirect with a relative Location keeps the payment", async () => {
    const { landed } = redirecting("/landing");
    const reply = await send(payingClient().client, url);
    expect(reply.status).toBe(200);
    expect(landed[0]?.headers["payment-signature"]).toBeTruthy();
    expect(getPaymentReceipt(reply.raw)).toBeDefined();
  });
});

describe("fetch: a first request that was redirected", () => {
  it("pays where the 402 came from, with the challenge bound to that host", async () => {
    const seller = createSeller({ origin: OTHER, challenge: v2Challenge({ resource: { url: `${OTHER}${PATH}` } }) });
    server.use(
      seller.handler,
      http.get(
        `${SELLER}/moved`,
        () => new HttpResponse(null, { status: 302, headers: { Location: `${OTHER}${PATH}` } }),
      ),
    );
    const response = await paidFetch()(`${SELLER}/moved`);
    expect(response.status).toBe(200);
    expect(seller.requests).toHaveLength(2);
    expect(seller.requests[1]!.url).toBe(`${OTHER}${PATH}`);
    expect(seller.requests[1]!.headers["payment-signature"]).toBeTruthy();
    expect(getPaymentReceipt(response)?.transaction).toBe(TX_HASH);
  });
});

// ---------------------------------------------------------------- fetch: a Request's options

describe("fetch: the options of the request go with both sends", () => {
  /** A fetch that records the init of every call, then lets msw answer. */
  function spyingFetch() {
    const inits: RequestInit[] = [];
    const fetchFn: typeof fetch = (input, init) => (inits.push(init ?? {}), globalThis.fetch(input, init));
    return { fetchFn, inits };
  }

  it("a Request given as input: credentials, cache, mode, referrer and its policy, integrity, keepalive reach both calls", async () => {
    server.use(createSeller().handler);
    const { fetchFn, inits } = spyingFetch();
    const options = {
      credentials: "include",
      cache: "no-store",
      mode: "same-origin",
      referrer: `${SELLER}/shop`,
      referrerPolicy: "unsafe-url",
      integrity: "sha256-abc",
      keepalive: true,
    } as const;
    const response = await wrapFetchWithPayment(fetchFn, payingClient().client)(new Request(url, options));

    expect(response.status).toBe(200);
    expect(inits).toHaveLength(2);
    for (const init of inits) expect(init).toMatchObject(options);
  });

  it('a Request asking for no referrer (referrer: "") is sent without one', async () => {
    server.use(createSeller().handler);
    const { fetchFn, inits } = spyingFetch();
    await wrapFetchWithPayment(fetchFn, payingClient().client)(new Request(url, { referrer: "" }));
    expect(inits.map((init) => init.referrer)).toEqual(["", ""]);
  });

  it("a service worker's navigation request (mode navigate, which fetch refuses in init) is paid", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const Original = globalThis.Request;
    // What `event.request` of a navigation is; Node cannot make one, so the mode is faked.
    class NavigationRequest extends Original {
      override get mode(): RequestMode {
        return "navigate";
      }
    }
    const { fetchFn, inits } = spyingFetch();
    try {
      globalThis.Request = NavigationRequest;
      const response = await wrapFetchWithPayment(fetchFn, payingClient().client)(new NavigationRequest(url));
      expect(response.status).toBe(200);
    } finally {
      globalThis.Request = Original;
    }
    expect(seller.requests).toHaveLength(2);
    // fetch(url, { mode: "navigate" }) throws a TypeError: the mode is left to fetch's default.
    expect(inits.map((init) => init.mode)).toEqual([undefined, undefined]);
  });

  it("an init that is itself a Request (fetch reads it as a dictionary) gives method, headers and body", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const init = new Request(`${OTHER}/ignored`, {
      method: "POST",
      body: "order",
      headers: { "content-type": "text/plain" },
    });
    const response = await paidFetch()(url, init);

    expect(response.status).toBe(200);
    expect(
      seller.requests.map((r) => [r.method, r.url, new TextDecoder().decode(r.body), r.headers["content-type"]]),
    ).toEqual([
      ["POST", url, "order", "text/plain"],
      ["POST", url, "order", "text/plain"],
    ]);
  });
});
