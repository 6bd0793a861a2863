export { exactEvm, type ExactEvmOptions } from "./exact";
export { uptoEvm, type UptoEvmOptions } from "./upto";
export { PERMIT2_ADDRESS, EXACT_PERMIT2_PROXY, UPTO_PERMIT2_PROXY } from "./permit2";
export { permit2ApprovalTransaction, type Permit2ApprovalOptions } from "./approve";
export type { EvmSchemeOptions } from "./shared";
export { toEvmSigner, normalizeSignature, type EvmSigner, type EvmSignerInput, type WalletClientLike, type TypedDataRequest, type Hex } from "./signer";
export { EVM_V1_NETWORKS, EVM_KNOWN_ASSETS, toEvmChainId } from "./networks";
