/** `x402-pay discover`: a facilitator's listings, each with whether this client would pay it, within `--max-time`. */
import { createDiscoveryClient, quoteListing, sanitize } from "../discovery";
import { amountOf } from "./assets";
import { EXIT } from "./exit";
import type { CliIo } from "./index";
import { CliFailure, UsageError, shown } from "./output";
import { deadline, makeClient } from "./run";

export interface DiscoverOptions {
  type?: string;
  network?: string;
  max?: string;
  maxItems: string;
  maxPages?: string;
  maxTime?: string;
  json?: boolean;
}

const whole = (text: string, flag: string) => {
  const n = /^\d{1,9}$/.test(text) ? Number(text) : 0;
  if (n < 1) throw new UsageError(`${flag} must be a whole number above 0.`);
  return n;
};

export async function discover(
  facilitator: string,
  query: string[],
  options: DiscoverOptions,
  io: CliIo,
): Promise<number> {
  const maxItems = whole(options.maxItems, "--max-items");
  const maxPages = options.maxPages === undefined ? undefined : whole(options.maxPages, "--max-pages");
  const run = deadline(options.maxTime, io.signal);
  const client = await makeClient({ ...(options.max !== undefined && { max: options.max }), quoteOnly: true }, io);
  const discovery = createDiscoveryClient({ url: facilitator });
  const filter = {
    ...(options.type && { type: options.type }),
    ...(options.network && { network: options.network }),
    ...(maxPages && { maxPages }),
    maxItems,
    signal: run.signal,
  };
  const listings = query.length > 0 ? discovery.search(query.join(" "), filter) : discovery.resources(filter);
  let count = 0;
  try {
    for await (const listing of listings) {
      count++;
      const quote = await quoteListing(client, listing);
      const first = listing.challenge.requirements[0]!;
      const rejected = quote.rejected.map((r) => r.reason);
      if (options.json) {
        const { key, resource, tool, type, metadata } = listing;
        const wouldPay = !!quote.payable;
        await io.writeOut(`${JSON.stringify({ key, resource, tool, type, metadata, wouldPay, rejected })}\n`);
        continue;
      }
      const shownAt = quote.payable?.requirement ?? first;
      const price = amountOf(shownAt.amount, shownAt.caip2, shownAt.asset);
      const verdict = quote.payable ? "would pay" : `would not pay (${rejected.join("; ")})`;
      const name = listing.metadata.name ? `  ${listing.metadata.name}` : "";
      const network = shownAt.caip2 ?? shownAt.network;
      await io.writeOut(shown(`${sanitize(listing.key, 2048) ?? ""}${name}\n  ${price} on ${network}: ${verdict}\n`));
    }
  } catch (error) {
    if (!run.timedOut()) throw error;
    const message = `No whole listing within --max-time ${run.seconds} s (${count} listed).`;
    throw new CliFailure(message, EXIT.timeout, { cause: error });
  }
  if (!options.json && count === 0) io.writeErr("Nothing listed.\n");
  return EXIT.ok;
}
