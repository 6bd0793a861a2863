/**
 * Reading the seller's answers about a channel: the settlement of a paid call, and the corrective 402 of a seller
 * whose count differs from ours. A number the seller sends is believed only as far as our own signatures and the
 * chain bear it out.
 */
import type { ChannelState, OpenOutcome } from "../../contracts";
import { parseAtomicAmount, sameAddress, type PaymentChallenge, type SettleResponse } from "../../protocol";
import type { Channel, Tools } from "./open";
import { BATCH_SETTLEMENT, voucherDigest } from "./wire";

/**
 * The seller's codes for "your voucher does not follow my count" (a corrective 402 follows), and for a voucher beyond
 * what the channel holds on chain (our balance was stale: a deposit that never landed, a withdrawal): the state is
 * read again, from the chain and what the seller shows.
 */
const CORRECTABLE = [
  "invalid_batch_settlement_evm_cumulative_amount_mismatch",
  "invalid_batch_settlement_evm_cumulative_below_claimed",
  "invalid_batch_settlement_evm_cumulative_exceeds_balance",
];

/** Is `reason` one of the seller's codes a channel's state is corrected from? */
export const isCorrectable = (reason: string | undefined) => reason !== undefined && CORRECTABLE.includes(reason);

type Open = Channel & { readonly next: bigint; readonly deposit: bigint | undefined };
const record = (value: unknown) => (value && typeof value === "object" ? (value as Record<string, unknown>) : {});
const amount = (value: unknown) => parseAtomicAmount(value);

/**
 * The state after the seller accepted the payment, and what the call was charged. The seller reports the charge
 * (`extra.chargedAmount`) and its count (`extra.channelState`); a charge over the price, a count that is not ours
 * plus that charge, or another channel's id stops the channel, kept at the most we signed.
 */
export function acceptAnswer(
  open: Open,
  current: ChannelState,
  settlement: SettleResponse | undefined,
): { state: ChannelState; outcome: OpenOutcome } {
  const price = BigInt(open.requirement.amount);
  // What the seller counted before this call: what its voucher adds the price to.
  const before = open.next - price;
  const balance = BigInt(current.balance) + (open.deposit ?? 0n);
  const extra = record(settlement?.extra);
  const reported = record(extra.channelState);
  const charge = amount(extra.chargedAmount);
  const cumulative = amount(reported.chargedCumulativeAmount);
  const reportedBalance = amount(reported.balance);
  // A lower balance than ours is believed (a top-up comes sooner); a higher one is not.
  const kept = String(reportedBalance !== undefined && reportedBalance < balance ? reportedBalance : balance);
  let disputed: string | undefined;
  if (reported.channelId !== undefined && String(reported.channelId).toLowerCase() !== open.id)
    disputed = `the seller reported another channel (${String(reported.channelId).slice(0, 66)})`;
  else if (charge !== undefined && charge > price) disputed = `the seller charged ${charge} for a call priced ${price}`;
  else if (charge !== undefined && cumulative !== undefined && cumulative !== before + charge)
    disputed = `the seller counts ${cumulative} charged in all, where ours is ${before} + ${charge}`;
  // Without a charge we can check, the call cost its price: the voucher allows no more.
  const worst = charge === undefined || disputed !== undefined;
  const charged = worst ? open.next : before + charge!;
  const state: ChannelState = { ...current, balance: kept, charged: String(charged), ...(disputed && { disputed }) };
  const outcome: OpenOutcome = {
    charge: String(worst ? price : charge!),
    channel: { id: open.id, balance: kept, charged: String(charged) },
  };
  return { state, outcome };
}

/**
 * The state a corrective 402 (`reason` one of the seller's count codes) teaches, checked against the chain and our
 * own signature; with `disputed` set when it does not hold up; `undefined` when it corrects nothing (another
 * refusal, no chain to check it against).
 */
export async function correctFrom(
  tools: Tools,
  open: Open,
  { challenge, reason }: { challenge: PaymentChallenge | undefined; reason: string | undefined },
): Promise<ChannelState | undefined> {
  if (!isCorrectable(reason) || !tools.readChannel) return undefined;
  const { requirement } = open;
  const offer = challenge?.requirements.find(
    (r) =>
      r.scheme === BATCH_SETTLEMENT &&
      r.caip2 === requirement.caip2 &&
      sameAddress(r.payTo, requirement.payTo) &&
      sameAddress(r.asset, requirement.asset),
  );
  const told = record(offer?.extra.channelState);
  const voucher = record(offer?.extra.voucherState);
  const onChain = await tools.readChannel.channel(requirement.caip2!, open.id);
  const base = { balance: String(onChain.balance), charged: String(onChain.totalClaimed) };
  const stopped = (why: string): ChannelState => ({ ...base, signed: base.charged, disputed: why });
  if (told.channelId !== undefined && String(told.channelId).toLowerCase() !== open.id)
    return stopped(`the correction names another channel (${String(told.channelId).slice(0, 66)})`);
  const charged = amount(told.chargedCumulativeAmount);
  const signedMax = amount(voucher.signedMaxClaimable);
  const signature = typeof voucher.signature === "string" ? voucher.signature : undefined;
  // From the chain alone: what was claimed is what was charged.
  if (charged === undefined || signedMax === undefined || !signature)
    return { ...base, signed: String(onChain.totalClaimed) };
  if (charged > signedMax)
    return stopped(`the seller counts ${charged} charged, more than the voucher it holds (${signedMax})`);
  if (charged < onChain.totalClaimed)
    return stopped(
      `the seller counts ${charged} charged, less than it already claimed on chain (${onChain.totalClaimed})`,
    );
  if (!(await isOurVoucher(tools, open, signedMax, signature)))
    return stopped(`the voucher the seller holds for ${signedMax} is not signed by ${tools.voucherSigner.address}`);
  return { ...base, charged: String(charged), signed: String(signedMax), signature };
}

/** Did our voucher key sign a voucher for `maxClaimable` on this channel? Asked of the channel's chain. */
async function isOurVoucher(tools: Tools, open: Open, maxClaimable: bigint, signature: string): Promise<boolean> {
  const digest = voucherDigest(open.id, maxClaimable, open.chainId);
  const signer = await tools.readChannel!.signerOf(open.requirement.caip2!, digest, signature);
  return signer !== undefined && sameAddress(signer, tools.voucherSigner.address);
}
