/**
 * A batch-settlement payment looked up (`checkSettlement`, journal recovery): its voucher's fate as the channel's state
 * keeps it (the attempt that alone may send its amount, and what became of it once the seller's count was read), and
 * as the chain has it (what the seller claimed).
 */
import type { ChannelStore, SettlementQuery, SettlementStatus } from "../../contracts";
import { parseAtomicAmount } from "../../protocol";
import type { ChannelReader } from "./chain";

const pending = (reason: string): SettlementStatus => ({ state: "pending", transaction: undefined, reason });

/** Did the call this voucher paid get charged (`settled`), or can it no longer be (`failed`)? Else `pending`. */
export async function checkChannelPayment(
  { store, readChannel }: { store: ChannelStore; readChannel: ChannelReader | undefined },
  query: SettlementQuery,
  signal?: AbortSignal,
): Promise<SettlementStatus> {
  const voucher = Object(Object(Object(query.payload).payload).voucher) as Record<string, unknown>;
  const { channelId, maxClaimableAmount } = voucher;
  const value = parseAtomicAmount(maxClaimableAmount);
  if (typeof channelId !== "string" || value === undefined)
    return pending("no voucher to look up: the payment's header is not kept");
  const amount = maxClaimableAmount as string;
  if (query.attempt === undefined) return pending("no attempt named: a channel keeps its vouchers by attempt");
  const state = await store.peek(channelId.toLowerCase());
  const ended = state?.ended?.[query.attempt];
  const settled = (reason: string): SettlementStatus => ({
    state: "settled",
    transaction: undefined,
    amount: query.amount,
    reason,
  });
  if (ended === "charged") return settled(`the seller charged its voucher for ${amount} (channel ${channelId})`);
  if (ended === "dropped")
    return {
      state: "failed",
      transaction: undefined,
      reason: `the seller never had its voucher for ${amount}; that amount was signed again for another call`,
    };
  if (state && state.owners?.[amount] === undefined && value <= BigInt(state.charged))
    return settled(`the seller counts ${state.charged} charged on channel ${channelId}, its voucher included`);
  if (state?.owners?.[amount] !== query.attempt)
    return pending(`channel ${channelId} keeps no record of this attempt's voucher (another store, or one lost)`);
  // Held unanswered, and only this attempt may send that amount: claimed on chain, it was charged.
  const onChain = await readChannel?.channel(query.network, channelId as `0x${string}`, signal);
  if (onChain && onChain.totalClaimed >= value)
    return settled(`the seller claimed ${onChain.totalClaimed} of channel ${channelId} on chain, its voucher included`);
  return pending(
    `its voucher for ${amount} is held unanswered: the seller's next answer on channel ${channelId} tells its end`,
  );
}
