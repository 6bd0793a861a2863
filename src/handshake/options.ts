/** What a caller may give one request: `x402` in fetch's init or axios's config, checked before anything is sent. */
import { checkCeiling, type PaymentCeiling, type X402Client } from "../client";
import { checkOptions, checkPaymentId, fail, show, type SessionRequest } from "../contracts";
import type { Transport } from "./transport";

export interface PaymentRequestOptions {
  /**
   * The payment-identifier id to send if the 402 declares the extension: an idempotency key of 16 to
   * 128 characters of `a-z A-Z 0-9 _ -`. Default: a fresh `pay_…` id per payment.
   */
  readonly paymentId?: string | undefined;
  /**
   * The most this request may pay, as the caller was told the price: `"$0.002"` (USD, in stablecoins of known
   * decimals) or `{ network, asset, amount }` (base units of that asset only). A requirement over it, in another asset,
   * or in an asset of unknown value is refused before anything is signed (`NO_PAYABLE_REQUIREMENT`), in every round
   * of the request (a cached quote, a seller's second 402). `"$0"` pays nothing. Default: none (the policy's caps).
   */
  readonly maxAmount?: PaymentCeiling | undefined;
  /**
   * Set by `resendPayment(error)`: the request goes out once, with the signed header an earlier attempt
   * kept, instead of asking and paying. Nothing is signed.
   */
  readonly resend?: (<R>(transport: Transport<R>, client?: X402Client) => Promise<R>) | undefined;
  /**
   * Set by a scheme for a request its state builds (batch-settlement's `refund(url, { through })`): the seller's 402
   * is answered with what the scheme signs, through this request's own stack, instead of a payment.
   */
  readonly session?: SessionRequest | undefined;
}

/** The request's `x402` options, or `InvalidConfigError` naming the one that is wrong. */
export function readPaymentOptions(value: unknown): PaymentRequestOptions {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value))
    fail("x402", `${show(value)} is not an object { paymentId?, maxAmount?, resend? }`);
  checkOptions("x402.", value, {
    paymentId: checkPaymentId,
    maxAmount: checkCeiling,
    resend: (v) => (typeof v === "function" ? undefined : "must come from resendPayment(error)"),
    session: (v) => (typeof Object(v).prepare === "function" ? undefined : "must come from a scheme (a refund)"),
  });
  return value;
}
