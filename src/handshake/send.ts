/** Sending a signed payment: once, or once more unchanged where a payment id makes that safe; never signed again. */
import type { PreparedPayment } from "../client";
import type { OpenPayment } from "../contracts";
import {
  PaymentAbortedError,
  PaymentNotSentError,
  PaymentOutcomeUnknownError,
  isX402Error,
  type RequestDetails,
} from "../errors";
import { paymentIdOf, type PaymentRequirement } from "../protocol";
import { readSettlement } from "./read";
import type { Transport } from "./transport";

/**
 * A signed payment as its sending and its outcome need it: made now (the client's, or a session request's), or kept
 * from an earlier attempt. `session`: the open payment of a scheme that keeps state, told the answer.
 */
export type Signed = Pick<PreparedPayment, "headerName" | "headerValue" | "payload" | "payer" | "terms"> & {
  readonly requirement?: PaymentRequirement | undefined;
  readonly session?: Pick<OpenPayment, "accepted" | "refused"> | undefined;
};

/** Answers of a gateway that lost the seller's answer or never reached it. */
const GATEWAY_ERRORS = [502, 503, 504];

/**
 * Sends the paid request. Once it may have left, a failure is "outcome unknown", never a plain error.
 * A payment that carries a payment-identifier id is sent once more, unchanged, after a transport
 * failure or a gateway error (502, 503, 504 with no settlement report), unless the signal fired: a
 * seller that took it answers from its idempotency cache, and the same signed header cannot pay twice.
 * Never signed again: a new signature under the same id is a conflict to the seller. `resent`: the
 * header was sent before (the caller resends it), so it goes once.
 */
export async function send<R>(
  transport: Transport<R>,
  payment: Signed,
  where: RequestDetails,
  resent = false,
): Promise<{ paid: R; resent: boolean }> {
  const headers = { [payment.headerName]: payment.headerValue };
  let again = !resent && paymentIdOf(payment.payload) !== undefined;
  for (;;) {
    try {
      const paid = await transport.resend(headers);
      if (
        !again ||
        !GATEWAY_ERRORS.includes(transport.status(paid)) ||
        readSettlement(transport, paid) ||
        transport.request.signal?.aborted
      )
        return { paid, resent };
      transport.discard(paid);
    } catch (error) {
      const options = { cause: error, ...aboutPayment(payment, where, resent ? { resent } : {}) };
      if (!resent && isX402Error(error) && error.code === "PAYMENT_NOT_SENT")
        throw new PaymentNotSentError(error.message, options);
      if (!resent && isX402Error(error) && error.code === "ABORTED")
        throw new PaymentAbortedError(error.message, { cause: error.cause, details: where });
      if (!again || transport.request.signal?.aborted) {
        throw new PaymentOutcomeUnknownError("The paid request got no usable answer: the payment may have settled.", {
          ...options,
          hint: "Resend its signed header with x402: resendPayment(error): it cannot pay twice.",
        });
      }
    }
    again = false;
    resent = true;
  }
}

/**
 * Options of an error about a signed payment: `details` name it; the signed header and payload are on
 * `details` too, but not enumerable, so logging `details` does not log them.
 */
export function aboutPayment<M extends object>(payment: Signed, where: RequestDetails, more = {} as M) {
  return {
    details: { ...where, requirement: payment.terms.requirement, payer: payment.payer, ...more },
    hidden: { paymentHeader: { name: payment.headerName, value: payment.headerValue }, payload: payment.payload },
  };
}
