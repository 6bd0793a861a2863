/** Choosing a requirement: which offered requirements this client can pay, and why each other is refused. */
import {
  PAYMENT_FLOWS,
  schemesFor,
  show,
  type PaymentFlow,
  type PaymentScheme,
  type RequirementReview,
  type X402Request,
} from "../contracts";
import type { RejectedRequirement } from "../errors";
import { findKnownAsset, type PaymentChallenge, type PaymentRequirement } from "../protocol";
import { checkOrigin, checkRequirement } from "./policy";
import type { PaymentOption, Setup } from "./setup";

/**
 * Every requirement of a challenge, each either payable (with its scheme) or rejected (with a reason):
 * invalid, refused by a plug-in's review (`refused`), unsupported by every scheme, or refused by the
 * spend policy, the request's guard or a plug-in's check (a budget).
 */
export function evaluate(
  setup: Setup,
  challenge: PaymentChallenge,
  request: X402Request,
  refused: readonly RequirementReview[] = [],
) {
  const rejected: RejectedRequirement[] = [];
  const payable: PaymentOption[] = [];
  /**
   * Lists a requirement as rejected, with the fields a message names (read from the raw element: it may be malformed).
   */
  const reject = (
    { index, raw }: { index: number; raw: unknown },
    code: RejectedRequirement["code"],
    reason: string,
  ) => {
    const r: Record<string, unknown> = Object(raw);
    rejected.push({
      index,
      scheme: r.scheme,
      network: r.network,
      amount: r.amount ?? r.maxAmountRequired,
      asset: r.asset,
      payTo: r.payTo,
      code,
      reason,
    });
  };
  for (const invalid of challenge.invalid) reject(invalid, "invalid", invalid.reason);
  const originRefusal = checkOrigin(setup.policy, request);
  for (const requirement of withCaip2(challenge, setup.v1Networks).requirements) {
    const review = refused.find((r) => r.index === requirement.index);
    const found = originRefusal || review ? undefined : findScheme(setup.schemes, requirement);
    if (originRefusal) reject(requirement, "policy", originRefusal);
    else if (review) reject(requirement, review.code, review.reason);
    else if (found && "reason" in found) reject(requirement, "unsupported", found.reason);
    else {
      const { scheme, flow } = found!;
      const asset = findKnownAsset(requirement.caip2, requirement.asset, setup.knownAssets);
      const escrow = scheme.escrow?.(requirement);
      const reason =
        checkRequirement(setup.policy, { requirement, asset, flow, escrow, challenge, request }) ??
        request.guard?.check?.(requirement, asset) ??
        setup.plugins.map((plugin) => plugin.checkRequirement?.(requirement, asset, request)).find(Boolean);
      if (reason) reject(requirement, "policy", reason);
      // Frozen: an option is what the policy approved, and a selector cannot change it in place.
      else payable.push(Object.freeze({ requirement, scheme, asset, flow, ...(escrow && { escrow }) }));
    }
  }
  rejected.sort((a, b) => a.index - b.index);
  // Money taken after delivery first, then held in escrow, then taken before; the seller's order within each.
  const rank = (option: PaymentOption) => PAYMENT_FLOWS.indexOf(option.flow);
  return { options: payable.sort((a, b) => rank(a) - rank(b)), rejected };
}

/** Paid after delivery or before: the flows of a scheme that does not name its own. */
const DEFAULT_FLOWS: readonly PaymentFlow[] = ["authorization", "upfront"];

/** The flow `requirement` names (`extra.paymentFlow`), if `scheme`'s payments can have it; its default if none. */
function flowOf(scheme: PaymentScheme, requirement: PaymentRequirement): PaymentFlow | { reason: string } {
  const flows = scheme.flows ?? DEFAULT_FLOWS;
  const named = requirement.extra.paymentFlow;
  if (named === undefined || named === null) return flows[0]!;
  if (flows.includes(named as PaymentFlow)) return named as PaymentFlow;
  return {
    reason: `paymentFlow ${show(named)} is not one a ${requirement.scheme} payment can have (${flows.join(", ")})`,
  };
}

/** The challenge with each v1 network name a scheme knows given its CAIP-2 id (`base-sepolia` → `eip155:84532`). */
export function withCaip2(challenge: PaymentChallenge, v1Networks: Readonly<Record<string, string>>): PaymentChallenge {
  const requirements = challenge.requirements.map((offered) =>
    offered.caip2 || !Object.hasOwn(v1Networks, offered.network)
      ? offered
      : Object.freeze({ ...offered, caip2: v1Networks[offered.network] }),
  );
  return { ...challenge, requirements };
}

/** The most specific scheme that matches and can pay, or the reason none can. */
function findScheme(
  schemes: readonly PaymentScheme[],
  requirement: PaymentRequirement,
): { scheme: PaymentScheme; flow: PaymentFlow } | { reason: string } {
  const network = requirement.caip2;
  if (!network) return { reason: `unknown v1 network name "${requirement.network}"` };
  let firstReason: string | undefined;
  for (const scheme of schemesFor(schemes, requirement.scheme, network, requirement.x402Version)) {
    const reason = scheme.check(requirement);
    const flow = reason === undefined ? flowOf(scheme, requirement) : undefined;
    if (typeof flow === "string") return { scheme, flow };
    firstReason ??= reason ?? flow?.reason;
  }
  return {
    reason:
      firstReason ??
      `no registered scheme pays "${requirement.scheme}" on ${network} (x402 v${requirement.x402Version})`,
  };
}
