/** What a caller may give one request: `x402` in fetch's init or axios's config, checked before anything is sent. */
import { checkOptions, checkPaymentId, fail, show, type SessionRequest } from "../contracts";
import type { Transport } from "./transport";

export interface PaymentRequestOptions {
  /**
   * The payment-identifier id to send if the 402 declares the extension: an idempotency key of 16 to
   * 128 characters of `a-z A-Z 0-9 _ -`. Default: a fresh `pay_…` id per payment.
   */
  readonly paymentId?: string | undefined;
  /**
   * Set by `resendPayment(error)`: the request goes out once, with the signed header an earlier attempt
   * kept, instead of asking and paying. Nothing is signed.
   */
  readonly resend?: (<R>(transport: Transport<R>) => Promise<R>) | undefined;
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
    fail("x402", `${show(value)} is not an object { paymentId?, resend? }`);
  checkOptions("x402.", value, {
    paymentId: checkPaymentId,
    resend: (v) => (typeof v === "function" ? undefined : "must come from resendPayment(error)"),
    session: (v) => (typeof Object(v).prepare === "function" ? undefined : "must come from a scheme (a refund)"),
  });
  return value;
}
