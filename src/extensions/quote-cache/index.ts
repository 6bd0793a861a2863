export { quoteCache, type QuoteCacheOptions, type QuoteCache } from "./quote-cache";
