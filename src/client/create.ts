import {
  InvalidConfigError,
  NoPayableRequirementError,
  PaymentRefusedError,
  SigningError,
  isX402Error,
  type RejectedRequirement,
} from "../errors";
import {
  buildPaymentPayload,
  encodeBase64Json,
  formatUnits,
  patternSpecificity,
  matchesPattern,
  paymentHeaderName,
  type KnownAsset,
  type PaymentChallenge,
  type PaymentRequirement,
} from "../protocol";
import { checkOrigin, checkRequirement, resolvePolicy, type ResolvedPolicy, type SpendPolicy } from "./policy";
import type { PaymentScheme, RequestInfo } from "./types";

/** A requirement that can be paid: the scheme that will pay it and the asset the policy priced. */
export interface PaymentOption {
  readonly requirement: PaymentRequirement;
  readonly scheme: PaymentScheme;
  readonly asset: KnownAsset | undefined;
}

/** What `onBeforePayment` sees: a frozen copy, so a hook cannot change what gets signed. */
export interface PaymentSnapshot {
  readonly url: string;
  readonly method: string;
  readonly x402Version: 1 | 2;
  readonly scheme: string;
  readonly network: string;
  readonly amount: string;
  /** `"0.001 USDC"` for known assets. */
  readonly displayAmount: string | undefined;
  readonly asset: string;
  readonly payTo: string;
  readonly payer: string;
  readonly requirement: Readonly<Record<string, unknown>>;
  readonly resource: unknown;
  readonly extensions: unknown;
}

/** `false` or `{ abort: true }` refuses the payment; anything else approves it. Throwing refuses too. */
export type BeforePaymentResult = boolean | void | undefined | { abort: true; reason?: string };

export interface X402ClientOptions {
  /** Ways to pay, e.g. `[exactEvm({ signer })]`. */
  schemes: readonly PaymentScheme[];
  /** Spend policy; on by default with a $1 per-payment cap. */
  policy?: SpendPolicy;
  /** Picks among the payable options (already filtered by schemes and policy, in server order). */
  selectRequirement?: (options: readonly PaymentOption[], request: RequestInfo) => PaymentOption | undefined | Promise<PaymentOption | undefined>;
  /** Last word before signing; fails closed. */
  onBeforePayment?: (payment: PaymentSnapshot) => BeforePaymentResult | Promise<BeforePaymentResult>;
}

/** A signed payment, ready to attach. */
export interface PreparedPayment {
  readonly x402Version: 1 | 2;
  readonly headerName: string;
  readonly headerValue: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly requirement: PaymentRequirement;
  readonly payer: string;
}

export interface X402Client {
  readonly schemes: readonly PaymentScheme[];
  readonly policy: ResolvedPolicy;
  /** Every requirement of a challenge, each either payable (with its scheme) or rejected (with a reason). */
  evaluate(challenge: PaymentChallenge, request: RequestInfo): { options: PaymentOption[]; rejected: RejectedRequirement[] };
  /** Selects, approves and signs a payment for a challenge; throws a typed error if it will not pay. */
  createPayment(challenge: PaymentChallenge, request: RequestInfo): Promise<PreparedPayment>;
}

/** Creates the client that wrappers use to pay: schemes, spend policy and hooks in one plain object. */
export function createX402Client(options: X402ClientOptions): X402Client {
  if (!options || !Array.isArray(options.schemes) || options.schemes.length === 0) {
    throw new InvalidConfigError("createX402Client needs at least one scheme, e.g. { schemes: [exactEvm({ signer })] }.");
  }
  const schemes = Object.freeze([...options.schemes]);
  const policy = resolvePolicy(options.policy);
  // Chain-family facts come with the schemes: v1 network names and the stablecoins they know.
  const v1Networks: Record<string, string> = Object.assign({}, ...schemes.map((s) => s.v1Networks));
  const knownAssets = [...policy.assets, ...schemes.flatMap((s) => s.knownAssets ?? [])];

  function evaluate(challenge: PaymentChallenge, request: RequestInfo) {
    const rejected: RejectedRequirement[] = challenge.invalid.map(({ index, raw, reason }) => ({
      ...describe(index, raw),
      code: "invalid" as const,
      reason,
    }));
    const payable: PaymentOption[] = [];
    const originRefusal = checkOrigin(policy, request);
    for (const offered of challenge.requirements) {
      const requirement =
        offered.caip2 || !Object.hasOwn(v1Networks, offered.network)
          ? offered
          : Object.freeze({ ...offered, caip2: v1Networks[offered.network] });
      const reject = (code: RejectedRequirement["code"], reason: string) =>
        rejected.push({ ...describe(requirement.index, requirement.raw), code, reason });
      if (originRefusal) {
        reject("policy", originRefusal);
        continue;
      }
      const found = findScheme(schemes, requirement);
      if ("reason" in found) {
        reject("unsupported", found.reason);
        continue;
      }
      const verdict = checkRequirement(policy, requirement, challenge, request, knownAssets);
      if (verdict.reason) reject("policy", verdict.reason);
      else payable.push({ requirement, scheme: found.scheme, asset: verdict.asset });
    }
    rejected.sort((a, b) => a.index - b.index);
    return { options: payable, rejected };
  }

  async function createPayment(challenge: PaymentChallenge, request: RequestInfo): Promise<PreparedPayment> {
    const { options: payable, rejected } = evaluate(challenge, request);
    if (payable.length === 0) throw new NoPayableRequirementError(rejected, { details: { url: request.url } });

    const chosen = options.selectRequirement ? await options.selectRequirement(payable, request) : payable[0];
    if (!chosen) throw new PaymentRefusedError("selectRequirement chose none of the payable requirements.");
    if (!payable.includes(chosen)) {
      throw new InvalidConfigError("selectRequirement must return one of the options it was given.");
    }
    const { requirement, scheme } = chosen;

    if (options.onBeforePayment) await approve(options.onBeforePayment, snapshot(chosen, challenge, request));

    let result;
    try {
      result = await scheme.createPayload(requirement, { challenge, request });
    } catch (error) {
      if (isX402Error(error)) throw error;
      throw new SigningError(`Signing the ${requirement.scheme} payment on ${requirement.network} failed.`, { cause: error });
    }
    const payload = buildPaymentPayload(challenge, requirement, result);
    return Object.freeze({
      x402Version: requirement.x402Version,
      headerName: paymentHeaderName(requirement.x402Version),
      headerValue: encodeBase64Json(payload),
      payload,
      requirement,
      payer: scheme.payer,
    });
  }

  return Object.freeze({ schemes, policy, evaluate, createPayment });
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
  if (candidates.length === 0) {
    return { reason: `no registered scheme pays "${requirement.scheme}" on ${network} (x402 v${requirement.x402Version})` };
  }
  let firstReason = "";
  for (const scheme of candidates) {
    const reason = scheme.check(requirement);
    if (!reason) return { scheme };
    firstReason ||= reason;
  }
  return { reason: firstReason };
}

function describe(index: number, raw: unknown) {
  const r = (raw && typeof raw === "object" ? raw : {}) as Record<string, unknown>;
  return { index, scheme: r.scheme, network: r.network, amount: r.amount ?? r.maxAmountRequired, asset: r.asset, payTo: r.payTo };
}

function snapshot(option: PaymentOption, challenge: PaymentChallenge, request: RequestInfo): PaymentSnapshot {
  const { requirement, asset, scheme } = option;
  return deepFreeze(
    structuredClone({
      url: request.url,
      method: request.method,
      x402Version: requirement.x402Version,
      scheme: requirement.scheme,
      network: requirement.network,
      amount: requirement.amount,
      displayAmount: asset ? `${formatUnits(BigInt(requirement.amount), asset.decimals)} ${asset.symbol}` : undefined,
      asset: requirement.asset,
      payTo: requirement.payTo,
      payer: scheme.payer,
      requirement: requirement.raw,
      resource: challenge.resource,
      extensions: challenge.extensions,
    }),
  );
}

async function approve(hook: NonNullable<X402ClientOptions["onBeforePayment"]>, payment: PaymentSnapshot): Promise<void> {
  let verdict: BeforePaymentResult;
  try {
    verdict = await hook(payment);
  } catch (error) {
    throw new PaymentRefusedError("onBeforePayment threw, so the payment was refused.", { cause: error });
  }
  if (verdict === false) throw new PaymentRefusedError("onBeforePayment refused the payment.");
  if (verdict && typeof verdict === "object" && verdict.abort) {
    throw new PaymentRefusedError(`onBeforePayment refused the payment${verdict.reason ? `: ${verdict.reason}` : ""}.`);
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}
