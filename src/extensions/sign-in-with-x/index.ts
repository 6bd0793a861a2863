export { signInWithX, SIGN_IN_WITH_X, type SignInWithXOptions } from "./extension";
export { memoryStore, paidKey, MEMORY_STORE_ENTRIES } from "./store";
export { checkDeclaration, chooseChain, CLOCK_SKEW_SECONDS, MAX_AGE_SECONDS, type Declaration, type SupportedChain, type SignInWallet, type ChainChoice } from "./challenge";
export { formatMessage, messageProblem, parseTime, type SignInFields, type Family } from "./message";
export {
  toEvmMessageSigner,
  toSolanaMessageSigner,
  type MessageSigner,
  type EvmMessageSignerInput,
  type MessageWalletClientLike,
  type SolanaMessageSignerInput,
  type KitMessagePartialSignerLike,
  type KitMessageModifyingSignerLike,
  type WalletStandardWalletLike,
} from "./wallets";
