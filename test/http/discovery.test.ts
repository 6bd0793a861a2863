/**
 * x402-pay/discovery against scripted facilitators (msw): the listing forms in the wild, hostile
 * metadata, and endpoints that fail, hang, flood, lie about their totals or repeat their pages.
 */
import { http, HttpResponse, delay } from "msw";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { createDiscoveryClient, normalize, quoteListing, sanitize, type DiscoveryListing } from "../../src/discovery";
import { exactEvm } from "../../src/evm";
import { useMswServer } from "../support/msw";
import { PAY_TO, USDC_BASE_SEPOLIA, account, v1Requirement, v2Requirement } from "../support/seller";

const server = useMswServer();
const FACILITATOR = "https://facilitator.example";
const RESOURCES = `${FACILITATOR}/discovery/resources`;

const item = (over: Record<string, unknown> = {}) => ({
  resource: "https://api.example.com/weather",
  type: "http",
  x402Version: 2,
  accepts: [v2Requirement()],
  lastUpdated: "2026-11-20T10:00:00.000Z",
  metadata: {},
  ...over,
});
const page = (items: unknown[], pagination: object = { limit: 20, offset: 0, total: items.length }) => ({
  x402Version: 2,
  items,
  pagination,
});
const all = async (listings: AsyncIterable<DiscoveryListing>) => {
  const found: DiscoveryListing[] = [];
  for await (const listing of listings) found.push(listing);
  return found;
};
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("expected a rejection"),
    (error: any) => error,
  );

describe("the listing forms in the wild", () => {
  it("v1 (maxAmountRequired) and v2 (amount) items read the same; lastUpdated as seconds, ms, ISO or garbage", async () => {
    server.use(
      http.get(RESOURCES, () =>
        HttpResponse.json(
          page([
            item({ lastUpdated: 1_763_632_800 }),
            item({
              resource: "https://api.example.com/v1",
              x402Version: 1,
              accepts: [v1Requirement()],
              lastUpdated: 1_763_632_800_000,
            }),
            item({ resource: "https://api.example.com/iso" }),
            item({ resource: "https://api.example.com/garbage", lastUpdated: "yesterday" }),
          ]),
        ),
      ),
    );
    const { items, skipped } = await createDiscoveryClient({ url: FACILITATOR }).list();
    expect(skipped).toEqual([]);
    expect(items.map((l) => l.challenge.requirements[0]!.amount)).toEqual(["10000", "10000", "10000", "10000"]);
    expect(items.map((l) => l.lastUpdated?.toISOString())).toEqual([
      "2025-11-20T10:00:00.000Z",
      "2025-11-20T10:00:00.000Z",
      "2026-11-20T10:00:00.000Z",
      undefined,
    ]);
    expect(items[1]!.x402Version).toBe(1);
    expect(items[1]!.metadata.description).toBe("premium data");
  });

  it("MCP listings are keyed by (resource, tool), the tool named as tool, toolName, in metadata or the bazaar declaration", () => {
    const mcp = (over: Record<string, unknown>) =>
      normalize(item({ type: "mcp", resource: "https://tools.example.com/mcp", ...over })) as DiscoveryListing;
    expect(mcp({ tool: "search" }).key).toBe("https://tools.example.com/mcp#search");
    expect(mcp({ toolName: "search" }).tool).toBe("search");
    expect(mcp({ metadata: { toolName: "weather" } }).key).toBe("https://tools.example.com/mcp#weather");
    expect(mcp({ extensions: { bazaar: { info: { input: { type: "mcp", toolName: "forecast" } } } } }).tool).toBe(
      "forecast",
    );
    expect((normalize(item({ type: "mcp", resource: "mcp://tool/lookup" })) as DiscoveryListing).key).toBe(
      "mcp://tool/lookup#lookup",
    );
    expect(
      (
        normalize(
          item({ type: undefined, extensions: { bazaar: { info: { input: { type: "mcp", tool: "t" } } } } }),
        ) as DiscoveryListing
      ).type,
    ).toBe("mcp");
    expect((normalize(item({ tool: "ignored" })) as DiscoveryListing).key).toBe("https://api.example.com/weather");
  });

  it("a malformed item is left out with its reason; the rest of the page stands", async () => {
    server.use(
      http.get(RESOURCES, () =>
        HttpResponse.json(
          page([
            item({ x402Version: 3 }),
            item({ resource: "" }),
            item({ resource: "not a url" }),
            item({ accepts: [{ scheme: "exact" }] }),
            "a string",
            item({ resource: "https://api.example.com/ok" }),
          ]),
        ),
      ),
    );
    const { items, skipped } = await createDiscoveryClient({ url: FACILITATOR }).list();
    expect(items.map((l) => l.resource)).toEqual(["https://api.example.com/ok"]);
    expect(skipped.map((s) => s.index)).toEqual([0, 1, 2, 3, 4]);
    expect(skipped[0]!.reason).toBe("x402Version must be 1 or 2");
    expect(skipped[1]!.reason).toBe("resource must not be empty");
    expect(skipped[2]!.reason).toMatch(/is not a URL/);
    expect(skipped[3]!.reason).toMatch(/^no payment option is well formed \(network must be/);
  });
});

describe("metadata fit to show a person", () => {
  it("control, bidirectional and zero-width characters go; lengths and tag counts are bounded; icons are https only", () => {
    const listing = normalize(
      item({
        serviceName: "Pay\u202Egnp.exe\u200B Me\u0007",
        description: "x".repeat(5000),
        tags: ["ok", "ok", 7, "t".repeat(100), ...Array.from({ length: 20 }, (_, i) => `tag${i}`)],
        iconUrl: "javascript:alert(1)",
      }),
    ) as DiscoveryListing;
    expect(listing.metadata.name).toBe("Pay gnp.exe Me");
    expect([...listing.metadata.description!]).toHaveLength(500);
    expect(listing.metadata.description!.endsWith("…")).toBe(true);
    expect(listing.metadata.tags).toHaveLength(10);
    expect(listing.metadata.tags.slice(0, 2)).toEqual(["ok", `${"t".repeat(31)}…`]);
    expect(listing.metadata.iconUrl).toBeUndefined();
    for (const iconUrl of [
      "http://icons.example/a.png",
      "https://user:pw@icons.example/a.png",
      `https://icons.example/${"a".repeat(3000)}`,
    ]) {
      expect((normalize(item({ iconUrl })) as DiscoveryListing).metadata.iconUrl).toBeUndefined();
    }
    expect(
      (normalize(item({ metadata: { iconUrl: "https://icons.example/a.png" } })) as DiscoveryListing).metadata.iconUrl,
    ).toBe("https://icons.example/a.png");
    expect(sanitize("\u2066\u2069  ", 10)).toBeUndefined();
  });
});

describe("every read is bounded", () => {
  it("a non-2xx is DISCOVERY_FAILED with the status and a short, sanitised excerpt", async () => {
    server.use(http.get(RESOURCES, () => new HttpResponse(`oops\u202E${"!".repeat(1000)}`, { status: 503 })));
    const error = await failure(createDiscoveryClient({ url: FACILITATOR }).list());
    expect(error).toMatchObject({ code: "DISCOVERY_FAILED", details: { url: RESOURCES, status: 503 } });
    expect(error.details.excerpt.startsWith("oops !!!")).toBe(true);
    expect([...error.details.excerpt].length).toBeLessThanOrEqual(200);
  });

  it.each([
    { name: "not JSON", body: () => new HttpResponse("<html>", { status: 200 }), problem: /not JSON/ },
    {
      name: "no items",
      body: () => HttpResponse.json({ resources: [] }),
      problem: /malformed: items must be an array/,
    },
    {
      name: "a pagination that is no object",
      body: () => HttpResponse.json({ items: [], pagination: 5 }),
      problem: /pagination/,
    },
  ])("an answer that is $name is DISCOVERY_FAILED", async ({ body, problem }) => {
    server.use(http.get(RESOURCES, body));
    const error = await failure(createDiscoveryClient({ url: FACILITATOR }).list());
    expect(error.code).toBe("DISCOVERY_FAILED");
    expect(error.message).toMatch(problem);
  });

  it("a server that never answers: DISCOVERY_FAILED after timeoutMs", async () => {
    server.use(http.get(RESOURCES, () => delay("infinite")));
    const started = Date.now();
    const error = await failure(createDiscoveryClient({ url: FACILITATOR, timeoutMs: 100 }).list());
    expect(error.code).toBe("DISCOVERY_FAILED");
    expect(error.message).toMatch(/within 100 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it.each([
    { name: "declared", headers: { "content-length": "5000000" } as Record<string, string> },
    { name: "streamed without a length", headers: {} as Record<string, string> },
  ])("a flood ($name) is refused at maxBytes", async ({ headers }) => {
    let sent = 0;
    server.use(
      http.get(RESOURCES, () => {
        const stream = new ReadableStream({
          pull(controller) {
            sent += 64 * 1024;
            controller.enqueue(new Uint8Array(64 * 1024).fill(32));
            if (sent > 50 * 1024 * 1024) controller.close();
          },
        });
        return new HttpResponse(stream, { headers });
      }),
    );
    const error = await failure(createDiscoveryClient({ url: FACILITATOR, maxBytes: 100_000 }).list());
    expect(error.code).toBe("DISCOVERY_FAILED");
    expect(error.message).toMatch(/larger than 100000 bytes/);
    expect(sent).toBeLessThan(5 * 1024 * 1024);
  });

  it("a caller's signal and the timeout together: whichever fires first ends the read (the signal never drops the timeout)", async () => {
    server.use(http.get(RESOURCES, () => delay("infinite")));
    // A signal that never fires: the timeout still ends the read.
    const quiet = new AbortController();
    const timedOut = await failure(
      createDiscoveryClient({ url: FACILITATOR, timeoutMs: 100 }).list({ signal: quiet.signal }),
    );
    expect(timedOut).toMatchObject({
      code: "DISCOVERY_FAILED",
      message: "The discovery endpoint did not answer within 100 ms.",
    });
    expect(quiet.signal.aborted).toBe(false);
    // The same through the iterators, which pass the signal on to every page.
    for (const listings of [
      (d: ReturnType<typeof createDiscoveryClient>) => d.resources({ signal: quiet.signal }),
      (d: ReturnType<typeof createDiscoveryClient>) => d.search("x", { signal: quiet.signal }),
    ]) {
      server.use(http.get(`${FACILITATOR}/discovery/search`, () => delay("infinite")));
      expect(await failure(all(listings(createDiscoveryClient({ url: FACILITATOR, timeoutMs: 100 }))))).toMatchObject({
        code: "DISCOVERY_FAILED",
      });
    }
    // A signal that fires first: its own reason, not a timeout.
    const caller = new AbortController();
    setTimeout(() => caller.abort(new DOMException("stop", "AbortError")), 20);
    const aborted = await failure(
      createDiscoveryClient({ url: FACILITATOR, timeoutMs: 60_000 }).list({ signal: caller.signal }),
    );
    expect(aborted).toBe(caller.signal.reason);
  });

  it("the caller's signal ends a read with its own reason", async () => {
    server.use(http.get(RESOURCES, () => delay("infinite")));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const error = await failure(createDiscoveryClient({ url: FACILITATOR }).list({ signal: controller.signal }));
    expect(error.name).toBe("AbortError");
  });
});

describe("paging never runs away", () => {
  const listings = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => item({ resource: `https://api.example.com/r${from + i}` }));

  it("pages by offset to the total, asking with the filters", async () => {
    const asked: string[] = [];
    server.use(
      http.get(RESOURCES, ({ request }) => {
        const url = new URL(request.url);
        asked.push(url.search);
        const offset = Number(url.searchParams.get("offset"));
        return HttpResponse.json(page(listings(offset, Math.min(2, 5 - offset)), { limit: 2, offset, total: 5 }));
      }),
    );
    const found = await all(
      createDiscoveryClient({
        url: `${FACILITATOR}///`,
        headers: async () => ({ authorization: "Bearer k" }),
      }).resources({ limit: 2, network: "eip155:84532" }),
    );
    expect(found.map((l) => l.resource)).toEqual(listings(0, 5).map((i) => i.resource));
    expect(asked).toEqual([
      "?network=eip155%3A84532&limit=2&offset=0",
      "?network=eip155%3A84532&limit=2&offset=2",
      "?network=eip155%3A84532&limit=2&offset=4",
    ]);
  });

  it("a server that ignores the offset (the same page again) or lies about its total stops, as does maxItems", async () => {
    server.use(
      http.get(RESOURCES, () => HttpResponse.json(page(listings(0, 3), { limit: 3, offset: 0, total: 1_000_000 }))),
    );
    const discovery = createDiscoveryClient({ url: FACILITATOR });
    expect(await all(discovery.resources())).toHaveLength(3);
    expect(await all(discovery.resources({ maxItems: 2 }))).toHaveLength(2);
  });

  it("search follows cursors, and stops at a cursor it has seen", async () => {
    const cursors: (string | null)[] = [];
    server.use(
      http.get(`${FACILITATOR}/discovery/search`, ({ request }) => {
        const cursor = new URL(request.url).searchParams.get("cursor");
        cursors.push(cursor);
        const n = Number(cursor ?? 0);
        return HttpResponse.json({ resources: listings(n, 1), pagination: { limit: 1, cursor: String((n + 1) % 3) } });
      }),
    );
    const found = await all(createDiscoveryClient({ url: FACILITATOR }).search("weather"));
    expect(found).toHaveLength(3);
    expect(cursors).toEqual([null, "1", "2", "0"]);
  });
});

describe("paging stops at a page that adds nothing, and at maxPages", () => {
  const SEARCH = `${FACILITATOR}/discovery/search`;
  const listing = (n: number) => item({ resource: `https://api.example.com/r${n}` });
  // Past this many requests the scripted endpoints end their pages, so a client that does not stop fails an assertion
  // instead of hanging.
  const LAST = 500;
  /** A search endpoint whose every page brings a cursor never seen before, and `resources` as `page(n)` makes them. */
  const endless = (resources: (n: number) => unknown[]) => {
    let asked = 0;
    server.use(
      http.get(SEARCH, () => {
        const n = asked++;
        return HttpResponse.json({ resources: resources(n), pagination: { cursor: n < LAST ? `c${n + 1}` : null } });
      }),
    );
    return () => asked;
  };

  it.each([
    { name: "the same items again", resources: () => [listing(0), listing(1)], found: 2, pages: 2 },
    { name: "empty pages", resources: () => [], found: 0, pages: 1 },
    { name: "only malformed items", resources: () => [item({ x402Version: 7 }), "junk"], found: 0, pages: 1 },
    {
      name: "one new item, then the same ones",
      resources: (n: number) => (n === 0 ? [listing(0)] : [listing(0), listing(0)]),
      found: 1,
      pages: 2,
    },
  ])("search, each page with a new cursor and $name: stops", async ({ resources, found, pages }) => {
    const asked = endless(resources);
    expect(await all(createDiscoveryClient({ url: FACILITATOR }).search("weather"))).toHaveLength(found);
    expect(asked()).toBe(pages);
  });

  it("search, a new item and a new cursor on every page: stops at maxPages (default 100)", async () => {
    let asked = endless((n) => [listing(n)]);
    expect(await all(createDiscoveryClient({ url: FACILITATOR }).search("weather", { maxItems: 10_000 }))).toHaveLength(
      100,
    );
    expect(asked()).toBe(100);
    asked = endless((n) => [listing(n)]);
    expect(await all(createDiscoveryClient({ url: FACILITATOR }).search("weather", { maxPages: 3 }))).toHaveLength(3);
    expect(asked()).toBe(3);
  });

  it("resources, new items on every page and no total: stops at maxPages; an item twice on one page is listed once", async () => {
    let asked = 0;
    server.use(
      http.get(RESOURCES, ({ request }) => {
        asked++;
        const offset = Number(new URL(request.url).searchParams.get("offset"));
        return HttpResponse.json({
          items: asked > LAST ? [] : [listing(offset), listing(offset), listing(offset + 1)],
          pagination: {},
        });
      }),
    );
    const found = await all(createDiscoveryClient({ url: FACILITATOR }).resources({ maxPages: 4, maxItems: 10_000 }));
    expect(asked).toBe(4);
    expect(new Set(found.map((l) => l.key)).size).toBe(found.length);
    asked = 0;
    expect(await all(createDiscoveryClient({ url: FACILITATOR }).resources({ maxItems: 10_000 }))).not.toHaveLength(0);
    expect(asked).toBe(100);
  });

  it("a malformed page is an answer of the endpoint: its error carries the status", async () => {
    server.use(
      http.get(RESOURCES, () => HttpResponse.json({ items: 5 })),
      http.get(SEARCH, () => HttpResponse.json({ nothing: true }, { status: 200 })),
    );
    expect(await failure(createDiscoveryClient({ url: FACILITATOR }).list())).toMatchObject({
      details: { status: 200 },
    });
    expect(await failure(all(createDiscoveryClient({ url: FACILITATOR }).search("x")))).toMatchObject({
      details: { status: 200 },
    });
  });
});

describe("bad input is refused before anything is sent", () => {
  it.each([
    { make: () => createDiscoveryClient({ url: "ftp://x" }), option: "discovery.url" },
    { make: () => createDiscoveryClient({ timeoutMs: 0 }), option: "discovery.timeoutMs" },
    { make: () => createDiscoveryClient({ maxBytes: 1.5 }), option: "discovery.maxBytes" },
  ])("$option", ({ make, option }) => {
    expect(make).toThrow(expect.objectContaining({ code: "INVALID_CONFIG", details: { option } }));
  });

  it.each([
    { call: (d: ReturnType<typeof createDiscoveryClient>) => d.list({ limit: 0 }), option: "discovery.limit" },
    { call: (d: ReturnType<typeof createDiscoveryClient>) => d.list({ limit: 101 }), option: "discovery.limit" },
    { call: (d: ReturnType<typeof createDiscoveryClient>) => d.list({ offset: -1 }), option: "discovery.offset" },
    { call: (d: ReturnType<typeof createDiscoveryClient>) => d.list({ type: "" }), option: "discovery.type" },
    { call: (d: ReturnType<typeof createDiscoveryClient>) => all(d.search(" ")), option: "discovery.search" },
    {
      call: (d: ReturnType<typeof createDiscoveryClient>) => all(d.resources({ maxItems: 0 })),
      option: "discovery.maxItems",
    },
    {
      call: (d: ReturnType<typeof createDiscoveryClient>) => all(d.resources({ maxPages: 0 })),
      option: "discovery.maxPages",
    },
    {
      call: (d: ReturnType<typeof createDiscoveryClient>) => all(d.search("x", { maxPages: 1.5 })),
      option: "discovery.maxPages",
    },
  ])("$option out of range", async ({ call, option }) => {
    // msw fails the test on any request: none is sent.
    const error = await failure(call(createDiscoveryClient({ url: FACILITATOR })));
    expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option } });
  });
});

describe("quoteListing", () => {
  it("says whether the client would pay, and why not, per requirement", async () => {
    const client = createX402Client({ schemes: [exactEvm({ signer: account })], policy: { payees: [PAY_TO] } });
    const listing = normalize(
      item({
        accepts: [
          v2Requirement({ network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" }),
          v2Requirement({ payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" }),
          v2Requirement({ asset: USDC_BASE_SEPOLIA }),
        ],
      }),
    ) as DiscoveryListing;
    const quote = await quoteListing(client, listing);
    expect(quote.payable?.requirement.index).toBe(2);
    expect(quote.rejected.map((r) => [r.index, r.code])).toEqual([
      [0, "unsupported"],
      [1, "policy"],
    ]);
  });

  it("an MCP listing is quoted as the MCP wrapper pays it: <server>#<tool>, tools/call, under policy.origins", async () => {
    const client = createX402Client({
      schemes: [exactEvm({ signer: account })],
      policy: { origins: ["https://tools.example.com"] },
    });
    const listing = normalize(
      item({ type: "mcp", resource: "https://tools.example.com/mcp", tool: "search" }),
    ) as DiscoveryListing;
    expect((await quoteListing(client, listing)).payable).toBeDefined();
    const elsewhere = normalize(
      item({ type: "mcp", resource: "https://evil.example/mcp", tool: "search" }),
    ) as DiscoveryListing;
    expect((await quoteListing(client, elsewhere)).rejected[0]!.reason).toBe(
      "origin https://evil.example is not in policy.origins",
    );
  });
});

describe("the mutation run's cases", () => {
  const ok = () => HttpResponse.json(page([item()]));

  it.each([
    {
      make: () => createDiscoveryClient({ url: "ftp://x" }),
      message: 'discovery.url: "ftp://x" is not an http(s) URL.',
    },
    {
      make: () => createDiscoveryClient({ url: "http://" }),
      message: 'discovery.url: "http://" is not an http(s) URL.',
    },
    {
      make: () => createDiscoveryClient({ timeoutMs: -1 }),
      message: "discovery.timeoutMs: must be a whole number of ms above 0.",
    },
    {
      make: () => createDiscoveryClient({ maxBytes: 0 }),
      message: "discovery.maxBytes: must be a whole number of bytes above 0.",
    },
    {
      make: () => createDiscoveryClient({ fetch: "no" as never }),
      message: "discovery.fetch: must be a fetch function.",
    },
  ])("option sentence: $message", ({ make, message }) => {
    expect(make).toThrow(message);
  });

  it("http:// is allowed (a local facilitator); headers (an object, or a function) go with every read, beside accept: application/json", async () => {
    const seen: Headers[] = [];
    server.use(
      http.get("http://127.0.0.1:4020/discovery/resources", ({ request }) => (seen.push(request.headers), ok())),
    );
    await createDiscoveryClient({ url: "http://127.0.0.1:4020", headers: { "x-api-key": "a" } }).list();
    await createDiscoveryClient({ url: "http://127.0.0.1:4020", headers: () => ({ "x-api-key": "b" }) }).list();
    expect(seen.map((h) => [h.get("x-api-key"), h.get("accept")])).toEqual([
      ["a", "application/json"],
      ["b", "application/json"],
    ]);
  });

  it("an unreachable endpoint: DISCOVERY_FAILED 'could not be reached', the network error as its cause; a 503's sentence", async () => {
    const refused = Object.assign(new TypeError("fetch failed"), { cause: new Error("ECONNREFUSED") });
    const error = await failure(
      createDiscoveryClient({ url: FACILITATOR, fetch: () => Promise.reject(refused) }).list(),
    );
    expect(error).toMatchObject({
      code: "DISCOVERY_FAILED",
      message: "The discovery endpoint could not be reached.",
      details: { url: RESOURCES },
    });
    expect(error.details.status).toBeUndefined();
    expect(error.cause).toBe(refused);
    server.use(http.get(RESOURCES, () => new HttpResponse("busy", { status: 503 })));
    expect((await failure(createDiscoveryClient({ url: FACILITATOR }).list())).message).toBe(
      "The discovery endpoint answered 503.",
    );
  });

  it("a malformed page names its URL; a 200 without a body is not JSON", async () => {
    server.use(http.get(RESOURCES, () => HttpResponse.json({ items: 5 })));
    expect(await failure(createDiscoveryClient({ url: FACILITATOR }).list())).toMatchObject({
      message: "The discovery page is malformed: items must be an array.",
      details: { url: RESOURCES },
    });
    server.use(http.get(RESOURCES, () => new HttpResponse(null, { status: 200 })));
    expect((await failure(createDiscoveryClient({ url: FACILITATOR }).list())).message).toBe(
      "The discovery endpoint's answer is not JSON.",
    );
    server.use(http.get(`${FACILITATOR}/discovery/search`, () => HttpResponse.json({ items: [] })));
    expect(await failure(all(createDiscoveryClient({ url: FACILITATOR }).search("x")))).toMatchObject({
      message: "The discovery search page is malformed: resources must be an array.",
      details: { url: `${FACILITATOR}/discovery/search` },
    });
  });

  it("the bounds are inclusive: limit 1 and 100, filters of 256 characters, a 512-character query, maxBytes exactly", async () => {
    server.use(
      http.get(RESOURCES, ok),
      http.get(`${FACILITATOR}/discovery/search`, () => HttpResponse.json({ resources: [item()], pagination: null })),
    );
    const body = JSON.stringify(page([item()]));
    const exact = createDiscoveryClient({ url: FACILITATOR, maxBytes: new TextEncoder().encode(body).length });
    expect((await exact.list({ limit: 1 })).items).toHaveLength(1);
    expect((await exact.list({ limit: 100, network: "n".repeat(256) })).items).toHaveLength(1);
    expect(await failure(exact.list({ network: "n".repeat(257) }))).toMatchObject({
      details: { option: "discovery.network" },
    });
    expect(await failure(exact.list({ payTo: 5 as never }))).toMatchObject({ details: { option: "discovery.payTo" } });
    expect(await all(exact.search("q".repeat(512)))).toHaveLength(1);
    expect(await failure(all(exact.search("q".repeat(513))))).toMatchObject({
      message: "discovery.search: the query must be 1 to 512 characters.",
    });
    expect(await failure(all(exact.search(5 as never)))).toMatchObject({ details: { option: "discovery.search" } });
    expect(await failure(exact.list({ limit: 2.5 }))).toMatchObject({
      message: "discovery.limit: must be a whole number from 1 to 100.",
    });
    expect(await failure(exact.list({ offset: 0.5 }))).toMatchObject({
      message: "discovery.offset: must be a whole number from 0.",
    });
    expect(await failure(all(exact.resources({ maxItems: 1.5 })))).toMatchObject({
      message: "discovery.maxItems: must be a whole number above 0.",
    });
    // One byte more than maxBytes, declared: refused before reading.
    const short = createDiscoveryClient({ url: FACILITATOR, maxBytes: new TextEncoder().encode(body).length - 1 });
    expect((await failure(short.list())).message).toMatch(/larger than/);
  });

  it("UTF-8 split across chunks reads whole", async () => {
    const text = JSON.stringify(page([item({ serviceName: "Previsão do tempo ☀" })]));
    const bytes = new TextEncoder().encode(text);
    const cut = text.indexOf("ã") + 1;
    server.use(
      http.get(RESOURCES, () => {
        const stream = new ReadableStream({
          start(controller) {
            for (let i = 0; i < bytes.length; i += 3) controller.enqueue(bytes.slice(i, Math.min(i + 3, bytes.length)));
            controller.close();
          },
        });
        return new HttpResponse(stream, { headers: { "content-type": "application/json" } });
      }),
    );
    expect(cut).toBeGreaterThan(0);
    expect((await createDiscoveryClient({ url: FACILITATOR }).list()).items[0]!.metadata.name).toBe(
      "Previsão do tempo ☀",
    );
  });

  it("skipped items count toward the next offset; search stops at maxItems and without a cursor", async () => {
    const asked: string[] = [];
    server.use(
      http.get(RESOURCES, ({ request }) => {
        const offset = Number(new URL(request.url).searchParams.get("offset"));
        asked.push(String(offset));
        return HttpResponse.json(page(offset === 0 ? [item({ x402Version: 9 }), item()] : [], { total: 2 }));
      }),
    );
    expect(await all(createDiscoveryClient({ url: FACILITATOR }).resources())).toHaveLength(1);
    expect(asked).toEqual(["0"]);
    let pages = 0;
    server.use(
      http.get(`${FACILITATOR}/discovery/search`, ({ request }) => {
        pages++;
        const n = Number(new URL(request.url).searchParams.get("cursor") ?? 0);
        return HttpResponse.json({
          resources: [
            item({ resource: `https://api.example.com/${n}a` }),
            item({ resource: `https://api.example.com/${n}b` }),
          ],
          pagination: { cursor: String(n + 1) },
        });
      }),
    );
    expect(await all(createDiscoveryClient({ url: FACILITATOR }).search("x", { maxItems: 3 }))).toHaveLength(3);
    expect(pages).toBe(2);
    server.use(http.get(`${FACILITATOR}/discovery/search`, () => HttpResponse.json({ resources: [item()] })));
    expect(await all(createDiscoveryClient({ url: FACILITATOR }).search("x"))).toHaveLength(1);
  });

  it("normalising: type, mimeType, no tags, the listing's resource as the challenge's, and the edges of dates and lengths", () => {
    const listing = (over: Record<string, unknown>) => normalize(item(over)) as DiscoveryListing;
    expect(listing({ type: "" }).type).toBe("http");
    expect(normalize(item({ type: 5 }))).toBe("type must be a string");
    expect(listing({ type: "mcp", resource: "https://x.example/a/mcp://tool/q" }).tool).toBeUndefined();
    expect(listing({ mimeType: "application/json" }).metadata.mimeType).toBe("application/json");
    expect("mimeType" in listing({}).metadata).toBe(false);
    expect(listing({}).metadata.tags).toEqual([]);
    expect(listing({}).challenge.resource).toEqual({ url: "https://api.example.com/weather" });
    expect(listing({ x402Version: 1, accepts: [v1Requirement()] }).challenge.resource).toBeUndefined();
    expect(listing({ lastUpdated: 100_000_000_000 }).lastUpdated!.getTime()).toBe(100_000_000_000_000);
    expect(listing({ lastUpdated: 100_000_000_001 }).lastUpdated!.getTime()).toBe(100_000_000_001);
    for (const lastUpdated of [0, -5, "x2026-11-20", "2026-11-2", "", Number.NaN])
      expect(listing({ lastUpdated }).lastUpdated).toBeUndefined();
    expect(sanitize("abc", 3)).toBe("abc");
    expect(sanitize("abcd", 3)).toBe("ab…");
    const icon = `https://icons.example/${"a".repeat(2048 - "https://icons.example/".length)}`;
    expect(listing({ iconUrl: icon }).metadata.iconUrl).toBe(icon);
  });

  it("quoteListing: an MCP listing whose resource already names its tool is quoted as it is", async () => {
    const client = createX402Client({
      schemes: [exactEvm({ signer: account })],
      policy: { origins: ["https://tools.example.com"] },
    });
    const named = normalize(
      item({ type: "mcp", resource: "https://tools.example.com/mcp#search", tool: "search" }),
    ) as DiscoveryListing;
    expect((await quoteListing(client, named)).payable).toBeDefined();
    const stdio = normalize(item({ type: "mcp", resource: "mcp://tool/search" })) as DiscoveryListing;
    expect((await quoteListing(client, stdio)).rejected[0]!.reason).toBe("origin mcp://tool is not in policy.origins");
  });
});
