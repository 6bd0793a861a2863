export { exactEvm, normalizeSignature, type ExactEvmOptions } from "./exact";
export { toEvmSigner, type EvmSigner, type EvmSignerInput, type WalletClientLike, type TypedDataRequest, type Hex } from "./signer";
