export { signInWithX, SIGN_IN_WITH_X, type SignInWithXOptions } from "./extension";
export { CLOCK_SKEW_SECONDS, MAX_AGE_SECONDS } from "./challenge";
export type {
  EvmMessageSignerInput,
  MessageWalletClientLike,
  SolanaMessageSignerInput,
  SignableMessageLike,
  KitMessagePartialSignerLike,
  KitMessageModifyingSignerLike,
} from "./wallets";
