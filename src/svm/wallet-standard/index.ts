/** Solana browser wallets through wallet-standard (docs/solana.md#browser-wallets). */
export { walletStandardSigner, type WalletStandardSigner } from "./signer";
export {
  signMessagesWith,
  accountsWith,
  SIGN_MESSAGE,
  type WalletStandardWalletLike,
  type WalletStandardAccountLike,
} from "./wallet";
