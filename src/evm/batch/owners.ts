/**
 * Who may send a channel's vouchers that no answer settled (a process that died after signing, an answer lost), and
 * what became of them once the seller's count was read: one voucher amount, one attempt, so that each call the seller
 * charges is one request's, and a journal's entry asks its channel what became of its voucher.
 */
import type { ChannelState } from "../../contracts";

/** How many ended attempts a channel's state remembers (the latest). */
const ENDED_KEPT = 64;

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
 * amount), each above it never was (`dropped`: the next voucher may take its amount). Ended attempts are remembered,
 * the latest {@link ENDED_KEPT}, the payment reading the answer among them (for a process that dies before it writes
 * its own end down).
 */
export function settleOwners(state: ChannelState): ChannelState {
  const count = BigInt(state.charged);
  const ended: [string, "charged" | "dropped"][] = Object.entries(state.ended ?? {});
  for (const [amount, owner] of Object.entries(state.owners ?? {}))
    ended.push([owner, BigInt(amount) <= count ? "charged" : "dropped"]);
  const { owners: _, ended: __, ...rest } = state;
  const kept = ended.slice(-ENDED_KEPT);
  return kept.length === 0 ? rest : { ...rest, ended: Object.fromEntries(kept) };
}

/**
 * The state with the held vouchers the chain already ends: at or below what the seller claimed, charged; beyond what
 * the channel holds, never charged (the seller takes no voucher over the balance: a deposit that never landed). A
 * seller that keeps no record of a channel takes a voucher's base on trust, so a voucher is never built above one
 * that could not have been paid.
 */
export function settleFromChain(state: ChannelState, onChain: { balance: bigint; totalClaimed: bigint }): ChannelState {
  const ended: [string, "charged" | "dropped"][] = Object.entries(state.ended ?? {});
  const owners: Record<string, string> = {};
  for (const [amount, owner] of Object.entries(state.owners ?? {})) {
    if (BigInt(amount) <= onChain.totalClaimed) ended.push([owner, "charged"]);
    else if (BigInt(amount) > onChain.balance) ended.push([owner, "dropped"]);
    else owners[amount] = owner;
  }
  const charged = BigInt(state.charged) > onChain.totalClaimed ? state.charged : String(onChain.totalClaimed);
  const { owners: _, ended: __, ...rest } = state;
  const kept = ended.slice(-ENDED_KEPT);
  return {
    ...rest,
    charged,
    ...(Object.keys(owners).length > 0 && { owners }),
    ...(kept.length > 0 && { ended: Object.fromEntries(kept) }),
  };
}
