/** The 402 state machine, independent of any HTTP library: adapters supply a `Transport`. */
import { engineOf, type PreparedPayment, type X402Client } from "../client";
import { PAYMENT_FLOWS, fail, type PaymentReceipt, type PaymentTerms, type X402Request } from "../contracts";
import {
  BodyNotReplayableError,
  PaymentAbortedError,
  PaymentAlreadyAttemptedError,
  PaymentIdConflictError,
  PaymentNotSentError,
  PaymentOutcomeUnknownError,
  PaymentPendingError,
  PaymentRejectedError,
  PERMIT2_APPROVAL_HINT,
  Permit2AllowanceError,
  clip,
  describeRejection,
  requestDetails,
  isX402Error,
  throwIfAborted,
  type PaymentDetails,
  type RequestDetails,
} from "../errors";
import {
  PAYMENT_HEADERS,
  PERMIT2_ADDRESS,
  PAYMENT_REQUIRED_HEADER,
  SETTLEMENT_HEADERS,
  SETTLEMENT_PENDING,
  decodeBase64Json,
  decodeSettlement,
  parseAtomicAmount,
  parseChallenge,
  paymentIdOf,
  type PaymentChallenge,
  type PaymentRequirement,
  type SettleResponse,
} from "../protocol";
import { readBody } from "./body";
import type { PaymentRequestOptions } from "./options";
import { recordReceipt } from "./receipts";

/** How the handshake talks to an HTTP library. `R` is that library's response type. */
export interface Transport<R> {
  /** The request as it was when the 402 came (URL, method), with the caller's signal. */
  readonly request: X402Request;
  /**
   * Only a payment travels this way (an MCP tool call): no extension tries instead of paying (a sign-in), and no quote
   * is cached.
   */
  readonly paymentOnly?: boolean | undefined;
  /** Why the request cannot be sent again exactly (a stream body), if it cannot: refused before anything is signed. */
  readonly notReplayable?: string | undefined;
  /** A header of the request as the caller sent it. */
  requestHeader(name: string): string | null | undefined;
  /**
   * Sends the request again (method, URL, headers, body bytes) with `headers` added. The added
   * headers never go to another origin on a redirect, nor again once a redirect answer reported a
   * settlement. Throw `PaymentNotSentError` when the request certainly did not leave, and
   * `PaymentAbortedError` when the caller's signal fired before it left.
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
 * Before a request is first sent, with a plug-in that pays before it is asked (the quote cache): a way
 * to pay at once from the route's quote (run it instead of sending), else none. The plug-in may wait
 * while another request probes the same route. `done` ends this request's turn: call it when the
 * request is over. `undefined` (at once, no promise) when the client has no such plug-in.
 */
export function planRequest(client: X402Client, request: X402Request, carriesPayment: boolean) {
  const { prepay } = engineOf(client);
  if (!prepay || carriesPayment) return undefined;
  return prepay.prepay!(request).then(({ challenge, done }) => ({
    prepaid:
      challenge && (<R>(transport: Transport<R>) => handlePaymentRequired(client, transport, undefined, challenge)),
    done,
  }));
}

/**
 * Given a 402 response: read the challenge, let an extension try instead of paying, select, approve
 * and sign a payment, retry once with it, and return the paid response (its receipt recorded) or
 * throw a typed error. Every payment attempt is reported to the client exactly once. With `quoted`
 * (a cached quote) and no response, the request goes out paid at once; if the server answers 402
 * all the same, nothing was charged, and its new terms are paid the usual way.
 */
export async function handlePaymentRequired<R>(
  client: X402Client,
  transport: Transport<R>,
  response: R | undefined,
  quoted?: PaymentChallenge,
): Promise<R> {
  const { request } = transport;
  const where = requestDetails(request);
  const engine = engineOf(client);
  // The plug-in that pays before it is asked learns routes answered directly, and forgets what failed.
  const prepay = transport.paymentOnly ? undefined : engine.prepay;
  const forget = () => prepay?.forget?.(request);
  const unseen: R[] = response === undefined ? [] : [response];
  let challenge: PaymentChallenge | undefined = quoted;
  let then: Then<R> | undefined;
  try {
    if (quoted && transport.notReplayable) then = { unpaid: true };
    else if (!quoted) {
      if (PAYMENT_HEADERS.some((name) => transport.requestHeader(name))) {
        const reason = await serverReason(transport, response!);
        throw new PaymentAlreadyAttemptedError(
          `The request already carried a payment and the server still answered ` +
            `402${reason ? ` (${clip(reason)})` : ""}; x402-pay will not sign another.`,
          { details: { ...where, reason } },
        );
      }
      if (transport.notReplayable) throw new BodyNotReplayableError(transport.notReplayable, { details: where });
      challenge = await readChallenge(transport, response!);
      // A route answered directly, where no plug-in would try instead of paying (a sign-in), is quoted.
      if (prepay?.learn && !engine.tries(challenge) && !transport.redirected(response!))
        prepay.learn(request, challenge);
      // Read: released now, not held (with its connection's state) while the payment is made and sent.
      transport.discard(unseen.pop()!);
      response = undefined;

      const instead = transport.paymentOnly ? undefined : await engine.beforePayment(challenge, request);
      if (instead) {
        throwIfAborted(request.signal, where);
        const answer = await transport.resend(instead);
        if (transport.status(answer) !== 402) return answer;
        unseen.push(answer);
        // Still 402: pay, on the server's latest terms if it restated them.
        challenge = await readChallenge(transport, answer).catch(() => challenge!);
      }
    }

    const result = then ?? (await payAndSend(transport, { engine, challenge: challenge!, quoted, unseen, forget }));
    if ("answer" in result) return result.answer;
    then = result;
  } catch (thrown) {
    forget();
    // An abort that surfaced as the HTTP library's own error (during a sign-in retry or a body read).
    const error =
      !isX402Error(thrown) && request.signal?.aborted
        ? new PaymentAbortedError("The request was aborted: nothing was paid.", { cause: thrown, details: where })
        : thrown;
    if (isX402Error(error)) await engine.report({ settled: false, error, challenge, request });
    throw error;
  } finally {
    for (const r of unseen) transport.discard(r);
  }
  return continued(client, transport, then!);
}

/** How a request goes on after a quote that could not be used: unpaid, or on the 402 that refused it. */
type Then<R> = { stale: R } | { unpaid: true };

/** What paying a challenge needs besides the transport. */
interface Paying<R> {
  engine: ReturnType<typeof engineOf>;
  challenge: PaymentChallenge;
  /** Paid from a cached quote (the first round). */
  quoted: PaymentChallenge | undefined;
  unseen: R[];
  forget: () => void;
}

/**
 * Makes the payment, sends it and reads the answer: the paid answer, or how the request goes on after a stale quote.
 * Once more when the seller corrected a channel's count (nothing was charged), on the corrected state; never twice.
 */
async function payAndSend<R>(transport: Transport<R>, paying: Paying<R>): Promise<{ answer: R } | Then<R>> {
  const { engine, challenge, quoted, unseen, forget } = paying;
  const { request } = transport;
  const where = requestDetails(request);
  for (let round = 0; ; round++) {
    let payment: PreparedPayment;
    try {
      payment = await engine.createPayment(challenge, request);
    } catch (error) {
      // The cached quote is no longer payable: ask the server again.
      if (!quoted || round > 0 || !isX402Error(error) || error.code !== "NO_PAYABLE_REQUIREMENT") throw error;
      forget();
      return { unpaid: true };
    }
    throwIfAborted(request.signal, where);
    const { paid, resent } = await send(transport, payment, where);
    if (quoted && round === 0 && refusedQuote(transport, paid, resent)) {
      // The quote went stale (a new price, a new nonce): the server refused it, charging nothing.
      forget();
      const error = new PaymentRejectedError(
        "The server refused the payment made from the cached quote (402 with new terms): nothing was charged, and " +
          "its new terms are paid instead.",
        aboutPayment(payment, where, { reason: "quote_stale", status: 402 }),
      );
      await engine.report({ settled: false, error, challenge, request });
      return { stale: paid };
    }
    const describe = (settlement: SettleResponse) => engine.describeSettlement(challenge, request, settlement);
    try {
      const { receipt, unknown } = await conclude(transport, payment, paid, { resent, where, unseen, describe });
      // Served without a word of settlement: not a route to pay before being asked.
      if (quoted && !receipt.settled) forget();
      await engine.report(
        unknown
          ? { settled: false, error: unknown, challenge, request }
          : { settled: true, receipt, challenge, request },
      );
      return { answer: paid };
    } catch (error) {
      if (round > 0 || !CORRECTED.has(error as object)) throw error;
      await engine.report({ settled: false, error: error as PaymentRejectedError, challenge, request });
    }
  }
}

/**
 * The direct 402 answer to a payment made from a cached quote, sent once, no settlement reported: refused, nothing
 * charged.
 */
const refusedQuote = <R>(transport: Transport<R>, paid: R, resent: boolean) =>
  transport.status(paid) === 402 && !transport.redirected(paid) && !resent && !readSettlement(transport, paid)?.success;

/**
 * After a quote that could not be used (outside the attempt that reported it): the 402 that refused
 * it, paid the usual way; or the request sent unpaid after all, and a 402 to it paid the usual way.
 */
async function continued<R>(
  client: X402Client,
  transport: Transport<R>,
  then: { stale: R } | { unpaid: true },
): Promise<R> {
  const answer = "stale" in then ? then.stale : await transport.resend({});
  return transport.status(answer) === 402 ? handlePaymentRequired(client, transport, answer) : answer;
}

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
      upTo: scheme === "upto",
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
      await conclude(transport, payment, paid, { resent: true, where, unseen });
      return paid;
    } finally {
      for (const response of unseen) transport.discard(response);
    }
  };
  return { resend };
}

/**
 * A signed payment as its outcome needs it: made now (with its parsed requirement), or kept from an earlier attempt.
 */
type Signed = Pick<PreparedPayment, "headerName" | "headerValue" | "payload" | "payer" | "terms" | "session"> & {
  readonly requirement?: PaymentRequirement;
};

/** Refusals after which a stateful scheme corrected its state from the 402: the payment is made once more. */
const CORRECTED = new WeakSet<object>();

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
async function send<R>(
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
 * What `conclude` needs beside the answer: how it was sent, where, the answers to discard, and how plug-ins describe a
 * settlement.
 */
interface Concluding<R> {
  resent: boolean;
  where: RequestDetails;
  unseen: R[];
  describe?: ((settlement: SettleResponse) => Promise<Record<string, unknown>>) | undefined;
}

/** What a refused answer is known by. */
interface Refused {
  status: number;
  settlement: SettleResponse | undefined;
  /** A 409 of payment-identifier. */
  conflict: boolean;
  resent: boolean;
  where: RequestDetails;
}

/** Throws the typed error of a refused answer (see `conclude`). */
async function refuse<R>(
  transport: Transport<R>,
  payment: Signed,
  paid: R,
  { status, settlement, conflict, resent, where }: Refused,
): Promise<never> {
  const success = settlement?.success;
  const paymentId = paymentIdOf(payment.payload);
  // A refusal proves nothing was charged only as the direct answer to the payment sent once, with no
  // word of a settlement: after a redirect (a seller settles a 3xx answer, and may not say so), beside
  // a settlement reported as successful, or when an earlier sending's fate is unknown, it may have gone through.
  const redirected = transport.redirected(paid);
  if (success || redirected || resent) {
    const reason = success || conflict ? undefined : await serverReason(transport, paid, settlement);
    const how = success ? "reported settled" : redirected ? "redirected" : "sent again";
    throw new PaymentOutcomeUnknownError(
      `The paid request was ${how}, then answered ${status}${reason ? ` (${clip(reason)})` : ""}: the payment may ` +
        `have gone through.`,
      aboutPayment(payment, where, {
        status,
        settlement,
        ...(reason !== undefined && { reason }),
        ...(resent && { resent }),
      }),
    );
  }
  if (conflict) {
    throw new PaymentIdConflictError(
      `The server holds another payment under the id ${paymentId} (409) and refused this one: nothing was charged ` +
        `for it.`,
      aboutPayment(payment, where, { paymentId: paymentId!, status }),
    );
  }
  const { reason, challenge } = await refusal(transport, paid, settlement);
  const about = aboutPayment(payment, where, { reason: reason ?? "", status, settlement });
  if (payment.requirement && reason && /permit2_allowance/i.test(reason))
    throw permit2AllowanceError(payment.requirement, payment.payer, about);
  const said = settlement?.errorMessage ? ` The server said: ${clip(settlement.errorMessage)}` : "";
  const rejected = new PaymentRejectedError(describeRejection(reason && clip(reason)) + said, about);
  if (payment.session && status === 402 && (await payment.session.refused(challenge, reason))) CORRECTED.add(rejected);
  throw rejected;
}

/**
 * Reads the answer to a payment: its receipt (recorded on the answer) and, for an error status with no
 * settlement report, the outcome-unknown error to report; a refusal is thrown as a typed error (the
 * answer goes to `unseen`). `resent`: the header was sent more than once, so a refusal now cannot prove
 * that an earlier sending was not charged.
 */
async function conclude<R>(
  transport: Transport<R>,
  payment: Signed,
  paid: R,
  { resent, where, unseen, describe }: Concluding<R>,
) {
  const status = transport.status(paid);
  const settlement = readSettlement(transport, paid);
  // true or false when the server reported the settlement, else undefined.
  const success = settlement?.success;
  // A transaction is on its way: whatever the status, the money may still move.
  const pending =
    settlement && !success && isPending(settlement) ? pendingError(payment, where, status, settlement) : undefined;
  // A stateful scheme keeps a payment that may still settle at its worst (a deposit that may land is not made twice).
  if (pending) await payment.session?.accepted(settlement);
  if (pending && !(status >= 200 && status < 400)) {
    unseen.push(paid);
    throw pending;
  }
  const paymentId = paymentIdOf(payment.payload);
  // payment-identifier: a 409 is the seller's "another payment holds this id".
  const conflict = status === 409 && !!paymentId && !settlement;
  const refused =
    !pending &&
    (status === 402 ||
      (status === 412 && transport.header(paid, PAYMENT_REQUIRED_HEADER)) ||
      success === false ||
      conflict);
  if (refused) {
    unseen.push(paid);
    await refuse(transport, payment, paid, { status, settlement, conflict, resent, where });
  }

  // A scheme that keeps state reads the answer: what the call was charged, and its channel after it.
  const opened = pending || success === false ? undefined : await payment.session?.accepted(settlement);
  const receipt: PaymentReceipt = {
    ...payment.terms,
    payer: settlement?.payer ?? payment.payer,
    status,
    settled: !!success,
    pending: !!pending,
    settlement,
    transaction: settlement?.transaction || undefined,
    settledAmount: opened
      ? opened.charge
      : parseAtomicAmount(settlement?.amount) === undefined
        ? undefined
        : settlement!.amount,
    extensions: settlement && describe ? await describe(settlement) : {},
    ...(opened?.channel && { channel: opened.channel }),
  };
  recordReceipt(paid as object, receipt);
  // Paid, answered with an error status, and no word on the settlement: returned as the caller's
  // library would return it, and reported as what it is.
  const unknown =
    pending ??
    (receipt.settled || (status >= 200 && status < 400)
      ? undefined
      : new PaymentOutcomeUnknownError(
          `The paid request was answered ${status} without a settlement report: the payment may have settled.`,
          aboutPayment(payment, where, { status, receipt, ...(resent && { resent }) }),
        ));
  return { receipt, unknown };
}

/**
 * A failed settlement that names a broadcast transaction (`settlement_pending`, or a failure with a hash): it may still
 * land.
 */
const isPending = (settlement: SettleResponse) =>
  settlement.errorReason === SETTLEMENT_PENDING || !!settlement.transaction;

/** The outcome of a settlement still on its way: the transaction, its network, and how to settle the question. */
function pendingError(payment: Signed, where: RequestDetails, status: number, settlement: SettleResponse) {
  const reason = settlement.errorReason ?? SETTLEMENT_PENDING;
  const transaction = settlement.transaction ?? "";
  const network = settlement.network || payment.requirement?.caip2 || payment.terms.network;
  const named = transaction ? `transaction ${clip(transaction, 100)}` : "a transaction it did not name";
  const sentence =
    reason === SETTLEMENT_PENDING
      ? `The server reports the settlement pending: ${named} on ${clip(network, 66)} was broadcast and is not yet ` +
        `confirmed. The payment may still complete.`
      : `The server reports the settlement failed (${clip(reason)}) yet names ${named} on ${clip(network, 66)}: ` +
        `until the chain says otherwise, the payment may have gone through.`;
  const said = settlement.errorMessage ? ` The server said: ${clip(settlement.errorMessage)}` : "";
  return new PaymentPendingError(sentence + said, {
    ...aboutPayment(payment, where, { transaction, network, reason, status, settlement }),
    hint:
      "Ask the chain with checkSettlement(client, error) before paying again; budgets keep the amount counted " +
      "meanwhile.",
  });
}

/** The payer never approved Permit2 for the token: what to approve, named in full. */
function permit2AllowanceError(
  requirement: PaymentRequirement,
  owner: string,
  about: ReturnType<typeof aboutPayment<{ reason: string }>>,
) {
  const { asset: token, amount, caip2, network } = requirement;
  const on = caip2 ?? network;
  return new Permit2AllowanceError(
    `The server refused the payment (${about.details.reason}): ${owner} must first let Permit2 (${PERMIT2_ADDRESS}) ` +
      `spend at least ${amount} base units of ${token} on ${on}. Nothing was charged.`,
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
function aboutPayment<M extends object>(payment: Signed, where: RequestDetails, more = {} as M) {
  return {
    details: { ...where, requirement: payment.terms.requirement, payer: payment.payer, ...more },
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
  return (await refusal(transport, response, settlement)).reason;
}

/** A refusal's reason code (a failed settlement's, else the challenge's `error`), and its challenge when readable. */
async function refusal<R>(transport: Transport<R>, response: R, settlement: SettleResponse | undefined) {
  if (settlement && !settlement.success) return { reason: settlement.errorReason ?? "settlement_failed" };
  try {
    const challenge = await readChallenge(transport, response);
    return { reason: challenge.error || undefined, challenge };
  } catch {
    return { reason: undefined };
  }
}
