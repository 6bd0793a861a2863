/**
 * What the fetch wrapper does with the connections of Node's own fetch. A 402 body left unread (the
 * challenge came in the header) is drained, not cancelled, when it is small, and cancelled once it
 * stalls past `BODY_LIMITS.drainMs`; the paid request goes on the 402's connection. Against a real
 * loopback server: no msw here, whose passthrough would stand between.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { listenOnLoopback, type LoopbackServer } from "../localnet/listen.js";
import { wrapFetchWithPayment } from "../../src/fetch";
import { BODY_LIMITS } from "../../src/handshake";
import { PATH, encodeHeader, payingClient, v2Challenge } from "../support/seller";

/** The PAYMENT-REQUIRED header every 402 here carries (no resource: the URL is the loopback one). */
const CHALLENGE = encodeHeader(v2Challenge({ resource: undefined }));

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
      response.writeHead(402, {
        "content-type": "application/json",
        "content-length": "100",
        "payment-required": CHALLENGE,
      });
      response.write('{"x402": 2');
    });
    servers.push(seller);
    const paid = await wrapFetchWithPayment(fetch, payingClient().client)(`${seller.url}${PATH}`);
    expect(paid.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(closed).toHaveLength(1);
    expect(closed[0]).toBeGreaterThanOrEqual(150);
  });

  it.each([
    {
      body: "of drainBytes exactly, stalled: drained, so cancelled only after drainMs",
      length: () => String(BODY_LIMITS.drainBytes),
      drained: true,
    },
    {
      body: "over drainBytes: cancelled at once, not read",
      length: () => String(BODY_LIMITS.drainBytes + 1),
      drained: false,
    },
    { body: "of no declared length (chunked): cancelled at once, not read", length: () => undefined, drained: false },
  ])("a 402 body $body", async ({ length, drained }) => {
    BODY_LIMITS.drainMs = 1500;
    let closedAt = Infinity;
    const seller = await listenOnLoopback((request, response) => {
      if (request.headers["payment-signature"])
        return void response.writeHead(200, { "content-type": "application/json" }).end("{}");
      response.on("close", () => (closedAt = Date.now()));
      const declared = length();
      response.writeHead(402, {
        "content-type": "application/json",
        "payment-required": CHALLENGE,
        ...(declared && { "content-length": declared }),
      });
      response.write('{"x402": 2');
    });
    servers.push(seller);
    const started = Date.now();
    const paid = await wrapFetchWithPayment(fetch, payingClient().client)(`${seller.url}${PATH}`);
    expect(paid.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1900));
    expect(closedAt - started).toBeLessThan(drained ? 3000 : 700);
    if (drained) expect(closedAt - started).toBeGreaterThanOrEqual(1400);
  });

  it("is released once the challenge is read, not held while the payment is in flight: a stalled one is cancelled before a slow paid answer comes", async () => {
    BODY_LIMITS.drainMs = 150;
    const events: string[] = [];
    const seller = await listenOnLoopback((request, response) => {
      if (request.headers["payment-signature"]) {
        events.push("paid request");
        setTimeout(
          () => (events.push("paid answer"), response.writeHead(200, { "content-type": "application/json" }).end("{}")),
          800,
        );
        return;
      }
      response.on("close", () => events.push("402 released"));
      response.writeHead(402, {
        "content-type": "application/json",
        "content-length": "100",
        "payment-required": CHALLENGE,
      });
      response.write('{"x402": 2');
    });
    servers.push(seller);
    const paid = await wrapFetchWithPayment(fetch, payingClient().client)(`${seller.url}${PATH}`);
    expect(paid.status).toBe(200);
    expect(events).toEqual(["paid request", "402 released", "paid answer"]);
  });
});

describe("fetch: the paid request's connection", () => {
  /**
   * A seller on loopback that answers 402 until paid (`route` may answer first) and notes each request's client port:
   * one per connection.
   */
  async function countingSeller(route: (request: IncomingMessage, response: ServerResponse) => boolean = () => false) {
    const seen: { ports: number[] } = { ports: [] };
    const seller = await listenOnLoopback((request, response) => {
      seen.ports.push(request.socket.remotePort!);
      if (route(request, response)) return;
      if (request.headers["payment-signature"])
        return void response.writeHead(200, { "content-type": "application/json" }).end('{"paid":true}');
      response.writeHead(402, { "content-type": "application/json", "payment-required": CHALLENGE }).end("{}");
    });
    servers.push(seller);
    return { seller, seen };
  }

  it("goes on the 402's connection: the first paid call to an origin opens one connection, not two (no second TCP or TLS handshake)", async () => {
    const { seller, seen } = await countingSeller();
    const paid = await wrapFetchWithPayment(fetch, payingClient().client)(`${seller.url}${PATH}`);
    expect(paid.status).toBe(200);
    expect(seen.ports).toHaveLength(2);
    expect(new Set(seen.ports).size).toBe(1);
  });

  it("a redirect hop before the 402 reuses it too: three requests, one connection", async () => {
    const { seller, seen } = await countingSeller((request, response) => {
      if (request.url !== "/old") return false;
      response.writeHead(302, { location: PATH }).end();
      return true;
    });
    const paid = await wrapFetchWithPayment(fetch, payingClient().client)(`${seller.url}/old`);
    expect(paid.status).toBe(200);
    expect(seen.ports).toHaveLength(3);
    expect(new Set(seen.ports).size).toBe(1);
  });

  it("is not held back by fake timers installed after x402-pay loaded (vitest's fake setImmediate)", async () => {
    const { seller } = await countingSeller();
    vi.useFakeTimers();
    try {
      const paid = await wrapFetchWithPayment(fetch, payingClient().client)(`${seller.url}${PATH}`);
      expect(paid.status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });
});
