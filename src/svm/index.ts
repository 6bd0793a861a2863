export { exactSvm, type ExactSvmOptions } from "./exact";
export { uptoSvm, type UptoSvmOptions, PAYMENT_CHANNELS_PROGRAM } from "./upto";
export {
  walletStandardSigner,
  type WalletStandardSigner,
  type WalletStandardWalletLike,
  type WalletStandardAccountLike,
} from "./wallet-standard";
export { svmSettlement, type SvmSettlement } from "./settlement";
export { DEFAULT_SOLANA_RPC_URLS, type SolanaRpcLike, type PendingRpcRequest } from "./rpc";
export type { SolanaRpcOption, SolanaEndpoint } from "./endpoints";
export {
  TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
  MEMO_PROGRAM,
  COMPUTE_BUDGET_PROGRAM,
  findAssociatedTokenAddress,
} from "./transaction";
export { SOLANA_MAINNET, SOLANA_DEVNET, SOLANA_TESTNET, SVM_V1_NETWORKS, SVM_KNOWN_ASSETS } from "./networks";
export type { RpcEndpoint, RpcFamily, RpcName } from "../io";
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
