/**
 * One batch-settlement payment: the channel held, the deposit sized within the policy, the voucher (and deposit)
 * signed, and the seller's answer checked before the state moves on.
 */
import type { ChannelHold, ChannelState, ChannelStore, OpenContext, OpenPayment } from "../../contracts";
import { ChannelDisputedError, InvalidConfigError, PaymentRefusedError, requestDetails } from "../../errors";
import { PERMIT2_ADDRESS, bytesToHex, checksumAddress, type PaymentRequirement } from "../../protocol";
import { withPermit2Allowance } from "../permit2";
import { EIP3009_AUTHORIZATION } from "../shared";
import type { Permit2Allowance } from "../sponsor";
import type { EvmSigner, Hex } from "../signer";
import { normalizeSignature } from "../signer";
import type { ChannelReader } from "./chain";
import { acceptAnswer, correctFrom, isCorrectable } from "./answer";
import { baseOf, heldByOthers, isEmptied, settleFromChain, settleOwners, withOwner } from "./owners";
import {
  ERC3009_DEPOSIT_COLLECTOR,
  PERMIT2_DEPOSIT_COLLECTOR,
  PERMIT2_DEPOSIT_TYPES,
  VOUCHER_TYPES,
  batchDomain,
  depositNonce,
  type ChannelConfig,
} from "./wire";

/** What a deposit sizing function is told. Amounts in base units. */
export interface DepositContext {
  /** The call's price. */
  readonly price: bigint;
  /** The least this deposit can be: what the call needs beyond the channel's balance. */
  readonly needed: bigint;
  /** What the channel holds now (0 for a new channel). */
  readonly balance: bigint;
  /** The seller's announced minimum deposit (`extra.minDeposit`), if any. */
  readonly minDeposit: bigint | undefined;
  /** The most the spend policy lets one payment move, if it sets a cap. */
  readonly limit: bigint | undefined;
  readonly requirement: PaymentRequirement;
}

/** How much a deposit puts in the channel. */
export type DepositSizing =
  | { readonly multiple: number }
  | { readonly amount: string }
  | ((context: DepositContext) => bigint | string);

/** What every payment of one scheme shares. */
export interface Tools {
  readonly signer: EvmSigner;
  readonly voucherSigner: EvmSigner;
  readonly store: ChannelStore;
  readonly readChannel: ChannelReader | undefined;
  /** Reads the Permit2 allowance before a Permit2 deposit, and signs a sponsored approval when it is short. */
  readonly permit2: Permit2Allowance | undefined;
  readonly randomBytes: (length: number) => Uint8Array;
  readonly now: () => number;
}

/** The channel one payment goes through. */
export interface Channel {
  readonly requirement: PaymentRequirement;
  readonly chainId: number;
  readonly config: ChannelConfig;
  readonly id: Hex;
}

/** Holds the channel, reads (or recovers) its state, sizes a deposit if one is due, and returns the open payment. */
export async function openChannelPayment(
  tools: Tools,
  channel: Channel & { readonly context: OpenContext; readonly sizing: DepositSizing | undefined },
): Promise<OpenPayment> {
  const { requirement, context, id } = channel;
  const hold = await tools.store.hold(id, context.signal);
  try {
    let state = await keptOrFromChain(tools, channel, hold.state, context.signal);
    // Vouchers another attempt holds unanswered: the chain ends those it can (claimed, or never funded).
    if (state && tools.readChannel && heldByOthers(state, context.attempt).length > 0)
      state = settleFromChain(state, await tools.readChannel.channel(requirement.caip2!, id, context.signal));
    if (state?.disputed) {
      throw new ChannelDisputedError(
        `Channel ${id} is stopped: ${state.disputed}. No more vouchers are signed on it; refund or withdraw what it ` +
          "holds.",
        {
          details: {
            ...requestDetails(context.request),
            channel: id,
            network: requirement.network,
            reason: state.disputed,
          },
        },
      );
    }
    const price = BigInt(requirement.amount);
    const balance = BigInt(state?.balance ?? 0);
    const next = baseOf(state, context.attempt) + price;
    const deposit = next > balance ? sizeDeposit(channel, { price, needed: next - balance, balance }) : undefined;
    return session(tools, { ...channel, hold, state, next, deposit });
  } catch (error) {
    await hold.release();
    throw error;
  }
}

/**
 * The channel's state as the store keeps it; for a channel it does not know, or keeps only as {@link emptied}, as the
 * chain has it (what was claimed is taken as charged), with what became of its held vouchers kept.
 */
export async function keptOrFromChain(
  tools: Tools,
  channel: Channel,
  kept: ChannelState | undefined,
  signal?: AbortSignal,
): Promise<ChannelState | undefined> {
  if (kept && !isEmptied(kept)) return kept;
  const onChain = await tools.readChannel?.channel(channel.requirement.caip2!, channel.id, signal);
  const claimed = onChain && String(onChain.totalClaimed);
  const read =
    onChain && onChain.balance > 0n
      ? { balance: String(onChain.balance), charged: claimed!, signed: claimed! }
      : undefined;
  return kept === undefined ? read : { ...(read ?? kept), ended: kept.ended };
}

/** The deposit for a call that needs `needed` more than the channel holds: sized, then bounded by the policy. */
function sizeDeposit(
  { requirement, context, sizing }: Channel & { context: OpenContext; sizing: DepositSizing | undefined },
  { price, needed, balance }: { price: bigint; needed: bigint; balance: bigint },
): bigint {
  const { limit } = context;
  const announced = /^[0-9]{1,40}$/.test(String(requirement.extra.minDeposit ?? ""))
    ? BigInt(requirement.extra.minDeposit as string)
    : undefined;
  const where = requestDetails(context.request);
  if (limit !== undefined && needed > limit) {
    throw new PaymentRefusedError(
      `The channel needs a deposit of at least ${needed} base units for this call, over what the spend policy lets ` +
        `one payment move (${limit}).`,
      { details: where },
    );
  }
  const minDeposit = announced !== undefined && announced > 0n ? announced : undefined;
  let wanted: bigint;
  if (typeof sizing === "function") {
    const told = sizing(Object.freeze({ price, needed, balance, minDeposit, limit, requirement }));
    wanted = BigInt(told);
  } else if (sizing && "amount" in sizing) wanted = BigInt(sizing.amount);
  else wanted = price * BigInt(sizing?.multiple ?? 10);
  if (minDeposit !== undefined && wanted < minDeposit) wanted = minDeposit;
  if (wanted < needed) wanted = needed;
  return limit !== undefined && wanted > limit ? limit : wanted;
}

/** The open payment of a held channel. */
export function session(
  tools: Tools,
  open: Channel & {
    readonly context: OpenContext;
    readonly hold: ChannelHold;
    readonly state: ChannelState | undefined;
    readonly next: bigint;
    readonly deposit: bigint | undefined;
  },
): OpenPayment {
  const { hold, deposit } = open;
  /** The state as this payment leaves it: what was signed, before the seller answers. */
  let current = open.state;
  return {
    deposit: deposit === undefined ? undefined : String(deposit),
    channel: open.id,
    kind: deposit === undefined ? "voucher" : BigInt(open.state?.balance ?? 0) > 0n ? "top-up" : "deposit",
    async createPayload() {
      const signed = deposit === undefined ? undefined : await depositAuthorization(tools, open, deposit);
      const signature = await signVoucher(tools.voucherSigner, open, open.next);
      const most = String(open.next > BigInt(current?.signed ?? 0) ? open.next : BigInt(current?.signed ?? 0));
      // Kept before it is sent, and who sent it: a process that dies now leaves the most the seller can claim on
      // record, and the attempt that alone may send this amount.
      const before = current ?? { balance: "0", charged: "0", signed: "0" };
      current = withOwner({ ...before, signed: most, signature }, open.next, open.context.attempt);
      await hold.save(current);
      const voucher = { channelId: open.id, maxClaimableAmount: String(open.next), signature };
      const channelConfig = { ...open.config };
      if (!signed) return { payload: { type: "voucher", channelConfig, voucher } };
      const depositPart = { amount: String(deposit), authorization: signed.authorization };
      return {
        payload: { type: "deposit", channelConfig, voucher, deposit: depositPart },
        extensions: signed.extensions,
      };
    },
    async accepted(settlement) {
      const { state, outcome } = acceptAnswer(open, current!, settlement);
      current = settleOwners(state);
      // Money moved: a store that cannot save now (its lock lost, its server gone) must not make that an error. The
      // most the seller can claim was saved before sending; the seller's next answer corrects the rest.
      await hold.save(current).catch(() => undefined);
      return outcome;
    },
    async refused(challenge, reason) {
      if (!tools.readChannel && isCorrectable(reason)) {
        throw new InvalidConfigError(
          `The seller counts this batch-settlement channel otherwise (${reason}); nothing was charged. To recover ` +
            "the channel's state, checked against the chain and the seller's vouchers, give batchSettlementEvm an rpc.",
          { details: { option: "rpc" } },
        );
      }
      const corrected = await correctFrom(tools, open, { challenge, reason });
      if (!corrected) return false;
      // The most the seller can claim never goes down on our record.
      const signed = BigInt(current?.signed ?? 0) > BigInt(corrected.signed) ? current!.signed : corrected.signed;
      // The seller's count ends the vouchers held unanswered: charged at or below it, dropped above.
      current = settleOwners({ ...corrected, signed, owners: current?.owners, ended: current?.ended });
      await hold.save(current);
      if (corrected.disputed) {
        throw new ChannelDisputedError(
          `The seller's correction of channel ${open.id} does not hold up: ${corrected.disputed}. Nothing was paid ` +
            "for this call, and no more vouchers are signed on the channel; refund or withdraw what it holds.",
          { details: { channel: open.id, network: open.requirement.network, reason: corrected.disputed } },
        );
      }
      return true;
    },
    close: () => hold.release(),
  };
}

/**
 * The wallet's authorisation of a deposit of `amount` into the channel, by the transfer method the seller names:
 * EIP-3009 (the default) or Permit2, with the approval the seller sponsors when the allowance is short.
 */
async function depositAuthorization(tools: Tools, open: Channel & { context: OpenContext }, amount: bigint) {
  const { requirement } = open;
  if (requirement.extra.assetTransferMethod !== "permit2")
    return { authorization: { erc3009Authorization: await signDeposit(tools, open, amount) } };
  const { payload, extensions } = await withPermit2Allowance(
    tools.signer,
    { ...requirement, amount: String(amount) },
    open.context,
    { scheme: "batchSettlementEvm", allowance: tools.permit2, sign: () => signPermit2Deposit(tools, open, amount) },
  );
  return { authorization: { permit2Authorization: payload }, extensions };
}

/** A Permit2 transfer of `amount` to the channel's Permit2 collector, its witness the channel. */
async function signPermit2Deposit(tools: Tools, open: Channel, amount: bigint) {
  const { requirement, chainId, id } = open;
  const token = checksumAddress(requirement.asset);
  const nonce = BigInt(bytesToHex(tools.randomBytes(32)));
  const deadline = BigInt(Math.floor(tools.now() / 1000)) + BigInt(requirement.maxTimeoutSeconds);
  const signature = await tools.signer.signTypedData({
    domain: { name: "Permit2", chainId, verifyingContract: PERMIT2_ADDRESS },
    types: PERMIT2_DEPOSIT_TYPES,
    primaryType: "PermitWitnessTransferFrom",
    message: {
      permitted: { token, amount },
      spender: PERMIT2_DEPOSIT_COLLECTOR,
      nonce,
      deadline,
      witness: { channelId: id },
    },
  });
  const payload = {
    from: tools.signer.address,
    permitted: { token, amount: String(amount) },
    spender: PERMIT2_DEPOSIT_COLLECTOR,
    nonce: String(nonce),
    deadline: String(deadline),
    witness: { channelId: id },
    signature: normalizeSignature(signature),
  };
  return { payload, deadline: payload.deadline };
}

/** The wallet's EIP-3009 authorisation of a deposit of `amount` into the channel, through its collector. */
async function signDeposit(tools: Tools, open: Channel, amount: bigint) {
  const { requirement, chainId, id } = open;
  const salt = bytesToHex(tools.randomBytes(32));
  const validBefore = String(BigInt(Math.floor(tools.now() / 1000)) + BigInt(requirement.maxTimeoutSeconds));
  const signature = await tools.signer.signTypedData({
    domain: {
      name: requirement.extra.name as string,
      version: requirement.extra.version as string,
      chainId,
      verifyingContract: open.config.token,
    },
    types: { ReceiveWithAuthorization: EIP3009_AUTHORIZATION },
    primaryType: "ReceiveWithAuthorization",
    message: {
      from: tools.signer.address,
      to: ERC3009_DEPOSIT_COLLECTOR,
      value: amount,
      validAfter: 0n,
      validBefore: BigInt(validBefore),
      nonce: depositNonce(id, salt),
    },
  });
  return { validAfter: "0", validBefore, salt, signature: normalizeSignature(signature) };
}

/** A voucher: the channel's seller may claim up to `maxClaimable` in all. */
export async function signVoucher(voucherSigner: EvmSigner, open: Channel, maxClaimable: bigint): Promise<Hex> {
  const signature = await voucherSigner.signTypedData({
    domain: batchDomain(open.chainId),
    types: VOUCHER_TYPES,
    primaryType: "Voucher",
    message: { channelId: open.id, maxClaimableAmount: maxClaimable },
  });
  return normalizeSignature(signature);
}
