/**
 * A request a scheme's state builds (a batch-settlement refund), answering the seller's 402 in place of a payment:
 * the same bounded read, sending, conclusion and correction round as a payment, without selection, policy, budgets or
 * approval (it moves no money from the wallet). Money that comes back is told to the client.
 */
import type { X402Client } from "../client";
import type { ChannelRefund, SessionPayment, SessionRequest } from "../contracts";
import { abortedAs } from "../errors";
import { readChallenge } from "./read";
import { payAndSend, type Reported } from "./rounds";
import type { Signed } from "./send";
import type { Transport } from "./transport";

/**
 * Runs `session` on the seller's 402: its payment sent and concluded (once more after a correction), the answer
 * returned; or the 402 itself when the session needed only the terms. Throws the typed errors a payment would.
 */
export async function sessionRequest<R>(
  client: X402Client,
  transport: Transport<R>,
  response: R,
  session: SessionRequest,
): Promise<R> {
  const { request } = transport;
  const unseen: R[] = [];
  const refunds: ChannelRefund[] = [];
  try {
    const challenge = await readChallenge(transport, response);
    let next = await session.prepare(challenge, request);
    if (!next) return response;
    unseen.push(response);
    const make = async () => {
      const payment = next ?? (await session.prepare(challenge, request));
      next = undefined;
      if (!payment) throw new TypeError("a session request that paid once must pay again after a correction");
      return watched(payment, refunds);
    };
    let last: Reported | undefined;
    const report = async (outcome: Reported) => void (last = outcome);
    const result = await payAndSend(transport, { challenge, unseen, make, report });
    // What came back is told to the plug-ins (a ledger, a budget), whatever the answer's status.
    for (const refund of refunds) await client.refunded(refund);
    // Answered without a word of how it ended (a 5xx): said, not taken for a refusal.
    if (last && !last.settled) throw last.error;
    // No quote was used, so the rounds end with an answer.
    return (result as { answer: R }).answer;
  } catch (thrown) {
    throw abortedAs(thrown, request);
  } finally {
    for (const r of unseen) transport.discard(r);
  }
}

/** The session's payment as the rounds send it; what it reports came back is collected in `refunds`. */
function watched(payment: SessionPayment, refunds: ChannelRefund[]): Signed {
  return {
    ...payment,
    session: {
      refused: (corrective, reason) => payment.refused(corrective, reason),
      async accepted(settlement) {
        const outcome = await payment.accepted(settlement);
        if (outcome.refund) refunds.push(outcome.refund);
        return outcome;
      },
    },
  };
}
