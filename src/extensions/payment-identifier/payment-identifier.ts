import { PAYMENT_IDENTIFIER, generatePaymentId, problemOfPaymentIdentifierDeclaration } from "../../protocol";
import type { X402Plugin } from "../../contracts";

/**
 * Built in, on for every client: where a 402 declares payment-identifier (an `info.required` boolean,
 * as the reference checks), the payload carries an id (the caller's `x402: { paymentId }`, else a fresh
 * one) beside the declared `required`. A payment with an id is resent unchanged after a transport
 * failure (see the handshake). A plug-in given under the same key replaces this one.
 */
export const paymentIdentifier: X402Plugin = {
  name: "payment-identifier",
  key: PAYMENT_IDENTIFIER,
  enrichPayload: ({ declaration, request }) =>
    problemOfPaymentIdentifierDeclaration(declaration) === undefined
      ? { info: { id: request.paymentId ?? generatePaymentId() } }
      : undefined,
};
