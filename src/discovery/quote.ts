/** A listing quoted with a client's own rules, without calling the resource. */
import type { PaymentCeiling, PaymentOption, X402Client } from "../client";
import type { RejectedRequirement } from "../errors";
import type { DiscoveryListing } from "./listing";

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
  /**
   * Pay what was quoted, not more: `payable`'s amount in its asset on its network, to pass as `x402: { maxAmount }`
   * when the resource is called; `"$0"` (pays nothing) when nothing is payable.
   */
  readonly maxAmount: PaymentCeiling;
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
  const { options, rejected, maxAmount } = await client.quote(listing.challenge, {
    url,
    method: listing.type === "mcp" ? "tools/call" : method,
  });
  return { listing, payable: options[0], options, rejected, maxAmount };
}
