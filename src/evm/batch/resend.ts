/**
 * A voucher an earlier attempt signed, sent again as it is (a journal's kept payment): its channel held meanwhile, as
 * for a new payment, and the seller's answer read as that call's, so that the channel learns its end (charged, or
 * refused with the seller's count) and never signs its amount for another call while it may be on its way.
 */
import type { OpenContext, OpenPayment, ResendContext } from "../../contracts";
import { PaymentRefusedError, requestDetails } from "../../errors";
import { parseAtomicAmount } from "../../protocol";
import { session, type Channel, type Tools } from "./open";

/** The resent payment's hold on its channel, or `undefined` (send it as it is) when the channel keeps no state. */
export async function resendChannelPayment(
  tools: Tools,
  channel: Channel,
  { payload, context }: { payload: Readonly<Record<string, unknown>>; context: ResendContext },
): Promise<Pick<OpenPayment, "accepted" | "refused" | "close"> | undefined> {
  const signed = Object(payload.payload) as { voucher?: unknown; deposit?: unknown };
  const { channelId, maxClaimableAmount } = Object(signed.voucher) as Record<string, unknown>;
  const deposit = Object(signed.deposit).amount as unknown;
  const next = parseAtomicAmount(maxClaimableAmount);
  if (String(channelId).toLowerCase() !== channel.id || next === undefined) return undefined;
  const hold = await tools.store.hold(channel.id, context.signal);
  const { state } = hold;
  const { attempt } = context;
  if (!state || attempt === undefined) {
    await hold.release();
    return undefined;
  }
  if (state.ended?.[attempt] === "dropped") {
    await hold.release();
    throw new PaymentRefusedError(
      `The voucher kept for this request (${maxClaimableAmount} on channel ${channel.id}) was not sent again: the ` +
        "seller never had it, and its amount went to another call. Nothing was charged for it; ask again to pay " +
        "afresh.",
      { details: requestDetails(context.request) },
    );
  }
  // Nothing is signed on a resend: the seller's terms are the kept requirement's.
  const { requirement, request, signal } = context;
  const challenge = {
    x402Version: 2,
    error: undefined,
    resource: undefined,
    extensions: undefined,
    requirements: [requirement],
    invalid: [],
    raw: {},
    source: "header",
  } as const;
  const opened: OpenContext = { challenge, request, signal, limit: undefined, attempt };
  return session(tools, {
    ...channel,
    context: opened,
    hold,
    state,
    next,
    deposit: parseAtomicAmount(deposit),
  });
}
