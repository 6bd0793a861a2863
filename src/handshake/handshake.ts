/**
 * The 402 state machine, independent of any HTTP library: adapters supply a `Transport`. Its steps live beside it:
 * reading (read.ts), the rounds of paying and sending (rounds.ts, send.ts), concluding on the answer (conclude.ts),
 * resending a kept payment (resend.ts) and the requests a scheme's state builds (session.ts).
 */
import { engineOf, type X402Client } from "../client";
import type { X402Request } from "../contracts";
import {
  BodyNotReplayableError,
  PaymentAlreadyAttemptedError,
  abortedAs,
  clip,
  isX402Error,
  requestDetails,
  throwIfAborted,
} from "../errors";
import { PAYMENT_HEADERS, type PaymentChallenge } from "../protocol";
import { readChallenge, serverReason } from "./read";
import { resumeKept } from "./resend";
import { payAndSend, type Paying, type Then } from "./rounds";
import { sessionRequest } from "./session";
import type { Transport } from "./transport";

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
 * all the same, nothing was charged, and its new terms are paid the usual way. A session request
 * (`request.session`, a refund) answers the 402 with what its scheme builds instead.
 */
export async function handlePaymentRequired<R>(
  client: X402Client,
  transport: Transport<R>,
  response: R | undefined,
  quoted?: PaymentChallenge,
): Promise<R> {
  const { request } = transport;
  if (request.session && response !== undefined) return sessionRequest(client, transport, response, request.session);
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
      const read = await readAndTry(client, transport, { response: response!, unseen });
      if ("answer" in read) return read.answer;
      challenge = read.challenge;
    }
    // A keyed request whose payment a plug-in kept (a journal's unfinished entry) sends it again, never signs anew.
    const kept = then ? undefined : await engine.resume(request);
    if (kept) return await resumeKept(client, transport, kept, challenge!);
    const paying: Paying<R> = {
      challenge: challenge!,
      quoted,
      unseen,
      forget,
      make: () => engine.createPayment(challenge!, request),
      signed: (payment) =>
        engine.signed(
          { terms: payment.terms, paymentHeader: { name: payment.headerName, value: payment.headerValue } },
          request,
        ),
      report: (outcome) => engine.report({ ...outcome, request }),
      describe: (settlement) => engine.describeSettlement(challenge!, request, settlement),
    };
    const result = then ?? (await payAndSend(transport, paying));
    if ("answer" in result) return result.answer;
    then = result;
  } catch (thrown) {
    forget();
    const error = abortedAs(thrown, request);
    if (isX402Error(error)) await engine.report({ settled: false, error, challenge, request });
    throw error;
  } finally {
    for (const r of unseen) transport.discard(r);
  }
  return continued(client, transport, then!);
}

/**
 * The 402 read: refused at once when the request carried a payment already or cannot be sent again; its challenge
 * (a route answered directly is quoted); then a plug-in's try instead of paying (a sign-in), whose answer is final
 * unless it is a 402 again, whose restated terms are then paid.
 */
async function readAndTry<R>(
  client: X402Client,
  transport: Transport<R>,
  { response, unseen }: { response: R; unseen: R[] },
): Promise<{ answer: R } | { challenge: PaymentChallenge }> {
  const { request } = transport;
  const where = requestDetails(request);
  const engine = engineOf(client);
  const prepay = transport.paymentOnly ? undefined : engine.prepay;
  if (PAYMENT_HEADERS.some((name) => transport.requestHeader(name))) {
    const reason = await serverReason(transport, response);
    throw new PaymentAlreadyAttemptedError(
      `The request already carried a payment and the server still answered ` +
        `402${reason ? ` (${clip(reason)})` : ""}; x402-pay will not sign another.`,
      { details: { ...where, reason } },
    );
  }
  if (transport.notReplayable) throw new BodyNotReplayableError(transport.notReplayable, { details: where });
  let challenge = await readChallenge(transport, response);
  // A route answered directly, where no plug-in would try instead of paying (a sign-in), is quoted.
  if (prepay?.learn && !engine.tries(challenge) && !transport.redirected(response)) prepay.learn(request, challenge);
  // Read: released now, not held (with its connection's state) while the payment is made and sent.
  transport.discard(unseen.pop()!);

  const instead = transport.paymentOnly ? undefined : await engine.beforePayment(challenge, request);
  if (instead) {
    throwIfAborted(request.signal, where);
    const answer = await transport.resend(instead);
    if (transport.status(answer) !== 402) return { answer };
    unseen.push(answer);
    // Still 402: pay, on the server's latest terms if it restated them.
    challenge = await readChallenge(transport, answer).catch(() => challenge);
  }
  return { challenge };
}

/**
 * After a quote that could not be used (outside the attempt that reported it): the 402 that refused
 * it, paid the usual way; or the request sent unpaid after all, and a 402 to it paid the usual way.
 */
async function continued<R>(client: X402Client, transport: Transport<R>, then: Then<R>): Promise<R> {
  const answer = "stale" in then ? then.stale : await transport.resend({});
  return transport.status(answer) === 402 ? handlePaymentRequired(client, transport, answer) : answer;
}
