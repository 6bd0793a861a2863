/**
 * `x402-pay/discovery`: what can be bought, from a facilitator's discovery endpoint (bazaar, wire.md
 * §8.2 and §12). Lists and searches with filters, pages as async iterators, bounds every read (time and
 * size, and the caller's signal), tolerates the listing forms in the wild, sanitises what a person
 * would be shown, and turns a listing into a quote the client's policy judges without calling it.
 */
export {
  createDiscoveryClient,
  DEFAULT_FACILITATOR_URL,
  DISCOVERY_LIMITS,
  DISCOVERY_ITERATION,
  type DiscoveryClient,
  type DiscoveryClientOptions,
  type DiscoveryFilter,
  type DiscoveryIterateOptions,
  type DiscoveryPage,
} from "./client";
export { normalize, type DiscoveryListing, type ListingMetadata } from "./listing";
export { sanitize } from "./sanitize";
export { quoteListing, type ListingQuote } from "./quote";
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
