/** Making a payment: choose, reserve, approve, sign, enrich and assemble, or throw a typed error. */
import {
  checkOptions,
  checkPaymentId,
  type PaymentSnapshot,
  type PaymentTerms,
  type Reservation,
  type X402Request,
} from "../contracts";
import { InvalidConfigError, NoPayableRequirementError, PaymentRefusedError, requestDetails } from "../errors";
import {
  buildPaymentPayload,
  encodeBase64Json,
  formatUnits,
  paymentHeaderName,
  type PaymentChallenge,
  type PaymentRequirement,
} from "../protocol";
import { call } from "./call";
import { enrich, reserve, review } from "./plugins";
import { evaluate } from "./select";
import type { PaymentOption, Setup } from "./setup";

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

/** A payment made and not yet reported: what was signed, and what the plug-ins hold for it. */
export interface Attempt {
  readonly payment: PreparedPayment;
  readonly reservations: readonly Reservation[];
}

/**
 * Would this client pay the challenge, and if not, why: the plug-ins' reviews, then `evaluate`. Signs
 * nothing, reserves nothing and asks no hook.
 */
export async function quote(setup: Setup, challenge: PaymentChallenge, request: X402Request) {
  return evaluate(setup, challenge, request, await review(setup, challenge, request));
}

/** Selects, reserves, approves and signs a payment for a challenge; throws a typed error if it will not pay. */
export async function createPayment(setup: Setup, challenge: PaymentChallenge, request: X402Request): Promise<Attempt> {
  checkOptions("x402.", { paymentId: request.paymentId }, { paymentId: checkPaymentId });
  const { requirement, scheme, asset } = await choose(setup, challenge, request);
  const terms = termsOf(requirement, request, scheme.payer, asset);
  // Reserved before any prompt (the approval hook's or the wallet's); released if nothing is sent.
  const reservations = await reserve(setup, terms, { asset, requirement, request });
  try {
    await approve(setup, { ...terms, resource: challenge.resource, extensions: challenge.extensions }, request);
    const signal = request.signal;
    const what = `the ${requirement.scheme} payment on ${requirement.network}`;
    const result = await call(() => scheme.createPayload(requirement, { challenge, request, signal }), what, request);
    const added = await enrich(
      setup,
      { challenge, request, requirement, payer: scheme.payer },
      { ...result.extensions },
    );
    const payload = buildPaymentPayload(challenge, requirement, { ...result, extensions: added });
    const { x402Version } = requirement;
    const headerValue = encodeBase64Json(payload);
    const payment = Object.freeze({
      x402Version,
      headerName: paymentHeaderName(x402Version),
      headerValue,
      payload,
      requirement,
      payer: scheme.payer,
      displayAmount: terms.displayAmount,
      terms,
    });
    return { payment, reservations };
  } catch (error) {
    await Promise.all(reservations.map((r) => r.release()));
    throw error;
  }
}

/** The payable option to pay: the first, or the one `selectRequirement` picks. */
async function choose(setup: Setup, challenge: PaymentChallenge, request: X402Request): Promise<PaymentOption> {
  const where = requestDetails(request);
  const { options: payable, rejected } = await quote(setup, challenge, request);
  if (payable.length === 0) throw new NoPayableRequirementError(rejected, { details: where });
  const { selectRequirement } = setup.hooks;
  if (!selectRequirement) return payable[0]!;
  const chosen = await call(
    () => selectRequirement(Object.freeze([...payable]), request),
    "selectRequirement",
    request,
    true,
  );
  if (!chosen)
    throw new PaymentRefusedError("selectRequirement chose none of the payable requirements.", { details: where });
  if (!payable.includes(chosen)) {
    throw new InvalidConfigError("selectRequirement must return one of the options it was given, unchanged.", {
      details: { option: "selectRequirement" },
    });
  }
  return chosen;
}

/** What a payment of `requirement` pays, frozen: what the hooks see and a receipt starts from. */
function termsOf(
  requirement: PaymentRequirement,
  request: X402Request,
  payer: string,
  asset: PaymentOption["asset"],
): PaymentTerms {
  const upTo = requirement.scheme === "upto";
  const displayAmount =
    asset && `${upTo ? "up to " : ""}${formatUnits(BigInt(requirement.amount), asset.decimals)} ${asset.symbol}`;
  return Object.freeze({
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
    payer,
  });
}

/**
 * `onBeforePayment`, then the request's guard: each sees a frozen deep copy, and `false` or `{ abort: true }` refuses.
 */
async function approve(setup: Setup, snapshot: PaymentSnapshot, request: X402Request): Promise<void> {
  const approvers = [
    ["onBeforePayment", setup.hooks.onBeforePayment],
    [request.guard?.name ?? "the request's guard", request.guard?.approve?.bind(request.guard)],
  ] as const;
  for (const [name, approver] of approvers) {
    if (!approver) continue;
    // A frozen deep copy: a hook cannot change what gets signed.
    const copy = deepFreeze(structuredClone(snapshot));
    const verdict = await call(() => approver(copy), name, request, true);
    const { abort, reason } = Object(verdict) as { abort?: unknown; reason?: string };
    if (verdict === false || abort)
      throw new PaymentRefusedError(`${name} refused the payment${reason ? `: ${reason}` : ""}.`, {
        details: requestDetails(request),
      });
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}
