/**
 * The cooperative refund: the seller is asked, with a voucher for exactly what was charged (a call charged nothing),
 * to send back what the channel holds beyond it; its authoriser signs the refund and its facilitator sends it. The
 * request is a session request: it goes through the caller's own paying stack and its handshake.
 */
import {
  sendSessionRequest,
  toSessionPayment,
  type ChannelHold,
  type ChannelRefund,
  type ChannelState,
  type PayingStack,
  type SessionRequest,
} from "../../contracts";
import {
  ChallengeNotFoundError,
  InvalidConfigError,
  PaymentRejectedError,
  UnpayableRequirementError,
  requestDetails,
  type RejectedDetails,
} from "../../errors";
import { parseAtomicAmount, type PaymentChallenge, type PaymentRequirement, type SettleResponse } from "../../protocol";
import { correctFrom } from "./answer";
import { keptOrFromChain, signVoucher, type Channel, type Tools } from "./open";
import { emptied, settleOwners } from "./owners";
import { BATCH_SETTLEMENT } from "./wire";

export interface RefundOptions {
  /** Base units to take back; default: all the channel holds beyond what was charged. */
  amount?: string | undefined;
  /**
   * The stack you pay with, which the refund goes through (its handshake, your interceptors and headers): a fetch from
   * `wrapFetchWithPayment(fetch, client)`, or an axios instance from `wrapAxiosWithPayment`. Its client's plug-ins
   * are told what came back: a ledger records the refund (`kind: "refund"`), a budget lets go of what it held.
   */
  through: PayingStack;
  signal?: AbortSignal | undefined;
}

export interface RefundResult {
  /** The channel's id. */
  readonly channel: string;
  /** What came back to the wallet, in base units. */
  readonly refunded: string;
  /** What the channel still holds. */
  readonly balance: string;
  readonly transaction: string | undefined;
  readonly settlement: SettleResponse;
}

/** The batch-settlement requirement a seller's terms offer (protocol v2), else `UNPAYABLE_REQUIREMENT`. */
export function batchRequirementOf(challenge: PaymentChallenge, url: string, what: string): PaymentRequirement {
  const requirement = challenge.requirements.find((r) => r.scheme === BATCH_SETTLEMENT && r.x402Version === 2);
  if (requirement) return requirement;
  throw new UnpayableRequirementError(
    `${what}: ${url} does not offer batch-settlement, so it holds no channel of ours.`,
    { details: requestDetails({ url, method: "GET" }) },
  );
}

/** The seller's answer was not its terms (a 402): `CHALLENGE_NOT_FOUND`, naming what came. */
export const notTerms = (what: string, url: string, status: number) =>
  new ChallengeNotFoundError(`${what}: ${url} answered ${status}, not 402 with its terms.`, {
    details: requestDetails({ url, method: "GET" }),
  });

/** Asks the seller at `url` to refund the channel that pays it, through the caller's paying stack. */
export async function refundChannel(
  tools: Tools,
  { url, channelOf, options }: { url: string; channelOf: (r: PaymentRequirement) => Channel; options: RefundOptions },
): Promise<RefundResult> {
  const { signal, amount, through } = Object(options) as Partial<RefundOptions>;
  const wanted = amount === undefined ? undefined : parseAtomicAmount(amount);
  if (amount !== undefined && (wanted === undefined || wanted === 0n))
    throw new InvalidConfigError('refund: amount must be base units above 0, such as "1000000".', {
      details: { option: "amount" },
    });
  const refund = refundSession(tools, { url, channelOf, wanted });
  try {
    const status = await sendSessionRequest("refund", through, { url, session: refund.session, signal });
    return refund.result(status);
  } finally {
    await refund.release();
  }
}

/** The refund as a session request: the channel held from the seller's terms until the answer is read. */
function refundSession(
  tools: Tools,
  {
    url,
    channelOf,
    wanted,
  }: { url: string; channelOf: (r: PaymentRequirement) => Channel; wanted: bigint | undefined },
) {
  let held: { channel: Channel; hold: ChannelHold; state: ChannelState | undefined } | undefined;
  let result: RefundResult | undefined;
  const session: SessionRequest = {
    async prepare(challenge, request) {
      if (!held) {
        const channel = channelOf(batchRequirementOf(challenge, url, "refund"));
        const hold = await tools.store.hold(channel.id, request.signal);
        held = { channel, hold, state: await keptOrFromChain(tools, channel, hold.state, request.signal) };
      }
      const signed = await refundPayment(tools, held, { url, wanted, done: (r) => (result = r) });
      return toSessionPayment(challenge, request, signed);
    },
  };
  return {
    session,
    /** What the refund came to, once the request is over; the seller's error when it did not refund. */
    result(status: number): RefundResult {
      if (result) return result;
      if (!held) throw notTerms("refund", url, status);
      const { channel } = held;
      const details = {
        ...requestDetails({ url, method: "GET" }),
        requirement: channel.requirement.raw,
        payer: tools.signer.address,
        reason: `status ${status}`,
        status,
      };
      throw new PaymentRejectedError(
        `The seller did not refund channel ${channel.id}: it answered ${status} without a settlement of it.`,
        { details: details as Omit<RejectedDetails, "paymentHeader" | "payload"> as RejectedDetails },
      );
    },
    release: () => held?.hold.release() ?? Promise.resolve(),
  };
}

/** The refund's voucher, for exactly what was charged, and how the seller's answer or correction is read. */
async function refundPayment(
  tools: Tools,
  held: { channel: Channel; hold: ChannelHold; state: ChannelState | undefined },
  { url, wanted, done }: { url: string; wanted: bigint | undefined; done: (result: RefundResult) => void },
): Promise<Parameters<typeof toSessionPayment>[2]> {
  const { channel, hold, state } = held;
  const charged = BigInt(state?.charged ?? 0);
  if (!state || BigInt(state.balance) <= charged)
    throw new InvalidConfigError("refund: the channel holds nothing beyond what was charged.", {
      details: { option: `channel ${channel.id}` },
    });
  // What was charged, never the most ever signed: a voucher above it would let the seller claim calls it never served.
  const signature = await signVoucher(tools.voucherSigner, channel, charged);
  const payload = {
    type: "refund",
    channelConfig: { ...channel.config },
    voucher: { channelId: channel.id, maxClaimableAmount: String(charged), signature },
    ...(wanted !== undefined && { amount: String(wanted) }),
  };
  return {
    requirement: channel.requirement,
    payload: { payload },
    payer: tools.signer.address,
    async accepted(settlement) {
      const refunded = parseAtomicAmount(settlement?.amount);
      if (!settlement?.success || refunded === undefined) return { charge: "0" };
      const left = BigInt(state.balance) - refunded;
      const balance = left < 0n ? 0n : left;
      await hold.save(balance === 0n ? emptied(settleOwners(state)) : { ...state, balance: String(balance) });
      const result = {
        channel: channel.id,
        refunded: String(refunded),
        balance: String(balance),
        transaction: settlement.transaction || undefined,
        settlement,
      };
      done(result);
      return { charge: "0", refund: refundOf(url, channel, { result, payer: tools.signer.address }) };
    },
    async refused(challenge, reason) {
      const open = { ...channel, next: charged, deposit: undefined };
      const corrected = await correctFrom(tools, open, { challenge, reason });
      if (!corrected || corrected.disputed) return false;
      // The seller's count ends the vouchers held unanswered (charged at or below it, dropped above), and what the
      // state knew of those already ended is kept: a dropped one is never taken for charged below the count.
      const signed = maxOf(state.signed, corrected.signed);
      held.state = settleOwners({ ...corrected, signed, owners: state.owners, ended: state.ended });
      await hold.save(held.state);
      return true;
    },
  };
}

/** What came back from the channel, as the client's plug-ins are told of it. */
function refundOf(
  url: string,
  { requirement, id }: Channel,
  { result, payer }: { result: RefundResult; payer: string },
): ChannelRefund {
  return {
    url,
    scheme: requirement.scheme,
    network: requirement.caip2!,
    asset: requirement.asset,
    payTo: requirement.payTo,
    payer,
    channel: id,
    amount: result.refunded,
    balance: result.balance,
    transaction: result.transaction,
  };
}

const maxOf = (a: string, b: string) => (BigInt(a) > BigInt(b) ? a : b);
