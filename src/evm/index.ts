export { exactEvm, type ExactEvmOptions } from "./exact";
export { uptoEvm, type UptoEvmOptions } from "./upto";
export {
  authCaptureEvm,
  AUTH_CAPTURE_DEPLOYMENTS,
  type AuthCaptureEvmOptions,
  type AuthCaptureDeployment,
} from "./auth-capture";
export { PERMIT2_ADDRESS, EXACT_PERMIT2_PROXY, UPTO_PERMIT2_PROXY } from "./permit2";
export { permit2ApprovalTransaction, type Permit2ApprovalOptions } from "./approve";
export { permit2Allowance, type Permit2Allowance, type Permit2AllowanceOptions } from "./sponsor";
export { EIP2612_GAS_SPONSORING, ERC20_APPROVAL_GAS_SPONSORING } from "./permit2";
export type { EvmRequester, EvmRpcOption } from "./chain";
export { evmSettlement, type EvmSettlement, type EvmSettlementOptions, type SettlementRule } from "./settlement";
export { eip1193Signer, type Eip1193SignerOptions } from "./eip1193";
export type { EvmSchemeOptions } from "./shared";
export {
  toEvmSigner,
  normalizeSignature,
  type EvmSigner,
  type TransactionToSign,
  type EvmMessageSigner,
  type EvmSignerInput,
  type WalletClientLike,
  type TypedDataRequest,
  type Hex,
} from "./signer";
export { EVM_V1_NETWORKS, EVM_KNOWN_ASSETS, toEvmChainId } from "./networks";
export {
  batchSettlementEvm,
  memoryChannelStore,
  BATCH_SETTLEMENT,
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR,
  PERMIT2_DEPOSIT_COLLECTOR,
  channelIdOf,
  type BatchSettlementEvm,
  type BatchSettlementEvmOptions,
  type DepositContext,
  type DepositSizing,
  type RefundOptions,
  type RefundResult,
  type ChannelTransaction,
  type Withdrawal,
  type WithdrawalOptions,
  type ChannelConfig,
} from "./batch";
export type { PayingStack, PayingFetch, PayingAxios } from "../contracts";
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
