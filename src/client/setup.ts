/** What a client is made of once its options are checked: shared by its modules. */
import type {
  EscrowTerms,
  MaybePromise,
  PaymentFlow,
  PaymentScheme,
  PaymentSnapshot,
  PaymentReceipt,
  X402Plugin,
  X402Request,
} from "../contracts";
import type { AnyX402Error } from "../errors";
import type { KnownAsset, PaymentChallenge, PaymentRequirement } from "../protocol";
import type { ResolvedPolicy } from "./policy";

/** A requirement that can be paid: the scheme that will pay it and the asset the policy priced. */
export interface PaymentOption {
  readonly requirement: PaymentRequirement;
  readonly scheme: PaymentScheme;
  readonly asset: KnownAsset | undefined;
  /** How the seller takes the money, as the scheme believes the requirement's `extra.paymentFlow`. */
  readonly flow: PaymentFlow;
  /** What an escrowed payment gives the buyer (auth-capture), as its scheme reads the requirement. */
  readonly escrow?: EscrowTerms | undefined;
}

/** `false` or `{ abort: true }` refuses the payment; anything else approves it. Throwing refuses too. */
export type BeforePaymentResult = boolean | void | undefined | { abort: true; reason?: string };

/** The client's own hooks. */
export interface ClientHooks {
  /** Picks among the payable options (already filtered by schemes and policy, in server order). */
  selectRequirement?:
    | ((options: readonly PaymentOption[], request: X402Request) => MaybePromise<PaymentOption | undefined>)
    | undefined;
  /** Last word before signing; fails closed. */
  onBeforePayment?: ((payment: PaymentSnapshot) => MaybePromise<BeforePaymentResult>) | undefined;
  /** A payment was made and the paid response came back (`receipt.settled` says whether the server confirmed it). */
  onPaymentSettled?: ((receipt: PaymentReceipt) => MaybePromise<void>) | undefined;
  /**
   * A payment attempt failed: rejected, pending, outcome unknown, aborted, or refused before signing (`error.code` says
   * which).
   */
  onPaymentFailed?: ((error: AnyX402Error) => MaybePromise<void>) | undefined;
}

export interface Setup {
  readonly schemes: readonly PaymentScheme[];
  /** The plug-ins that serve, in order: the user's, then the built-ins they do not replace. */
  readonly plugins: readonly X402Plugin[];
  readonly policy: ResolvedPolicy;
  /** Protocol v1 network names the schemes know, to CAIP-2. */
  readonly v1Networks: Readonly<Record<string, string>>;
  /** Stablecoins whose decimals are known: the policy's and the schemes'. */
  readonly knownAssets: readonly KnownAsset[];
  readonly hooks: ClientHooks;
}

/** Does the challenge declare `key` in its `extensions`? */
export const declares = (challenge: PaymentChallenge | undefined, key: string | undefined): boolean =>
  key !== undefined && !!challenge?.extensions && Object.hasOwn(challenge.extensions, key);

/** The plug-ins whose key the challenge declares, in order (none, at once, when it declares nothing). */
export const serving = (setup: Setup, challenge: PaymentChallenge | undefined): readonly X402Plugin[] =>
  challenge?.extensions ? setup.plugins.filter((plugin) => declares(challenge, plugin.key)) : [];
