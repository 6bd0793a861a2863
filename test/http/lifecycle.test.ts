/**
 * The payment lifecycle through both wrappers: extensions (headers to try instead of paying, payload
 * enrichment, outcome observers), the client's outcome hooks (exactly once per payment attempt),
 * and what a receipt says.
 */
import axios from "axios";
import { HttpResponse } from "msw";
import { describe, expect, it, vi } from "vitest";
import { PaymentAlreadyAttemptedError } from "../../src/entries/errors";
import {
  createX402Client,
  getPaymentReceipt,
  isX402Error,
  type AnyX402Error,
  type PaymentOutcome,
  type PaymentReceipt,
  type X402Plugin,
} from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  PATH,
  SELLER,
  TX_HASH,
  challengeResponse,
  countingSigner,
  createSeller,
  payingClient,
  settlementHeader,
  v1Challenge,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { rejection, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const SIGN_IN = "sign-in-with-x";

/** A v2 challenge declaring a sign-in extension next to the payment option. */
const withSignIn = (extra: Record<string, unknown> = {}) =>
  v2Challenge({
    extensions: {
      [SIGN_IN]: { info: { domain: "seller.example", nonce: "abc" }, schema: { type: "object" } },
      ...extra,
    },
  });

/** An extension that offers a fixed header instead of paying, and records what it saw. */
function signInExtension(header: Record<string, string> | undefined = { "sign-in-with-x": "proof" }) {
  const seen: { declarations: unknown[]; outcomes: PaymentOutcome[] } = { declarations: [], outcomes: [] };
  const extension: X402Plugin = {
    key: SIGN_IN,
    beforePayment: ({ declaration }) => (seen.declarations.push(declaration), header),
    onOutcome: (outcome) => void seen.outcomes.push(outcome),
  };
  return { extension, seen };
}

/** Outcome hooks that record every call. */
function hooks() {
  const settled: PaymentReceipt[] = [];
  const failed: AnyX402Error[] = [];
  return {
    settled,
    failed,
    options: {
      onPaymentSettled: (r: PaymentReceipt) => void settled.push(r),
      onPaymentFailed: (e: AnyX402Error) => void failed.push(e),
    },
  };
}

describe.each(wrappers)("$name: an extension's headers instead of a payment", (wrapper) => {
  it("a server that accepts them answers without any payment: one extra round trip, nothing signed, no outcome", async () => {
    const seller = createSeller({
      challenge: withSignIn(),
      intercept: (request) =>
        request.headers.get("sign-in-with-x") === "proof" ? HttpResponse.json({ signedIn: true }) : undefined,
    });
    server.use(seller.handler);
    const { extension, seen } = signInExtension();
    const recorded = hooks();
    const { client, signs } = payingClient({ plugins: [extension], ...recorded.options });

    const reply = await wrapper.send(client, { url });

    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ signedIn: true });
    expect(seller.requests).toHaveLength(2);
    expect(seller.requests[1]!.headers["payment-signature"]).toBeUndefined();
    expect(signs).toHaveLength(0);
    expect(seen.declarations).toEqual([withSignIn().extensions![SIGN_IN as never]]);
    expect(getPaymentReceipt(reply.raw)).toBeUndefined();
    expect([recorded.settled, recorded.failed, seen.outcomes]).toEqual([[], [], []]);
  });

  it("a server that still answers 402 is paid once, without the extension's header on the paid request", async () => {
    const seller = createSeller({ challenge: withSignIn() });
    server.use(seller.handler);
    const { extension, seen } = signInExtension();
    const recorded = hooks();
    const { client, signs } = payingClient({ plugins: [extension], ...recorded.options });

    const reply = await wrapper.send(client, { url });

    expect(reply.status).toBe(200);
    expect(seller.requests).toHaveLength(3);
    expect(seller.requests[1]!.headers["sign-in-with-x"]).toBe("proof");
    expect(seller.requests[2]!.headers["sign-in-with-x"]).toBeUndefined();
    expect(seller.requests[2]!.headers["payment-signature"]).toBeTruthy();
    expect(signs).toHaveLength(1);
    expect(recorded.settled).toHaveLength(1);
    expect(seen.outcomes).toEqual([expect.objectContaining({ settled: true })]);
  });

  it("is not asked when the 402 does not declare its key", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { extension, seen } = signInExtension();
    await wrapper.send(payingClient({ plugins: [extension] }).client, { url });
    expect(seen.declarations).toEqual([]);
    expect(seen.outcomes).toEqual([]);
    expect(seller.requests).toHaveLength(2);
  });

  it("only the first extension's headers are tried, and a request costs at most one extra round trip", async () => {
    const seller = createSeller({ challenge: withSignIn() });
    server.use(seller.handler);
    const first = signInExtension({ "sign-in-with-x": "one" });
    const second = signInExtension({ "sign-in-with-x": "two" });
    const { client, signs } = payingClient({ plugins: [first.extension, second.extension] });

    await wrapper.send(client, { url });

    expect(seller.requests.map((r) => r.headers["sign-in-with-x"])).toEqual([undefined, "one", undefined]);
    expect(second.seen.declarations).toEqual([]);
    expect(signs).toHaveLength(1);
  });

  it("an extension that throws stops the request with a typed error; nothing is paid", async () => {
    const seller = createSeller({ challenge: withSignIn() });
    server.use(seller.handler);
    const extension: X402Plugin = {
      key: SIGN_IN,
      beforePayment: () => {
        throw new Error("wallet unavailable");
      },
    };
    const recorded = hooks();
    const { client, signs } = payingClient({ plugins: [extension], ...recorded.options });

    const error = await rejection(wrapper.send(client, { url }));

    expect(error.code).toBe("SIGNING_FAILED");
    expect(error.walk()).toMatchObject({ message: "wallet unavailable" });
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
    expect(recorded.failed.map((e) => e.code)).toEqual(["SIGNING_FAILED"]);
  });
});

describe.each(wrappers)("$name: when the extension's retry goes wrong", (wrapper) => {
  it("a 402 to it without a readable challenge: paid on the first 402's terms", async () => {
    const seller = createSeller({
      challenge: withSignIn(),
      intercept: (request) =>
        request.headers.has("sign-in-with-x") ? HttpResponse.text("<html>sign in</html>", { status: 402 }) : undefined,
    });
    server.use(seller.handler);
    const { client, signs } = payingClient({ plugins: [signInExtension().extension] });

    const reply = await wrapper.send(client, { url });

    expect(reply.status).toBe(200);
    expect(signs).toHaveLength(1);
    expect(seller.requests).toHaveLength(3);
    expect(seller.verdicts).toEqual([expect.objectContaining({ ok: true })]);
  });

  it("a network failure on it: rejects as the library reports it; nothing paid, and no outcome hook sees a non-x402 error", async () => {
    const seller = createSeller({
      challenge: withSignIn(),
      intercept: (request) => (request.headers.has("sign-in-with-x") ? HttpResponse.error() : undefined),
    });
    server.use(seller.handler);
    const recorded = hooks();
    const { client, signs } = payingClient({ plugins: [signInExtension().extension], ...recorded.options });

    const error = await rejection(wrapper.send(client, { url }));

    expect(isX402Error(error)).toBe(false);
    if (wrapper.name === "axios") expect(axios.isAxiosError(error)).toBe(true);
    else expect(error).toBeInstanceOf(TypeError);
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(2);
    expect([recorded.settled, recorded.failed]).toEqual([[], []]);
  });
});

describe("fetch: an abort while the extension's retry is in flight", () => {
  it("rejects with ABORTED (nothing was paid), reported once, with the request named", async () => {
    const controller = new AbortController();
    const seller = createSeller({
      challenge: withSignIn(),
      intercept: async (request) => {
        if (!request.headers.has("sign-in-with-x")) return undefined;
        controller.abort();
        await new Promise((resolve) => setTimeout(resolve, 50));
        return HttpResponse.json({ signedIn: true });
      },
    });
    server.use(seller.handler);
    const recorded = hooks();
    const { client, signs } = payingClient({ plugins: [signInExtension().extension], ...recorded.options });

    const error = await rejection(
      wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client)(url, { signal: controller.signal }),
    );

    expect(error).toMatchObject({ name: "AbortError", code: "ABORTED", details: { url, method: "GET" } });
    expect(error.message).toMatch(/aborted.*nothing was paid/);
    expect(error.cause).toMatchObject({ name: "AbortError" });
    expect(signs).toHaveLength(0);
    expect(recorded.failed).toEqual([error]);
  });
});

describe.each(wrappers)("$name: an extension enriching the payload", (wrapper) => {
  const challenge = v2Challenge({
    extensions: {
      "payment-identifier": { info: { required: false }, schema: { type: "object", required: ["required"] } },
      bazaar: { info: { input: { type: "http" } }, schema: {} },
    },
  });
  const idExtension = (seen: unknown[] = []): X402Plugin => ({
    key: "payment-identifier",
    enrichPayload: (context) => {
      seen.push({ declaration: context.declaration, payer: context.payer, amount: context.requirement.amount });
      return { info: { ...(context.declaration as { info: object }).info, id: "pay_0123456789abcdef" } };
    },
  });

  it("merges its fields over the server's declaration, keeps the schema, and echoes every other extension verbatim", async () => {
    const seller = createSeller({ challenge });
    server.use(seller.handler);
    const seen: unknown[] = [];
    const { client } = payingClient({ plugins: [idExtension(seen)] });

    await wrapper.send(client, { url });

    const [payment] = seller.payments;
    expect(payment.extensions["payment-identifier"]).toEqual({
      info: { required: false, id: "pay_0123456789abcdef" },
      schema: { type: "object", required: ["required"] },
    });
    expect(payment.extensions.bazaar).toEqual((challenge.extensions as Record<string, unknown>).bazaar);
    expect(seen).toEqual([
      {
        declaration: (challenge.extensions as Record<string, unknown>)["payment-identifier"],
        payer: expect.any(String),
        amount: "10000",
      },
    ]);
    expect(seller.verdicts[0]?.ok).toBe(true);
  });

  it("replaces a declaration that is not an object with its fields", async () => {
    const seller = createSeller({ challenge: v2Challenge({ extensions: { "payment-identifier": "optional" } }) });
    server.use(seller.handler);
    const extension: X402Plugin = {
      key: "payment-identifier",
      enrichPayload: () => ({ info: { id: "pay_0123456789abcdef" } }),
    };

    await wrapper.send(payingClient({ plugins: [extension] }).client, { url });

    expect(seller.payments[0].extensions).toStrictEqual({
      "payment-identifier": { info: { id: "pay_0123456789abcdef" } },
    });
  });

  it("is not asked for a v1 payment, which carries no extensions", async () => {
    const seller = createSeller({ challenge: v1Challenge({ extensions: challenge.extensions }) });
    server.use(seller.handler);
    const seen: unknown[] = [];
    await wrapper.send(payingClient({ plugins: [idExtension(seen)] }).client, { url });
    expect(seen).toEqual([]);
    expect(seller.payments[0]).not.toHaveProperty("extensions");
  });
});

describe.each(wrappers)("$name: outcome hooks fire exactly once per payment attempt", (wrapper) => {
  it("settled: onPaymentSettled with the receipt", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const recorded = hooks();
    const reply = await wrapper.send(payingClient(recorded.options).client, { url });

    expect(recorded.failed).toEqual([]);
    expect(recorded.settled).toEqual([getPaymentReceipt(reply.raw)]);
    expect(recorded.settled[0]).toMatchObject({ settled: true, status: 200, transaction: TX_HASH });
  });

  it("rejected: onPaymentFailed with PAYMENT_REJECTED", async () => {
    const challenge = v2Challenge();
    const seller = createSeller({
      challenge,
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? challengeResponse({ ...challenge, error: "insufficient_funds" })
          : undefined,
    });
    server.use(seller.handler);
    const recorded = hooks();
    const error = await rejection(wrapper.send(payingClient(recorded.options).client, { url }));

    expect(recorded.settled).toEqual([]);
    expect(recorded.failed).toEqual([error]);
    expect(error.code).toBe("PAYMENT_REJECTED");
  });

  it("refused before signing: onPaymentFailed with the refusal's code", async () => {
    server.use(createSeller().handler);
    const recorded = hooks();
    const error = await rejection(
      wrapper.send(payingClient({ policy: { maxAmountPerPayment: "$0.001" }, ...recorded.options }).client, { url }),
    );
    expect(recorded.failed).toEqual([error]);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
  });

  it("no answer to the paid request: onPaymentFailed with PAYMENT_OUTCOME_UNKNOWN", async () => {
    server.use(
      createSeller({
        intercept: (request) => (request.headers.has("payment-signature") ? HttpResponse.error() : undefined),
      }).handler,
    );
    const recorded = hooks();
    const error = await rejection(wrapper.send(payingClient(recorded.options).client, { url }));
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.message).toBe(
      "The paid request got no usable answer: the payment may have settled. Resend its signed header with x402: resendPayment(error): it cannot pay twice.",
    );
    expect(recorded.failed).toEqual([error]);
    expect(recorded.settled).toEqual([]);
  });

  it("a hook that throws changes nothing: the paid response comes back", async () => {
    server.use(createSeller().handler);
    const client = payingClient({
      onPaymentSettled: () => {
        throw new Error("ledger down");
      },
    }).client;
    const reply = await wrapper.send(client, { url });
    expect(reply.status).toBe(200);
    expect(getPaymentReceipt(reply.raw)?.settled).toBe(true);
  });

  it("an async hook is awaited before the response is handed back", async () => {
    server.use(createSeller().handler);
    const order: string[] = [];
    const client = payingClient({
      onPaymentSettled: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        order.push("hook");
      },
    }).client;
    await wrapper.send(client, { url });
    order.push("response");
    expect(order).toEqual(["hook", "response"]);
  });
});

describe("outcomes of a paid response with an error status", () => {
  /** A seller whose paid answer is `status`, with or without a settlement report. */
  function answering(status: number, settlement?: Record<string, unknown>) {
    const seller = createSeller({
      paid: () =>
        HttpResponse.json({ oops: true }, { status, headers: settlement ? settlementHeader(2, settlement) : {} }),
    });
    server.use(seller.handler);
    return seller;
  }

  it("fetch: a paid 500 without a settlement is returned, its receipt says so, and it is reported as outcome unknown", async () => {
    answering(500);
    const recorded = hooks();
    const response = await wrapFetchWithPayment(
      (i, init) => globalThis.fetch(i, init),
      payingClient(recorded.options).client,
    )(url);

    expect(response.status).toBe(500);
    expect(getPaymentReceipt(response)).toMatchObject({ status: 500, settled: false, settlement: undefined });
    expect(recorded.settled).toEqual([]);
    expect(recorded.failed).toHaveLength(1);
    expect(recorded.failed[0]).toMatchObject({
      code: "PAYMENT_OUTCOME_UNKNOWN",
      details: { status: 500, receipt: { status: 500, settled: false } },
    });
    expect(Object.keys(recorded.failed[0]!.details)).not.toContain("paymentHeader");
  });

  it("fetch: a paid 500 whose settlement succeeded is settled", async () => {
    answering(500, { success: true, transaction: TX_HASH, network: "eip155:84532" });
    const recorded = hooks();
    const response = await wrapFetchWithPayment(
      (i, init) => globalThis.fetch(i, init),
      payingClient(recorded.options).client,
    )(url);
    expect(getPaymentReceipt(response)).toMatchObject({ status: 500, settled: true, transaction: TX_HASH });
    expect(recorded.settled).toHaveLength(1);
    expect(recorded.failed).toEqual([]);
  });

  it('fetch: an opaque answer to the paid request (status 0, what a browser gives for redirect: "manual") is outcome unknown, not settled', async () => {
    server.use(createSeller().handler);
    const recorded = hooks();
    const opaque = Response.error();
    const fetchFn: typeof fetch = (input, init) =>
      new Headers(init?.headers).has("payment-signature") ? Promise.resolve(opaque) : globalThis.fetch(input, init);
    const response = await wrapFetchWithPayment(fetchFn, payingClient(recorded.options).client)(url, {
      redirect: "manual",
    });

    expect(response).toBe(opaque);
    expect(getPaymentReceipt(response)).toMatchObject({ status: 0, settled: false });
    expect(recorded.settled).toEqual([]);
    expect(recorded.failed).toMatchObject([{ code: "PAYMENT_OUTCOME_UNKNOWN", details: { status: 0 } }]);
  });

  it("fetch: a fetch that fails the paid request with an x402 error of its own (another wrapper's) is outcome unknown, not 'not sent'", async () => {
    server.use(createSeller().handler);
    const recorded = hooks();
    const own = new PaymentAlreadyAttemptedError("inner wrapper: already paid");
    const fetchFn: typeof fetch = (input, init) =>
      new Headers(init?.headers).has("payment-signature") ? Promise.reject(own) : globalThis.fetch(input, init);
    const error = await rejection(wrapFetchWithPayment(fetchFn, payingClient(recorded.options).client)(url));

    expect(error).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN", cause: own });
    expect(recorded.failed).toEqual([error]);
  });

  it("fetch: a 200 without a settlement report is delivered, settled: false", async () => {
    answering(200);
    const recorded = hooks();
    const response = await wrapFetchWithPayment(
      (i, init) => globalThis.fetch(i, init),
      payingClient(recorded.options).client,
    )(url);
    expect(getPaymentReceipt(response)).toMatchObject({ status: 200, settled: false, transaction: undefined });
    expect(recorded.settled).toHaveLength(1);
  });

  it.each(wrappers)("$name: a reported failed settlement is a rejection, whatever the status", async (wrapper) => {
    answering(200, {
      success: false,
      errorReason: "invalid_exact_evm_insufficient_balance",
      transaction: "",
      network: "eip155:84532",
    });
    const recorded = hooks();
    const error = await rejection(wrapper.send(payingClient(recorded.options).client, { url }));
    expect(error).toMatchObject({
      code: "PAYMENT_REJECTED",
      reason: "invalid_exact_evm_insufficient_balance",
      details: { status: 200 },
    });
    expect(error.message).toMatch(/balance is too low/);
    expect(recorded.failed).toEqual([error]);
  });
});

describe.each(wrappers)("$name: the receipt", (wrapper) => {
  it("names the URL, method, status, settlement and a display amount", async () => {
    server.use(createSeller().handler);
    const reply = await wrapper.send(payingClient().client, { url: `${url}?q=1`, method: "POST", body: "x" });
    expect(getPaymentReceipt(reply.raw)).toMatchObject({
      url: `${url}?q=1`,
      method: "POST",
      status: 200,
      settled: true,
      amount: "10000",
      displayAmount: "0.01 USDC",
      transaction: TX_HASH,
    });
  });

  it("has no display amount for an asset it cannot value", async () => {
    const asset = "0x1111111111111111111111111111111111111111";
    server.use(createSeller({ challenge: v2Challenge({ accepts: [v2Requirement({ asset })] }) }).handler);
    const reply = await wrapper.send(payingClient({ policy: { allowUnknownAssets: true } }).client, { url });
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ asset, displayAmount: undefined });
  });
});

describe("fetch: getPaymentReceipt on a clone", () => {
  it("a clone of the paid response (and a clone of the clone) has the same receipt", async () => {
    server.use(createSeller().handler);
    const response = await wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), payingClient().client)(url);
    const clone = response.clone();
    const receipt = getPaymentReceipt(response);
    expect(receipt).toBeDefined();
    expect(getPaymentReceipt(clone)).toBe(receipt);
    expect(getPaymentReceipt(clone.clone())).toBe(receipt);
    expect(await clone.json()).toEqual({ data: "premium" });
    expect(await response.json()).toEqual({ data: "premium" });
  });
});

describe("outcome reports reach every observer once, in order: the serving extensions, then the client's hook", () => {
  it("settled", async () => {
    server.use(createSeller({ challenge: withSignIn() }).handler);
    const calls: string[] = [];
    const extension: X402Plugin = { key: SIGN_IN, onOutcome: (o) => void calls.push(`extension:${o.settled}`) };
    const { signer } = countingSigner();
    const client = createX402Client({
      schemes: [exactEvm({ signer })],
      plugins: [extension],
      onPaymentSettled: () => void calls.push("settled"),
      onPaymentFailed: vi.fn(),
    });
    await wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client)(url);
    expect(calls).toEqual(["extension:true", "settled"]);
  });

  it("the scheme that signed is told first (before a hook may pay again); what it throws is ignored", async () => {
    server.use(createSeller({ challenge: withSignIn() }).handler);
    const calls: string[] = [];
    const extension: X402Plugin = { key: SIGN_IN, onOutcome: (o) => void calls.push(`extension:${o.settled}`) };
    const scheme = {
      ...exactEvm({ signer: countingSigner().signer }),
      onOutcome: (o: PaymentOutcome) => {
        calls.push(`scheme:${o.settled}:${o.payment?.requirement.network}`);
        throw new Error("a scheme's observer failing");
      },
    };
    const client = createX402Client({
      schemes: [scheme],
      plugins: [extension],
      onPaymentSettled: () => void calls.push("settled"),
    });
    const response = await wrapFetchWithPayment((i, init) => globalThis.fetch(i, init), client)(url);
    expect(response.status).toBe(200);
    expect(calls).toEqual(["scheme:true:eip155:84532", "extension:true", "settled"]);
  });
});
