/**
 * Reading the answer to a payment: its receipt, the outcome to report, or the typed error of a refusal. A refusal the
 * open payment corrected its state from is a result of its own (pay once more), never a marked error.
 */
import type { PaymentReceipt } from "../contracts";
import {
  PERMIT2_APPROVAL_HINT,
  Permit2AllowanceError,
  PaymentIdConflictError,
  PaymentOutcomeUnknownError,
  PaymentPendingError,
  PaymentRejectedError,
  clip,
  describeRejection,
  type RequestDetails,
} from "../errors";
import {
  PAYMENT_REQUIRED_HEADER,
  PERMIT2_ADDRESS,
  SETTLEMENT_PENDING,
  parseAtomicAmount,
  paymentIdOf,
  type PaymentRequirement,
  type SettleResponse,
} from "../protocol";
import { readSettlement, refusal, serverReason } from "./read";
import { recordReceipt } from "./receipts";
import { aboutPayment, type Signed } from "./send";
import type { Transport } from "./transport";

/**
 * What `conclude` needs beside the answer: how it was sent, where, the answers to discard, and how plug-ins describe a
 * settlement.
 */
export interface Concluding<R> {
  resent: boolean;
  where: RequestDetails;
  unseen: R[];
  describe?: ((settlement: SettleResponse) => Promise<Record<string, unknown>>) | undefined;
}

/**
 * How an answer concluded: paid (its receipt, and the outcome-unknown error to report when the status says the money
 * may have moved unreported), or refused with a 402 that the open payment corrected its state from: nothing was
 * charged, and paying once more on the corrected state can succeed.
 */
export type Concluded =
  | { readonly receipt: PaymentReceipt; readonly unknown: PaymentOutcomeUnknownError | PaymentPendingError | undefined }
  | { readonly corrected: PaymentRejectedError };

/**
 * Reads the answer to a payment: its receipt (recorded on the answer) and, for an error status with no
 * settlement report, the outcome-unknown error to report; a refusal is thrown as a typed error (the
 * answer goes to `unseen`), or returned as `corrected`. `resent`: the header was sent more than once, so a
 * refusal now cannot prove that an earlier sending was not charged.
 */
export async function conclude<R>(
  transport: Transport<R>,
  payment: Signed,
  paid: R,
  { resent, where, unseen, describe }: Concluding<R>,
): Promise<Concluded> {
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
    return { corrected: await refuse(transport, payment, paid, { status, settlement, conflict, resent, where }) };
  }

  // A scheme that keeps state reads the answer: what the call was charged, and its channel after it.
  const opened = pending || success === false ? undefined : await payment.session?.accepted(settlement);
  const reported = parseAtomicAmount(settlement?.amount) === undefined ? undefined : settlement!.amount;
  const receipt: PaymentReceipt = {
    ...payment.terms,
    payer: settlement?.payer ?? payment.payer,
    status,
    settled: !!success,
    pending: !!pending,
    settlement,
    transaction: settlement?.transaction || undefined,
    // Settled without an amount: a fixed price moved in full; for a most (upto, escrow) it is not known.
    settledAmount: opened
      ? opened.charge
      : (reported ?? (success && !payment.terms.upTo ? payment.terms.amount : undefined)),
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

/** What a refused answer is known by. */
interface Refused {
  status: number;
  settlement: SettleResponse | undefined;
  /** A 409 of payment-identifier. */
  conflict: boolean;
  resent: boolean;
  where: RequestDetails;
}

/**
 * The typed error of a refused answer, thrown; or, when the open payment corrected its state from the seller's 402
 * (nothing was charged), returned for the payment loop to pay once more.
 */
async function refuse<R>(
  transport: Transport<R>,
  payment: Signed,
  paid: R,
  { status, settlement, conflict, resent, where }: Refused,
): Promise<PaymentRejectedError> {
  const success = settlement?.success;
  const paymentId = paymentIdOf(payment.payload);
  // A refusal proves nothing was charged only as the direct answer to the payment sent once, with no
  // word of a settlement: after a redirect (a seller settles a 3xx answer, and may not say so), beside
  // a settlement reported as successful, or when an earlier sending's fate is unknown, it may have gone through.
  const redirected = transport.redirected(paid);
  if (success || redirected || resent) {
    // A kept payment sent again to a scheme's state (a channel): the seller's count is learnt from its 402 all the
    // same, though what this sending did is not known.
    if (resent && payment.session && status === 402) {
      const { challenge, reason } = await refusal(transport, paid, settlement);
      await payment.session.refused(challenge, reason).catch(() => false);
    }
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
  const rejected = new PaymentRejectedError(describeRejection(reason && clip(reason)) + serverSaid(settlement), about);
  if (payment.session && status === 402 && (await payment.session.refused(challenge, reason))) return rejected;
  throw rejected;
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
  return new PaymentPendingError(sentence + serverSaid(settlement), {
    ...aboutPayment(payment, where, { transaction, network, reason, status, settlement }),
    hint:
      "Ask the chain with checkSettlement(client, error) before paying again; budgets keep the amount counted " +
      "meanwhile.",
  });
}

/** The settlement's own words, quoted as data (clipped, escaped) and ended, else nothing. */
const serverSaid = (settlement: SettleResponse | undefined) =>
  settlement?.errorMessage ? ` The server said: ${JSON.stringify(clip(settlement.errorMessage))}.` : "";

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
