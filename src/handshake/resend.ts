/** Sending once more the exact signed header an earlier attempt kept, instead of asking and paying. */
import { engineOf, type X402Client } from "../client";
import {
  PAYMENT_FLOWS,
  fail,
  type KeptPayment,
  type PaymentTerms,
  type ResendContext,
  type X402Request,
} from "../contracts";
import { requestDetails, type PaymentDetails } from "../errors";
import { PAYMENT_HEADERS, decodeBase64Json, parseRequirement, type PaymentChallenge } from "../protocol";
import { conclude } from "./conclude";
import type { PaymentRequestOptions } from "./options";
import { send, type Signed } from "./send";
import type { Transport } from "./transport";

/** A payment to send once more: a `PaymentOutcomeUnknownError`, or the same fields kept from its `details`. */
export interface ResendablePayment {
  readonly details: Pick<PaymentDetails, "paymentHeader" | "requirement" | "payer">;
  /** The attempt that signed it (a journal entry's `id`): a channel sends a voucher only for its own attempt. */
  readonly attempt?: string | undefined;
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
  const kept = keptOf(Object(Object(earlier).details), "resendPayment");
  const given = Object(earlier).attempt as unknown;
  const attempt = typeof given === "string" ? given : undefined;
  const resend = async <R>(transport: Transport<R>, client?: X402Client): Promise<R> => {
    const { request } = transport;
    const payment = signedOf(kept, request);
    // With the client that pays (the wrapped fetch's), a channel's voucher holds its channel as it goes again.
    const requirement = client && parseRequirement(kept.requirement, payment.terms.x402Version);
    const session = requirement && (await held(client!, payment, { request, requirement, attempt }));
    // An abort, even before sending, is outcome unknown: the earlier sending's fate is.
    const { paid, concluded } = await sendKept(transport, { ...payment, session }).finally(() => session?.close());
    // Sent before, so a refusal cannot be corrected from: conclude throws it as outcome unknown.
    if ("corrected" in concluded) throw concluded.corrected;
    return paid;
  };
  return { resend };
}

/**
 * A kept payment of a scheme that keeps state (a channel), held as it goes again and told the answer; `undefined` for
 * other schemes (sent as it is).
 */
const held = (client: X402Client, payment: Signed, context: ResendContext) =>
  engineOf(client).resend(payment.payload, context);

/**
 * A keyed request's payment that a plug-in kept (a journal's unfinished entry) sent once more as it is, instead of
 * signing anew; its outcome is reported as this request's (the ledger records it, the journal ends it).
 */
export async function resumeKept<R>(
  client: X402Client,
  transport: Transport<R>,
  { paymentHeader, terms, reservations, attempt, reported }: KeptPayment,
  challenge: PaymentChallenge,
): Promise<R> {
  const { request } = transport;
  const payload = Object(decodeBase64Json(paymentHeader.value)).value as Record<string, unknown>;
  const payment: Signed = {
    headerName: paymentHeader.name,
    headerValue: paymentHeader.value,
    payload,
    payer: terms.payer,
    terms,
  };
  // A scheme that keeps state (a channel) holds it while its payment is on its way again, and reads the answer.
  const requirement = parseRequirement(terms.requirement, terms.x402Version);
  const session = requirement && (await held(client, payment, { request, requirement, attempt }));
  const { paid, concluded } = await sendKept(transport, { ...payment, session }).finally(() => session?.close());
  if ("corrected" in concluded) throw concluded.corrected;
  const { receipt, unknown } = concluded;
  if (reported) return paid;
  await engineOf(client).report(
    unknown
      ? { settled: false, error: unknown, challenge, request, attempt }
      : { settled: true, receipt, challenge, request, attempt },
    reservations,
  );
  return paid;
}

/** What `resendPayment` sends: an error's `details`, or the same fields. */
type Resendable = ResendablePayment["details"];

/** The resendable payment's fields, checked; `InvalidConfigError` (naming `who`) for anything else. */
function keptOf(details: Partial<Resendable>, who: string): Resendable {
  const { paymentHeader, requirement, payer } = details;
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
      who,
      "give it a PAYMENT_OUTCOME_UNKNOWN error, or { details: { paymentHeader: { name, value }, requirement, payer } " +
        "} kept from one",
    );
  }
  return { paymentHeader: { name: String(name), value: String(value) }, requirement, payer };
}

/** The payment a kept header is, for sending and concluding, with the terms a receipt names. */
function signedOf({ paymentHeader, requirement, payer }: Resendable, request: X402Request): Signed {
  const payload = Object(decodeBase64Json(paymentHeader.value)).value as Record<string, unknown>;
  // The terms a receipt names, read from the requirement as offered (v1 names its amount maxAmountRequired).
  const { scheme, network, asset, payTo, amount, maxAmountRequired } = requirement as Record<string, string>;
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
  return { headerName: paymentHeader.name, headerValue: paymentHeader.value, payload, payer, terms };
}

/** Sends a kept payment once (it was sent before) and reads the answer as a paid answer. */
async function sendKept<R>(transport: Transport<R>, payment: Signed) {
  const where = requestDetails(transport.request);
  const unseen: R[] = [];
  try {
    const { paid } = await send(transport, payment, where, true);
    return { paid, concluded: await conclude(transport, payment, paid, { resent: true, where, unseen }) };
  } finally {
    for (const response of unseen) transport.discard(response);
  }
}
