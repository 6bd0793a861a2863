// Installs the batch-settlement contract and its two deposit collectors at the addresses the reference
// `batch-settlement` packages call (the same on every chain), and reads their state. None of them ships
// as bytecode on npm: the sources are ours, contracts/BatchSettlement.sol and contracts/DepositCollectors.sol,
// compiled by scripts/compile-token.mjs. The EIP-3009 path needs TestUSDC and the Multicall3 stand-in
// (installTestUsdc); the Permit2 path also needs Permit2 (installPermit2).

import { createPublicClient, http, parseAbi, type Abi, type Address, type Hex, type PublicClient } from "viem";
import settlementArtifact from "./contracts/BatchSettlement.json" with { type: "json" };
import erc3009CollectorArtifact from "./contracts/ERC3009DepositCollector.json" with { type: "json" };
import permit2CollectorArtifact from "./contracts/Permit2DepositCollector.json" with { type: "json" };
import { rpc } from "./anvil.js";

/** The x402 batch-settlement contract. */
export const BATCH_SETTLEMENT: Address = "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003";
/** Collects EIP-3009 (receiveWithAuthorization) deposits. */
export const ERC3009_DEPOSIT_COLLECTOR: Address = "0x4020806089470a89826cB9fB1f4059150b550004";
/** Collects Permit2 (permitWitnessTransferFrom) deposits. */
export const PERMIT2_DEPOSIT_COLLECTOR: Address = "0x4020425FAf3B746C082C2f942b4E5159887B0005";

export const batchSettlementAbi = settlementArtifact.abi as Abi;

/** The reads the helpers below make, typed for viem. */
const readAbi = parseAbi([
  "function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)",
  "function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)",
  "function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)",
  "function refundNonce(bytes32 channelId) view returns (uint256)",
  "function getChannelId((address payer, address payerAuthorizer, address receiver, address receiverAuthorizer," +
    " address token, uint40 withdrawDelay, bytes32 salt) config) view returns (bytes32)",
  "function CHANNEL_CONFIG_TYPEHASH() view returns (bytes32)",
  "function SETTLEMENT() view returns (address)",
  "function balanceOf(address owner) view returns (uint256)",
]);

/** A channel's configuration, as the contract takes it (the reference's ChannelConfig). */
export interface ChannelConfig {
  payer: Address;
  payerAuthorizer: Address;
  receiver: Address;
  receiverAuthorizer: Address;
  token: Address;
  withdrawDelay: number;
  salt: Hex;
}

/** `channels(id)`: deposits less refunds and withdrawals, and what the receiver side has claimed. */
export interface ChannelOnChain {
  balance: bigint;
  totalClaimed: bigint;
}

/** `receivers(receiver, token)`: claimed for the receiver so far, and paid out to it by `settle`. */
export interface ReceiverOnChain {
  totalClaimed: bigint;
  totalSettled: bigint;
}

/** `pendingWithdrawals(id)`: a payer's withdrawal request; initiatedAt 0 when there is none. */
export interface WithdrawalOnChain {
  amount: bigint;
  initiatedAt: number;
}

/**
 * Places the settlement contract and both collectors with anvil_setCode (no constructor runs;
 * none is needed), then checks the contract answers and the collectors point at it.
 */
export async function installBatchSettlement(rpcUrl: string): Promise<BatchSettlementReader> {
  await rpc(rpcUrl, "anvil_setCode", [BATCH_SETTLEMENT, settlementArtifact.deployedBytecode]);
  await rpc(rpcUrl, "anvil_setCode", [ERC3009_DEPOSIT_COLLECTOR, erc3009CollectorArtifact.deployedBytecode]);
  await rpc(rpcUrl, "anvil_setCode", [PERMIT2_DEPOSIT_COLLECTOR, permit2CollectorArtifact.deployedBytecode]);
  const client = createPublicClient({ transport: http(rpcUrl) });
  await client.readContract({ address: BATCH_SETTLEMENT, abi: readAbi, functionName: "CHANNEL_CONFIG_TYPEHASH" });
  for (const collector of [ERC3009_DEPOSIT_COLLECTOR, PERMIT2_DEPOSIT_COLLECTOR]) {
    const settlement = await client.readContract({ address: collector, abi: readAbi, functionName: "SETTLEMENT" });
    if (settlement !== BATCH_SETTLEMENT)
      throw new Error(`batch-settlement install check failed: ${collector}.SETTLEMENT() is ${settlement}`);
  }
  return batchSettlementAt(rpcUrl);
}

/** Reads of the batch-settlement contract (and token balances) on a chain where it is installed. */
export interface BatchSettlementReader {
  channel(channelId: Hex): Promise<ChannelOnChain>;
  receiver(receiver: Address, token: Address): Promise<ReceiverOnChain>;
  pendingWithdrawal(channelId: Hex): Promise<WithdrawalOnChain>;
  refundNonce(channelId: Hex): Promise<bigint>;
  /** The contract's own `getChannelId(config)`. */
  channelId(config: ChannelConfig): Promise<Hex>;
  /** `token.balanceOf(owner)`; the contract's escrow is `tokenBalance(token, BATCH_SETTLEMENT)`. */
  tokenBalance(token: Address, owner: Address): Promise<bigint>;
  /** Transactions sent from `address` so far (its nonce): a facilitator's count moves only when it sends one. */
  transactionCount(address: Address): Promise<number>;
}

export function batchSettlementAt(rpcUrl: string): BatchSettlementReader {
  const client: PublicClient = createPublicClient({ transport: http(rpcUrl) });
  const read = <T>(functionName: string, args: readonly unknown[], address: Address = BATCH_SETTLEMENT) =>
    client.readContract({ address, abi: readAbi, functionName, args } as never) as Promise<T>;
  return {
    async channel(channelId) {
      const [balance, totalClaimed] = await read<[bigint, bigint]>("channels", [channelId]);
      return { balance, totalClaimed };
    },
    async receiver(receiver, token) {
      const [totalClaimed, totalSettled] = await read<[bigint, bigint]>("receivers", [receiver, token]);
      return { totalClaimed, totalSettled };
    },
    async pendingWithdrawal(channelId) {
      const [amount, initiatedAt] = await read<[bigint, number]>("pendingWithdrawals", [channelId]);
      return { amount, initiatedAt };
    },
    refundNonce: (channelId) => read<bigint>("refundNonce", [channelId]),
    channelId: (config) => read<Hex>("getChannelId", [config]),
    tokenBalance: (token, owner) => read<bigint>("balanceOf", [owner], token),
    transactionCount: (address) => client.getTransactionCount({ address }),
  };
}
