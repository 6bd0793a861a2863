export { exactEvm, normalizeSignature, type ExactEvmOptions } from "./exact";
export { toEvmSigner, type EvmSigner, type EvmSignerInput, type WalletClientLike, type TypedDataRequest, type Hex } from "./signer";
export { EVM_V1_NETWORKS, EVM_KNOWN_ASSETS, toEvmChainId } from "./networks";
