/**
 * The way out without the seller: the payer (or its voucher key) asks the settlement contract for a withdrawal, and
 * after the channel's withdrawal delay takes back what its seller has not claimed. x402-pay prepares the two
 * transactions; the wallet sends them, as it sends any transaction.
 */
import { sendSessionRequest, type PayingStack, type SessionRequest } from "../../contracts";
import { InvalidConfigError, RpcError } from "../../errors";
import { parseAtomicAmount, type PaymentRequirement } from "../../protocol";
import type { Hex } from "../signer";
import { erc20Call } from "../words";
import type { Channel, Tools } from "./open";
import { emptied } from "./owners";
import { batchRequirementOf, notTerms } from "./refund";
import { BATCH_SETTLEMENT_ADDRESS, type ChannelConfig } from "./wire";

export interface WithdrawalOptions {
  /** Base units to take back; default: all the channel holds beyond what its seller claimed, read on chain. */
  amount?: string | undefined;
  /**
   * The stack you pay with, which asks the seller's terms (the channel's configuration is read from them): a fetch
   * from `wrapFetchWithPayment(fetch, client)`, or an axios instance from `wrapAxiosWithPayment`.
   */
  through: PayingStack;
  signal?: AbortSignal | undefined;
}

/** A transaction to send from the payer (or the voucher key): `{ to, data }`, as viem's `sendTransaction` takes it. */
export interface ChannelTransaction {
  readonly to: Hex;
  readonly data: Hex;
}

export interface Withdrawal {
  /** The channel's id. */
  readonly channel: string;
  /** What the withdrawal asks back, in base units. */
  readonly amount: string;
  /** Send first: starts the withdrawal delay. The seller can still claim what it holds vouchers for meanwhile. */
  readonly initiate: ChannelTransaction;
  /** Send once `withdrawDelay` seconds have passed since `initiate` was mined: the rest comes back to the payer. */
  readonly finalize: ChannelTransaction;
  /** Seconds between the two. */
  readonly withdrawDelay: number;
}

/** `initiateWithdraw(ChannelConfig,uint128)` and `finalizeWithdraw(ChannelConfig)`. */
const INITIATE_WITHDRAW: Hex = "0xcf5cf3dc";
const FINALIZE_WITHDRAW: Hex = "0xe88377b1";

/** The channel configuration as ABI words (a static tuple is encoded in place). */
const configWords = (config: ChannelConfig): (Hex | bigint)[] => [
  config.payer,
  config.payerAuthorizer,
  config.receiver,
  config.receiverAuthorizer,
  config.token,
  BigInt(config.withdrawDelay),
  config.salt,
];

/**
 * Prepares the withdrawal of the channel that pays `url`. The channel's state is let go here (but what became of its
 * held vouchers: `emptied`): the next payment reads it from the chain.
 */
export async function prepareWithdrawal(
  tools: Tools,
  {
    url,
    channelOf,
    options,
  }: { url: string; channelOf: (r: PaymentRequirement) => Channel; options: WithdrawalOptions },
): Promise<Withdrawal> {
  options = Object(options) as WithdrawalOptions;
  const given = options.amount === undefined ? undefined : parseAtomicAmount(options.amount);
  if (options.amount !== undefined && (given === undefined || given === 0n))
    throw new InvalidConfigError('withdrawal: amount must be base units above 0, such as "1000000".', {
      details: { option: "amount" },
    });
  const channel = channelOf(await termsOf(url, options));
  let amount = given;
  if (amount === undefined) {
    if (!tools.readChannel)
      throw new InvalidConfigError("withdrawal: without an amount, batchSettlementEvm needs rpc to read the channel.", {
        details: { option: "rpc" },
      });
    const onChain = await tools.readChannel.channel(channel.requirement.caip2!, channel.id, options.signal);
    amount = onChain.balance - onChain.totalClaimed;
    if (amount <= 0n)
      throw new RpcError("withdrawal: the channel holds nothing its seller has not claimed.", {
        details: { rpcMethod: "eth_call" },
      });
  }
  const hold = await tools.store.hold(channel.id, options.signal);
  try {
    await hold.save(emptied(hold.state));
  } finally {
    await hold.release();
  }
  const words = configWords(channel.config);
  return {
    channel: channel.id,
    amount: String(amount),
    initiate: { to: BATCH_SETTLEMENT_ADDRESS, data: erc20Call(INITIATE_WITHDRAW, [...words, amount]) },
    finalize: { to: BATCH_SETTLEMENT_ADDRESS, data: erc20Call(FINALIZE_WITHDRAW, words) },
    withdrawDelay: channel.config.withdrawDelay,
  };
}

/** The seller's batch-settlement terms at `url`, asked through the caller's paying stack; nothing is signed. */
async function termsOf(url: string, options: WithdrawalOptions): Promise<PaymentRequirement> {
  let requirement: PaymentRequirement | undefined;
  const session: SessionRequest = {
    async prepare(challenge) {
      requirement = batchRequirementOf(challenge, url, "withdrawal");
      return undefined;
    },
  };
  const status = await sendSessionRequest("withdrawal", options.through, { url, session, signal: options.signal });
  if (!requirement) throw notTerms("withdrawal", url, status);
  return requirement;
}
