/** Sending once more the exact signed header an earlier attempt kept, instead of asking and paying. */
import { PAYMENT_FLOWS, fail, type PaymentTerms } from "../contracts";
import { requestDetails, type PaymentDetails } from "../errors";
import { PAYMENT_HEADERS, decodeBase64Json } from "../protocol";
import { conclude } from "./conclude";
import type { PaymentRequestOptions } from "./options";
import { send, type Signed } from "./send";
import type { Transport } from "./transport";

/** A payment to send once more: a `PaymentOutcomeUnknownError`, or the same fields kept from its `details`. */
export interface ResendablePayment {
  readonly details: Pick<PaymentDetails, "paymentHeader" | "requirement" | "payer">;
}

/**
 * The request options (`x402: resendPayment(error)`) that send the request once more with the exact
 * signed header an earlier attempt kept (a `PAYMENT_OUTCOME_UNKNOWN`), instead of asking and paying:
 * nothing is signed, the same header cannot pay twice. The answer is read as a paid answer (receipt,
 * typed errors); as the earlier sending may have gone through, a refusal now is outcome unknown again,
 * never "nothing charged". The client's outcome hooks are not called: that attempt was reported.
 * `InvalidConfigError` at once for anything but such a payment.
 */
export function resendPayment(earlier: ResendablePayment): PaymentRequestOptions {
  const { paymentHeader, requirement, payer } = Object(Object(earlier).details) as Partial<
    ResendablePayment["details"]
  >;
  const { name, value } = Object(paymentHeader) as { name?: unknown; value?: unknown };
  const payload = Object(decodeBase64Json(String(value))).value as Record<string, unknown> | undefined;
  if (
    !PAYMENT_HEADERS.includes(String(name).toUpperCase() as never) ||
    !payload ||
    typeof payload !== "object" ||
    !requirement ||
    typeof payer !== "string"
  ) {
    fail(
      "resendPayment",
      "give it a PAYMENT_OUTCOME_UNKNOWN error, or { details: { paymentHeader: { name, value }, requirement, payer } " +
        "} kept from one",
    );
  }
  // The terms a receipt names, read from the requirement as offered (v1 names its amount maxAmountRequired).
  const { scheme, network, asset, payTo, amount, maxAmountRequired } = requirement as Record<string, string>;
  const resend = async <R>(transport: Transport<R>): Promise<R> => {
    const { request } = transport;
    const where = requestDetails(request);
    const terms: PaymentTerms = {
      x402Version: payload.x402Version === 1 ? 1 : 2,
      url: request.url,
      method: request.method,
      requirement,
      scheme: scheme!,
      network: network!,
      amount: (amount ?? maxAmountRequired)!,
      upTo: scheme === "upto" || scheme === "auth-capture",
      displayAmount: undefined,
      asset: asset!,
      payTo: payTo!,
      payer,
      // As the requirement names it (the scheme that signed is not known here); auth-capture's default is escrow.
      flow:
        PAYMENT_FLOWS.find((f) => f === Object(requirement.extra).paymentFlow) ??
        (scheme === "auth-capture" ? "escrow" : "authorization"),
    };
    const payment: Signed = { headerName: String(name), headerValue: String(value), payload, payer, terms };
    const unseen: R[] = [];
    try {
      // An abort, even before sending, is outcome unknown: the earlier sending's fate is.
      const { paid } = await send(transport, payment, where, true);
      // Sent before, so a refusal cannot be corrected from: conclude throws it as outcome unknown.
      await conclude(transport, payment, paid, { resent: true, where, unseen });
      return paid;
    } finally {
      for (const response of unseen) transport.discard(response);
    }
  };
  return { resend };
}
