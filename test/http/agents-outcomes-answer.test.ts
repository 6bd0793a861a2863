/**
 * The two sentences every door's answer is made of, read directly: `paidOf` (what a receipt says was paid: settled,
 * pending, signed without a word of settlement, up to a most, in an asset it cannot price) and `errorAnswer` (a thrown
 * error as the model's answer: money that may have moved is never "nothing", an abort is thrown, foreign text is
 * redacted and cut short). The doors' rows over real sellers are in agents-outcomes.test.ts.
 */
import { describe, expect, it } from "vitest";
import { errorAnswer, paidOf } from "../../src/agents/answer";
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
});
