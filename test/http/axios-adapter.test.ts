/**
 * The paying adapter around whatever adapter the instance uses: axios's http and fetch adapters, a
 * custom one (a mock answering with bare objects), or none set on the instance. The paid request
 * carries the payment only where it may go, redirects after it follow the instance's settings, and
 * what the wrapped adapter does otherwise reaches the caller unchanged.
 */
import axios, { type AxiosAdapter, type AxiosResponse, type InternalAxiosRequestConfig } from "axios";
import { http, HttpResponse } from "msw";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getPaymentReceipt, type X402Plugin } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import {
  PATH,
  SELLER,
  challengeResponse,
  createSeller,
  encodeHeader,
  payingClient,
  v2Challenge,
} from "../support/seller";
import { rejection } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const CHALLENGE = encodeHeader(v2Challenge());

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  maxRedirects: number | undefined;
}

/**
 * A mock adapter (what axios-mock-adapter and hand-written test doubles do): answers with a bare
 * object, no `request`, headers as a plain object with lower-case names, or none. `answer` gets the
 * call and its index; the default is a 402 to the unpaid request and a 200 to the paid one.
 */
function mockAdapter(answer?: (call: Call, index: number) => Partial<AxiosResponse> | undefined) {
  const calls: Call[] = [];
  const adapter: AxiosAdapter = async (config: InternalAxiosRequestConfig) => {
    const call: Call = {
      url: config.url!,
      method: config.method!.toUpperCase(),
      headers: Object.fromEntries(
        Object.entries(config.headers.toJSON()).map(([k, v]) => [k.toLowerCase(), String(v)]),
      ),
      maxRedirects: config.maxRedirects,
    };
    calls.push(call);
    const given = answer?.(call, calls.length - 1);
    const fallback = call.headers["payment-signature"]
      ? { status: 200, data: "paid" }
      : { status: 402, headers: { "payment-required": CHALLENGE } };
    return { statusText: "", config, ...(given ?? fallback) } as AxiosResponse;
  };
  return { adapter, calls };
}

/** The paid request answered by `paid`, everything after it by the default (the unpaid 402, else 200 "landed"). */
function paidAnswer(paid: Partial<AxiosResponse>) {
  return mockAdapter((_call, index) => (index === 1 ? paid : index > 1 ? { status: 200, data: "landed" } : undefined));
}

afterEach(() => void vi.unstubAllGlobals());

describe("axios: a custom adapter answering with bare objects", () => {
  it("a 402 with no request, plain lower-case headers and no body; a paid answer with no headers: paid once", async () => {
    const { adapter, calls } = mockAdapter();
    const { client, signs } = payingClient();
    const instance = wrapAxiosWithPayment(axios.create({ adapter }), client);

    const response = await instance.get(url);

    expect(response.status).toBe(200);
    expect(response.data).toBe("paid");
    expect(signs).toHaveLength(1);
    expect(calls.map((c) => [c.method, c.url, !!c.headers["payment-signature"]])).toEqual([
      ["GET", url, false],
      ["GET", url, true],
    ]);
  });

  it("what the adapter rejects with reaches the caller unchanged, even `undefined`", async () => {
    const instance = wrapAxiosWithPayment(
      axios.create({ adapter: () => Promise.reject(undefined) }),
      payingClient().client,
    );
    const outcome = await instance.get(url).then(
      () => "resolved",
      (error: unknown) => ({ error }),
    );
    expect(outcome).toEqual({ error: undefined });
  });

  it("the adapter is called during the request call, as axios does with synchronous interceptors only", async () => {
    const { adapter, calls } = mockAdapter(() => ({ status: 200, data: "free" }));
    const instance = wrapAxiosWithPayment(axios.create({ adapter }), payingClient().client);
    instance.interceptors.request.use((config) => config, undefined, { synchronous: true });

    const pending = instance.get(url);
    const calledAtOnce = calls.length;

    expect((await pending).data).toBe("free");
    expect(calledAtOnce).toBe(1);
  });
});

describe("axios: the request already carried a payment", () => {
  it("a payment header named in mixed case counts: PAYMENT_ALREADY_ATTEMPTED, nothing signed", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const instance = wrapAxiosWithPayment(axios.create(), client);

    const error = await rejection(instance.get(url, { headers: { "Payment-Signature": "earlier" } }));

    expect(error.code).toBe("PAYMENT_ALREADY_ATTEMPTED");
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });
});

describe("axios: the request already carried a payment (several values)", () => {
  it("a payment header given as an array (sent as a header line per value) counts: PAYMENT_ALREADY_ATTEMPTED, nothing signed", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const instance = wrapAxiosWithPayment(axios.create(), client);

    const error = await rejection(instance.get(url, { headers: { "PAYMENT-SIGNATURE": ["earlier"] } }));

    expect(seller.requests[0]!.headers["payment-signature"]).toBe("earlier");
    expect(error.code).toBe("PAYMENT_ALREADY_ATTEMPTED");
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });
});

describe("axios: redirects of the paid request, followed by hand with the instance's settings", () => {
  const instanceWith = (adapter: AxiosAdapter, config: Parameters<typeof axios.create>[0] = {}) =>
    wrapAxiosWithPayment(axios.create({ adapter, validateStatus: () => true, ...config }), payingClient().client);

  it("a 201 Created with a Location is the answer, not a redirect", async () => {
    const { adapter, calls } = paidAnswer({
      status: 201,
      headers: { location: `${SELLER}/orders/1` },
      data: "created",
    });
    const response = await instanceWith(adapter).post(url, "order");
    expect([response.status, response.data]).toEqual([201, "created"]);
    expect(calls).toHaveLength(2);
  });

  it("a 302 without a Location is the answer", async () => {
    const { adapter, calls } = paidAnswer({ status: 302, data: "nowhere" });
    const response = await instanceWith(adapter).get(url);
    expect(response.status).toBe(302);
    expect(calls).toHaveLength(2);
  });

  it("maxRedirects: 0 returns the paid request's redirect as it came", async () => {
    const { adapter, calls } = paidAnswer({ status: 302, headers: { location: `${SELLER}/landing` } });
    const response = await instanceWith(adapter, { maxRedirects: 0 }).get(url);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(`${SELLER}/landing`);
    expect(calls.map((c) => c.url)).toEqual([url, url]);
  });

  it("a redirect without a body is followed, the payment kept on its origin", async () => {
    const { adapter, calls } = paidAnswer({ status: 307, headers: { location: `${SELLER}/landing` }, data: undefined });
    const response = await instanceWith(adapter).get(url);
    expect([response.status, response.data]).toEqual([200, "landed"]);
    expect(calls.map((c) => [c.url, !!c.headers["payment-signature"]])).toEqual([
      [url, false],
      [url, true],
      [`${SELLER}/landing`, true],
    ]);
  });

  /** The paid request answered by `hops` redirects in a row, then 200. */
  function redirects(hops: number) {
    return mockAdapter((_call, index) =>
      index === 0
        ? undefined
        : index <= hops
          ? { status: 302, headers: { location: `${SELLER}/hop${index}` } }
          : { status: 200, data: "arrived" },
    );
  }

  it("maxRedirects: 2 follows two redirects", async () => {
    const { adapter, calls } = redirects(2);
    const response = await instanceWith(adapter, { maxRedirects: 2 }).get(url);
    expect(response.data).toBe("arrived");
    expect(calls).toHaveLength(4);
  });

  it("maxRedirects: 2 and a third redirect: PAYMENT_OUTCOME_UNKNOWN, caused by too many redirects, the third not followed", async () => {
    const { adapter, calls } = redirects(3);
    const error = await rejection(instanceWith(adapter, { maxRedirects: 2 }).get(url));
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(error.cause.message).toBe("Maximum number of redirects exceeded");
    expect(calls.map((c) => c.url)).toEqual([url, url, `${SELLER}/hop1`, `${SELLER}/hop2`]);
  });

  it("in a page, a redirect of a paid request to another origin than the page's is not followed by hand", async () => {
    vi.stubGlobal("document", {});
    vi.stubGlobal("location", { origin: "https://page.example" });
    const { adapter, calls } = paidAnswer({ status: 302, headers: { location: `${SELLER}/landing` } });
    const response = await instanceWith(adapter).get(url);
    expect(response.status).toBe(302);
    expect(calls.map((c) => [c.url, c.maxRedirects])).toEqual([
      [url, undefined],
      [url, 0],
    ]);
  });
});

describe("axios: the instance without an adapter of its own", () => {
  it("uses axios's default adapter, as axios does", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const instance = axios.create();
    instance.defaults.adapter = undefined;
    wrapAxiosWithPayment(instance, payingClient().client);

    const response = await instance.get(url);

    expect(response.status).toBe(200);
    expect(seller.requests).toHaveLength(2);
  });

  it("uses axios.defaults.adapter when it is changed (as a global mock adapter does), as axios does", async () => {
    const { adapter, calls } = mockAdapter();
    const before = axios.defaults.adapter;
    axios.defaults.adapter = adapter;
    try {
      const instance = axios.create();
      instance.defaults.adapter = undefined;
      wrapAxiosWithPayment(instance, payingClient().client);

      const response = await instance.get(url);

      expect(response.data).toBe("paid");
      expect(calls.map((c) => !!c.headers["payment-signature"])).toEqual([false, true]);
    } finally {
      axios.defaults.adapter = before;
    }
  });
});

describe("axios's http adapter", () => {
  it("an env.fetch that is not a function (fetch disabled) does not matter to it", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const instance = wrapAxiosWithPayment(axios.create({ env: { fetch: "disabled" as never } }), payingClient().client);
    const response = await instance.get(url);
    expect(response.status).toBe(200);
    expect(seller.requests).toHaveLength(2);
  });

  it("responseType stream: the 402's body stream is released once paid", async () => {
    server.use(createSeller().handler);
    const httpAdapter = axios.getAdapter("http");
    const answers: AxiosResponse[] = [];
    const adapter: AxiosAdapter = async (config) => {
      try {
        return await httpAdapter(config).then((r) => (answers.push(r), r));
      } catch (error) {
        answers.push((error as { response: AxiosResponse }).response);
        throw error;
      }
    };
    const instance = wrapAxiosWithPayment(axios.create({ adapter, responseType: "stream" }), payingClient().client);

    const response = await instance.get(url);
    (response.data as { resume(): void }).resume();

    expect(answers.map((r) => r.status)).toEqual([402, 200]);
    expect((answers[0]!.data as { destroyed: boolean }).destroyed).toBe(true);
  });
});

describe("axios's fetch adapter", () => {
  const fetchInstance = () => wrapAxiosWithPayment(axios.create({ adapter: "fetch" }), payingClient().client);

  it("a POST answered 402 directly is paid with the same body", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const response = await fetchInstance().post(url, "order", { headers: { "content-type": "text/plain" } });
    expect(response.status).toBe(200);
    expect(seller.requests.map((r) => [r.method, new TextDecoder().decode(r.body)])).toEqual([
      ["POST", "order"],
      ["POST", "order"],
    ]);
  });

  it("a HEAD redirected to a 402 is paid at the new URL", async () => {
    const seller = createSeller();
    server.use(
      seller.handler,
      http.all(`${SELLER}/moved`, () => new HttpResponse(null, { status: 307, headers: { Location: url } })),
    );
    const response = await fetchInstance().head(`${SELLER}/moved`);
    expect(response.status).toBe(200);
    // (msw's own redirect handling turns the unpaid HEAD into a GET; the paid one is sent by hand.)
    expect(seller.requests.map((r) => [r.method, !!r.headers["payment-signature"]]).at(-1)).toEqual(["HEAD", true]);
    expect(getPaymentReceipt(response)).toMatchObject({ url, method: "HEAD" });
  });

  it("a paid request refused with a 402 directly (no redirect) is PAYMENT_REJECTED", async () => {
    server.use(
      createSeller({
        intercept: (request) =>
          request.headers.has("payment-signature")
            ? challengeResponse({ ...v2Challenge(), error: "insufficient_funds" })
            : undefined,
      }).handler,
    );
    const error = await rejection(fetchInstance().get(url));
    expect(error.code).toBe("PAYMENT_REJECTED");
  });

  it("a web ReadableStream body cannot be sent twice: refused before signing", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const instance = wrapAxiosWithPayment(axios.create({ adapter: "fetch" }), client);
    const body = new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode("order")), c.close()) });

    const error = await rejection(instance.post(url, body, { headers: { "content-type": "text/plain" } }));

    expect(error.code).toBe("BODY_NOT_REPLAYABLE");
    // What to send instead.
    expect(error.message).toContain("axios cannot send twice");
    expect(error.message).toContain("string, Buffer, ArrayBuffer or FormData.");
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });

  it("one fetch wrapper for every request through the same fetch (axios caches its fetch adapter per fetch function)", async () => {
    server.use(http.get(`${SELLER}/free`, () => HttpResponse.text("free")));
    const instance = fetchInstance();
    const first = await instance.get(`${SELLER}/free`);
    const second = await instance.get(`${SELLER}/free`);
    expect(first.config.env?.fetch).toBeTypeOf("function");
    expect(second.config.env?.fetch).toBe(first.config.env?.fetch);
  });
});

describe("axios: an extension's retry carrying a payment header", () => {
  it("aborted in flight: not turned into axios's cancellation, since the payment may have left", async () => {
    const key = "sign-in-with-x";
    let arrived!: () => void;
    const retried = new Promise<void>((resolve) => (arrived = resolve));
    const seller = createSeller({
      challenge: v2Challenge({ extensions: { [key]: { info: { nonce: "n" }, schema: { type: "object" } } } }),
      intercept: async (request) => {
        if (!request.headers.has("payment-signature")) return undefined;
        arrived();
        await new Promise((resolve) => setTimeout(resolve, 300));
        return HttpResponse.text("late");
      },
    });
    server.use(seller.handler);
    const extension: X402Plugin = {
      key,
      beforePayment: () => ({ "PAYMENT-SIGNATURE": "prepaid-token", "x-session": "s1" }),
    };
    const controller = new AbortController();
    void retried.then(() => controller.abort());
    const instance = wrapAxiosWithPayment(axios.create(), payingClient({ plugins: [extension] }).client);

    const error = await rejection(instance.get(url, { signal: controller.signal }));

    expect(axios.isCancel(error)).toBe(false);
    expect(seller.requests[1]!.headers["payment-signature"]).toBe("prepaid-token");
  });
});
