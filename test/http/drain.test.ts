/**
 * A 402 body left unread by the fetch wrapper (the challenge came in the header) is drained, not
 * cancelled, when it is small, and cancelled once it stalls past `BODY_LIMITS.drainMs`. Against a real
 * loopback server and Node's own fetch: no msw here, whose passthrough would stand between.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { listenOnLoopback, type LoopbackServer } from "../../localnet/listen.js";
import { wrapFetchWithPayment } from "../../src/fetch";
import { BODY_LIMITS } from "../../src/handshake";
import { PATH, payingClient, v2Challenge } from "../support/seller";

const servers: LoopbackServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.stop())));

describe("fetch: a 402 body left unread", () => {
  const saved = { ...BODY_LIMITS };
  afterEach(() => void Object.assign(BODY_LIMITS, saved));

  it("small but stalled (challenge in the header): the payment goes on at once, and the stalled body is cancelled after drainMs", async () => {
    BODY_LIMITS.drainMs = 200;
    const closed: number[] = [];
    const started = Date.now();
    const seller = await listenOnLoopback((request, response) => {
      if (request.headers["payment-signature"]) {
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
        return;
      }
      response.on("close", () => closed.push(Date.now() - started));
      // Says 100 bytes, sends 10, then nothing.
      response.writeHead(402, { "content-type": "application/json", "content-length": "100", "payment-required": Buffer.from(JSON.stringify(v2Challenge({ resource: undefined }))).toString("base64") });
      response.write("{\"x402\": 2");
    });
    servers.push(seller);
    const paid = await wrapFetchWithPayment(fetch, payingClient().client)(`${seller.url}${PATH}`);
    expect(paid.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(closed).toHaveLength(1);
    expect(closed[0]).toBeGreaterThanOrEqual(150);
  });
});
