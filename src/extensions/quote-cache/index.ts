export { quoteCache, type QuoteCacheOptions } from "./quote-cache";
