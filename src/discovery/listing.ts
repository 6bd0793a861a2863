/** A discovery listing as x402-pay reads it: checked, its display metadata sanitised, its accepts a challenge. */
import { isObject, parseChallenge, problemOfDiscoveryResource, type PaymentChallenge } from "../protocol";
import { safeIcon, sanitize, toDate } from "./sanitize";

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

export function normalizeAll(items: readonly unknown[]): {
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
