/** Making a payment: choose, reserve, approve, sign, enrich and assemble, or throw a typed error. */
import {
  checkOptions,
  termsOf,
  checkPaymentId,
  type OpenPayment,
  type PaymentScheme,
  type PaymentSnapshot,
  type PaymentTerms,
  type Reservation,
  type X402Request,
} from "../contracts";
import { InvalidConfigError, NoPayableRequirementError, PaymentRefusedError, requestDetails } from "../errors";
import {
  buildPaymentPayload,
  encodeBase64Json,
  paymentHeaderName,
  randomId,
  type PaymentChallenge,
  type PaymentRequirement,
} from "../protocol";
import { call } from "./call";
import { enrich, reserve, review } from "./plugins";
import { paymentLimit } from "./policy";
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
  /** The open payment of a scheme that keeps state: told the answer, closed when the attempt is reported. */
  readonly session?: OpenPayment | undefined;
}

/** A payment made and not yet reported: what was signed, and what the plug-ins hold for it. */
export interface Attempt {
  readonly payment: PreparedPayment;
  readonly reservations: readonly Reservation[];
  /** The scheme that signed it, told the outcome. */
  readonly scheme: PaymentScheme;
  /** The attempt's id, which plug-ins reserved and wrote it under (`ReserveContext.attempt`). */
  readonly id: string;
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
  const option = await choose(setup, challenge, request);
  const { requirement, scheme, asset } = option;
  const what = `the ${requirement.scheme} payment on ${requirement.network}`;
  const { signal } = request;
  // A scheme that keeps state (a channel) opens the payment first: what it moves is what gets approved.
  const limit = scheme.open && paymentLimit(setup.policy, requirement, asset);
  const attempt = randomId();
  const opening = { challenge, request, signal, limit, attempt };
  const session = scheme.open && (await call(() => scheme.open!(requirement, opening), what, request));
  let reservations: readonly Reservation[] = [];
  try {
    const terms = termsOf(requirement, request, { ...option, payer: scheme.payer, session });
    checkDeposit(terms, limit, request);
    // Reserved before any prompt (the approval hook's or the wallet's); released if nothing is sent.
    reservations = await reserve(setup, terms, { asset, requirement, request, channel: session?.channel, attempt });
    await approve(setup, { ...terms, resource: challenge.resource, extensions: challenge.extensions }, request);
    const sign = session
      ? () => session.createPayload()
      : () => scheme.createPayload(requirement, { challenge, request, signal });
    const result = await call(sign, what, request);
    const added = await enrich(
      setup,
      { challenge, request, requirement, payer: scheme.payer },
      { ...result.extensions },
    );
    const payload = buildPaymentPayload(challenge, requirement, { ...result, extensions: added });
    return { payment: prepared(option, { payload, terms, session }), reservations, scheme, id: attempt };
  } catch (error) {
    await Promise.all(reservations.map((r) => r.release().catch(() => undefined)));
    await session?.close();
    throw error;
  }
}

/** The signed payment, frozen, with its header. */
function prepared(
  { requirement, scheme }: PaymentOption,
  { payload, terms, session }: Pick<PreparedPayment, "payload" | "terms" | "session">,
): PreparedPayment {
  const { x402Version } = requirement;
  return Object.freeze({
    x402Version,
    headerName: paymentHeaderName(x402Version),
    headerValue: encodeBase64Json(payload),
    payload,
    requirement,
    payer: scheme.payer,
    displayAmount: terms.displayAmount,
    terms,
    session,
  });
}

/** A deposit beyond what the policy lets one payment move is refused, whoever sized it. */
function checkDeposit(terms: PaymentTerms, limit: bigint | undefined, request: X402Request): void {
  if (terms.deposit === undefined || limit === undefined || BigInt(terms.deposit) <= limit) return;
  throw new PaymentRefusedError(
    `The ${terms.scheme} payment would deposit ${terms.deposit} base units, over what the spend policy lets one ` +
      `payment move (${limit}).`,
    { details: requestDetails(request) },
  );
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
