export { quoteCache, createQuoteCache, routeOf, PROBE_WAIT_MS, type QuoteCache, type QuoteCacheOptions } from "./quote-cache";
