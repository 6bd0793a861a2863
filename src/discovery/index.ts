/**
 * `x402-pay/discovery`: what can be bought, from a facilitator's discovery endpoint (bazaar, wire.md
 * §8.2 and §12). Lists and searches with filters, pages as async iterators, bounds every read (time and
 * size, and the caller's signal), tolerates the listing forms in the wild, sanitises what a person
 * would be shown, and turns a listing into a quote the client's policy judges without calling it.
 */
import type { PaymentOption, X402Client } from "../client";
import { DiscoveryFailedError, InvalidConfigError, isX402Error, type RejectedRequirement } from "../errors";
import { readResponse, type ReadError } from "../io";
// The wire shapes' generated validators (src/protocol/schemas.ts is their source): no zod in a browser bundle.
import {
  isObject,
  parseChallenge,
  problemOfDiscoveryPage,
  problemOfDiscoveryResource,
  problemOfDiscoverySearchPage,
  type PaymentChallenge,
} from "../protocol";

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

/**
 * Display metadata, sanitised: no control, bidirectional or zero-width characters, bounded lengths, https icons only.
 */
export interface ListingMetadata {
  readonly name?: string;
  readonly description?: string;
  readonly mimeType?: string;
  readonly tags: readonly string[];
  readonly iconUrl?: string;
}

/** One resource for sale, normalised across the listing forms. */
export interface DiscoveryListing {
  /** `resource`, or `resource#tool` for an MCP tool: one key per (resource, tool). */
  readonly key: string;
  readonly resource: string;
  /** `"http"`, `"mcp"`, or what the facilitator says. */
  readonly type: string;
  /** An MCP listing's tool name. */
  readonly tool?: string;
  readonly x402Version: 1 | 2;
  /** The payment options as a challenge (v1 `maxAmountRequired` read as the amount), ready to quote. */
  readonly challenge: PaymentChallenge;
  readonly lastUpdated?: Date;
  readonly metadata: ListingMetadata;
  /** The item as the facilitator sent it. Not sanitised: never show it to a person as it is. */
  readonly raw: Readonly<Record<string, unknown>>;
}

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

function normalizeAll(items: readonly unknown[]): {
  items: DiscoveryListing[];
  skipped: { index: number; reason: string }[];
} {
  const listings: DiscoveryListing[] = [];
  const skipped: { index: number; reason: string }[] = [];
  items.forEach((item, index) => {
    const result = normalize(item);
    if (typeof result === "string") skipped.push({ index, reason: result });
    else listings.push(result);
  });
  return { items: listings, skipped };
}

/** A listing, or why the item is left out. */
export function normalize(item: unknown): DiscoveryListing | string {
  const problem = problemOfDiscoveryResource(item);
  if (problem) return problem;
  const raw = item as Record<string, unknown>;
  const x402Version = raw.x402Version as 1 | 2;
  let challenge: PaymentChallenge;
  try {
    challenge = parseChallenge({
      header: null,
      body: { x402Version, accepts: raw.accepts, ...(x402Version === 2 && { resource: { url: raw.resource } }) },
    });
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  if (challenge.requirements.length === 0)
    return `no payment option is well formed${challenge.invalid[0] ? ` (${challenge.invalid[0].reason})` : ""}`;
  const metadata = isObject(raw.metadata) ? raw.metadata : {};
  const bazaar = isObject(raw.extensions) && isObject(raw.extensions.bazaar) ? raw.extensions.bazaar : {};
  const input = isObject(bazaar.info) && isObject(bazaar.info.input) ? bazaar.info.input : {};
  const type = typeof raw.type === "string" && raw.type ? raw.type : input.type === "mcp" ? "mcp" : "http";
  const toolName = [raw.tool, raw.toolName, metadata.tool, metadata.toolName, input.tool, input.toolName].find(
    (t) => typeof t === "string" && t !== "",
  ) as string | undefined;
  const tool = type === "mcp" ? (toolName ?? /^mcp:\/\/tool\/([^/?#]+)/.exec(String(raw.resource))?.[1]) : undefined;
  const resource = String(raw.resource);
  if (!URL.canParse(resource)) return `resource ${JSON.stringify(sanitize(resource, 100))} is not a URL`;
  const first = challenge.requirements[0]!.raw;
  const pick = (...candidates: unknown[]) =>
    candidates.find((c) => typeof c === "string" && c.trim() !== "") as string | undefined;
  const tags = [raw.tags, metadata.tags].find(Array.isArray) as unknown[] | undefined;
  const name = sanitize(pick(raw.serviceName, metadata.serviceName, metadata.name), 100);
  const description = sanitize(pick(raw.description, metadata.description, first.description), 500);
  const mimeType = sanitize(pick(raw.mimeType, metadata.mimeType, first.mimeType), 100);
  const iconUrl = safeIcon(pick(raw.iconUrl, metadata.iconUrl));
  const lastUpdated = toDate(raw.lastUpdated);
  return Object.freeze({
    key: tool ? `${resource}#${tool}` : resource,
    resource,
    type,
    ...(tool && { tool }),
    x402Version,
    challenge,
    ...(lastUpdated && { lastUpdated }),
    metadata: Object.freeze({
      ...(name && { name }),
      ...(description && { description }),
      ...(mimeType && { mimeType }),
      tags: Object.freeze(
        [
          ...new Set(
            (tags ?? [])
              .map((t) => (typeof t === "string" ? sanitize(t, 32) : undefined))
              .filter((t): t is string => !!t),
          ),
        ].slice(0, 10),
      ),
      ...(iconUrl && { iconUrl }),
    }),
    raw,
  });
}

// C0 and C1 controls, bidirectional marks and overrides, zero-width characters and the BOM.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

/**
 * Text fit to show a person: unsafe characters gone, whitespace collapsed, at most `max` characters (an ellipsis if
 * cut).
 */
export function sanitize(text: string | undefined, max: number): string | undefined {
  if (text === undefined) return undefined;
  const clean = text
    .slice(0, max * 4)
    .replace(unsafe, " ")
    .replace(/\s+/g, " ")
    .trim();
  const chars = [...clean];
  const cut = chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : clean;
  return cut === "" ? undefined : cut;
}

/** An icon URL fit to load: https, no credentials, at most 2048 characters. */
function safeIcon(url: string | undefined): string | undefined {
  if (!url || url.length > 2048 || !URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return parsed.protocol === "https:" && !parsed.username && !parsed.password ? parsed.href : undefined;
}

/**
 * Unix seconds (or milliseconds, when too large for seconds) or an ISO string, as a Date; `undefined` for anything
 * else.
 */
function toDate(value: unknown): Date | undefined {
  const ms =
    typeof value === "number"
      ? value > 1e11
        ? value
        : value * 1000
      : typeof value === "string" && /^\d{4}-\d{2}-\d{2}/.test(value)
        ? Date.parse(value)
        : NaN;
  return Number.isFinite(ms) && ms > 0 ? new Date(ms) : undefined;
}

/**
 * Would this client pay the listing, and if not, why: the client's policy, budgets and extensions' reviews, without
 * calling the resource.
 */
export interface ListingQuote {
  readonly listing: DiscoveryListing;
  /** The option the client would pay (unless its `selectRequirement` picks another), else `undefined`. */
  readonly payable: PaymentOption | undefined;
  readonly options: readonly PaymentOption[];
  readonly rejected: readonly RejectedRequirement[];
}

/**
 * Quotes a listing with the client's own rules (`client.quote`); signs, reserves and asks nothing, and sends nothing to
 * the resource.
 */
export async function quoteListing(
  client: X402Client,
  listing: DiscoveryListing,
  { method = "GET" }: { method?: string } = {},
): Promise<ListingQuote> {
  const url =
    listing.tool && !listing.resource.includes("#")
      ? `${listing.resource}#${encodeURIComponent(listing.tool)}`
      : listing.resource;
  const { options, rejected } = await client.quote(listing.challenge, {
    url,
    method: listing.type === "mcp" ? "tools/call" : method,
  });
  return { listing, payable: options[0], options, rejected };
}
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
