/**
 * How a scheme sends a request its state builds (a refund) through the caller's own paying stack: the wrapped fetch or
 * axios instance the caller pays with, so that its interceptors, headers and transport serve, and the handshake
 * (envelope, bounded read, correction round) is the one every payment takes.
 */
import { InvalidConfigError, abortedAs, throwIfAborted } from "../errors";
import {
  buildPaymentPayload,
  encodeBase64Json,
  paymentHeaderName,
  type PaymentChallenge,
  type PaymentRequirement,
  type SchemePayload,
} from "../protocol";
import type { X402Request } from "./payment";
import type { SessionPayment, SessionRequest } from "./scheme";
import { termsOf } from "./terms";

/** A fetch from `wrapFetchWithPayment(fetch, client)`. */
export type PayingFetch = (
  input: string,
  init: { method: string; signal?: AbortSignal | undefined; x402: { readonly session: SessionRequest } },
) => Promise<{ readonly status: number; readonly body?: { cancel(): Promise<void> } | null }>;

/** An axios instance from `wrapAxiosWithPayment(instance, client)`. */
export interface PayingAxios {
  request(config: {
    url: string;
    method: string;
    signal?: AbortSignal | undefined;
    x402: { readonly session: SessionRequest };
    validateStatus: () => boolean;
  }): Promise<{ readonly status: number }>;
}

/** The paying stack a scheme's own requests go through: a wrapped fetch, or a wrapped axios instance. */
export type PayingStack = PayingFetch | PayingAxios;

/**
 * Sends `session` to `url` (GET) through `through`, the caller's paying stack, and gives the final answer's status
 * (its body let go). What the session concluded is the session's to keep. `InvalidConfigError` when `through` is not a
 * paying stack (`what` names the call).
 */
export async function sendSessionRequest(
  what: string,
  through: PayingStack | undefined,
  { url, session, signal }: { url: string; session: SessionRequest; signal?: AbortSignal | undefined },
): Promise<number> {
  const x402 = { session };
  const axios = typeof (through as PayingAxios | undefined)?.request === "function";
  if (!axios && typeof through !== "function")
    throw new InvalidConfigError(
      `${what}: give it the stack you pay with, { through: wrapFetchWithPayment(fetch, client) } or an axios ` +
        "instance from wrapAxiosWithPayment: the request goes through its handshake.",
      { details: { option: "through" } },
    );
  const request = { url, method: "GET", signal };
  throwIfAborted(signal, { url, method: "GET" });
  try {
    if (axios) {
      // Every status is an answer here: the session reads it, not axios's validation.
      return (await (through as PayingAxios).request({ ...request, x402, validateStatus: () => true })).status;
    }
    const answer = await (through as PayingFetch)(url, { method: "GET", signal, x402 });
    void answer.body?.cancel().catch(() => {});
    return answer.status;
  } catch (error) {
    // An abort before the session's payment left surfaces as the HTTP library's own error: it is ABORTED.
    throw abortedAs(error, request);
  }
}

/**
 * A session request's payment in the envelope and header every payment takes (the declared extensions echoed,
 * `accepted` the requirement verbatim), with the terms its errors and receipt name. Built on the scheme's side, so a
 * bundle that never sends one carries none of it.
 */
export function toSessionPayment(
  challenge: PaymentChallenge,
  request: X402Request,
  signed: { requirement: PaymentRequirement; payload: SchemePayload; payer: string } & Pick<
    SessionPayment,
    "accepted" | "refused"
  >,
): SessionPayment {
  const { requirement, payer } = signed;
  const envelope = buildPaymentPayload(challenge, requirement, signed.payload);
  // It pays nothing of the wallet's: no amount shown, the requirement's terms named as errors and receipts name them.
  const terms = termsOf(requirement, request, { payer, asset: undefined, flow: "authorization" });
  return {
    headerName: paymentHeaderName(requirement.x402Version),
    headerValue: encodeBase64Json(envelope),
    payload: envelope,
    requirement,
    terms,
    payer,
    accepted: signed.accepted,
    refused: signed.refused,
  };
}
