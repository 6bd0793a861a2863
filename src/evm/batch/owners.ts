/**
 * Who may send a channel's vouchers that no answer settled (a process that died after signing, an answer lost), and
 * what became of them once the seller's count was read: one voucher amount, one attempt, so that each call the seller
 * charges is one request's, and a journal's entry asks its channel what became of its voucher.
 */
import type { ChannelState } from "../../contracts";

/**
 * How many ended attempts a channel's state remembers (the latest): charged ones, and dropped ones. An attempt found in
 * neither and held by none, below what the seller counts, was charged: only a drop must be remembered, and drops are
 * rare (a process that died between signing and sending, while another paid on the channel).
 */
const CHARGED_KEPT = 64;
const DROPPED_KEPT = 256;

type Ended = [attempt: string, end: "charged" | "dropped"];

/** The ended attempts a state keeps: the latest of each kind. */
function remembered(ended: readonly Ended[]): Pick<ChannelState, "ended"> {
  const kept = [
    ...ended.filter(([, end]) => end === "dropped").slice(-DROPPED_KEPT),
    ...ended.filter(([, end]) => end === "charged").slice(-CHARGED_KEPT),
  ];
  return kept.length === 0 ? {} : { ended: Object.fromEntries(kept) };
}

/** Vouchers above `charged` that another attempt signed and may still send. */
export const heldByOthers = (state: ChannelState | undefined, attempt: string | undefined) =>
  Object.entries(state?.owners ?? {}).filter(
    ([amount, owner]) => owner !== attempt && BigInt(amount) > BigInt(state!.charged),
  );

/**
 * What the next voucher adds its price to: what was charged; above the most signed while another attempt holds a
 * voucher unanswered, so that no two attempts ever hold a voucher for one amount. The seller's answer then tells
 * whether that voucher was charged (it takes ours) or not (it refuses ours with its count).
 */
export const baseOf = (state: ChannelState | undefined, attempt: string | undefined): bigint =>
  heldByOthers(state, attempt).length > 0 ? BigInt(state!.signed) : BigInt(state?.charged ?? 0);

/** The state's owners with `amount` signed by `attempt` (none is kept without an attempt to name). */
export const withOwner = (state: ChannelState, amount: bigint, attempt: string | undefined): ChannelState =>
  attempt === undefined ? state : { ...state, owners: { ...state.owners, [String(amount)]: attempt } };

/**
 * The state once the seller's count is known (`state.charged`, read from its answer and checked): each voucher held
 * at or below it was charged (the seller takes exactly its count plus a call's price, and only its signer sent that
 * amount), each above it never was (`dropped`: the next voucher may take its amount). Ended attempts are remembered
 * (see {@link CHARGED_KEPT}), the payment reading the answer among them (for a process that dies before it writes its
 * own end down).
 */
export function settleOwners(state: ChannelState): ChannelState {
  const count = BigInt(state.charged);
  const ended: Ended[] = Object.entries(state.ended ?? {});
  for (const [amount, owner] of Object.entries(state.owners ?? {}))
    ended.push([owner, BigInt(amount) <= count ? "charged" : "dropped"]);
  const { owners: _, ended: __, ...rest } = state;
  return { ...rest, ...remembered(ended) };
}

/**
 * A channel's state once it holds nothing (withdrawn, or refunded whole), kept until its next payment reads the channel
 * from the chain as for one not kept: only what became of its held vouchers, so that a dropped one is never taken
 * for charged later (none: nothing to keep). A dispute, the seller's count and the vouchers still held are let go.
 */
export const emptied = (state: ChannelState | undefined): ChannelState | undefined =>
  state?.ended === undefined ? undefined : { balance: "0", charged: "0", signed: "0", ended: state.ended };

/** Whether `state` is one {@link emptied} made: nothing signed, nothing held, no dispute. */
export const isEmptied = (state: ChannelState): boolean =>
  state.signed === "0" && state.balance === "0" && state.owners === undefined && state.disputed === undefined;

/**
 * The state with the held vouchers the chain already ends: at or below what the seller claimed, charged; beyond what
 * the channel holds, never charged (the seller takes no voucher over the balance: a deposit that never landed). A
 * seller that keeps no record of a channel takes a voucher's base on trust, so a voucher is never built above one
 * that could not have been paid.
 */
export function settleFromChain(state: ChannelState, onChain: { balance: bigint; totalClaimed: bigint }): ChannelState {
  const ended: Ended[] = Object.entries(state.ended ?? {});
  const owners: Record<string, string> = {};
  for (const [amount, owner] of Object.entries(state.owners ?? {})) {
    if (BigInt(amount) <= onChain.totalClaimed) ended.push([owner, "charged"]);
    else if (BigInt(amount) > onChain.balance) ended.push([owner, "dropped"]);
    else owners[amount] = owner;
  }
  const charged = BigInt(state.charged) > onChain.totalClaimed ? state.charged : String(onChain.totalClaimed);
  // What the channel holds is the chain's (a deposit whose answer was lost is in it).
  const balance = String(onChain.balance);
  const { owners: _, ended: __, ...rest } = state;
  return { ...rest, balance, charged, ...(Object.keys(owners).length > 0 && { owners }), ...remembered(ended) };
}
