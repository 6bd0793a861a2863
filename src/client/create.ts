/**
 * `createX402Client`: schemes, spend policy, plug-ins and hooks in one plain object, and the engine the wrappers drive.
 */
import {
  PLUGIN_STEPS,
  checkOptions,
  every,
  fail,
  is,
  isFunction,
  nonEmpty,
  schemesFor,
  type ChannelRefund,
  type KeptPayment,
  type OpenPayment,
  type PaymentHeader,
  type PaymentScheme,
  type PaymentTerms,
  type Reservation,
  type ReservedAttempt,
  type ResendContext,
  type X402Plugin,
  type X402Request,
} from "../contracts";
import { InvalidConfigError, type RejectedRequirement } from "../errors";
import { paymentIdentifier } from "../extensions/payment-identifier";
import { findKnownAsset, type PaymentChallenge, type SettleResponse } from "../protocol";
import { ceilingOf, type PaymentCeiling } from "./ceiling";
import { call, observe } from "./call";
import { createPayment, quote, type Attempt, type PreparedPayment } from "./pay";
import { beforePayment, describeSettlement, prepaying, reservationsOf, resume, signed, tries } from "./plugins";
import { resolvePolicy, type ResolvedPolicy, type SpendPolicy } from "./policy";
import { report } from "./report";
import { evaluate } from "./select";
import type { ClientHooks, PaymentOption, Setup } from "./setup";

export interface X402ClientOptions extends ClientHooks {
  /** Ways to pay, e.g. `[exactEvm({ signer })]`. */
  schemes: readonly PaymentScheme[];
  /** Spend policy; on by default with a $1 per-payment cap. */
  policy?: SpendPolicy | undefined;
  /**
   * Plug-ins: `signInWithX`, `builderCode`, `offerReceipt`, `budget`, a ledger (`memoryLedger()`,
   * `fileLedger`, `redisLedger`), `quoteCache`, or your own (`X402Plugin`). payment-identifier is built in.
   */
  plugins?: readonly X402Plugin[] | undefined;
}

/**
 * What a client would pay for a challenge: the payable options (`options[0]` unless `selectRequirement` picks another),
 * and why each other is refused.
 */
export interface Quote {
  readonly options: PaymentOption[];
  readonly rejected: RejectedRequirement[];
  /**
   * Pay what was quoted, not more: `options[0]`'s amount in its asset on its network, to pass as
   * `x402: { maxAmount }` when the request is made; `"$0"` (pays nothing) when nothing is payable.
   */
  readonly maxAmount: PaymentCeiling;
}

/** A client of x402-pay: give it to `wrapFetchWithPayment` or `wrapAxiosWithPayment`. */
export interface X402Client {
  readonly schemes: readonly PaymentScheme[];
  /** The plug-ins given (the built-in payment-identifier serves beside them unless one replaces it). */
  readonly plugins: readonly X402Plugin[];
  readonly policy: ResolvedPolicy;
  /**
   * Would this client pay the challenge, and if not, why: the plug-ins' reviews, then the schemes, the
   * spend policy and the plug-ins' checks. Signs nothing, reserves nothing and asks no hook.
   */
  quote(challenge: PaymentChallenge, request: X402Request): Promise<Quote>;
  /**
   * Money came back from a channel: tells the plug-ins (a ledger records it, a budget lets go of what it held).
   * A refund through the client's stack (batch-settlement's `refund(url, { through })`) calls it; so may you, for a
   * withdrawal that landed. Never throws.
   */
  refunded(refund: ChannelRefund): Promise<void>;
}

/** What the handshake drives: the client's steps of a payment, kept off its public face. */
export interface Engine {
  readonly setup: Setup;
  evaluate(challenge: PaymentChallenge, request: X402Request): Omit<Quote, "maxAmount">;
  beforePayment(challenge: PaymentChallenge, request: X402Request): Promise<Record<string, string> | undefined>;
  /** Would a plug-in try instead of paying (a sign-in)? */
  tries(challenge: PaymentChallenge): boolean;
  createPayment(challenge: PaymentChallenge, request: X402Request): Promise<PreparedPayment>;
  describeSettlement(
    challenge: PaymentChallenge,
    request: X402Request,
    settlement: SettleResponse,
  ): Promise<Record<string, unknown>>;
  /**
   * Tells the reservations, the plug-ins and the hooks how a payment attempt ended, once. Never throws. A kept
   * payment sent again ends the reservations it was signed under (`reservations`).
   */
  report(outcome: Parameters<typeof report>[1], reservations?: readonly Reservation[]): Promise<void>;
  /** What the plug-ins reserved for an earlier attempt, found again by its id (recovery ends them). */
  reservationsOf(attempt: ReservedAttempt): Reservation[];
  /** The plug-in that pays before it is asked (the quote cache), if any. */
  readonly prepay: X402Plugin | undefined;
  /** Tells the plug-ins a payment was signed, before it leaves; throws `PAYMENT_NOT_SENT` if one fails. */
  signed(
    payment: { readonly terms: PaymentTerms; readonly paymentHeader: PaymentHeader },
    request: X402Request,
  ): Promise<void>;
  /** A payment a plug-in kept for the request's key, to send again as it is, else `undefined`. */
  resume(request: X402Request): Promise<KeptPayment | undefined>;
  /** A kept payment of a scheme that keeps state, held as it goes again (`PaymentScheme.resend`), else `undefined`. */
  resend(
    payload: Readonly<Record<string, unknown>>,
    context: ResendContext,
  ): Promise<Pick<OpenPayment, "accepted" | "refused" | "close"> | undefined>;
}

const ENGINE = Symbol.for("x402-pay.engine");

/** Creates the client that wrappers use to pay. Throws `InvalidConfigError` for options it cannot use. */
export function createX402Client(options: X402ClientOptions): X402Client {
  if (!options || !Array.isArray(options.schemes) || options.schemes.length === 0) {
    throw new InvalidConfigError("createX402Client needs at least one scheme: { schemes: [exactEvm({ signer })] }.", {
      details: { option: "schemes" },
    });
  }
  checkClientOptions(options);
  const given = Object.freeze([...(options.plugins ?? [])]);
  // Built-ins serve too, unless a plug-in given under the same key replaces them.
  const plugins = Object.freeze([
    ...given,
    ...[paymentIdentifier].filter((builtIn) => !given.some((p) => p.key === builtIn.key)),
  ]);
  const schemes = Object.freeze([...options.schemes]);
  // Chain-family facts come with the schemes: v1 network names and the stablecoins they know.
  const v1Networks: Record<string, string> = Object.assign({}, ...schemes.map((s) => s.v1Networks));
  const policy = resolvePolicy(options.policy, v1Networks);
  const knownAssets = [...policy.assets, ...schemes.flatMap((s) => s.knownAssets ?? [])];
  const { selectRequirement, onBeforePayment, onPaymentSettled, onPaymentFailed } = options;
  const setup: Setup = {
    schemes,
    plugins,
    policy,
    v1Networks,
    knownAssets,
    hooks: { selectRequirement, onBeforePayment, onPaymentSettled, onPaymentFailed },
  };

  /** Payments made and not yet reported, by request: what was signed and its reservations. */
  const attempts = new WeakMap<X402Request, Attempt>();
  const engine: Engine = {
    setup,
    evaluate: (challenge, request) => evaluate(setup, challenge, request),
    beforePayment: (challenge, request) => beforePayment(setup, challenge, request),
    tries: (challenge) => tries(setup, challenge),
    async createPayment(challenge, request) {
      const attempt = await createPayment(setup, challenge, request);
      attempts.set(request, attempt);
      return attempt.payment;
    },
    describeSettlement: (challenge, request, settlement) => describeSettlement(setup, challenge, request, settlement),
    async report(outcome, reservations) {
      const attempt = attempts.get(outcome.request);
      attempts.delete(outcome.request);
      const payment = attempt && { terms: attempt.payment.terms, requirement: attempt.payment.requirement };
      // The channel a stateful scheme held is let go first: its state was kept when the answer was read.
      await attempt?.payment.session?.close().catch(() => undefined);
      const told = payment ? { ...outcome, payment, attempt: attempt.id } : outcome;
      // The scheme first: what it keeps (exactSvm's mints) is set right before a hook pays again.
      await observe([() => attempt?.scheme.onOutcome?.(told)]);
      await report(setup, told, attempt?.reservations ?? reservations);
    },
    reservationsOf: (attempt) => reservationsOf(setup, attempt),
    prepay: prepaying(setup),
    signed: (payment, request) => signed(setup, payment, request),
    resume: (request) => resume(setup, request),
    async resend(payload, context) {
      const { requirement, request } = context;
      const network = requirement.caip2 ?? requirement.network;
      const scheme = schemesFor(schemes, requirement.scheme, network).find((s) => s.resend);
      if (!scheme) return undefined;
      const what = `the ${requirement.scheme} payment`;
      return (
        (await call(() => scheme.resend!(payload, { ...context, signal: request.signal }), what, request)) ?? undefined
      );
    },
  };
  return Object.freeze({
    [ENGINE]: engine,
    schemes,
    plugins: given,
    policy,
    async quote(challenge: PaymentChallenge, request: X402Request): Promise<Quote> {
      const { options, rejected } = await quote(setup, challenge, request);
      return { options, rejected, maxAmount: options[0] ? ceilingOf(options[0].requirement) : "$0" };
    },
    async refunded(refund: ChannelRefund) {
      const asset = findKnownAsset(refund.network, refund.asset, knownAssets);
      await observe(plugins.map((plugin) => () => plugin.onRefund?.(Object.freeze({ ...refund }), { asset })));
    },
  });
}

function checkClientOptions(options: X402ClientOptions): void {
  const isScheme = (s: PaymentScheme) =>
    typeof s?.createPayload === "function" && typeof s.check === "function" && Array.isArray(s.networks);
  const steps = `{ name?, key?, ${PLUGIN_STEPS.map((step) => `${step}?`).join(", ")} }`;
  const isPlugin = (p: Record<string, unknown>) =>
    typeof p === "object" &&
    p !== null &&
    (p.key === undefined || nonEmpty(p.key)) &&
    PLUGIN_STEPS.every((step) => p[step] === undefined || typeof p[step] === "function");
  checkOptions("", options, {
    schemes: every(is(isScheme, "a payment scheme such as exactEvm({ signer })")),
    policy: () => undefined, // resolvePolicy checks it
    plugins: every(is(isPlugin, `a plug-in ${steps}`)),
    selectRequirement: isFunction,
    onBeforePayment: isFunction,
    onPaymentSettled: isFunction,
    onPaymentFailed: isFunction,
  });
  const names = (options.plugins ?? []).map((p) => p.name).filter((name) => name !== undefined);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) fail("plugins", `two plug-ins are named ${JSON.stringify(twice)}: ${renameHint(twice)}`);
}

/** How to tell two plug-ins of one name apart, by what they are (their names say so). */
function renameHint(name: string): string {
  if (name === "ledger" || name.startsWith("ledger "))
    return (
      "give each ledger its own name (memoryLedger({ name }), fileLedger(path, { name }), " +
      "redisLedger(redis, { name }) or recordOutcomes(store, { name }))"
    );
  if (name.startsWith("budget ")) return "give each budget its own name (budget({ name }))";
  return "give each its own name (the plug-in's `name`), or keep one";
}

/** The engine of a client of ours; `InvalidConfigError` for anything else (a reference `x402Client` is told apart). */
export function engineOf(client: unknown): Engine {
  const engine = (client as Record<symbol, Engine> | null | undefined)?.[ENGINE];
  if (engine) return engine;
  throw new InvalidConfigError(
    "x402-pay's wrappers take a client from createX402Client({ schemes: [exactEvm({ signer })] }), not an @x402/core " +
      "x402Client.",
    {
      details: { option: "client" },
    },
  );
}
