/**
 * The quote cache: each route's last 402 challenge (origin, method, path and query), so the next
 * request to it goes out paid at once: one round trip instead of two. Concurrent first requests to a
 * route wait for one probe's 402 instead of each asking.
 */
import { checkOptions, fail, is, show, type X402Plugin, type X402Request } from "../../contracts";
import type { PaymentChallenge } from "../../protocol";

export interface QuoteCacheOptions {
  /** How long a route's quote is used, in seconds. Default 300. */
  ttlSeconds?: number | undefined;
  /** Routes remembered; past that, the least recently used are forgotten. Default 1000. */
  maxEntries?: number | undefined;
}

export interface QuoteCache {
  /** The route's quote, if it has a fresh one. */
  lookup(route: string): PaymentChallenge | undefined;
  /** Remembers the route's challenge (and lets requests waiting for it go). */
  learn(route: string, challenge: PaymentChallenge): void;
  forget(route: string): void;
  /**
   * Before a request to the route is sent: waits while another request probes it (at most
   * `PROBE_WAIT_MS`), else makes this request the probe. `done` ends the probe, if this was it.
   */
  probe(route: string, signal?: AbortSignal): Promise<() => void>;
}

/** Longest a request waits for another's probe of the same route before asking on its own. */
export const PROBE_WAIT_MS = 10_000;

/** A route's key: method, origin, path and query. Never shared across origins. */
export const routeOf = (request: { readonly url: string; readonly method: string }): string => {
  const url = new URL(request.url);
  return `${request.method.toUpperCase()} ${url.origin}${url.pathname}${url.search}`;
};

const count = (max: number) =>
  is((v) => Number.isSafeInteger(v) && v > 0 && v <= max, `a whole number from 1 to ${max}`);

/**
 * The quote cache, as a plug-in: `createX402Client({ plugins: [quoteCache()] })`. Each route's 402 is
 * remembered (origin, method, path and query) and the next request to it is paid at once: one round trip
 * instead of two. It pays before the server asks, so it is off unless given. A route whose quote is
 * refused, unsettled or failed is forgotten and asked again.
 */
export function quoteCache(options: QuoteCacheOptions = {}): X402Plugin & { readonly cache: QuoteCache } {
  const cache = createQuoteCache(options);
  const forget = (request: X402Request) => cache.forget(routeOf(request));
  return Object.freeze({
    name: "quote cache",
    cache,
    async prepay(request: X402Request) {
      const route = routeOf(request);
      let done = () => {};
      if (!cache.lookup(route)) done = await cache.probe(route, request.signal);
      return { challenge: cache.lookup(route), done };
    },
    learn: (request: X402Request, challenge: PaymentChallenge) => cache.learn(routeOf(request), challenge),
    forget,
  });
}

/** The cache behind `quoteCache`. */
export function createQuoteCache(options: QuoteCacheOptions = {}, now: () => number = Date.now): QuoteCache {
  if (typeof options !== "object" || options === null)
    fail("quoteCache", `${show(options)} is not { ttlSeconds?, maxEntries? }`);
  const given = options;
  checkOptions("quoteCache.", given, { ttlSeconds: count(86_400), maxEntries: count(1_000_000) });
  const ttl = (given.ttlSeconds ?? 300) * 1000;
  const max = given.maxEntries ?? 1000;
  const quotes = new Map<string, { challenge: PaymentChallenge; until: number }>();
  const probes = new Map<string, { wait: Promise<void>; end: () => void }>();
  const end = (route: string) => {
    probes.get(route)?.end();
    probes.delete(route);
  };
  return {
    lookup(route) {
      const quote = quotes.get(route);
      if (!quote || quote.until <= now()) return void quotes.delete(route);
      // Most recently used last: the first entry is the one to forget.
      quotes.delete(route);
      quotes.set(route, quote);
      return quote.challenge;
    },
    learn(route, challenge) {
      quotes.delete(route);
      quotes.set(route, { challenge, until: now() + ttl });
      if (quotes.size > max) quotes.delete(quotes.keys().next().value!);
      end(route);
    },
    forget: (route) => void quotes.delete(route),
    async probe(route, signal) {
      const running = probes.get(route);
      if (running) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const aborted = new Promise<void>((resolve) =>
          signal?.addEventListener("abort", () => resolve(), { once: true }),
        );
        await Promise.race([
          running.wait,
          aborted,
          new Promise<void>((resolve) => (timer = setTimeout(resolve, PROBE_WAIT_MS))),
        ]);
        clearTimeout(timer);
        return () => undefined;
      }
      let release!: () => void;
      const wait = new Promise<void>((resolve) => (release = resolve));
      const probe = { wait, end: release };
      probes.set(route, probe);
      return () => {
        if (probes.get(route) === probe) end(route);
      };
    },
  };
}
