/** The 402 state machine, independent of any HTTP library: adapters supply a `Transport`. */
import type { PaymentReceipt, PreparedPayment, X402Client, X402Request } from "../client";
import {
  BodyNotReplayableError,
  PaymentAbortedError,
  PaymentAlreadyAttemptedError,
  PaymentNotSentError,
  PaymentOutcomeUnknownError,
  PaymentRejectedError,
  PERMIT2_APPROVAL_HINT,
  Permit2AllowanceError,
  clip,
  describeRejection,
  requestDetails,
  isX402Error,
  throwIfAborted,
  type RequestDetails,
} from "../errors";
import {
  PAYMENT_HEADERS,
  PERMIT2_ADDRESS,
  PAYMENT_REQUIRED_HEADER,
  SETTLEMENT_HEADERS,
  decodeSettlement,
  parseAtomicAmount,
  parseChallenge,
  type PaymentChallenge,
  type SettleResponse,
} from "../protocol";
import { readBody } from "./body";
import { recordReceipt } from "./receipts";

/** How the handshake talks to an HTTP library. `R` is that library's response type. */
export interface Transport<R> {
  /** The request as it was when the 402 came (URL, method), with the caller's signal. */
  readonly request: X402Request;
  /** Why the request cannot be sent again exactly (a stream body), if it cannot: refused before anything is signed. */
  readonly notReplayable?: string | undefined;
  /** A header of the request as the caller sent it. */
  requestHeader(name: string): string | null | undefined;
  /**
   * Sends the request again (method, URL, headers, body bytes) with `headers` added. The added
   * headers never go to another origin on a redirect, nor again once a redirect answer reported a
   * settlement. Throw `PaymentNotSentError` when the request certainly did not leave.
   */
  resend(headers: Record<string, string>): Promise<R>;
  status(response: R): number;
  header(response: R, name: string): string | null | undefined;
  /** Did this answer come after redirects (hops that may have settled the payment without a word)? */
  redirected(response: R): boolean;
  /** The raw body of a 402: text, bytes, a stream, or parsed JSON (read bounded by the handshake). */
  body(response: R): unknown;
  /** Releases a response the caller will never see. */
  discard(response: R): void;
}

/**
 * Given a 402 response: read the challenge, let an extension try instead of paying, select, approve
 * and sign a payment, retry once with it, and return the paid response (its receipt recorded) or
 * throw a typed error. Every payment attempt is reported to the client exactly once.
 */
export async function handlePaymentRequired<R>(client: X402Client, transport: Transport<R>, response: R): Promise<R> {
  const { request } = transport;
  const where = requestDetails(request);
  const unseen = [response];
  let challenge: PaymentChallenge | undefined;
  try {
    if (PAYMENT_HEADERS.some((name) => transport.requestHeader(name))) {
      const reason = await serverReason(transport, response);
      throw new PaymentAlreadyAttemptedError(
        `The request already carried a payment and the server still answered 402${reason ? ` (${clip(reason)})` : ""}; x402-pay will not sign another.`,
        { details: { ...where, reason } },
      );
    }
    if (transport.notReplayable) throw new BodyNotReplayableError(transport.notReplayable, { details: where });
    challenge = await readChallenge(transport, response);

    const instead = await client.beforePayment(challenge, request);
    if (instead) {
      throwIfAborted(request.signal, where);
      const answer = await transport.resend(instead);
      if (transport.status(answer) !== 402) return answer;
      unseen.push(answer);
      // Still 402: pay, on the server's latest terms if it restated them.
      challenge = await readChallenge(transport, answer).catch(() => challenge!);
    }

    const payment = await client.createPayment(challenge, request);
    throwIfAborted(request.signal, where);
    const paid = await send(transport, payment, where);
    const status = transport.status(paid);
    const settlement = readSettlement(transport, paid);
    // true or false when the server reported the settlement, else undefined.
    const success = settlement?.success;
    const refused = status === 402 || (status === 412 && transport.header(paid, PAYMENT_REQUIRED_HEADER)) || success === false;
    if (refused) {
      unseen.push(paid);
      // A refusal proves nothing was charged only as the direct answer to the payment, with no word of
      // a settlement: after a redirect (a seller settles a 3xx answer, and may not say so), or beside
      // a settlement reported as successful, the payment may have gone through.
      if (success || transport.redirected(paid)) {
        throw new PaymentOutcomeUnknownError(
          `The paid request was ${success ? "reported settled" : "redirected"}, then answered ${status}: the payment may have gone through.`,
          aboutPayment(payment, where, { status, settlement }),
        );
      }
      const reason = await serverReason(transport, paid, settlement);
      const about = aboutPayment(payment, where, { reason: reason ?? "", status, settlement });
      if (reason && /permit2_allowance/i.test(reason)) throw permit2AllowanceError(payment, about);
      const said = settlement?.errorMessage ? ` The server said: ${clip(settlement.errorMessage)}` : "";
      throw new PaymentRejectedError(describeRejection(reason && clip(reason)) + said, about);
    }

    const receipt: PaymentReceipt = {
      ...payment.terms,
      payer: settlement?.payer ?? payment.payer,
      status,
      settled: !!success,
      settlement,
      transaction: settlement?.transaction || undefined,
      settledAmount: parseAtomicAmount(settlement?.amount) === undefined ? undefined : settlement!.amount,
      extensions: settlement ? await client.describeSettlement(challenge, request, settlement) : {},
    };
    recordReceipt(paid as object, receipt);
    if (receipt.settled || (status >= 200 && status < 400)) {
      await client.report({ settled: true, receipt, challenge, request });
    } else {
      // Paid, answered with an error status, and no word on the settlement: returned as the caller's
      // library would return it, and reported as what it is.
      const error = new PaymentOutcomeUnknownError(
        `The paid request was answered ${status} without a settlement report: the payment may have settled.`,
        aboutPayment(payment, where, { status, receipt }),
      );
      await client.report({ settled: false, error, challenge, request });
    }
    return paid;
  } catch (thrown) {
    // An abort that surfaced as the HTTP library's own error (during a sign-in retry or a body read).
    const error = !isX402Error(thrown) && request.signal?.aborted ? new PaymentAbortedError("The request was aborted: nothing was paid.", { cause: thrown, details: where }) : thrown;
    if (isX402Error(error)) await client.report({ settled: false, error, challenge, request });
    throw error;
  } finally {
    for (const r of unseen) transport.discard(r);
  }
}

/** Sends the paid request. Once it may have left, a failure is "outcome unknown", never a plain error. */
async function send<R>(transport: Transport<R>, payment: PreparedPayment, where: RequestDetails): Promise<R> {
  try {
    return await transport.resend({ [payment.headerName]: payment.headerValue });
  } catch (error) {
    const options = { cause: error, ...aboutPayment(payment, where) };
    if (isX402Error(error) && error.code === "PAYMENT_NOT_SENT") throw new PaymentNotSentError(error.message, options);
    throw new PaymentOutcomeUnknownError("The paid request got no usable answer: the payment may have settled.", {
      ...options,
      hint: "details.paymentHeader holds the exact signed header: resending it cannot pay twice.",
    });
  }
}

/** The payer never approved Permit2 for the token: what to approve, named in full. */
function permit2AllowanceError(payment: PreparedPayment, about: ReturnType<typeof aboutPayment<{ reason: string }>>) {
  const { asset: token, amount, caip2, network } = payment.requirement;
  const owner = payment.payer;
  const on = caip2 ?? network;
  return new Permit2AllowanceError(
    `The server refused the payment (${about.details.reason}): ${owner} must first let Permit2 (${PERMIT2_ADDRESS}) spend at least ${amount} base units of ${token} on ${on}. Nothing was charged.`,
    {
      details: { ...about.details, token, owner, spender: PERMIT2_ADDRESS, network: on, amount },
      hidden: about.hidden,
      hint: PERMIT2_APPROVAL_HINT,
    },
  );
}

/**
 * Options of an error about a signed payment: `details` name it; the signed header and payload are on
 * `details` too, but not enumerable, so logging `details` does not log them.
 */
function aboutPayment<M extends object>(payment: PreparedPayment, where: RequestDetails, more = {} as M) {
  return {
    details: { ...where, requirement: payment.requirement.raw, payer: payment.payer, ...more },
    hidden: { paymentHeader: { name: payment.headerName, value: payment.headerValue }, payload: payment.payload },
  };
}

/** The challenge of a 402 (or 412): the PAYMENT-REQUIRED header, else the body. */
async function readChallenge<R>(transport: Transport<R>, response: R) {
  const header = transport.header(response, PAYMENT_REQUIRED_HEADER);
  return parseChallenge({
    header,
    body: header ? undefined : await readBody(transport.body(response), transport.request.signal),
    contentType: transport.header(response, "content-type"),
  });
}

/** The settlement the response reports (PAYMENT-RESPONSE first), if any. */
function readSettlement<R>(transport: Transport<R>, response: R): SettleResponse | undefined {
  return SETTLEMENT_HEADERS.map((name) => decodeSettlement(transport.header(response, name))).find(Boolean);
}


/** The server's reason code for a 402: a failed settlement's, else the challenge's `error`. */
async function serverReason<R>(transport: Transport<R>, response: R, settlement = readSettlement(transport, response)) {
  if (settlement && !settlement.success) return settlement.errorReason ?? "settlement_failed";
  try {
    return (await readChallenge(transport, response)).error || undefined;
  } catch {
    return undefined;
  }
}
