/**
 * The quote cache through both wrappers: a route paid once is paid at once the next time (one round
 * trip), within policy and budget; a stale quote costs nothing and the new terms are paid; concurrent
 * first requests share one probe; never across origins, never a route that stopped asking.
 */
import { HttpResponse, http } from "msw";
import { describe, expect, it, vi } from "vitest";
import {
  budget,
  createX402Client,
  getPaymentReceipt,
  memoryBudgetStore,
  quoteCache,
  recordOutcomes,
  type AnyX402Error,
  type SpendPolicy,
  type X402Plugin,
} from "../../src";
import { PROBE_WAIT_MS, createQuoteCache, routeOf } from "../../src/extensions/quote-cache/quote-cache";
import { exactEvm } from "../../src/evm";
import { useMswServer } from "../support/msw";
import { OTHER, PATH, SELLER, createSeller, v2Challenge, v2Requirement } from "../support/seller";
import { countingSigner } from "../support/wallets";
import { axiosWrapper, rejection, wrappers } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

function quotingClient(plugins: X402Plugin[] = [], policy: SpendPolicy = {}) {
  const { calls, signer } = countingSigner();
  const failed: AnyX402Error[] = [];
  const quotes = quoteCache();
  const client = createX402Client({
    schemes: [exactEvm({ signer })],
    plugins: [quotes, ...plugins],
    policy,
    onPaymentFailed: (e) => void failed.push(e),
  });
  return { client, signs: calls, failed, quotes };
}

/** Whether each request the seller saw carried a payment. */
const paidFlags = (seller: ReturnType<typeof createSeller>) =>
  seller.requests.map((r) => "payment-signature" in r.headers);

describe.each(wrappers)("$name: the quote cache", (wrapper) => {
  it("off by default: every paid call asks first (two round trips)", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const client = createX402Client({ schemes: [exactEvm({ signer: countingSigner().signer })] });
    await wrapper.send(client, { url });
    await wrapper.send(client, { url });
    expect(paidFlags(seller)).toEqual([false, true, false, true]);
  });

  it("on: the second call to a route goes out paid at once, one round trip, with its receipt", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = quotingClient();
    await wrapper.send(client, { url });
    const reply = await wrapper.send(client, { url });
    expect(reply.status).toBe(200);
    expect(paidFlags(seller)).toEqual([false, true, true]);
    expect(seller.verdicts.map((v) => v.ok)).toEqual([true, true]);
    expect(signs.length).toBe(2);
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ settled: true, amount: "10000" });
  });

  it("a stale quote (the price changed): refused at no charge, the new terms paid; one settlement; the outcome hooks told", async () => {
    server.use(createSeller().handler);
    const store = memoryBudgetStore();
    const { client, failed } = quotingClient([budget({ limit: "$1", store })]);
    await wrapper.send(client, { url });
    const repriced = createSeller({ challenge: v2Challenge({ accepts: [v2Requirement({ amount: "20000" })] }) });
    server.use(repriced.handler);

    const reply = await wrapper.send(client, { url });
    expect(reply.status).toBe(200);
    expect(paidFlags(repriced)).toEqual([true, true]);
    expect(repriced.verdicts.map((v) => v.ok)).toEqual([false, true]);
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ amount: "20000", settled: true });
    expect(failed).toEqual([
      expect.objectContaining({
        code: "PAYMENT_REJECTED",
        details: expect.objectContaining({ reason: "quote_stale", status: 402 }),
      }),
    ]);
    // The refused payment's reservation was released: 0.01 then 0.02 spent.
    expect(await store.usage({ key: "client/life:client", limit: 1, windowMs: undefined })).toEqual({
      spent: 30_000,
      reserved: 0,
    });
    // And the new terms are the quote now.
    await wrapper.send(client, { url });
    expect(paidFlags(repriced)).toEqual([true, true, true]);
  });

  it("10 concurrent first requests share one 402 probe", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = quotingClient();
    const replies = await Promise.all(Array.from({ length: 10 }, () => wrapper.send(client, { url })));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(paidFlags(seller).filter((paid) => !paid)).toHaveLength(1);
    expect(signs.length).toBe(10);
  });

  it("never across origins, nor for another method or query", async () => {
    const here = createSeller();
    const there = createSeller({ origin: OTHER, challenge: v2Challenge({ resource: { url: `${OTHER}${PATH}` } }) });
    server.use(here.handler, there.handler);
    const { client } = quotingClient();
    await wrapper.send(client, { url });
    await wrapper.send(client, { url: `${OTHER}${PATH}` });
    await wrapper.send(client, { url: `${url}?page=2` });
    await wrapper.send(client, { url, method: "POST", body: "x" });
    expect(paidFlags(there)).toEqual([false, true]);
    expect(paidFlags(here)).toEqual([false, true, false, true, false, true]);
  });

  it("a route that served a paid request without a settlement report is asked again next time", async () => {
    let free = false;
    const seller = createSeller({ intercept: () => (free ? HttpResponse.json({ free: true }) : undefined) });
    server.use(seller.handler);
    const { client } = quotingClient();
    await wrapper.send(client, { url });
    free = true;
    expect((await wrapper.send(client, { url })).status).toBe(200);
    await wrapper.send(client, { url });
    expect(paidFlags(seller)).toEqual([false, true, true, false]);
  });

  it("a route whose payment from the quote got no answer is asked first next time", async () => {
    let lose = false;
    const seller = createSeller({
      intercept: (request) => (lose && request.headers.has("payment-signature") ? HttpResponse.error() : undefined),
    });
    server.use(seller.handler);
    const { client } = quotingClient();
    await wrapper.send(client, { url });
    lose = true;
    expect(await rejection(wrapper.send(client, { url }))).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    lose = false;
    await wrapper.send(client, { url });
    expect(paidFlags(seller)).toEqual([false, true, true, false, true]);
  });

  it("a cached quote still meets the budget: refused before anything is sent", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = quotingClient([budget({ limit: "$0.01" })]);
    await wrapper.send(client, { url });
    expect(await rejection(wrapper.send(client, { url }))).toMatchObject({ code: "BUDGET_EXCEEDED" });
    expect(seller.requests).toHaveLength(2);
    expect(signs.length).toBe(1);
  });

  it.each([
    {
      route: "a route whose 402 an extension would answer instead of paying (a sign-in) is never quoted",
      extension: { key: "declared", beforePayment: () => undefined } satisfies X402Plugin,
      flags: [false, true, false, true],
    },
    {
      route: "a route declaring an extension the client knows but that never answers instead of paying is quoted",
      extension: { key: "declared", enrichPayload: () => undefined } satisfies X402Plugin,
      flags: [false, true, true],
    },
  ])("$route", async ({ extension, flags }) => {
    const seller = createSeller({ challenge: v2Challenge({ extensions: { declared: {} } }) });
    server.use(seller.handler);
    const { client } = quotingClient([extension]);
    await wrapper.send(client, { url });
    await wrapper.send(client, { url });
    expect(paidFlags(seller)).toEqual(flags);
  });
});

// The route key, part by part: a quote learned for one route is never used for a request that differs
// in one part only. Each variant passes the same-host check (same host name), so only the key keeps
// the quote from paying it at once.
describe.each(wrappers)("$name: the quote cache's route key", (wrapper) => {
  const base = `${SELLER}${PATH}?page=1`;
  /** One seller answering every URL; `flags(method, url)`: whether each request to that route carried a payment. */
  function everywhere() {
    const seller = createSeller({ origin: "", path: "*" });
    server.use(seller.handler);
    const flags = (method: string, to: string) =>
      seller.requests
        .filter((r) => r.method === method && r.url.replace(/#.*/, "") === new URL(to).href.replace(/#.*/, ""))
        .map((r) => "payment-signature" in r.headers);
    return { seller, flags };
  }

  it.each([
    { part: "the port", to: `${SELLER}:8443${PATH}?page=1` },
    { part: "the scheme", to: `${SELLER.replace("https:", "http:")}${PATH}?page=1` },
    { part: "the scheme, on the other's default port", to: `${SELLER.replace("https:", "http:")}:443${PATH}?page=1` },
    { part: "the path", to: `${SELLER}${PATH}/other?page=1` },
    { part: "the path's case", to: `${SELLER}${PATH.toUpperCase()}?page=1` },
    { part: "the query", to: `${SELLER}${PATH}?page=2` },
    { part: "a query added", to: `${SELLER}${PATH}?page=1&x=1` },
    { part: "the query dropped", to: `${SELLER}${PATH}` },
    { part: "the method", to: base, method: "POST" },
  ])("another $part: asked first, never paid from the other route's quote", async ({ to, method = "GET" }) => {
    const { flags } = everywhere();
    const { client } = quotingClient();
    const body = method === "POST" ? "x" : undefined;
    await wrapper.send(client, { url: base });
    await wrapper.send(client, { url: to, method, body });
    expect(flags(method, to)).toEqual([false, true]);
    // Each route keeps its own quote.
    await wrapper.send(client, { url: to, method, body });
    await wrapper.send(client, { url: base });
    expect(flags(method, to)).toEqual([false, true, true]);
    expect(flags("GET", base)).toEqual([false, true, true]);
  });

  it.each([
    { spelling: "the host's case", to: `https://SELLER.example${PATH}?page=1` },
    { spelling: "the default port written out", to: `${SELLER}:443${PATH}?page=1` },
    { spelling: "a fragment", to: `${SELLER}${PATH}?page=1#top` },
    { spelling: "the method in lower case", to: base, method: "get" },
  ])("the same route spelled with $spelling: paid from the quote", async ({ to, method }) => {
    const { flags } = everywhere();
    const { client } = quotingClient();
    await wrapper.send(client, { url: base });
    await wrapper.send(client, { url: to, method });
    expect(flags("GET", base)).toEqual([false, true, true]);
  });
});

describe("routeOf", () => {
  it("is the method (upper case), the origin (scheme, host, port), the path and the query; never the fragment", () => {
    const key = (url: string, method = "GET") => routeOf({ url, method });
    expect(key("https://api.example.com/a/b?x=1&y=2#f", "post")).toBe("POST https://api.example.com/a/b?x=1&y=2");
    expect(key("HTTPS://API.example.com:443/a")).toBe("GET https://api.example.com/a");
    expect(key("http://api.example.com:8080/")).toBe("GET http://api.example.com:8080/");
    const keys = [
      key("https://api.example.com/a?x=1"),
      key("https://api.example.com/a?x=1", "POST"),
      key("http://api.example.com/a?x=1"),
      key("https://api.example.com:8443/a?x=1"),
      key("https://other.example.com/a?x=1"),
      key("https://api.example.com/b?x=1"),
      key("https://api.example.com/a?x=2"),
      key("https://api.example.com/a"),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});

// A 402 that came after a redirect is never learned: the caller did not address that route. Here the
// same-host check cannot refuse the quote (another port of the same host, or the check turned off).
describe.each([
  ...wrappers.map((wrapper) => ({ name: wrapper.name, wrapper, axiosAdapter: undefined })),
  { name: "axios, fetch adapter", wrapper: axiosWrapper, axiosAdapter: "fetch" as const },
])("$name: a redirected 402 is never quoted", ({ wrapper, axiosAdapter }) => {
  it.each([
    { where: "another port of the same host", target: `${SELLER}:8443`, policy: {} },
    {
      where: "another host, with requireSameHostResource: false",
      target: OTHER,
      policy: { requireSameHostResource: false },
    },
  ])(
    "redirected to $where: the 402 is paid, and every later request to either route asks first",
    async ({ target, policy }) => {
      const seller = createSeller({
        origin: target,
        challenge: v2Challenge({ resource: { url: `${target}${PATH}` } }),
      });
      const moved: boolean[] = [];
      server.use(
        seller.handler,
        http.all(`${SELLER}/moved`, ({ request }) => {
          moved.push(request.headers.has("payment-signature"));
          return new HttpResponse(null, { status: 302, headers: { Location: `${target}${PATH}` } });
        }),
      );
      const { client } = quotingClient([], policy);
      expect((await wrapper.send(client, { url: `${SELLER}/moved`, axiosAdapter })).status).toBe(200);
      expect(paidFlags(seller)).toEqual([false, true]);
      expect((await wrapper.send(client, { url: `${SELLER}/moved`, axiosAdapter })).status).toBe(200);
      expect((await wrapper.send(client, { url: `${target}${PATH}`, axiosAdapter })).status).toBe(200);
      expect(moved).toEqual([false, false]);
      expect(paidFlags(seller)).toEqual([false, true, false, true, false, true]);
    },
  );

  it.each([
    { where: "another port of the same host", target: `${SELLER}:8443`, policy: {} },
    {
      where: "another host, with requireSameHostResource: false",
      target: OTHER,
      policy: { requireSameHostResource: false },
    },
  ])(
    "a payment from the quote redirected to a 402 on $where: outcome unknown, never a stale quote paid again",
    async ({ target, policy }) => {
      let moving = false;
      const seller = createSeller({
        intercept: (request) =>
          moving && request.headers.has("payment-signature")
            ? new HttpResponse(null, { status: 307, headers: { Location: `${target}${PATH}` } })
            : undefined,
      });
      const paywall = createSeller({
        origin: target,
        challenge: v2Challenge({ resource: { url: `${target}${PATH}` } }),
      });
      server.use(seller.handler, paywall.handler);
      const { client, signs, failed } = quotingClient([], policy);
      await wrapper.send(client, { url, axiosAdapter });
      moving = true;
      const error = await rejection(wrapper.send(client, { url, axiosAdapter }));
      expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
      expect(error.message).toMatch(/redirected/);
      expect(failed).toEqual([error]);
      // One payment from the quote, and no second one signed for the 402 it was redirected to.
      expect(signs).toHaveLength(2);
      expect(paidFlags(seller)).toEqual([false, true, true]);
    },
  );
});

describe("quote cache options and expiry", () => {
  it.each([{ ttlSeconds: 0 }, { ttlSeconds: 1.5 }, { maxEntries: -1 }, { size: 1 }, "yes"])(
    "%j: INVALID_CONFIG",
    (options) => {
      expect(() => quoteCache(options as never)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
    },
  );

  it("a quote lasts ttlSeconds; past maxEntries the least recently used goes", () => {
    let now = 0;
    const cache = createQuoteCache({ ttlSeconds: 10, maxEntries: 2 }, () => now)!;
    const challenge = {} as never;
    cache.learn("a", challenge);
    cache.learn("b", challenge);
    expect(cache.lookup("a")).toBe(challenge); // a is now the most recently used
    cache.learn("c", challenge);
    expect([cache.lookup("a"), cache.lookup("b"), cache.lookup("c")]).toEqual([challenge, undefined, challenge]);
    now = 9_999;
    expect(cache.lookup("a")).toBe(challenge);
    now = 10_000;
    expect(cache.lookup("a")).toBeUndefined();
  });
});

describe("quote cache probes", () => {
  it("a request waiting on another's probe goes on when its signal aborts, or after PROBE_WAIT_MS", async () => {
    vi.useFakeTimers();
    try {
      const cache = createQuoteCache();
      await cache.probe("r"); // the prober, which never ends
      const controller = new AbortController();
      let aborted = false;
      const waiting = cache.probe("r", controller.signal).then(() => (aborted = true));
      await vi.advanceTimersByTimeAsync(1);
      expect(aborted).toBe(false);
      controller.abort();
      await waiting;
      let timedOut = false;
      const patient = cache.probe("r").then(() => (timedOut = true));
      await vi.advanceTimersByTimeAsync(PROBE_WAIT_MS - 1);
      expect(timedOut).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await patient;
      expect(timedOut).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a probe's done ends only its own probe: a later probe of the route still holds its waiters", async () => {
    const cache = createQuoteCache();
    const firstDone = await cache.probe("r");
    cache.learn("r", {} as never); // ends the first probe
    cache.forget("r");
    await cache.probe("r"); // a second prober
    firstDone();
    let released = false;
    void cache.probe("r").then(() => (released = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(released).toBe(false);
    cache.learn("r", {} as never);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(released).toBe(true);
  });

  it("by default a quote lasts 300 s and 1000 routes are kept", () => {
    let now = 0;
    const cache = createQuoteCache({}, () => now);
    const challenge = {} as never;
    for (let i = 0; i <= 1000; i++) cache.learn(`r${i}`, challenge);
    expect([cache.lookup("r0"), cache.lookup("r1"), cache.lookup("r1000")]).toEqual([undefined, challenge, challenge]);
    now = 299_999;
    expect(cache.lookup("r1")).toBe(challenge);
    now = 300_000;
    expect(cache.lookup("r1")).toBeUndefined();
  });

  it.each([{ ttlSeconds: 86_401 }, { maxEntries: 1_000_001 }])("%j: past the bounds, INVALID_CONFIG", (quoteCache) => {
    expect(() => createQuoteCache(quoteCache)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
    expect(createQuoteCache({ ttlSeconds: 86_400, maxEntries: 1_000_000 })).toBeDefined();
  });
});

describe.each(wrappers)("$name: the quote cache, from the mutation run", (wrapper) => {
  it("a request that carries its own payment header is not paid from the cache", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = quotingClient();
    await wrapper.send(client, { url });
    const error = await rejection(wrapper.send(client, { url, headers: { "PAYMENT-SIGNATURE": "e30=" } }));
    expect(error.code).toBe("PAYMENT_ALREADY_ATTEMPTED");
    expect(signs.length).toBe(1);
  });

  it("a request to a free route ends its probe when it is over: the next request to the route need not wait", async () => {
    server.use(http.get(`${SELLER}/free`, () => HttpResponse.json({ free: true })));
    const { client, quotes } = quotingClient();
    expect((await wrapper.send(client, { url: `${SELLER}/free` })).status).toBe(200);
    const waited = await Promise.race([
      quotes.cache.probe(`GET ${SELLER}/free`).then(() => "no wait"),
      new Promise((resolve) => setTimeout(() => resolve("waited"), 50)),
    ]);
    expect(waited).toBe("no wait");
  });

  it("the caller's payment id goes with a payment made from the cache", async () => {
    const seller = createSeller({
      challenge: v2Challenge({ extensions: { "payment-identifier": { info: { required: false } } } }),
    });
    server.use(seller.handler);
    const { client } = quotingClient();
    await wrapper.send(client, { url });
    await wrapper.send(client, { url, x402: { paymentId: "order-0000000000000042" } });
    expect(paidFlags(seller)).toEqual([false, true, true]);
    expect(seller.payments[1].extensions["payment-identifier"].info.id).toBe("order-0000000000000042");
  });
});

describe("quoteCache and ledger options", () => {
  it.each([
    [() => quoteCache(null as never), "quoteCache", "null is not { ttlSeconds?, maxEntries? }"],
    [() => quoteCache(5 as never), "quoteCache", "5 is not { ttlSeconds?, maxEntries? }"],
    [() => recordOutcomes({} as never), "ledger", "{} is not a ledger { append, records }"],
    [() => recordOutcomes({ append() {} } as never), "ledger", "{} is not a ledger { append, records }"],
    [() => recordOutcomes({ records() {} } as never), "ledger", "{} is not a ledger { append, records }"],
  ])("%#: INVALID_CONFIG naming %s", (make, option, problem) => {
    expect(make).toThrow(expect.objectContaining({ code: "INVALID_CONFIG", message: `${option}: ${problem}.` }));
  });
});
