/**
 * batch-settlement's wire facts: the contracts (one address on every chain), the EIP-712 types, the channel
 * configuration and its id, and the payloads a buyer sends.
 */
import { checksumAddress, type PaymentRequirement } from "../../protocol";
import type { Hex } from "../signer";
import { PERMIT_TRANSFER_FIELDS, TOKEN_PERMISSIONS } from "../permit2";
import { keccakHex, typeHash, word } from "../words";

export const BATCH_SETTLEMENT = "batch-settlement";
/** The settlement contract, at the same address on every chain. */
export const BATCH_SETTLEMENT_ADDRESS: Hex = "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003";
/** The collector that takes an EIP-3009 deposit (`receiveWithAuthorization` to it). */
export const ERC3009_DEPOSIT_COLLECTOR: Hex = "0x4020806089470a89826cB9fB1f4059150b550004";
/** The collector that takes a Permit2 deposit (the spender the wallet's Permit2 transfer names). */
export const PERMIT2_DEPOSIT_COLLECTOR: Hex = "0x4020425FAf3B746C082C2f942b4E5159887B0005";
/** The shortest and longest withdrawal delays the contract accepts, in seconds. */
export const WITHDRAW_DELAY = { min: 900, max: 2_592_000 } as const;

/** A channel: who pays and who authorises its vouchers, who is paid, in which token, and its salt. */
export interface ChannelConfig {
  readonly payer: Hex;
  readonly payerAuthorizer: Hex;
  readonly receiver: Hex;
  readonly receiverAuthorizer: Hex;
  readonly token: Hex;
  readonly withdrawDelay: number;
  readonly salt: Hex;
}

export const VOUCHER_TYPES = {
  Voucher: [
    { name: "channelId", type: "bytes32" },
    { name: "maxClaimableAmount", type: "uint128" },
  ],
} as const;

/** A Permit2 transfer whose witness is the channel it deposits into. */
export const PERMIT2_DEPOSIT_TYPES = {
  PermitWitnessTransferFrom: [...PERMIT_TRANSFER_FIELDS, { name: "witness", type: "DepositWitness" }],
  TokenPermissions: TOKEN_PERMISSIONS,
  DepositWitness: [{ name: "channelId", type: "bytes32" }],
} as const;

/** The settlement contract's EIP-712 domain on `chainId`. */
export const batchDomain = (chainId: number) => ({
  name: "x402 Batch Settlement",
  version: "1",
  chainId,
  verifyingContract: BATCH_SETTLEMENT_ADDRESS,
});

/**
 * The channel a requirement opens for `payer`, its vouchers signed by `payerAuthorizer`. The seller's `payTo` and
 * `asset` are kept as it wrote them: it compares the token by its exact text.
 */
export function channelConfig(requirement: PaymentRequirement, payer: Hex, payerAuthorizer: Hex, salt: Hex) {
  const { receiverAuthorizer, withdrawDelay } = requirement.extra as {
    receiverAuthorizer: Hex;
    withdrawDelay?: number;
  };
  return {
    payer,
    payerAuthorizer,
    receiver: requirement.payTo as Hex,
    receiverAuthorizer: checksumAddress(receiverAuthorizer) as Hex,
    token: requirement.asset as Hex,
    withdrawDelay: typeof withdrawDelay === "number" ? withdrawDelay : WITHDRAW_DELAY.min,
    salt,
  } satisfies ChannelConfig;
}

/*
 * The EIP-712 hashes of the settlement contract's own structs, all of static fields: each field is one 32-byte word,
 * so the struct hash is keccak256(typeHash ‖ words). Checked against the reference client's in
 * test/unit/batch-wire.test.ts; the wallet signs through its own signTypedData, never a hash of ours.
 */

const CHANNEL_CONFIG_TYPE =
  "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token," +
  "uint40 withdrawDelay,bytes32 salt)";

/** The settlement contract's EIP-712 domain separator on `chainId`. */
function domainSeparator(chainId: number): string {
  const domain = batchDomain(chainId);
  return keccakHex(
    typeHash("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)") +
      typeHash(domain.name) +
      typeHash(domain.version) +
      word(chainId) +
      word(domain.verifyingContract),
  );
}

/** The channel's id on `chainId`: the EIP-712 hash of its configuration, lower-case hex. */
export function channelIdOf(config: ChannelConfig, chainId: number): Hex {
  const { payer, payerAuthorizer, receiver, receiverAuthorizer, token, withdrawDelay, salt } = config;
  const fields = [payer, payerAuthorizer, receiver, receiverAuthorizer, token, withdrawDelay, salt].map(word).join("");
  return `0x${keccakHex(`1901${domainSeparator(chainId)}${keccakHex(typeHash(CHANNEL_CONFIG_TYPE) + fields)}`)}`;
}

/** The EIP-712 digest of a voucher: what its signature signs, to recover who signed one the seller shows. */
export function voucherDigest(channelId: Hex, maxClaimable: bigint, chainId: number): Hex {
  const struct = keccakHex(
    typeHash("Voucher(bytes32 channelId,uint128 maxClaimableAmount)") + word(channelId) + word(maxClaimable),
  );
  return `0x${keccakHex(`1901${domainSeparator(chainId)}${struct}`)}`;
}

/** The EIP-3009 nonce of a deposit: keccak256(abi.encode(channelId, salt)), the salt read as a uint256. */
export function depositNonce(channelId: Hex, salt: Hex): Hex {
  return `0x${keccakHex(word(channelId) + word(salt))}`;
}

/** `channels(bytes32)`: a channel's balance and what its seller claimed. */
export const CHANNELS_SELECTOR: Hex = "0x7a7ebd7b";
