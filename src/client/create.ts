import {
  InvalidConfigError,
  NoPayableRequirementError,
  PaymentRefusedError,
  isX402Error,
  raceAbort,
  requestDetails,
  throwIfAborted,
  toWalletError,
  type AnyX402Error,
  type RejectedRequirement,
} from "../errors";
import {
  buildPaymentPayload,
  encodeBase64Json,
  findKnownAsset,
  formatUnits,
  patternSpecificity,
  matchesPattern,
  paymentHeaderName,
  type KnownAsset,
  type PaymentChallenge,
  type PaymentRequirement,
  type SettleResponse,
} from "../protocol";
import { checkBudgets, reserveBudgets, resolveBudgets, type Budget, type BudgetHold } from "../budget";
import type { Ledger } from "../ledger";
import { ledgerRecord } from "./ledger-record";
import { createQuoteCache, type QuoteCache, type QuoteCacheOptions } from "./quotes";
import { checkOptions, checkPaymentId, every, fail, is, nonEmpty } from "./options";
import { paymentIdentifier } from "./payment-identifier";
import { checkOrigin, checkRequirement, resolvePolicy, type ResolvedPolicy, type SpendPolicy } from "./policy";
import { checkSettlement, toSettlementQuery, type SettlementSource } from "./settlement";
import type { PaymentOutcome, PaymentReceipt, PaymentScheme, PaymentTerms, RequirementReview, SettlementStatus, X402Extension, X402Request } from "./types";

/** A requirement that can be paid: the scheme that will pay it and the asset the policy priced. */
export interface PaymentOption {
  readonly requirement: PaymentRequirement;
  readonly scheme: PaymentScheme;
  readonly asset: KnownAsset | undefined;
}

/** What `onBeforePayment` sees: a frozen copy, so a hook cannot change what gets signed. */
export interface PaymentSnapshot extends PaymentTerms {
  readonly resource: unknown;
  readonly extensions: unknown;
}

/** `false` or `{ abort: true }` refuses the payment; anything else approves it. Throwing refuses too. */
export type BeforePaymentResult = boolean | void | undefined | { abort: true; reason?: string };

type MaybePromise<T> = T | Promise<T>;

export interface X402ClientOptions {
  /** Ways to pay, e.g. `[exactEvm({ signer })]`. */
  schemes: readonly PaymentScheme[];
  /** Spend policy; on by default with a $1 per-payment cap. */
  policy?: SpendPolicy | undefined;
  /** Cumulative budgets (`{ limit: "$5", per: "day" }`, or a list, all of which must hold): reserved before signing, settled by the outcome. */
  budget?: Budget | readonly Budget[] | undefined;
  /** Where every outcome is recorded once, before the call returns: `memoryLedger()`, `fileLedger(path)` (`x402-pay/file`), `redisLedger` (`x402-pay/redis`). */
  ledger?: Ledger | undefined;
  /**
   * Remember each route's 402 (origin, method, path and query) and pay the next request to it at once:
   * one round trip instead of two. Off by default: it pays before the server asks. `true`, or
   * `{ ttlSeconds, maxEntries }` (300 s, 1000 routes).
   */
  quoteCache?: boolean | QuoteCacheOptions | undefined;
  /** Plug-ins for the 402's `extensions` (sign-in instead of paying, payload enrichment, outcome observers). */
  extensions?: readonly X402Extension[] | undefined;
  /** Picks among the payable options (already filtered by schemes and policy, in server order). */
  selectRequirement?: ((options: readonly PaymentOption[], request: X402Request) => MaybePromise<PaymentOption | undefined>) | undefined;
  /** Last word before signing; fails closed. */
  onBeforePayment?: ((payment: PaymentSnapshot) => MaybePromise<BeforePaymentResult>) | undefined;
  /** A payment was made and the paid response came back (`receipt.settled` says whether the server confirmed it). */
  onPaymentSettled?: ((receipt: PaymentReceipt) => MaybePromise<void>) | undefined;
  /** A payment attempt failed: rejected, outcome unknown, aborted, or refused before signing (`error.code` says which). */
  onPaymentFailed?: ((error: AnyX402Error) => MaybePromise<void>) | undefined;
}

/** A signed payment, ready to attach. */
export interface PreparedPayment {
  readonly x402Version: 1 | 2;
  readonly headerName: string;
  readonly headerValue: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly requirement: PaymentRequirement;
  readonly payer: string;
  /** `"0.001 USDC"`, for assets of known decimals. */
  readonly displayAmount: string | undefined;
  /** What this payment pays, as `onBeforePayment` approved it; a receipt starts from it. */
  readonly terms: PaymentTerms;
}

export interface X402Client {
  readonly schemes: readonly PaymentScheme[];
  readonly policy: ResolvedPolicy;
  readonly extensions: readonly X402Extension[];
  /** The quote cache, when `quoteCache` is on. */
  readonly quotes: QuoteCache | undefined;
  /**
   * Every requirement of a challenge, each either payable (with its scheme) or rejected (with a reason).
   * `refused`: what extensions' reviews refused (`review`); without it, no extension is asked.
   */
  evaluate(challenge: PaymentChallenge, request: X402Request, refused?: readonly RequirementReview[]): { options: PaymentOption[]; rejected: RejectedRequirement[] };
  /**
   * Would this client pay the challenge, and if not, why: the extensions' reviews, then `evaluate`.
   * Signs nothing, reserves nothing and asks no hook; `options[0]` is what it would pay unless `selectRequirement` picks another.
   */
  quote(challenge: PaymentChallenge, request: X402Request): Promise<{ options: PaymentOption[]; rejected: RejectedRequirement[] }>;
  /** What the extensions serving the challenge refuse before the spend policy sees it (signed offers that fail). */
  review(challenge: PaymentChallenge, request: X402Request): Promise<RequirementReview[]>;
  /** What the extensions serving the challenge read from a reported settlement, by key (for the receipt). */
  describeSettlement(challenge: PaymentChallenge, request: X402Request, settlement: SettleResponse): Promise<Record<string, unknown>>;
  /** Headers an extension offers to try instead of paying (a sign-in), or `undefined`. */
  beforePayment(challenge: PaymentChallenge, request: X402Request): Promise<Record<string, string> | undefined>;
  /** Selects, approves and signs a payment for a challenge; throws a typed error if it will not pay. */
  createPayment(challenge: PaymentChallenge, request: X402Request): Promise<PreparedPayment>;
  /** Tells the extensions that served the challenge, then the outcome hooks, how a payment attempt ended. Never throws. */
  report(outcome: PaymentOutcome): Promise<void>;
  /**
   * Did the money move? For a pending settlement or an unknown outcome (its error, or its ledger record):
   * looks the payment up on its chain through the scheme that paid it (`exactEvm({ settlement:
   * evmSettlement({ rpc }) })`, `exactSvm({ settlement: svmSettlement() })`), never trusting the server. `settled`, `failed` (it can no longer move) or `pending`.
   */
  checkSettlement(source: SettlementSource, options?: { signal?: AbortSignal | undefined }): Promise<SettlementStatus>;
}

const brand = Symbol.for("x402-pay.client");

/** Creates the client that wrappers use to pay: schemes, spend policy, extensions and hooks in one plain object. */
export function createX402Client(options: X402ClientOptions): X402Client {
  if (!options || !Array.isArray(options.schemes) || options.schemes.length === 0) {
    throw new InvalidConfigError("createX402Client needs at least one scheme: { schemes: [exactEvm({ signer })] }.", {
      details: { option: "schemes" },
    });
  }
  const fn = is((v) => typeof v === "function", "a function");
  checkOptions("", options, {
    schemes: every(is((s) => typeof s?.createPayload === "function" && typeof s.check === "function" && Array.isArray(s.networks), "a payment scheme such as exactEvm({ signer })")),
    policy: () => undefined, // resolvePolicy checks it
    budget: () => undefined, // resolveBudgets checks it
    quoteCache: is((q) => typeof q === "boolean" || (typeof q === "object" && q !== null), "true, false or { ttlSeconds?, maxEntries? }"),
    ledger: is((l) => typeof l?.append === "function" && typeof l.records === "function", "a ledger { append, records }"),
    extensions: every(
      is(
        (e) =>
          nonEmpty(e?.key) &&
          ["beforePayment", "reviewRequirements", "enrichPayload", "describeSettlement", "onOutcome"].every((step) => e[step] === undefined || typeof e[step] === "function"),
        "an extension { key, beforePayment?, reviewRequirements?, enrichPayload?, describeSettlement?, onOutcome? }",
      ),
    ),
    selectRequirement: fn,
    onBeforePayment: fn,
    onPaymentSettled: fn,
    onPaymentFailed: fn,
  });
  const extensions = Object.freeze([...(options.extensions ?? [])]);
  // Built-in extensions serve too, unless one registered under the same key replaces them.
  const active = [...extensions, ...[paymentIdentifier].filter((builtIn) => !extensions.some((e) => e.key === builtIn.key))];
  const schemes = Object.freeze([...options.schemes]);
  // Chain-family facts come with the schemes: v1 network names and the stablecoins they know.
  const v1Networks: Record<string, string> = Object.assign({}, ...schemes.map((s) => s.v1Networks));
  const policy = resolvePolicy(options.policy, v1Networks);
  const knownAssets = [...policy.assets, ...schemes.flatMap((s) => s.knownAssets ?? [])];
  const budgets = resolveBudgets(options.budget, fail);
  const quotes = createQuoteCache(options.quoteCache);
  /** Payments made and not yet reported, by request: what was signed and its budget reservations. */
  const attempts = new WeakMap<X402Request, { payment: PreparedPayment; hold: BudgetHold | undefined }>();
  const declares = (challenge: PaymentChallenge | undefined, key: string) => !!challenge?.extensions && Object.hasOwn(challenge.extensions, key);
  /** The extensions whose key the challenge declares, in registration order (built-ins last). */
  const serving = (challenge: PaymentChallenge | undefined) => active.filter((e) => declares(challenge, e.key));

  function evaluate(challenge: PaymentChallenge, request: X402Request, refused: readonly RequirementReview[] = []) {
    const rejected: RejectedRequirement[] = [];
    const payable: PaymentOption[] = [];
    /** Lists a requirement as rejected, with the fields a message names (read from the raw element: it may be malformed). */
    const reject = ({ index, raw }: { index: number; raw: unknown }, code: RejectedRequirement["code"], reason: string) => {
      const r: Record<string, unknown> = Object(raw);
      rejected.push({ index, scheme: r.scheme, network: r.network, amount: r.amount ?? r.maxAmountRequired, asset: r.asset, payTo: r.payTo, code, reason });
    };
    for (const invalid of challenge.invalid) reject(invalid, "invalid", invalid.reason);
    const originRefusal = checkOrigin(policy, request);
    for (const requirement of withCaip2(challenge).requirements) {
      if (originRefusal) {
        reject(requirement, "policy", originRefusal);
        continue;
      }
      const review = refused.find((r) => r.index === requirement.index);
      if (review) {
        reject(requirement, review.code, review.reason);
        continue;
      }
      const found = findScheme(schemes, requirement);
      if ("reason" in found) {
        reject(requirement, "unsupported", found.reason);
        continue;
      }
      const asset = findKnownAsset(requirement.caip2, requirement.asset, knownAssets);
      const reason =
        checkRequirement(policy, requirement, asset, challenge, request) ??
        request.guard?.check?.(requirement, asset) ??
        checkBudgets(budgets, { network: requirement.caip2!, asset: requirement.asset, amount: requirement.amount }, asset);
      if (reason) reject(requirement, "policy", reason);
      // Frozen: an option is what the policy approved, and a selector cannot change it in place.
      else payable.push(Object.freeze({ requirement, scheme: found.scheme, asset }));
    }
    rejected.sort((a, b) => a.index - b.index);
    return { options: payable, rejected };
  }

  /** The challenge with each v1 network name a scheme knows given its CAIP-2 id (`base-sepolia` → `eip155:84532`). */
  function withCaip2(challenge: PaymentChallenge): PaymentChallenge {
    const requirements = challenge.requirements.map((offered) =>
      offered.caip2 || !Object.hasOwn(v1Networks, offered.network) ? offered : Object.freeze({ ...offered, caip2: v1Networks[offered.network] }),
    );
    return { ...challenge, requirements };
  }

  async function quote(challenge: PaymentChallenge, request: X402Request) {
    return evaluate(challenge, request, await review(challenge, request));
  }

  async function review(challenge: PaymentChallenge, request: X402Request) {
    const refused: RequirementReview[] = [];
    const translated = withCaip2(challenge);
    for (const extension of serving(challenge)) {
      if (!extension.reviewRequirements) continue;
      const context = { declaration: challenge.extensions![extension.key], challenge: translated, request, signal: request.signal };
      const found = await call(() => extension.reviewRequirements!(context), `the ${extension.key} extension's review of the requirements`, request);
      if (Array.isArray(found)) refused.push(...found);
    }
    return refused;
  }

  async function describeSettlement(challenge: PaymentChallenge, request: X402Request, settlement: SettleResponse) {
    const described: Record<string, unknown> = {};
    for (const extension of serving(challenge)) {
      if (!extension.describeSettlement) continue;
      try {
        const value = await extension.describeSettlement({ declaration: challenge.extensions![extension.key], challenge, request, signal: request.signal, settlement });
        if (value !== undefined) described[extension.key] = value;
      } catch {
        // The payment is made: a reader that fails leaves its key out, and never turns the paid response into an error.
      }
    }
    return described;
  }

  async function beforePayment(challenge: PaymentChallenge, request: X402Request) {
    for (const extension of serving(challenge)) {
      if (!extension.beforePayment) continue;
      const headers = await call(
        () => extension.beforePayment!({ declaration: challenge.extensions![extension.key], challenge, request, signal: request.signal }),
        `the ${extension.key} extension's headers`,
        request,
      );
      if (headers && Object.keys(headers).length > 0) return headers;
    }
    return undefined;
  }

  async function createPayment(challenge: PaymentChallenge, request: X402Request): Promise<PreparedPayment> {
    const where = requestDetails(request);
    checkOptions("x402.", { paymentId: request.paymentId }, { paymentId: checkPaymentId });
    const { options: payable, rejected } = await quote(challenge, request);
    if (payable.length === 0) throw new NoPayableRequirementError(rejected, { details: where });

    let chosen: PaymentOption | undefined = payable[0];
    if (options.selectRequirement) {
      chosen = await call(() => options.selectRequirement!(Object.freeze([...payable]), request), "selectRequirement", request, true);
      if (!chosen) throw new PaymentRefusedError("selectRequirement chose none of the payable requirements.", { details: where });
      if (!payable.includes(chosen)) {
        throw new InvalidConfigError("selectRequirement must return one of the options it was given, unchanged.", {
          details: { option: "selectRequirement" },
        });
      }
    }
    const { requirement, scheme, asset } = chosen!;
    const upTo = requirement.scheme === "upto";
    const displayAmount = asset && `${upTo ? "up to " : ""}${formatUnits(BigInt(requirement.amount), asset.decimals)} ${asset.symbol}`;
    const terms: PaymentTerms = {
      x402Version: requirement.x402Version,
      url: request.url,
      method: request.method,
      requirement: requirement.raw,
      scheme: requirement.scheme,
      network: requirement.network,
      amount: requirement.amount,
      upTo,
      displayAmount,
      asset: requirement.asset,
      payTo: requirement.payTo,
      payer: scheme.payer,
    };

    // Reserved before any prompt (the approval hook's or the wallet's); released if nothing is sent.
    const hold = await reserveBudgets(budgets, { network: requirement.caip2!, asset: requirement.asset, amount: requirement.amount, payTo: requirement.payTo }, asset, request);
    try {
      const approvers = [
        ["onBeforePayment", options.onBeforePayment],
        [request.guard?.name ?? "the request's guard", request.guard?.approve?.bind(request.guard)],
      ] as const;
      for (const [name, approve] of approvers) {
        if (!approve) continue;
        // A frozen deep copy: a hook cannot change what gets signed.
        const snapshot = deepFreeze(structuredClone({ ...terms, resource: challenge.resource, extensions: challenge.extensions }));
        const verdict = await call(() => approve(snapshot), name, request, true);
        // `false` or `{ abort: true }` refuses (anything else approves).
        const { abort, reason } = Object(verdict) as { abort?: unknown; reason?: string };
        if (verdict === false || abort) throw new PaymentRefusedError(`${name} refused the payment${reason ? `: ${reason}` : ""}.`, { details: where });
      }

      const what = `the ${requirement.scheme} payment on ${requirement.network}`;
      const signal = request.signal;
      const result = await call(() => scheme.createPayload(requirement, { challenge, request, signal }), what, request);
      const added: Record<string, Record<string, unknown>> = { ...result.extensions };
      for (const extension of requirement.x402Version === 2 ? active : []) {
        const { key } = extension;
        if (!extension.enrichPayload || !(extension.enrichUndeclared || declares(challenge, key))) continue;
        const context = { declaration: challenge.extensions?.[key], challenge, request, signal, requirement, payer: scheme.payer, current: added[key] };
        const fields = await call(() => extension.enrichPayload!(context), `the ${key} extension's data`, request);
        if (fields) added[key] = { ...added[key], ...fields };
      }
      const payload = buildPaymentPayload(challenge, requirement, { ...result, extensions: added });
      const payment = Object.freeze({
        x402Version: requirement.x402Version,
        headerName: paymentHeaderName(requirement.x402Version),
        headerValue: encodeBase64Json(payload),
        payload,
        requirement,
        payer: scheme.payer,
        displayAmount,
        terms: Object.freeze(terms),
      });
      attempts.set(request, { payment, hold });
      return payment;
    } catch (error) {
      await hold?.release();
      throw error;
    }
  }

  async function report(outcome: PaymentOutcome): Promise<void> {
    const attempt = attempts.get(outcome.request);
    attempts.delete(outcome.request);
    const hold = attempt?.hold;
    // Settled: what was settled. Outcome unknown or pending: the maximum, counted as spent until reconciled. Else nothing was charged.
    if (outcome.settled) await hold?.commit(outcome.receipt.settled ? outcome.receipt.settledAmount : undefined);
    else if (outcome.error.code === "PAYMENT_OUTCOME_UNKNOWN" || outcome.error.code === "PAYMENT_PENDING") await hold?.commit();
    else await hold?.release();
    try {
      await options.ledger?.append(ledgerRecord(outcome, attempt?.payment));
    } catch {
      // A ledger that fails cannot undo the payment, nor turn a paid response into an error.
    }
    const observers = [
      ...serving(outcome.challenge).map((e) => () => e.onOutcome?.(outcome)),
      outcome.settled ? () => options.onPaymentSettled?.(outcome.receipt) : () => options.onPaymentFailed?.(outcome.error),
    ];
    for (const observe of observers) {
      try {
        await observe();
      } catch {
        // An observer cannot change how the payment ended, and must not turn a paid response into an error.
      }
    }
  }

  const checkSettlementOf = async (source: SettlementSource, { signal }: { signal?: AbortSignal | undefined } = {}) =>
    checkSettlement(schemes, toSettlementQuery(source, v1Networks), signal);

  return Object.freeze({
    [brand]: true,
    schemes,
    policy,
    extensions,
    quotes,
    evaluate,
    quote,
    review,
    describeSettlement,
    beforePayment,
    createPayment,
    report,
    checkSettlement: checkSettlementOf,
  });
}

/** Throws `InvalidConfigError` unless `client` is one of ours (a reference `x402Client` is told apart). */
export function assertX402Client(client: unknown): asserts client is X402Client {
  if (client && (client as Record<symbol, unknown>)[brand]) return;
  // Also what an @x402/core x402Client, passed here by habit, is told.
  throw new InvalidConfigError("x402-pay's wrappers take a client from createX402Client({ schemes: [exactEvm({ signer })] }), not an @x402/core x402Client.", {
    details: { option: "client" },
  });
}

/**
 * Runs a step of the user's code or a wallet, raced against the signal; failures become typed errors:
 * a `hook` that throws refuses the payment, anything else failed to sign.
 */
async function call<T>(step: () => T | Promise<T>, what: string, request: X402Request, hook?: boolean): Promise<T> {
  const where = requestDetails(request);
  // A request already aborted never reaches the wallet (or an extension, or a hook): the step is not started.
  throwIfAborted(request.signal, where);
  try {
    return await raceAbort(step(), request.signal, where);
  } catch (error) {
    throw hook && !isX402Error(error)
      ? new PaymentRefusedError(`${what} threw, so nothing was paid.`, { cause: error, details: where })
      : toWalletError(error, what, where);
  }
}

/** The most specific scheme that matches and can pay, or the reason none can. */
function findScheme(schemes: readonly PaymentScheme[], requirement: PaymentRequirement): { scheme: PaymentScheme } | { reason: string } {
  const network = requirement.caip2;
  if (!network) return { reason: `unknown v1 network name "${requirement.network}"` };
  // -1: does not match; else the specificity of its most specific matching network pattern.
  const rank = (scheme: PaymentScheme) =>
    scheme.scheme !== requirement.scheme || !scheme.x402Versions.includes(requirement.x402Version)
      ? -1
      : Math.max(-1, ...scheme.networks.filter((pattern) => matchesPattern(pattern, network)).map(patternSpecificity));
  // A stable sort: among equally specific schemes, the first registered is asked first.
  const candidates = schemes.filter((scheme) => rank(scheme) >= 0).sort((a, b) => rank(b) - rank(a));
  let firstReason: string | undefined;
  for (const scheme of candidates) {
    const reason = scheme.check(requirement);
    if (!reason) return { scheme };
    firstReason ??= reason;
  }
  return { reason: firstReason ?? `no registered scheme pays "${requirement.scheme}" on ${network} (x402 v${requirement.x402Version})` };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}
