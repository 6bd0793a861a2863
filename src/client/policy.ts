/** The spend policy: what x402-pay will pay for without asking, checked before anything is signed. */
import { InvalidConfigError } from "../errors";
import {
  findKnownAsset,
  formatUnits,
  formatUsd,
  isWithinUsd,
  matchesPattern,
  parseUsd,
  sameAddress,
  type KnownAsset,
  type Money,
  type PaymentChallenge,
  type PaymentRequirement,
} from "../protocol";
import type { RequestInfo } from "./types";

export interface SpendPolicy {
  /** Largest single payment, in USD, for assets of known decimals. Default `"$1"`. `false`: no cap. */
  maxAmountPerPayment?: Money | false;
  /** Pay in assets whose value x402-pay cannot tell (uncapped). Default `false`: refuse them. */
  allowUnknownAssets?: boolean;
  /** More USD stablecoins to treat as known, beyond those the registered schemes know (USDC...). */
  assets?: readonly KnownAsset[];
  /** Allow-list of networks (CAIP-2 patterns: `"eip155:8453"`, `"eip155:*"`). */
  networks?: readonly string[];
  /** Allow-list of payees (`payTo`), compared case-insensitively for 0x addresses. */
  payees?: readonly string[];
  /** Allow-list of request origins (`"https://api.example.com"`, `"https://*.example.com"`). */
  origins?: readonly string[];
  /**
   * Refuse a challenge whose resource URL names another host than the request's. Default `true`.
   * Turn off only for a server that is known to report a different public host.
   */
  requireSameHostResource?: boolean;
}

export interface ResolvedPolicy {
  readonly maxAmountPerPayment: bigint | false;
  readonly allowUnknownAssets: boolean;
  readonly assets: readonly KnownAsset[];
  readonly networks: readonly string[] | undefined;
  readonly payees: readonly string[] | undefined;
  readonly origins: readonly string[] | undefined;
  readonly requireSameHostResource: boolean;
}

/** Validates and freezes a policy; unusable values throw `InvalidConfigError`. */
export function resolvePolicy(policy: SpendPolicy = {}): ResolvedPolicy {
  const cap = policy.maxAmountPerPayment ?? "$1";
  const parsedCap = cap === false ? false : parseUsd(cap);
  if (parsedCap === undefined) {
    throw new InvalidConfigError(
      `policy.maxAmountPerPayment ${JSON.stringify(cap)} is not a USD amount: use e.g. "$0.10" or 0.1, or false for no cap.`,
    );
  }
  for (const asset of policy.assets ?? []) {
    if (!Number.isInteger(asset.decimals) || asset.decimals < 0 || asset.decimals > 36) {
      throw new InvalidConfigError(`policy.assets entry ${asset.address} on ${asset.network} needs integer decimals from 0 to 36.`);
    }
  }
  return Object.freeze({
    maxAmountPerPayment: parsedCap,
    allowUnknownAssets: policy.allowUnknownAssets ?? false,
    assets: Object.freeze([...(policy.assets ?? [])]),
    networks: policy.networks && Object.freeze([...policy.networks]),
    payees: policy.payees && Object.freeze([...policy.payees]),
    origins: policy.origins && Object.freeze([...policy.origins]),
    requireSameHostResource: policy.requireSameHostResource ?? true,
  });
}

/** The request's origin is not allowed: the reason, else `undefined`. */
export function checkOrigin(policy: ResolvedPolicy, request: RequestInfo): string | undefined {
  if (!policy.origins) return undefined;
  const origin = new URL(request.url).origin;
  return policy.origins.some((p) => matchesPattern(p, origin)) ? undefined : `origin ${origin} is not in policy.origins`;
}

/**
 * Why the policy refuses this requirement, else `undefined`. Also returns the asset it priced from
 * `knownAssets` (the policy's own, then the registered schemes').
 */
export function checkRequirement(
  policy: ResolvedPolicy,
  requirement: PaymentRequirement,
  challenge: PaymentChallenge,
  request: RequestInfo,
  knownAssets: readonly KnownAsset[],
): { reason?: string; asset?: KnownAsset } {
  const network = requirement.caip2 ?? requirement.network;
  if (policy.networks && !policy.networks.some((p) => matchesPattern(p, network))) {
    return { reason: `network ${network} is not in policy.networks` };
  }
  if (policy.payees && !policy.payees.some((p) => sameAddress(p, requirement.payTo))) {
    return { reason: `payee ${requirement.payTo} is not in policy.payees` };
  }
  if (policy.requireSameHostResource) {
    const resourceUrl = requirement.x402Version === 2 ? challenge.resource?.url : requirement.raw.resource;
    const reason = checkResourceHost(resourceUrl, request.url);
    if (reason) return { reason };
  }
  const asset = findKnownAsset(requirement.caip2, requirement.asset, knownAssets);
  if (!asset) {
    return policy.allowUnknownAssets
      ? {}
      : { reason: `asset ${requirement.asset} on ${network} is not a known stablecoin (add it to policy.assets or set policy.allowUnknownAssets)` };
  }
  const cap = policy.maxAmountPerPayment;
  const amount = BigInt(requirement.amount);
  if (cap !== false && !isWithinUsd(amount, asset.decimals, cap)) {
    return {
      asset,
      reason: `${formatUnits(amount, asset.decimals)} ${asset.symbol} is over policy.maxAmountPerPayment (${formatUsd(cap)})`,
    };
  }
  return { asset };
}

function checkResourceHost(resourceUrl: unknown, requestUrl: string): string | undefined {
  if (typeof resourceUrl !== "string" || !/^https?:\/\//i.test(resourceUrl)) return undefined;
  let resourceHost: string;
  try {
    resourceHost = new URL(resourceUrl).hostname;
  } catch {
    return `resource URL ${JSON.stringify(resourceUrl)} is not a valid URL`;
  }
  const requestHost = new URL(requestUrl).hostname;
  return resourceHost === requestHost
    ? undefined
    : `the challenge is for a resource on ${resourceHost}, but the request went to ${requestHost} (policy.requireSameHostResource)`;
}
