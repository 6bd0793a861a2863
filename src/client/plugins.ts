/** Running the plug-ins' steps: each only where it applies, a failure typed, an observer never heard. */
import type {
  KeptPayment,
  PaymentHeader,
  PaymentTerms,
  Reservation,
  ReserveContext,
  ReservedAttempt,
  RequirementReview,
  X402Plugin,
  X402Request,
} from "../contracts";
import { PaymentNotSentError, isX402Error, redactSecrets, requestDetails, scrub } from "../errors";
import { findKnownAsset, type PaymentChallenge, type PaymentRequirement, type SettleResponse } from "../protocol";
import { call } from "./call";
import { declares, serving, type Setup } from "./setup";
import { withCaip2 } from "./select";

/** What the plug-ins serving the challenge refuse before the spend policy sees it (signed offers that fail). */
export async function review(
  setup: Setup,
  challenge: PaymentChallenge,
  request: X402Request,
): Promise<RequirementReview[]> {
  const refused: RequirementReview[] = [];
  let translated: PaymentChallenge | undefined;
  for (const plugin of serving(setup, challenge)) {
    if (!plugin.reviewRequirements) continue;
    const context = {
      declaration: challenge.extensions![plugin.key!],
      challenge: (translated ??= withCaip2(challenge, setup.v1Networks)),
      request,
      signal: request.signal,
    };
    const found = await call(
      () => plugin.reviewRequirements!(context),
      `the ${plugin.key} extension's review of the requirements`,
      request,
    );
    if (Array.isArray(found)) refused.push(...found);
  }
  return refused;
}

/** Headers a plug-in offers to try instead of paying (a sign-in), or `undefined`. */
export async function beforePayment(
  setup: Setup,
  challenge: PaymentChallenge,
  request: X402Request,
): Promise<Record<string, string> | undefined> {
  for (const plugin of serving(setup, challenge)) {
    if (!plugin.beforePayment) continue;
    const context = { declaration: challenge.extensions![plugin.key!], challenge, request, signal: request.signal };
    const headers = await call(() => plugin.beforePayment!(context), `the ${plugin.key} extension's headers`, request);
    if (headers && Object.keys(headers).length > 0) return headers;
  }
  return undefined;
}

/** Would a plug-in try instead of paying this challenge (a sign-in)? Such a route is not paid before it asks. */
export const tries = (setup: Setup, challenge: PaymentChallenge): boolean =>
  serving(setup, challenge).some((plugin) => plugin.beforePayment);

/** What the plug-ins serving the challenge read from a reported settlement, by key (for the receipt). */
export async function describeSettlement(
  setup: Setup,
  challenge: PaymentChallenge,
  request: X402Request,
  settlement: SettleResponse,
) {
  const described: Record<string, unknown> = {};
  for (const plugin of serving(setup, challenge)) {
    if (!plugin.describeSettlement) continue;
    try {
      const value = await plugin.describeSettlement({
        declaration: challenge.extensions![plugin.key!],
        challenge,
        request,
        signal: request.signal,
        settlement,
      });
      if (value !== undefined) described[plugin.key!] = value;
    } catch {
      // The payment is made: a reader that fails leaves its key out, and never turns the paid response into an error.
    }
  }
  return described;
}

/** The extension data plug-ins add to a v2 payment, on top of what the scheme added (`added`). */
export async function enrich(
  setup: Setup,
  payment: { challenge: PaymentChallenge; request: X402Request; requirement: PaymentRequirement; payer: string },
  added: Record<string, Record<string, unknown>>,
): Promise<Record<string, Record<string, unknown>>> {
  const { challenge, request, requirement, payer } = payment;
  if (requirement.x402Version !== 2) return added;
  for (const plugin of setup.plugins) {
    const { key } = plugin;
    if (!plugin.enrichPayload || key === undefined || !(plugin.enrichUndeclared || declares(challenge, key))) continue;
    const context = {
      declaration: challenge.extensions?.[key],
      challenge,
      request,
      signal: request.signal,
      requirement,
      payer,
      current: added[key],
    };
    const fields = await call(() => plugin.enrichPayload!(context), `the ${key} extension's data`, request);
    if (fields) added[key] = { ...added[key], ...fields };
  }
  return added;
}

/**
 * Reserves the payment in every plug-in that holds spend (budgets), in order, before any prompt. One
 * that refuses (or fails) throws; the reservations already made are released first. Plug-ins that keep signed
 * payments (a journal: `onSigned`) go first, so that what they write names every reservation made after it.
 */
export async function reserve(setup: Setup, terms: PaymentTerms, context: ReserveContext): Promise<Reservation[]> {
  const held: Reservation[] = [];
  const keepers = setup.plugins.filter((plugin) => plugin.onSigned);
  try {
    for (const plugin of [...keepers, ...setup.plugins.filter((plugin) => !plugin.onSigned)]) {
      const reservation = await plugin.reserve?.(terms, context);
      if (reservation) held.push(reservation);
    }
  } catch (error) {
    await Promise.all(held.map((r) => r.release().catch(() => undefined)));
    // A plug-in's own error may quote what it was given: thrown as it is, its key-shaped text scrubbed.
    throw scrub(error);
  }
  return held;
}

/** The plug-in that pays before it is asked (the quote cache), if the client has one. */
export const prepaying = (setup: Setup): X402Plugin | undefined => setup.plugins.find((plugin) => plugin.prepay);

/**
 * Tells every plug-in with `onSigned` (a journal) that the payment was signed, in order, before it leaves. One that
 * fails stops it: `PAYMENT_NOT_SENT`, as nothing left.
 */
export async function signed(
  setup: Setup,
  payment: { readonly terms: PaymentTerms; readonly paymentHeader: PaymentHeader },
  request: X402Request,
): Promise<void> {
  for (const plugin of setup.plugins) {
    if (!plugin.onSigned) continue;
    try {
      await plugin.onSigned(payment, request);
    } catch (error) {
      if (isX402Error(error) && error.code === "ABORTED") throw error;
      const name = plugin.name ?? "a plug-in";
      const said = redactSecrets(error instanceof Error ? error.message : String(error));
      throw new PaymentNotSentError(`${name} could not keep the signed payment (${said}), so it was not sent.`, {
        cause: error,
        details: { ...requestDetails(request), requirement: payment.terms.requirement, payer: payment.terms.payer },
      });
    }
  }
}

/** What the plug-ins reserved for an earlier attempt (perhaps a dead process's), found again by its id. */
export function reservationsOf(setup: Setup, attempt: ReservedAttempt): Reservation[] {
  const found: Reservation[] = [];
  // An entry read back from a store may lack what a reservation is found by: then none is.
  const asset = findKnownAsset(String(attempt.network), String(attempt.terms?.asset), setup.knownAssets);
  for (const plugin of setup.plugins) {
    if (!plugin.reservationOf) continue;
    try {
      const reservation = plugin.reservationOf(attempt, { asset });
      if (reservation) found.push(reservation);
    } catch {
      // One it cannot find is one it cannot end: left as it is (counted, never less).
    }
  }
  return found;
}

/** The first payment a plug-in kept for the request's key (a journal's), else `undefined`. Only keyed requests ask. */
export async function resume(setup: Setup, request: X402Request): Promise<KeptPayment | undefined> {
  if (request.paymentId === undefined) return undefined;
  const context = {
    schemes: setup.schemes,
    reservations: (attempt: ReservedAttempt) => reservationsOf(setup, attempt),
  };
  for (const plugin of setup.plugins) {
    const kept =
      plugin.resume && (await call(() => plugin.resume!(request, context), plugin.name ?? "a plug-in", request));
    if (kept) return kept;
  }
  return undefined;
}
