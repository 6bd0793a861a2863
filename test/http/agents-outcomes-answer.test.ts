/**
 * The two sentences every door's answer is made of, read directly: `paidOf` (what a receipt says was paid: settled,
 * pending, signed without a word of settlement, up to a most, in an asset it cannot price) and `errorAnswer` (a thrown
 * error as the model's answer: money that may have moved is never "nothing", an abort is thrown, foreign text is
 * redacted and cut short). The doors' rows over real sellers are in agents-outcomes.test.ts.
 */
import { describe, expect, it } from "vitest";
import { errorAnswer, paidOf, responseAnswer } from "../../src/agents/answer";
import type { PaymentReceipt } from "../../src/contracts";
import {
  PaymentAbortedError,
  PaymentOutcomeUnknownError,
  PaymentPendingError,
  PaymentRejectedError,
} from "../../src/entries/errors";
import type { KnownAsset } from "../../src/protocol";
import { TX_HASH, USDC_BASE_SEPOLIA } from "../support/seller";

const USDC = { decimals: 6, symbol: "USDC" } as KnownAsset;

/** A receipt of 0.01 USDC on Base Sepolia, settled, with `over` changed. */
const receipt = (over: Partial<Record<keyof PaymentReceipt, unknown>> = {}) =>
  ({
    network: "eip155:84532",
    asset: USDC_BASE_SEPOLIA,
    amount: "10000",
    upTo: false,
    settled: true,
    pending: false,
    transaction: TX_HASH,
    settledAmount: "10000",
    ...over,
  }) as unknown as PaymentReceipt;

describe("paidOf: what a receipt says was paid", () => {
  it.each([
    ["no receipt (free)", undefined, USDC, "nothing"],
    ["settled", receipt(), USDC, `0.01 USDC on eip155:84532 (transaction ${TX_HASH})`],
    ["settled, no transaction named", receipt({ transaction: undefined }), USDC, "0.01 USDC on eip155:84532"],
    [
      "pending",
      receipt({ settled: false, pending: true }),
      USDC,
      `0.01 USDC on eip155:84532 (transaction ${TX_HASH}), pending: the transaction is not yet confirmed`,
    ],
    [
      "pending, not settled and no settled amount",
      receipt({ settled: false, pending: true, settledAmount: undefined }),
      USDC,
      `0.01 USDC on eip155:84532 (transaction ${TX_HASH}), pending: the transaction is not yet confirmed`,
    ],
    [
      "signed, no word of settlement",
      receipt({ settled: false, transaction: undefined, settledAmount: undefined }),
      USDC,
      "0.01 USDC on eip155:84532, signed; the seller did not say it settled: the payment may have moved money",
    ],
    [
      "upto, its settled amount not said",
      receipt({ upTo: true, settledAmount: undefined }),
      USDC,
      `up to 0.01 USDC on eip155:84532 (transaction ${TX_HASH})`,
    ],
    [
      "upto, settled for less",
      receipt({ upTo: true, settledAmount: "2500" }),
      USDC,
      `0.0025 USDC on eip155:84532 (transaction ${TX_HASH})`,
    ],
    [
      "an asset it cannot price",
      receipt({ settledAmount: "7" }),
      undefined,
      `7 base units of ${USDC_BASE_SEPOLIA} on eip155:84532 (transaction ${TX_HASH})`,
    ],
    [
      "an asset it cannot price, settled amount not said",
      receipt({ upTo: true, settledAmount: undefined }),
      undefined,
      `10000 base units of ${USDC_BASE_SEPOLIA} on eip155:84532 (transaction ${TX_HASH})`,
    ],
  ])("%s", (_, given, asset, said) => {
    expect(paidOf(given, asset)).toBe(said);
  });
});

describe("errorAnswer: a thrown error as the model's answer", () => {
  const where = { url: "https://seller.example/premium", method: "GET" };
  const payment = { details: { ...where, status: 500 } } as never;

  it("an x402-pay abort is thrown, even when the signal was not aborted", () => {
    const aborted = new PaymentAbortedError("aborted", { details: where });
    expect(() => errorAnswer(aborted, undefined)).toThrow(aborted);
  });

  it("anything thrown after the run's signal was aborted is thrown, not answered", () => {
    const controller = new AbortController();
    controller.abort();
    const failure = new Error("socket closed");
    expect(() => errorAnswer(failure, controller.signal)).toThrow(failure);
  });

  it("an outcome not known: money may have moved, with the transaction when one is named", () => {
    const lost = new PaymentOutcomeUnknownError("The paid request got no usable answer.", payment);
    expect(errorAnswer(lost, undefined)).toEqual({
      ok: false,
      paid: "unknown: the payment may have moved money; do not pay for this again until it is known",
      error: { code: "PAYMENT_OUTCOME_UNKNOWN", message: "The paid request got no usable answer." },
    });
    const pending = new PaymentPendingError("pending", { details: { ...where, transaction: TX_HASH } } as never);
    expect(errorAnswer(pending, undefined).paid).toBe(
      `unknown: the payment may have moved money (transaction ${TX_HASH}); do not pay for this again until it is known`,
    );
  });

  it.each([
    ["empty", ""],
    ["not a string", 42],
  ])("a transaction that is %s is not named", (_, transaction) => {
    const pending = new PaymentPendingError("pending", { details: { ...where, transaction } } as never);
    expect(errorAnswer(pending, undefined).paid).toBe(
      "unknown: the payment may have moved money; do not pay for this again until it is known",
    );
  });

  it("a refusal by the seller: nothing was paid, and x402-pay's sentence", () => {
    const refused = new PaymentRejectedError("The server refused the payment.", {
      details: { ...where, reason: "insufficient_funds", status: 402, settlement: undefined },
    } as never);
    expect(errorAnswer(refused, undefined)).toEqual({
      ok: false,
      paid: "nothing",
      error: { code: "PAYMENT_REJECTED", message: "The server refused the payment." },
    });
  });

  it("a foreign error: REQUEST_FAILED with its text cut to 300 characters and its code, nothing paid", () => {
    const failure = new TypeError("x".repeat(400), { cause: { code: "ECONNREFUSED" } });
    expect(errorAnswer(failure, undefined)).toEqual({
      ok: false,
      paid: "nothing",
      error: { code: "REQUEST_FAILED", message: `The request failed: ${"x".repeat(300)}… (ECONNREFUSED).` },
    });
  });

  it("a foreign error without a code, or with one that is not text, and a thrown string", () => {
    expect(errorAnswer(new Error("down"), undefined).error?.message).toBe("The request failed: down.");
    const numbered = new Error("down", { cause: { code: 7 } });
    expect(errorAnswer(numbered, undefined).error?.message).toBe("The request failed: down.");
    expect(errorAnswer("refused", undefined).error?.message).toBe("The request failed: refused.");
  });

  it("nothing thrown at all (undefined), and money that may have moved with no details: still an answer", () => {
    expect(errorAnswer(undefined, undefined).error).toEqual({
      code: "REQUEST_FAILED",
      message: "The request failed: undefined.",
    });
    const bare = new PaymentOutcomeUnknownError("lost");
    expect(errorAnswer(bare, undefined).paid).toBe(
      "unknown: the payment may have moved money; do not pay for this again until it is known",
    );
  });
});

describe("responseAnswer: what the model reads of a body, and where a redirect points", () => {
  const bounds = { maxBytes: 64, maxChars: 10 };
  /** The answer to `body` served as `type` (none: no content type), read within `limits`. */
  const read = (
    body: BodyInit | null,
    type: string | undefined,
    {
      status = 200,
      headers = {},
      url,
      limits = bounds,
    }: {
      status?: number;
      headers?: Record<string, string>;
      url?: string;
      limits?: { maxBytes: number; maxChars: number };
    } = {},
  ) => {
    const response = new Response(body, { status, headers: { ...(type && { "content-type": type }), ...headers } });
    if (type === undefined) response.headers.delete("content-type");
    if (url !== undefined) Object.defineProperty(response, "url", { value: url });
    return responseAnswer(response, { receipt: undefined, asset: undefined, bounds: limits, signal: undefined });
  };

  it("text exactly maxChars long is shown whole; one character more is cut, and says of how many", async () => {
    expect(await read("0123456789", "text/plain")).toEqual({
      ok: true,
      status: 200,
      contentType: "text/plain",
      paid: "nothing",
      body: "0123456789",
    });
    const over = await read("0123456789A", "text/plain");
    expect(over).toMatchObject({ body: "0123456789", bodyNote: "cut short: the first 10 characters of 11 characters" });
  });

  it("JSON that fits maxChars once written out is parsed; one character more is shown as text, cut", async () => {
    expect((await read('{"a":"12"}', "application/json")).body).toEqual({ a: "12" });
    const over = await read('{"a":"123"}', "application/json");
    expect(over).toMatchObject({ body: '{"a":"123"', bodyNote: "cut short: the first 10 characters of 11 characters" });
  });

  it("a body over maxBytes is never parsed, even as JSON: its first bytes as text, said to be more", async () => {
    const limits = { maxBytes: 8, maxChars: 100 };
    const answer = await read('{"a":"123456"}', "application/json", { limits });
    expect(answer).toMatchObject({
      body: '{"a":"12',
      bodyNote: "cut short: the first 8 characters of more than 8 bytes",
    });
  });

  it("a character split by the byte limit is dropped at the end, never one the seller sent in the middle", async () => {
    const limits = { maxBytes: 6, maxChars: 100 };
    // "a\uFFFDb€": the seller's own U+FFFD (3 bytes) is kept; the euro sign cut after its first byte is dropped.
    const answer = await read("a\uFFFDb€", "text/plain", { limits });
    expect(answer).toMatchObject({
      body: "a\uFFFDb",
      bodyNote: "cut short: the first 3 characters of more than 6 bytes",
    });
  });

  it("no body, an empty body, a binary body (with its size when declared), and bytes that are not UTF-8", async () => {
    expect(await read(null, "text/plain")).toMatchObject({ bodyNote: "no body" });
    const empty = await read("", "text/plain");
    expect(empty).toMatchObject({ bodyNote: "an empty body" });
    expect("body" in empty).toBe(false);
    const png = new Uint8Array([137, 80, 78, 71]);
    expect((await read(png, "image/png", { headers: { "content-length": "4" } })).bodyNote).toBe(
      "a binary body (image/png, 4 bytes), not shown",
    );
    expect((await read(png, "image/png")).bodyNote).toBe("a binary body (image/png), not shown");
    expect((await read(new Uint8Array([0xff, 0xfe, 0x41]), undefined)).bodyNote).toBe(
      "a body that is not UTF-8 text (3 bytes), not shown",
    );
  });

  it.each([
    ["text/html", "text"],
    ["TEXT/CSV", "text"],
    ["application/json", "json"],
    ["application/vnd.api+json; charset=utf-8", "json"],
    ["application/problem+json", "json"],
    ["text/plain; profile=application/json", "text"],
    ["application/xml", "text"],
    ["application/atom+xml", "text"],
    ["application/vnd.example.feed+xml", "text"],
    ["application/javascript", "text"],
    ["application/x-www-form-urlencoded", "text"],
    ["application/graphql", "text"],
    ["application/octet-stream", "binary"],
    ["application/x-text/plain", "binary"],
    ["image/svg; application/rss+xml", "binary"],
    ["image/x; application/javascript", "binary"],
    ["application/jsonp", "binary"],
    ["xapplication/json", "binary"],
  ])("served as %s: read as %s", async (type, as) => {
    const answer = await read('{"a":1}', type);
    if (as === "json") expect(answer.body).toEqual({ a: 1 });
    else if (as === "text") expect(answer.body).toBe('{"a":1}');
    else expect(answer.bodyNote).toBe(`a binary body (${type}), not shown`);
  });

  it.each([
    [300, "https://seller.example/c"],
    [308, "https://seller.example/c"],
    [399, "https://seller.example/c"],
    [299, undefined],
    [400, undefined],
  ])(
    "answered %s with a Location: the redirect's target resolved against the answer's URL (%s)",
    async (status, where) => {
      const answer = await read(null, undefined, {
        status,
        headers: { location: "../c" },
        url: "https://seller.example/a/b",
      });
      expect(answer.location).toBe(where);
    },
  );

  it("a Location that cannot be resolved (relative, with no URL to resolve it against; or not a URL) is not told", async () => {
    expect((await read(null, undefined, { status: 302, headers: { location: "../c" } })).location).toBeUndefined();
    const bad = await read(null, undefined, {
      status: 302,
      headers: { location: "http://[bad" },
      url: "https://a.example/",
    });
    expect(bad.location).toBeUndefined();
    expect("location" in bad).toBe(false);
  });
});
