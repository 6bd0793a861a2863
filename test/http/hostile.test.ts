/**
 * Bounded work against a hostile server, through both wrappers: a 402 body that never ends or never
 * stops growing, a challenge with thousands of requirements or a huge reason, and nesting meant to
 * blow the stack. Each ends in a short typed error before any wallet prompt.
 */
import axios from "axios";
import { http, passthrough } from "msw";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { listenOnLoopback, type LoopbackServer } from "../localnet/listen.js";
import { wrapAxiosWithPayment } from "../../src/axios";
import { wrapFetchWithPayment } from "../../src/fetch";
import { BODY_LIMITS } from "../../src/handshake";
import {
  PATH,
  SELLER,
  challengeResponse,
  createSeller,
  payingClient,
  v1Challenge,
  v1Requirement,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { rejection, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const encoder = new TextEncoder();

/**
 * A real server on loopback whose 402 body is written chunk by chunk: `chunk(i)` gives each next
 * piece, `undefined` stops writing without ending the body. (msw buffers a mocked body before Node's
 * http client sees it, so an endless body needs a real socket.)
 */
async function streamed402(chunk: (index: number) => Uint8Array | undefined) {
  const stats = { written: 0 };
  const seller = await listenOnLoopback((_request, response) => {
    response.writeHead(402, { "content-type": "application/json" });
    let index = 0;
    const write = () => {
      for (let next = chunk(index++); next !== undefined && !response.destroyed; next = chunk(index++)) {
        stats.written += next.length;
        if (!response.write(next)) return void response.once("drain", write);
      }
    };
    write();
  });
  servers.push(seller);
  server.use(http.all(`${seller.url}/*`, () => passthrough()));
  return { stats, url: `${seller.url}${PATH}` };
}

const servers: LoopbackServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.stop())));

/**
 * fetch hands the 402 over at its headers and x402-pay reads the body, bounded. axios reads every
 * body itself before any adapter wrapper sees the response, unless the caller asks for a stream:
 * with `responseType: "stream"` the bound is x402-pay's; otherwise it is axios's own `timeout` and
 * `maxContentLength` (README, axios).
 */
type Client = ReturnType<typeof payingClient>["client"];
const bodyReaders = [
  {
    name: "fetch",
    send: (client: Client, to: string) => wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client)(to),
  },
  {
    name: "axios, responseType stream",
    send: (client: Client, to: string) =>
      wrapAxiosWithPayment(axios.create(), client).get(to, { responseType: "stream" }),
  },
];

describe.each(bodyReaders)("$name: a 402 body", ({ send }) => {
  const saved = { ...BODY_LIMITS };
  beforeEach(() => void (BODY_LIMITS.ms = 300));
  afterEach(() => void Object.assign(BODY_LIMITS, saved));

  it("that never ends: INVALID_CHALLENGE once the time bound passes; nothing signed", async () => {
    const { url: to } = await streamed402((i) =>
      i === 0 ? encoder.encode(JSON.stringify(v1Challenge()).slice(0, 30)) : undefined,
    );
    const { client, signs } = payingClient();
    const started = Date.now();

    const error = await rejection(send(client, to));

    expect(error.code).toBe("INVALID_CHALLENGE");
    expect(error.message).toMatch(/did not finish within 0.3 s/);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(signs).toHaveLength(0);
  });

  it("that never stops growing: INVALID_CHALLENGE at the size bound, and reading stops there", async () => {
    const piece = encoder.encode(" ".repeat(64 * 1024));
    const { stats, url: to } = await streamed402(() => piece);
    const { client, signs } = payingClient();

    const error = await rejection(send(client, to));

    expect(error.code).toBe("INVALID_CHALLENGE");
    expect(error.message).toMatch(/larger than 1024 KiB/);
    expect(signs).toHaveLength(0);
    // Socket buffers allow some read-ahead; an unbounded read would go on until the test times out.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const written = stats.written;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stats.written).toBe(written);
    expect(written).toBeLessThan(BODY_LIMITS.bytes * 8);
  });
});

describe.each(wrappers)("$name: messages stay short however large the challenge", (wrapper) => {
  it("2,000 unpayable requirements: the message names a few and counts the rest; details list them all", async () => {
    const accepts = Array.from({ length: 2000 }, (_, i) => v2Requirement({ scheme: `scheme-${i}` }));
    server.use(createSeller({ challenge: v2Challenge({ accepts }), delivery: "body" }).handler);
    const { client, signs } = payingClient();

    const error = await rejection(wrapper.send(client, { url }));

    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.message.length).toBeLessThan(1000);
    expect(error.message).toMatch(/and 1997 more/);
    expect(error.details.rejected).toHaveLength(2000);
    expect(signs).toHaveLength(0);
  });

  it("a rejection whose reason is 10 KB (Node refuses headers over 16 KiB): the message is clipped, details.reason is whole", async () => {
    const challenge = v2Challenge();
    const reason = `insufficient_funds ${"x".repeat(10_000)}`;
    server.use(
      createSeller({
        challenge,
        intercept: (request) =>
          request.headers.has("payment-signature") ? challengeResponse({ ...challenge, error: reason }) : undefined,
      }).handler,
    );
    const error = await rejection(wrapper.send(payingClient().client, { url }));

    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.message.length).toBeLessThan(1000);
    expect(error.reason).toBe(reason);
  });
});

describe.each(wrappers)("$name: nesting meant to blow the stack", (wrapper) => {
  const nested = (depth: number): unknown => (depth === 0 ? "leaf" : { deeper: nested(depth - 1) });

  it.each([
    {
      where: "extra",
      challenge: () =>
        v2Challenge({ accepts: [v2Requirement({ extra: { name: "USDC", version: "2", vendor: nested(200) } })] }),
    },
    { where: "extensions", challenge: () => v2Challenge({ extensions: { bazaar: nested(1000) } }) },
    { where: "a v1 body", challenge: () => v1Challenge({ accepts: [v1Requirement({ extra: nested(200) })] }) },
  ])("in $where: INVALID_CHALLENGE before any wallet prompt", async ({ challenge }) => {
    server.use(createSeller({ challenge: challenge() }).handler);
    const { client, signs } = payingClient();
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("INVALID_CHALLENGE");
    expect(error.message).toMatch(/nested more than 32 levels/);
    expect(signs).toHaveLength(0);
  });

  it("a legitimately nested challenge (a JSON schema 10 levels deep) is still paid", async () => {
    const seller = createSeller({
      challenge: v2Challenge({ extensions: { bazaar: { info: {}, schema: nested(10) } } }),
    });
    server.use(seller.handler);
    const reply = await wrapper.send(payingClient().client, { url });
    expect(reply.status).toBe(200);
    expect(seller.payments[0].extensions.bazaar.schema).toEqual(nested(10));
  });
});
