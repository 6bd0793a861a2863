/**
 * EVM `batch-settlement`: one deposit into a channel, then a cumulative voucher per call; the seller claims and
 * settles in batches, and what is left comes back by a refund.
 */
import type { ChannelStore, OpenContext, PaymentScheme } from "../../contracts";
import { InvalidConfigError } from "../../errors";
import type { PaymentRequirement } from "../../protocol";
import type { EvmRpcOption } from "../chain";
import { EVM_KNOWN_ASSETS, toEvmChainId } from "../networks";
import { checkAddress, checkEvmRequirement, schemeTools, type EvmSchemeOptions } from "../shared";
import { toEvmSigner, type EvmSignerInput, type Hex } from "../signer";
import { channelReader } from "./chain";
import { checkChannelPayment } from "./check";
import { resendChannelPayment } from "./resend";
import { openChannelPayment, type DepositSizing } from "./open";
import { refundChannel, type RefundOptions, type RefundResult } from "./refund";
import { memoryChannelStore } from "./store";
import { prepareWithdrawal, type Withdrawal, type WithdrawalOptions } from "./withdraw";
import { BATCH_SETTLEMENT, WITHDRAW_DELAY, channelConfig, channelIdOf, type ChannelConfig } from "./wire";

export interface BatchSettlementEvmOptions extends Omit<EvmSchemeOptions, "settlement"> {
  /**
   * Signs the vouchers (a session key): the wallet `signer` then signs only deposits. Default: the signer. The
   * channel names it as the vouchers' authoriser, so a channel opened with one key is a different channel from one
   * opened with another.
   */
  voucherSigner?: EvmSignerInput | undefined;
  /** Where channels are kept: `memoryChannelStore()` (default), a file, or Redis to share them between processes. */
  storage?: ChannelStore | undefined;
  /**
   * How much a deposit (or a top-up) puts in the channel: `{ multiple: 10 }` times the call's price (the default), a
   * fixed `{ amount }` in base units, or a function. At least what the call needs and the seller's `minDeposit`,
   * never more than the spend policy lets one payment move.
   */
  deposit?: DepositSizing | undefined;
  /**
   * Chain reads (an RPC URL, a viem PublicClient or an EIP-1193 provider; one per network or one for its chain). Needed
   * to recover a lost channel and to check a seller's correction against the chain; without it a correction is
   * refused.
   */
  rpc?: EvmRpcOption | undefined;
  /** Longest wait for one chain read, in ms. Default 10,000. */
  rpcTimeoutMs?: number | undefined;
  /** The channel's salt (32 bytes hex), to keep several channels with one seller. Default zero. */
  salt?: Hex | undefined;
}

/** A batch-settlement scheme: pays, and refunds what its channels hold. */
export interface BatchSettlementEvm extends PaymentScheme {
  /**
   * Asks the seller at `url` for a cooperative refund of the channel that pays it: all that the channel holds beyond
   * what was charged, or `amount` base units of it. The seller's authoriser signs the refund and its facilitator sends
   * it; the state is updated from the answer.
   */
  refund(url: string, options: RefundOptions): Promise<RefundResult>;
  /**
   * The way out without the seller: the two transactions (`initiate`, then `finalize` after the channel's withdrawal
   * delay) that take back what the channel that pays `url` holds beyond what its seller claimed. The wallet sends them.
   */
  withdrawal(url: string, options: WithdrawalOptions): Promise<Withdrawal>;
}

const ZERO_SALT: Hex = `0x${"0".repeat(64)}`;

/** Pays `batch-settlement` requirements on EVM chains (protocol v2), with one channel per seller, token and chain. */
export function batchSettlementEvm(options: BatchSettlementEvmOptions): BatchSettlementEvm {
  const { signer, randomBytes } = schemeTools(options);
  const voucherSigner = options.voucherSigner === undefined ? signer : toEvmSigner(options.voucherSigner);
  const store = options.storage ?? memoryChannelStore();
  const readChannel = channelReader(options.rpc, options.rpcTimeoutMs ?? 10_000);
  const salt = options.salt ?? ZERO_SALT;
  if (!/^0x[0-9a-fA-F]{64}$/.test(salt))
    throw new InvalidConfigError("batchSettlementEvm: salt must be 32 bytes of hex.", { details: { option: "salt" } });
  if (!isSizing(options.deposit))
    throw new InvalidConfigError(
      "batchSettlementEvm: deposit must be { multiple } (a whole number from 0), { amount } (base units, such as " +
        '"1000000") or a function.',
      { details: { option: "deposit" } },
    );
  if (typeof store?.hold !== "function")
    throw new InvalidConfigError("batchSettlementEvm: storage must be a channel store { hold, peek }.", {
      details: { option: "storage" },
    });
  const ids = new Map<string, Hex>();
  /** The channel a requirement pays into, and its id (hashed once per channel). */
  const channelOf = (requirement: PaymentRequirement) => {
    const chainId = toEvmChainId(requirement.caip2!)!;
    const config: ChannelConfig = channelConfig(requirement, signer.address, voucherSigner.address, salt);
    const key = `${chainId}:${Object.values(config).join(":")}`;
    const id = ids.get(key) ?? channelIdOf(config, chainId);
    ids.set(key, id);
    return { requirement, chainId, config, id };
  };
  const tools = {
    signer,
    voucherSigner,
    store,
    readChannel,
    randomBytes,
    now: options.now ?? Date.now,
    permit2: options.permit2,
  };

  const scheme: BatchSettlementEvm = {
    scheme: BATCH_SETTLEMENT,
    networks: options.networks ?? ["eip155:*"],
    x402Versions: [2],
    // Vouchers are claimed after delivery; the deposit stays the payer's until then.
    flows: ["authorization"],
    payer: signer.address,
    knownAssets: EVM_KNOWN_ASSETS,
    check: checkBatchRequirement,
    checkSettlement: (query, signal) => checkChannelPayment(tools, query, signal),
    resend: (payload, context) => resendChannelPayment(tools, channelOf(context.requirement), { payload, context }),
    open: (requirement, context: OpenContext) =>
      openChannelPayment(tools, { context, ...channelOf(requirement), sizing: options.deposit }),
    async createPayload() {
      throw new InvalidConfigError(
        "batch-settlement payments are made by a client (createX402Client), which keeps the channel's state.",
      );
    },
    refund: (url, refundOptions) => refundChannel(tools, { url, channelOf, options: refundOptions }),
    withdrawal: (url, withdrawalOptions) => prepareWithdrawal(tools, { url, channelOf, options: withdrawalOptions }),
  };
  return scheme;
}

/** A deposit sizing `sizeDeposit` can use (or none): checked here, not at the first deposit. */
function isSizing(sizing: unknown): boolean {
  if (sizing === undefined || typeof sizing === "function") return true;
  const { multiple, amount } = (sizing ?? {}) as { multiple?: unknown; amount?: unknown };
  if (typeof sizing !== "object" || sizing === null || (multiple === undefined) === (amount === undefined))
    return false;
  return multiple === undefined
    ? typeof amount === "string" && /^[0-9]{1,78}$/.test(amount)
    : Number.isSafeInteger(multiple) && (multiple as number) >= 0;
}

/** Why a batch-settlement requirement cannot be paid, else `undefined`. */
function checkBatchRequirement(requirement: PaymentRequirement): string | undefined {
  const { receiverAuthorizer, withdrawDelay, assetTransferMethod, name, version } = requirement.extra;
  const problem =
    checkEvmRequirement(requirement) ??
    (receiverAuthorizer === undefined
      ? "extra.receiverAuthorizer (who authorises the seller's claims and refunds) is missing"
      : checkAddress("extra.receiverAuthorizer", receiverAuthorizer));
  if (problem) return problem;
  if (/^0x0{40}$/.test(receiverAuthorizer as string)) return "extra.receiverAuthorizer is the zero address";
  if (
    withdrawDelay !== undefined &&
    !(
      Number.isSafeInteger(withdrawDelay) &&
      +withdrawDelay! >= WITHDRAW_DELAY.min &&
      +withdrawDelay! <= WITHDRAW_DELAY.max
    )
  )
    return (
      `extra.withdrawDelay ${JSON.stringify(withdrawDelay)} is not ${WITHDRAW_DELAY.min} to ` +
      `${WITHDRAW_DELAY.max} seconds`
    );
  if (assetTransferMethod === "permit2") return undefined;
  if (assetTransferMethod !== undefined && assetTransferMethod !== "eip3009")
    return `asset transfer method ${JSON.stringify(assetTransferMethod)} is not supported (only eip3009 and permit2)`;
  if (typeof name !== "string" || !name || typeof version !== "string" || !version)
    return "extra.name and extra.version (the token's EIP-712 domain) are missing";
  return undefined;
}
