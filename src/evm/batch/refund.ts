/**
 * The cooperative refund: the seller is asked, with a voucher for exactly what was charged (a call charged nothing),
 * to send back what the channel holds beyond it; its authoriser signs the refund and its facilitator sends it.
 */
import type { ChannelHold, ChannelRefund, ChannelState } from "../../contracts";
import { InvalidConfigError, PaymentRejectedError, throwIfAborted } from "../../errors";
import { readResponse } from "../../io";
import {
  PAYMENT_REQUIRED_HEADER,
  decodeSettlement,
  encodeBase64Json,
  parseAtomicAmount,
  parseChallenge,
  type PaymentChallenge,
  type PaymentRequirement,
  type SettleResponse,
} from "../../protocol";
import { correctFrom } from "./answer";
import { fromChain, signVoucher, type Channel, type Tools } from "./open";
import { BATCH_SETTLEMENT } from "./wire";

export interface RefundOptions {
  /** Base units to take back; default: all the channel holds beyond what was charged. */
  amount?: string | undefined;
  /** The fetch to ask with. Default `globalThis.fetch`. */
  fetch?: typeof fetch | undefined;
  signal?: AbortSignal | undefined;
  /**
   * The client that pays through the channel (`createX402Client`): its plug-ins are told what came back, so a ledger
   * records the refund (`kind: "refund"`) and a budget lets go of what it held for the deposit.
   */
  client?: { refunded(refund: ChannelRefund): Promise<void> } | undefined;
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

/** The most a 402 body may be. */
const MAX_BODY_BYTES = 256 * 1024;

/** How the seller at `url` is asked (GET, `fetch` of the options), its terms, and the channel that pays it. */
export async function channelAt(
  url: string,
  channelOf: (r: PaymentRequirement) => Channel,
  { fetch: fetcher, signal }: { fetch?: typeof fetch | undefined; signal?: AbortSignal | undefined },
  what: string,
) {
  const ask = (headers: Record<string, string> = {}) =>
    (fetcher ?? globalThis.fetch)(url, { method: "GET", headers, signal });
  const challenge = await challengeOf(await ask(), signal);
  const requirement = challenge.requirements.find((r) => r.scheme === BATCH_SETTLEMENT && r.x402Version === 2);
  if (!requirement)
    throw new InvalidConfigError(`${what}: ${url} does not offer batch-settlement, so it holds no channel of ours.`);
  return { ask, challenge, channel: channelOf(requirement) };
}

/** Asks the seller at `url` to refund the channel that pays it. */
export async function refundChannel(
  tools: Tools,
  {
    url,
    channelOf,
    options = {},
  }: { url: string; channelOf: (r: PaymentRequirement) => Channel; options?: RefundOptions | undefined },
): Promise<RefundResult> {
  const { signal } = options;
  const wanted = options.amount === undefined ? undefined : parseAtomicAmount(options.amount);
  if (options.amount !== undefined && (wanted === undefined || wanted === 0n))
    throw new InvalidConfigError('refund: amount must be base units above 0, such as "1000000".', {
      details: { option: "amount" },
    });
  const { ask, challenge, channel } = await channelAt(url, channelOf, options, "refund");
  const hold = await tools.store.hold(channel.id, signal);
  try {
    const result = await refundHeld(tools, { channel, hold, challenge, ask, wanted, signal });
    await options.client?.refunded(refundOf(url, channel, { result, payer: tools.signer.address }));
    return result;
  } finally {
    await hold.release();
  }
}

/** What came back from the channel, as the client's plug-ins are told. */
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

/** The refund of a held channel: asked, corrected once if the seller counts otherwise, and recorded. */
async function refundHeld(
  tools: Tools,
  {
    channel,
    hold,
    challenge,
    ask,
    wanted,
    signal,
  }: {
    channel: Channel;
    hold: ChannelHold;
    challenge: PaymentChallenge;
    ask: (headers?: Record<string, string>) => Promise<Response>;
    wanted: bigint | undefined;
    signal: AbortSignal | undefined;
  },
): Promise<RefundResult> {
  let state: ChannelState | undefined = hold.state ?? (await fromChain(tools, channel, signal));
  for (let round = 0; ; round++) {
    const charged = BigInt(state?.charged ?? 0);
    if (!state || BigInt(state.balance) <= charged)
      throw new InvalidConfigError("refund: the channel holds nothing beyond what was charged.", {
        details: { option: `channel ${channel.id}` },
      });
    const signature = await signVoucher(tools.voucherSigner, channel, charged);
    const payload = {
      type: "refund",
      channelConfig: { ...channel.config },
      voucher: { channelId: channel.id, maxClaimableAmount: String(charged), signature },
      ...(wanted !== undefined && { amount: String(wanted) }),
    };
    const envelope = {
      x402Version: 2,
      ...(challenge.raw.resource !== undefined && { resource: challenge.raw.resource }),
      accepted: channel.requirement.raw,
      payload,
    };
    throwIfAborted(signal);
    const answer = await ask({ "PAYMENT-SIGNATURE": encodeBase64Json(envelope) });
    const settlement = decodeSettlement(answer.headers.get("PAYMENT-RESPONSE"));
    if (answer.status === 402 && !settlement && round === 0) {
      const corrective = await challengeOf(answer, signal).catch(() => undefined);
      const open = { ...channel, next: charged, deposit: undefined };
      const corrected = await correctFrom(tools, open, { challenge: corrective, reason: corrective?.error });
      if (corrected && !corrected.disputed) {
        state = { ...corrected, signed: maxOf(state.signed, corrected.signed) };
        await hold.save(state);
        continue;
      }
    }
    void answer.body?.cancel().catch(() => {});
    const refunded = parseAtomicAmount(settlement?.amount);
    if (!settlement?.success || refunded === undefined) {
      const reason = settlement?.errorReason ?? `status ${answer.status}`;
      throw new PaymentRejectedError(`The seller did not refund channel ${channel.id} (${reason}).`, {
        details: {
          url: (channel.requirement.raw.resource as string | undefined) ?? "",
          requirement: channel.requirement.raw,
          payer: tools.signer.address,
          reason,
          status: answer.status,
        } as never,
      });
    }
    const balance = BigInt(state.balance) - refunded;
    const left = balance < 0n ? 0n : balance;
    await hold.save(left === 0n ? undefined : { ...state, balance: String(left) });
    return {
      channel: channel.id,
      refunded: String(refunded),
      balance: String(left),
      transaction: settlement.transaction || undefined,
      settlement,
    };
  }
}

const maxOf = (a: string, b: string) => (BigInt(a) > BigInt(b) ? a : b);

/** The challenge of a 402 answer, its body read bounded. */
async function challengeOf(response: Response, signal: AbortSignal | undefined): Promise<PaymentChallenge> {
  const header = response.headers.get(PAYMENT_REQUIRED_HEADER);
  if (response.status !== 402) {
    void response.body?.cancel().catch(() => {});
    throw new InvalidConfigError(`refund: the seller answered ${response.status}, not 402 with its terms.`);
  }
  const body = header
    ? undefined
    : await readResponse(response, { maxBytes: MAX_BODY_BYTES, timeoutMs: 10_000, signal });
  if (header) void response.body?.cancel().catch(() => {});
  return parseChallenge({ header, body, contentType: response.headers.get("content-type") });
}
