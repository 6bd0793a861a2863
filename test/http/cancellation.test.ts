/**
 * The request's AbortSignal reaches every phase of a payment. An abort before the paid request left
 * rejects at once (fetch: an `AbortError` with code ABORTED; axios: its own CanceledError), sends
 * nothing more, and is reported once; an abort after the paid request left is an unknown outcome.
 */
import axios from "axios";
import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { createX402Client, resendPayment, type AnyX402Error } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { PATH, SELLER, account, createSeller, encodeHeader, v1Challenge } from "../support/seller";
import { rejection } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

/** A promise that never settles: a wallet prompt left open, a hook that waits for a person. */
const forever = () => new Promise<never>(() => {});

interface Case {
  name: string;
  /** Client options whose phase waits forever and calls `started()` when reached. */
  options: (started: () => void) => Parameters<typeof createX402Client>[0];
}

const signer = (sign: () => Promise<`0x${string}`>) => ({ address: account.address, signTypedData: sign });
const paying = (extra: object = {}) => ({ schemes: [exactEvm({ signer: account })], ...extra });

const phases: Case[] = [
  { name: "selectRequirement", options: (started) => paying({ selectRequirement: () => (started(), forever()) }) },
  { name: "onBeforePayment", options: (started) => paying({ onBeforePayment: () => (started(), forever()) }) },
  {
    name: "the wallet prompt",
    options: (started) => ({ schemes: [exactEvm({ signer: signer(() => (started(), forever())) })] }),
  },
];

/** Runs `send` with a signal that fires as soon as the phase under test is reached. */
async function abortWhenReached(
  c: Case,
  send: (client: ReturnType<typeof createX402Client>, signal: AbortSignal) => Promise<unknown>,
) {
  const controller = new AbortController();
  const failed: AnyX402Error[] = [];
  const options = c.options(() => setTimeout(() => controller.abort(), 5));
  const client = createX402Client({ ...options, onPaymentFailed: (e) => void failed.push(e) });
  const started = Date.now();
  const error = await rejection(send(client, controller.signal));
  return { error, failed, elapsed: Date.now() - started };
}

describe.each(phases)("an abort while waiting in $name", (c) => {
  it("fetch: rejects at once with an AbortError (code ABORTED); nothing more is sent", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { error, failed, elapsed } = await abortWhenReached(c, (client, signal) =>
      wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client)(url, { signal }),
    );

    expect(error).toMatchObject({ name: "AbortError", code: "ABORTED" });
    expect(error.cause).toMatchObject({ name: "AbortError" });
    expect(elapsed).toBeLessThan(2000);
    expect(seller.requests).toHaveLength(1);
    expect(failed).toEqual([error]);
  });

  it("axios: rejects at once with axios's CanceledError; nothing more is sent; reported as ABORTED", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { error, failed } = await abortWhenReached(c, (client, signal) =>
      wrapAxiosWithPayment(axios.create(), client).get(url, { signal }),
    );

    expect(axios.isCancel(error)).toBe(true);
    expect(seller.requests).toHaveLength(1);
    expect(failed.map((e) => e.code)).toEqual(["ABORTED"]);
  });
});

describe("an abort in the turn before the paid request leaves (fetch waits one for the 402's connection)", () => {
  it("fetch: ABORTED, reported once; the paid request never left, so it is not an unknown outcome", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const controller = new AbortController();
    const failed: AnyX402Error[] = [];
    // The wallet signs and, in the next turn (while the fetch wrapper waits its one), the caller aborts.
    const wallet = {
      address: account.address,
      signTypedData: async (args: Parameters<typeof account.signTypedData>[0]) => {
        setImmediate(() => controller.abort());
        return account.signTypedData(args);
      },
    };
    const client = createX402Client({
      schemes: [exactEvm({ signer: wallet })],
      onPaymentFailed: (e) => void failed.push(e),
    });
    const error = await rejection(
      wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client)(url, { signal: controller.signal }),
    );

    expect(error).toMatchObject({ name: "AbortError", code: "ABORTED", details: { url, method: "GET" } });
    expect(error.cause).toBe(controller.signal.reason);
    expect(seller.requests).toHaveLength(1);
    expect(failed).toEqual([error]);
  });

  it("fetch, resending a kept header (x402: resendPayment): still PAYMENT_OUTCOME_UNKNOWN, the earlier sending's fate", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const client = createX402Client(paying());
    const paid = wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client);
    // A header kept from a payment whose answer was lost.
    const lost = new AbortController();
    const first = await rejection(
      wrapFetchWithPayment(async (input, init) => {
        const response = await globalThis.fetch(input, init);
        if (new Headers(init?.headers).has("payment-signature"))
          throw new TypeError("fetch failed: the answer was lost");
        return response;
      }, client)(url, { signal: lost.signal }),
    );
    expect(first.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    const controller = new AbortController();
    // Fires in the turn the wrapper waits before the resent header leaves.
    setImmediate(() => controller.abort());
    const error = await rejection(paid(url, { signal: controller.signal, x402: resendPayment(first) }));
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.details.paymentHeader).toEqual(first.details.paymentHeader);
  });
});

describe("an abort while the 402 body is still arriving", () => {
  /** A v1 402 whose JSON body sends a first chunk and then never ends. */
  const dripping = () =>
    http.all(url, () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(JSON.stringify(v1Challenge()).slice(0, 40)));
        },
      });
      return new HttpResponse(body, { status: 402, headers: { "content-type": "application/json" } });
    });

  it("fetch: rejects with ABORTED instead of waiting for the body", async () => {
    server.use(dripping());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const client = createX402Client(paying());
    const error = await rejection(
      wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client)(url, { signal: controller.signal }),
    );
    expect(error).toMatchObject({ code: "ABORTED" });
  });

  it("axios (responseType stream): rejects as a cancellation", async () => {
    server.use(dripping());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const instance = wrapAxiosWithPayment(axios.create(), createX402Client(paying()));
    const error = await rejection(instance.get(url, { signal: controller.signal, responseType: "stream" }));
    expect(axios.isCancel(error)).toBe(true);
  });
});

describe("an abort after the paid request left", () => {
  /** A seller that holds the paid request until the test lets it go. */
  function holding() {
    let arrived!: () => void;
    const paidArrived = new Promise<void>((resolve) => (arrived = resolve));
    const seller = createSeller({
      intercept: async (request) => {
        if (!request.headers.has("payment-signature")) return undefined;
        arrived();
        await new Promise((resolve) => setTimeout(resolve, 200));
        return HttpResponse.json(
          { late: true },
          {
            headers: {
              "PAYMENT-RESPONSE": encodeHeader({ success: true, transaction: "0x1", network: "eip155:84532" }),
            },
          },
        );
      },
    });
    server.use(seller.handler);
    return { seller, paidArrived };
  }

  it("fetch: PAYMENT_OUTCOME_UNKNOWN, with the signed header to reconcile", async () => {
    const { seller, paidArrived } = holding();
    const controller = new AbortController();
    void paidArrived.then(() => controller.abort());
    const failed: AnyX402Error[] = [];
    const client = createX402Client(paying({ onPaymentFailed: (e: AnyX402Error) => void failed.push(e) }));
    const error = await rejection(
      wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client)(url, { signal: controller.signal }),
    );

    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.details.paymentHeader.value).toBe(seller.requests[1]!.headers["payment-signature"]);
    expect(failed).toEqual([error]);
  });

  it("axios: PAYMENT_OUTCOME_UNKNOWN too, not a plain cancellation that would hide a payment", async () => {
    const { paidArrived } = holding();
    const controller = new AbortController();
    void paidArrived.then(() => controller.abort());
    const instance = wrapAxiosWithPayment(axios.create(), createX402Client(paying()));
    const error = await rejection(instance.get(url, { signal: controller.signal }));
    expect(axios.isCancel(error)).toBe(false);
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
  });
});

describe("a signal that has already fired", () => {
  it("fetch: the first request fails as fetch fails it; nothing is paid or reported", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const failed: AnyX402Error[] = [];
    const client = createX402Client(paying({ onPaymentFailed: (e: AnyX402Error) => void failed.push(e) }));
    const error = await rejection(
      wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client)(url, { signal: AbortSignal.abort() }),
    );
    expect(error.name).toBe("AbortError");
    expect(seller.requests).toHaveLength(0);
    expect(failed).toEqual([]);
  });
});

describe("the caller's signal reaches every send", () => {
  /** A fetch that records the signal each send was given. */
  function recording() {
    const signals: (AbortSignal | null | undefined)[] = [];
    const fetchFn: typeof fetch = (input, init) => {
      signals.push(init?.signal);
      return globalThis.fetch(input, init);
    };
    return { signals, fetchFn };
  }

  it.each([
    { form: "init.signal", call: (f: typeof fetch, signal: AbortSignal) => f(url, { signal }) },
    { form: "a Request's signal", call: (f: typeof fetch, signal: AbortSignal) => f(new Request(url, { signal })) },
  ])("given in $form: both sends carry one that fires with it", async ({ call }) => {
    server.use(createSeller().handler);
    const { signals, fetchFn } = recording();
    const controller = new AbortController();
    const response = await call(wrapFetchWithPayment(fetchFn, createX402Client(paying())), controller.signal);
    expect(response.status).toBe(200);
    expect(signals).toHaveLength(2);
    controller.abort();
    expect(signals.map((s) => s?.aborted)).toEqual([true, true]);
  });

  it("given none: the sends get none either (there is nothing to follow)", async () => {
    server.use(createSeller().handler);
    const { signals, fetchFn } = recording();
    expect((await wrapFetchWithPayment(fetchFn, createX402Client(paying()))(url)).status).toBe(200);
    expect(signals).toEqual([undefined, undefined]);
  });
});
