/**
 * The rounds of a payment: make it, send it, conclude on the answer. Once more when the open payment corrected its
 * state from the seller's refusal (nothing was charged), never twice.
 */
import type { PaymentOutcome } from "../contracts";
import { PaymentRejectedError, isX402Error, requestDetails, throwIfAborted, type AnyX402Error } from "../errors";
import type { PaymentChallenge, SettleResponse } from "../protocol";
import { conclude } from "./conclude";
import { readSettlement } from "./read";
import { aboutPayment, send, type Signed } from "./send";
import type { Transport } from "./transport";

/** How a request goes on after a quote that could not be used: unpaid, or on the 402 that refused it. */
export type Then<R> = { stale: R } | { unpaid: true };

/** An outcome to report, once per payment attempt. */
export type Reported =
  | Omit<Extract<PaymentOutcome, { settled: true }>, "payment" | "request">
  | { readonly settled: false; readonly error: AnyX402Error; readonly challenge: PaymentChallenge | undefined };

/** What the rounds need besides the transport: how a payment is made and reported, and what the first round was. */
export interface Paying<R> {
  readonly challenge: PaymentChallenge;
  /** Paid from a cached quote (the first round). */
  readonly quoted?: PaymentChallenge | undefined;
  /** Answers the caller will never see, discarded when the request is over. */
  readonly unseen: R[];
  /** Forgets the route's quote (it failed, or the route is not one to pay before asking). */
  readonly forget?: (() => void) | undefined;
  /** Makes the round's payment: the client's (selected, approved, signed), or a session request's. */
  make(): Promise<Signed>;
  /** Told the made payment before it leaves (a journal writes it down); throws to stop it. */
  signed?: ((payment: Signed) => Promise<void>) | undefined;
  /** Tells how the attempt ended, once per made payment. */
  report(outcome: Reported): Promise<void>;
  describe?: ((settlement: SettleResponse) => Promise<Record<string, unknown>>) | undefined;
}

/**
 * Makes the payment, sends it and reads the answer: the paid answer, or how the request goes on after a stale quote.
 * Once more when the open payment corrected its state from the seller's 402 (nothing was charged); never twice.
 */
export async function payAndSend<R>(transport: Transport<R>, paying: Paying<R>): Promise<{ answer: R } | Then<R>> {
  const { challenge, quoted, forget = () => {}, describe } = paying;
  const where = requestDetails(transport.request);
  for (let round = 0; ; round++) {
    let payment: Signed;
    try {
      payment = await paying.make();
    } catch (error) {
      // The cached quote is no longer payable: ask the server again.
      if (!quoted || round > 0 || !isX402Error(error) || error.code !== "NO_PAYABLE_REQUIREMENT") throw error;
      forget();
      return { unpaid: true };
    }
    throwIfAborted(transport.request.signal, where);
    await paying.signed?.(payment);
    const { paid, resent } = await send(transport, payment, where);
    if (quoted && round === 0 && refusedQuote(transport, paid, resent)) {
      // The quote went stale (a new price, a new nonce): the server refused it, charging nothing.
      forget();
      const error = new PaymentRejectedError(
        "The server refused the payment made from the cached quote (402 with new terms): nothing was charged, and " +
          "its new terms are paid instead.",
        aboutPayment(payment, where, { reason: "quote_stale", status: 402 }),
      );
      await paying.report({ settled: false, error, challenge });
      return { stale: paid };
    }
    const concluded = await conclude(transport, payment, paid, { resent, where, unseen: paying.unseen, describe });
    if ("corrected" in concluded) {
      // A second correction is a refusal like any other: thrown, and reported where every thrown error is.
      if (round > 0) throw concluded.corrected;
      await paying.report({ settled: false, error: concluded.corrected, challenge });
      continue;
    }
    const { receipt, unknown } = concluded;
    // Served without a word of settlement: not a route to pay before being asked.
    if (quoted && !receipt.settled) forget();
    await paying.report(
      unknown ? { settled: false, error: unknown, challenge } : { settled: true, receipt, challenge },
    );
    return { answer: paid };
  }
}

/**
 * The direct 402 answer to a payment made from a cached quote, sent once, no settlement reported: refused, nothing
 * charged.
 */
const refusedQuote = <R>(transport: Transport<R>, paid: R, resent: boolean) =>
  transport.status(paid) === 402 && !transport.redirected(paid) && !resent && !readSettlement(transport, paid)?.success;
