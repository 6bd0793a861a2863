/** The discovery client: lists and searches a facilitator's discovery endpoint, every read bounded. */
import { DiscoveryFailedError, InvalidConfigError, isX402Error } from "../errors";
import { readResponse, type ReadError } from "../io";
// The wire shapes' generated validators (src/protocol/schemas.ts is their source): no zod in a browser bundle.
import { problemOfDiscoveryPage, problemOfDiscoverySearchPage } from "../protocol";
import { normalizeAll, type DiscoveryListing } from "./listing";
import { sanitize } from "./sanitize";

export const DEFAULT_FACILITATOR_URL = "https://x402.org/facilitator";
/** Per read, unless told: 10 s and 1 MiB. */
export const DISCOVERY_LIMITS = { timeoutMs: 10_000, maxBytes: 1024 * 1024 } as const;

export interface DiscoveryClientOptions {
  /** The facilitator's base URL; default `https://x402.org/facilitator`. */
  url?: string | URL | undefined;
  fetch?: typeof globalThis.fetch | undefined;
  /** Headers for every read (an API key), or a function that makes them. */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>) | undefined;
  /** Longest time one read may take, in ms (10 s). */
  timeoutMs?: number | undefined;
  /** Largest answer read, in bytes (1 MiB). */
  maxBytes?: number | undefined;
}

export interface DiscoveryFilter {
  /** `"http"` or `"mcp"`. */
  type?: string | undefined;
  payTo?: string | undefined;
  scheme?: string | undefined;
  network?: string | undefined;
  /** Listings declaring this extension (2.27 facilitators). */
  extensions?: string | undefined;
  /** Page size, 1 to 100 (the spec's default is 20). */
  limit?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface DiscoveryIterateOptions extends DiscoveryFilter {
  /** Stop after this many listings (default 1000). */
  maxItems?: number | undefined;
  /** Stop after reading this many pages (default 100). */
  maxPages?: number | undefined;
}

/** What the iterators stop at unless told: 1000 listings, 100 pages. */
export const DISCOVERY_ITERATION = { maxItems: 1000, maxPages: 100 } as const;

export interface DiscoveryPage {
  readonly items: readonly DiscoveryListing[];
  readonly pagination: { readonly limit?: number; readonly offset?: number; readonly total?: number };
  /** Items left out, by position, with the reason. */
  readonly skipped: readonly { readonly index: number; readonly reason: string }[];
}

export interface DiscoveryClient {
  /** One page of `GET /discovery/resources`. */
  list(filter?: DiscoveryFilter & { offset?: number | undefined }): Promise<DiscoveryPage>;
  /** Every listing, page after page (by offset), up to `maxItems`. */
  resources(options?: DiscoveryIterateOptions): AsyncIterable<DiscoveryListing>;
  /** Listings matching `query` (`GET /discovery/search`, cursor pages), up to `maxItems`. */
  search(query: string, options?: DiscoveryIterateOptions): AsyncIterable<DiscoveryListing>;
}

const fail = (option: string, problem: string): never => {
  throw new InvalidConfigError(`${option}: ${problem}.`, { details: { option } });
};

/** Where and how a client reads: its options, checked. */
interface Endpoint {
  readonly base: string;
  readonly fetchFn: typeof globalThis.fetch;
  readonly headers: DiscoveryClientOptions["headers"];
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

function endpointOf(options: DiscoveryClientOptions): Endpoint {
  const base = String(options.url ?? DEFAULT_FACILITATOR_URL).replace(/\/+$/, "");
  if (!/^https?:\/\//i.test(base) || !URL.canParse(base)) {
    fail("discovery.url", `${JSON.stringify(String(options.url))} is not an http(s) URL`);
  }
  const timeoutMs = options.timeoutMs ?? DISCOVERY_LIMITS.timeoutMs;
  const maxBytes = options.maxBytes ?? DISCOVERY_LIMITS.maxBytes;
  if (!(Number.isSafeInteger(timeoutMs) && timeoutMs > 0))
    fail("discovery.timeoutMs", "must be a whole number of ms above 0");
  if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0))
    fail("discovery.maxBytes", "must be a whole number of bytes above 0");
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== "function") fail("discovery.fetch", "must be a fetch function");
  return { base, fetchFn, headers: options.headers, timeoutMs, maxBytes };
}

type Query = Record<string, string | number | undefined>;

/**
 * One answer, parsed, with its status (malformed pages name it: the endpoint answered, not with a
 * catalogue). The read is bounded by `timeoutMs` (from the request to the answer's end), `maxBytes`
 * and the caller's signal, whose abort is thrown as its reason.
 */
async function readAnswer(endpoint: Endpoint, path: string, query: Query, signal: AbortSignal | undefined) {
  const { base, timeoutMs, maxBytes, headers: given } = endpoint;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const url = `${base}${path}${params.size ? `?${params}` : ""}`;
  const headers = { accept: "application/json", ...(typeof given === "function" ? await given() : given) };
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const failed = (message: string, more: { status?: number; excerpt?: string | undefined; cause?: unknown } = {}) => {
    const { status, excerpt, cause } = more;
    const details = { url, ...(status !== undefined && { status }), ...(excerpt && { excerpt }) };
    return new DiscoveryFailedError(message, { details, cause });
  };
  try {
    const response = await endpoint.fetchFn(url, { headers, signal: both });
    const { status } = response;
    // A longer answer is refused as it arrives (or at once, by its declared length), not after.
    const text = await readResponse(response, { maxBytes, signal: both }).catch((error: ReadError) => {
      if (error.reason !== "size") throw error.cause;
      throw failed(`The discovery endpoint's answer is larger than ${maxBytes} bytes.`, { status });
    });
    const excerpt = sanitize(text, 200);
    if (!response.ok) throw failed(`The discovery endpoint answered ${status}.`, { status, excerpt });
    try {
      return { status, value: JSON.parse(text) as unknown };
    } catch (cause) {
      throw failed("The discovery endpoint's answer is not JSON.", { status, excerpt, cause });
    }
  } catch (error) {
    if (isX402Error(error)) throw error;
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted) {
      throw failed(`The discovery endpoint did not answer within ${timeoutMs} ms.`, { cause: error });
    }
    throw failed("The discovery endpoint could not be reached.", { cause: error });
  }
}

/** A filter as the query of a listing or search: checked, each value bounded. */
function filterQuery(filter: DiscoveryFilter) {
  const { limit } = filter;
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100))
    fail("discovery.limit", "must be a whole number from 1 to 100");
  for (const key of ["type", "payTo", "scheme", "network", "extensions"] as const) {
    const value = filter[key];
    if (value !== undefined && (typeof value !== "string" || value === "" || value.length > 256))
      fail(`discovery.${key}`, "must be a non-empty string");
  }
  return {
    type: filter.type,
    payTo: filter.payTo,
    scheme: filter.scheme,
    network: filter.network,
    extensions: filter.extensions,
    limit,
  };
}

/** A discovery client for one facilitator. Options are checked here; each read is bounded. */
export function createDiscoveryClient(options: DiscoveryClientOptions = {}): DiscoveryClient {
  const endpoint = endpointOf(options);
  const { base } = endpoint;
  const read = (path: string, query: Query, signal: AbortSignal | undefined) =>
    readAnswer(endpoint, path, query, signal);

  async function list(filter: DiscoveryFilter & { offset?: number | undefined } = {}): Promise<DiscoveryPage> {
    const { offset } = filter;
    if (offset !== undefined && !(Number.isSafeInteger(offset) && offset >= 0))
      fail("discovery.offset", "must be a whole number from 0");
    const { status, value: page } = await read(
      "/discovery/resources",
      { ...filterQuery(filter), offset },
      filter.signal,
    );
    const problem = problemOfDiscoveryPage(page);
    if (problem)
      throw new DiscoveryFailedError(`The discovery page is malformed: ${problem}.`, {
        details: { url: `${base}/discovery/resources`, status },
      });
    const { items, pagination = {} } = page as { items: unknown[]; pagination?: DiscoveryPage["pagination"] };
    return { ...normalizeAll(items), pagination };
  }

  async function* resources(options: DiscoveryIterateOptions = {}): AsyncIterable<DiscoveryListing> {
    const { maxItems, maxPages } = checkBounds(options);
    let offset = 0;
    let yielded = 0;
    const seen = new Set<string>();
    for (let pages = 1; ; pages++) {
      const page = await list({ ...options, offset });
      let added = 0;
      for (const item of page.items) {
        if (seen.has(item.key)) continue;
        seen.add(item.key);
        added++;
        yield item;
        if (++yielded >= maxItems) return;
      }
      const size = page.items.length + page.skipped.length;
      const { total } = page.pagination;
      // Over when a page is empty or adds nothing new, the total is reached, or maxPages pages were read.
      if (size === 0 || added === 0 || (total !== undefined && offset + size >= total) || pages >= maxPages) return;
      offset += size;
    }
  }

  async function* search(query: string, options: DiscoveryIterateOptions = {}): AsyncIterable<DiscoveryListing> {
    if (typeof query !== "string" || query.trim() === "" || query.length > 512)
      fail("discovery.search", "the query must be 1 to 512 characters");
    const { maxItems, maxPages } = checkBounds(options);
    const cursors = new Set<string>();
    const seen = new Set<string>();
    let cursor: string | undefined;
    let yielded = 0;
    for (let pages = 1; ; pages++) {
      const { status, value: page } = await read(
        "/discovery/search",
        { query, ...filterQuery(options), cursor },
        options.signal,
      );
      const problem = problemOfDiscoverySearchPage(page);
      if (problem)
        throw new DiscoveryFailedError(`The discovery search page is malformed: ${problem}.`, {
          details: { url: `${base}/discovery/search`, status },
        });
      const { resources: found, pagination } = page as {
        resources: unknown[];
        pagination?: { cursor?: string | null } | null;
      };
      let added = 0;
      for (const item of normalizeAll(found).items) {
        if (seen.has(item.key)) continue;
        seen.add(item.key);
        added++;
        yield item;
        if (++yielded >= maxItems) return;
      }
      const next = pagination?.cursor ?? undefined;
      // Over without a cursor, at a cursor seen before, after a page that adds nothing new (empty, repeated,
      // malformed items only: a new cursor each time would otherwise go on for ever), or after maxPages pages.
      if (!next || cursors.has(next) || added === 0 || pages >= maxPages) return;
      cursors.add(next);
      cursor = next;
    }
  }

  return Object.freeze({ list, resources, search });
}

function checkBounds({
  maxItems = DISCOVERY_ITERATION.maxItems,
  maxPages = DISCOVERY_ITERATION.maxPages,
}: DiscoveryIterateOptions): { maxItems: number; maxPages: number } {
  if (!(Number.isSafeInteger(maxItems) && maxItems > 0)) fail("discovery.maxItems", "must be a whole number above 0");
  if (!(Number.isSafeInteger(maxPages) && maxPages > 0)) fail("discovery.maxPages", "must be a whole number above 0");
  return { maxItems, maxPages };
}
