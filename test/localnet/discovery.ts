// A discovery service built here from the bazaar spec (wire.md §8.2, §12): it catalogues what the
// facilitator settles, reading each payment's bazaar declaration with the reference's own extractor
// (@x402/extensions), and serves `GET /discovery/resources` (type, payTo, scheme, network, limit,
// offset) and `GET /discovery/search` (query, cursor). Feed it by passing `catalogue` as the
// facilitator's `extend` (startFacilitator): its after-settle hook adds each paid resource.
//
// Listings alternate `lastUpdated` between unix seconds (the spec) and an ISO string (the reference),
// and v1 items carry `maxAmountRequired`: the forms in the wild.

import type { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { extractDiscoveryInfo } from "@x402/extensions/bazaar";
import { listenOnLoopback } from "./listen.js";

export interface DiscoveryService {
  url: string;
  /** The catalogue's items, newest last. */
  items: Record<string, unknown>[];
  /** Registers the after-settle hook that catalogues paid resources (the facilitator's `extend`). */
  catalogue(facilitator: x402Facilitator): void;
  /** Adds an item as it is (a listing from elsewhere, an MCP tool). */
  add(item: Record<string, unknown>): void;
  stop(): Promise<void>;
}

export async function startDiscoveryService(): Promise<DiscoveryService> {
  const byKey = new Map<string, Record<string, unknown>>();
  let stamp = 0;

  function record(payload: PaymentPayload, requirements: PaymentRequirements) {
    const found = extractDiscoveryInfo(payload, requirements, false);
    if (!found) return;
    const tool = "toolName" in found ? found.toolName : undefined;
    const seconds = Math.floor(Date.now() / 1000);
    const item: Record<string, unknown> = {
      resource: found.resourceUrl,
      type: tool ? "mcp" : "http",
      x402Version: payload.x402Version,
      accepts: [requirements],
      lastUpdated: stamp++ % 2 === 0 ? seconds : new Date(seconds * 1000).toISOString(),
      metadata: { discoveryInfo: found.discoveryInfo, ...(tool && { toolName: tool }) },
      ...(found.description && { description: found.description }),
      ...(found.mimeType && { mimeType: found.mimeType }),
      ...(found.serviceName && { serviceName: found.serviceName }),
      ...(found.tags && { tags: found.tags }),
      ...(found.iconUrl && { iconUrl: found.iconUrl }),
    };
    byKey.set(`${found.resourceUrl}#${tool ?? ""}`, item);
  }

  const matches = (item: Record<string, unknown>, query: URLSearchParams) => {
    const requirement = (item.accepts as Record<string, unknown>[])[0] ?? {};
    if (query.has("type") && item.type !== query.get("type")) return false;
    for (const key of ["payTo", "scheme", "network"])
      if (query.has(key) && requirement[key] !== query.get(key)) return false;
    const q = query.get("query")?.toLowerCase();
    return (
      !q || JSON.stringify([item.resource, item.description, item.serviceName, item.tags]).toLowerCase().includes(q)
    );
  };

  const http = await listenOnLoopback((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const send = (status: number, body: unknown) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const limit = Number(url.searchParams.get("limit") ?? 20);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return send(400, { error: "limit must be 1 to 100" });
    const all = [...byKey.values()].filter((item) => matches(item, url.searchParams));
    if (url.pathname === "/discovery/resources") {
      const offset = Number(url.searchParams.get("offset") ?? 0);
      return send(200, {
        x402Version: 2,
        items: all.slice(offset, offset + limit),
        pagination: { limit, offset, total: all.length },
      });
    }
    if (url.pathname === "/discovery/search") {
      if (!url.searchParams.get("query")) return send(400, { error: "query is required" });
      const start = Number(url.searchParams.get("cursor") ?? 0);
      const next = start + limit < all.length ? String(start + limit) : null;
      return send(200, {
        x402Version: 2,
        resources: all.slice(start, start + limit),
        pagination: { limit, cursor: next },
      });
    }
    return send(404, { error: "not found" });
  });

  return {
    url: http.url,
    get items() {
      return [...byKey.values()];
    },
    catalogue(facilitator) {
      facilitator.onAfterSettle(async ({ paymentPayload, requirements, result }) => {
        if (result.success) record(paymentPayload, requirements);
      });
    },
    add(item) {
      byKey.set(`${String(item.resource)}#${String(item.toolName ?? item.tool ?? "")}`, item);
    },
    stop: http.stop,
  };
}
