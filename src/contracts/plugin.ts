/**
 * The one plug-in seam. Every capability beyond the handshake, the choice of requirement, the spend
 * policy and outcome reporting attaches here: sign-in-with-x, builder-code, signed offers and receipts,
 * payment-identifier, budgets, the receipts ledger, the quote cache, and yours. A plug-in is a plain
 * value given to `createX402Client({ plugins })`; every step is optional.
 *
 * Steps that read a 402's `extensions[key]` run only when the 402 declares the plug-in's `key`
 * (`beforePayment`, `reviewRequirements`, `enrichPayload`, `describeSettlement`). The others run for
 * every payment: `checkRequirement`, `reserve`, `onOutcome` (with a `key`: only where it was declared),
 * and the three that let a client pay before it is asked (`prepay`, `learn`, `forget`).
 */
import type { KnownAsset, PaymentChallenge, PaymentRequirement, SettleResponse } from "../protocol";
import type { KeptPayment, PaymentHeader } from "./journal";
import type { PaymentScheme } from "./scheme";
import type { ChannelRefund, PaymentOutcome, PaymentTerms, X402Request } from "./payment";

/** A value, or a promise of it: what a hook or a plug-in step may return. */
export type MaybePromise<T> = T | Promise<T>;

/** What a 402 step sees: the plug-in's own declaration in the 402, the challenge and the request. */
export interface ExtensionContext {
  /** `challenge.extensions[key]`, as the server declared it. */
  readonly declaration: unknown;
  readonly challenge: PaymentChallenge;
  readonly request: X402Request;
  readonly signal?: AbortSignal | undefined;
}

/** What `enrichPayload` sees besides the declaration: the requirement being paid and who pays it. */
export interface EnrichContext extends ExtensionContext {
  readonly requirement: PaymentRequirement;
  readonly payer: string;
  /** What the scheme already put in `extensions[key]`, if anything. */
  readonly current: Readonly<Record<string, unknown>> | undefined;
}

/** What `describeSettlement` sees besides the declaration: the settlement the paid response reported. */
export interface SettlementContext extends ExtensionContext {
  readonly settlement: SettleResponse;
}

/** A requirement a plug-in refuses before the spend policy sees it: its index in `accepts`, and why. */
export interface RequirementReview {
  readonly index: number;
  /**
   * `invalid`: what the server sent for it does not hold up (a signed offer that fails); `policy`: the plug-in's
   * options refuse it.
   */
  readonly code: "invalid" | "policy";
  readonly reason: string;
}

/** What `reserve` is told besides the terms: the asset's decimals and symbol when known, and the request. */
export interface ReserveContext {
  readonly asset: KnownAsset | undefined;
  /** The requirement being paid (its CAIP-2 network in `caip2`). */
  readonly requirement: PaymentRequirement;
  readonly request: X402Request;
  /** batch-settlement: the id of the channel that pays, whose deposit a budget holds until spent or refunded. */
  readonly channel?: string | undefined;
  /**
   * The payment attempt's own id (unique): a journal's entry id, a budget's reservation id, so that what each kept for
   * the attempt can be found again by it after a restart (`reservationOf`).
   */
  readonly attempt: string;
}

/** A payment attempt made earlier, perhaps by a process that died: what a plug-in reserved for it is found by `id`. */
export interface ReservedAttempt {
  /** `ReserveContext.attempt` of the attempt. */
  readonly id: string;
  readonly terms: PaymentTerms;
  /** CAIP-2. */
  readonly network: string;
  /** batch-settlement: the channel that paid (`ReserveContext.channel`), by which a budget holds what it holds. */
  readonly channel?: string | undefined;
}

/** What a plug-in holds for a payment until its outcome is known. */
export interface Reservation {
  /** Money moved, or may have: `amount` settled (atomic; for `upto`, what was settled), or the maximum when unknown. */
  commit(amount?: string): Promise<void>;
  /** Nothing was charged. */
  release(): Promise<void>;
}

/**
 * What `resume` may use: the client's schemes, to ask the chain (`checkSettlement({ schemes }, query)`), and what the
 * client's plug-ins reserved for an earlier attempt, to end it.
 */
export interface ResumeContext {
  readonly schemes: readonly PaymentScheme[];
  reservations(attempt: ReservedAttempt): readonly Reservation[];
}

/** A plug-in of `createX402Client({ plugins })`. */
export interface X402Plugin {
  /** Names the plug-in in messages; two plug-ins of one client cannot share a name (two budgets named alike). */
  readonly name?: string | undefined;
  /** The key in a 402's `extensions` it serves, e.g. `"sign-in-with-x"`. */
  readonly key?: string | undefined;

  /**
   * Before paying (declared): request headers to try instead (a sign-in proof). The request is sent
   * once more with them; a payment follows only if the server still answers 402. At most one
   * plug-in's headers are tried per request.
   */
  beforePayment?(context: ExtensionContext): MaybePromise<Record<string, string> | undefined | void>;
  /** Before choosing (declared): requirements to refuse (a signed offer that fails), each with its reason. */
  reviewRequirements?(context: ExtensionContext): MaybePromise<readonly RequirementReview[] | undefined | void>;
  /**
   * Every requirement a scheme can pay, beside the spend policy: why this plug-in refuses it outright (a
   * budget that cannot value it), else `undefined`. Synchronous: `quote` runs it without side effects.
   */
  checkRequirement?(
    requirement: PaymentRequirement,
    asset: KnownAsset | undefined,
    request: X402Request,
  ): string | undefined;
  /**
   * Before any prompt (the approval hook's or the wallet's): holds what the payment may spend (a budget).
   * Throw a typed error to refuse. Released when nothing is sent, committed or released by the outcome.
   */
  reserve?(payment: PaymentTerms, context: ReserveContext): Promise<Reservation | undefined>;
  /**
   * Adds to the payload's `extensions[key]` (declared, or every v2 payment with `enrichUndeclared`): the
   * fields returned are added to the server's declaration, whose own fields stay as declared (a declared
   * list gives way only to one that keeps every entry).
   */
  enrichPayload?(context: EnrichContext): MaybePromise<Record<string, unknown> | undefined | void>;
  /** `enrichPayload` runs for v2 payments whose 402 does not declare `key` too (`declaration` is then `undefined`). */
  readonly enrichUndeclared?: boolean | undefined;
  /**
   * After a reported settlement (declared): what the receipt says under `extensions[key]` (a checked signed receipt).
   */
  describeSettlement?(context: SettlementContext): MaybePromise<unknown>;
  /**
   * A payment signed for the request, before it leaves: its terms and its header (a signed authorization). A journal
   * writes it down; throwing stops the payment before it is sent (`PAYMENT_NOT_SENT`: nothing left).
   */
  onSigned?(
    payment: { readonly terms: PaymentTerms; readonly paymentHeader: PaymentHeader },
    request: X402Request,
  ): MaybePromise<void>;
  /**
   * Before paying a request that has a key (`x402: { paymentId }`): a payment kept for that key, sent once more as it
   * is instead of signing anew (a journal's unfinished entry), else `undefined`.
   */
  resume?(request: X402Request, context: ResumeContext): MaybePromise<KeptPayment | undefined>;
  /**
   * The reservation this plug-in made for an earlier attempt (`ReserveContext.attempt`), found again, by another
   * process too: recovery and a resumed payment end it (commit what moved, release what never could). `undefined`
   * for one it keeps no trace of across processes.
   */
  reservationOf?(
    attempt: ReservedAttempt,
    context: { readonly asset: KnownAsset | undefined },
  ): Reservation | undefined;
  /** How the payment ended; with a `key`, only payments whose 402 declared it. Errors it throws are ignored. */
  onOutcome?(outcome: PaymentOutcome): MaybePromise<void>;
  /**
   * Money came back from a channel (batch-settlement's `refund(url, { client })`): a ledger records it, a budget lets
   * go of what it held for it (`asset`: the asset's decimals when the client knows them). Errors it throws are ignored.
   */
  onRefund?(refund: ChannelRefund, context: { readonly asset: KnownAsset | undefined }): MaybePromise<void>;

  /**
   * Before a request is first sent: a challenge to pay at once (one round trip instead of two), or none;
   * `done` is called when the request is over. Only requests that carry no payment are asked.
   */
  prepay?(request: X402Request): Promise<{ readonly challenge: PaymentChallenge | undefined; done(): void }>;
  /** A 402 answered the request directly, and no plug-in would try instead of paying: its challenge. */
  learn?(request: X402Request, challenge: PaymentChallenge): void;
  /** What `prepay` offered for the request no longer holds (refused, not settled, failed). */
  forget?(request: X402Request): void;
}

/** Step names a plug-in may have, as the client checks them. */
export const PLUGIN_STEPS = [
  "beforePayment",
  "reviewRequirements",
  "checkRequirement",
  "reserve",
  "enrichPayload",
  "onSigned",
  "resume",
  "reservationOf",
  "describeSettlement",
  "onOutcome",
  "onRefund",
  "prepay",
  "learn",
  "forget",
] as const;
