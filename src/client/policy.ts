/** The spend policy: what x402-pay will pay for without asking, checked before anything is signed. */
import { InvalidConfigError } from "../errors";
import {
  findKnownAsset,
  formatUnits,
  formatUsd,
  isCaip2,
  isWithinUsd,
  matchesPattern,
  parseAtomicAmount,
  parseUsd,
  sameAddress,
  type KnownAsset,
  type Money,
  type PaymentChallenge,
  type PaymentRequirement,
} from "../protocol";
import type { X402Request } from "./types";

/** An atomic cap for one asset: pay at most `maxAmount` base units of `asset` on `network`. */
export interface AssetCap {
  /** CAIP-2 network id, e.g. `eip155:8453`. */
  network: string;
  /** Token address (EVM: any case) or mint (Solana). */
  asset: string;
  /** Base units, e.g. `"2000000"` (2 USDC): an integer string, not dollars. */
  maxAmount: string;
}

export interface SpendPolicy {
  /** Largest single payment in USD (`"$0.10"`), for assets of known decimals. Default `"$1"`. `false`: no USD cap. */
  maxAmountPerPayment?: Money | false;
  /** Pay in assets whose value x402-pay cannot tell and that have no `assetCaps` entry (uncapped). Default `false`. */
  allowUnknownAssets?: boolean;
  /** More USD stablecoins to treat as known, beyond those the registered schemes know (USDC...). */
  assets?: readonly KnownAsset[];
  /** Atomic caps per asset. An asset with a cap is payable up to it, known to the policy or not. */
  assetCaps?: readonly AssetCap[];
  /** Longest validity a signed payment may have, in seconds. Default 3600. `false`: no limit. */
  maxTimeoutSeconds?: number | false;
  /** Allow-list of networks (CAIP-2 patterns: `"eip155:8453"`, `"eip155:*"`). `[]` allows none. */
  networks?: readonly string[];
  /** Allow-list of payees (`payTo`): 0x addresses compare case-insensitively, others (base58) exactly. `[]` allows none. */
  payees?: readonly string[];
  /** Allow-list of request origins (`"https://api.example.com"`, `"https://*.example.com"`). `[]` allows none. */
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
  readonly assetCaps: readonly AssetCap[];
  readonly maxTimeoutSeconds: number | false;
  readonly networks: readonly string[] | undefined;
  readonly payees: readonly string[] | undefined;
  /** Normalised: lower case, no default port. */
  readonly origins: readonly string[] | undefined;
  readonly requireSameHostResource: boolean;
}

const DEFAULT_MAX_TIMEOUT_SECONDS = 3600;
const optionNames = [
  "maxAmountPerPayment",
  "allowUnknownAssets",
  "assets",
  "assetCaps",
  "maxTimeoutSeconds",
  "networks",
  "payees",
  "origins",
  "requireSameHostResource",
];

const fail = (option: string, message: string): never => {
  const name = option ? `policy.${option}` : "policy";
  throw new InvalidConfigError(`${name}: ${message}`, { details: { option: name } });
};

/** A config value for a message; bigints (`2_000_000n`, which JSON cannot write) as `"2000000n"`. */
const show = (value: unknown) => JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${v}n` : v)) ?? String(value);

/** An optional list option: absent, or an array whose every entry passes `check`. */
function list<T>(policy: Record<string, unknown>, option: string, check: (entry: T) => string | undefined): readonly T[] | undefined {
  const value = policy[option];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return fail(option, "must be an array");
  for (const entry of value) {
    const problem = check(entry as T);
    if (problem) fail(option, `${show(entry)} ${problem}`);
  }
  return Object.freeze([...(value as T[])]);
}

const nonEmptyString = (v: unknown) => typeof v === "string" && v.length > 0;

/**
 * Validates and freezes a policy. Mistakes throw `InvalidConfigError` here, at construction, not at
 * the first 402. `v1Networks` (from the registered schemes) lets a v1 network name be told what to use.
 */
export function resolvePolicy(policy: SpendPolicy = {}, v1Networks: Readonly<Record<string, string>> = {}): ResolvedPolicy {
  if (typeof policy !== "object" || policy === null) return fail("", "the policy must be an object");
  const p = policy as Record<string, unknown>;
  for (const key of Object.keys(p)) {
    if (!optionNames.includes(key)) fail(key, `is not a policy option (options: ${optionNames.join(", ")})`);
  }
  const cap = p.maxAmountPerPayment ?? "$1";
  const parsedCap = cap === false ? false : typeof cap === "string" ? parseUsd(cap) : undefined;
  if (parsedCap === undefined) {
    fail("maxAmountPerPayment", `${show(cap)} is not a USD amount: use a string such as "$0.10", or false for no cap`);
  }
  for (const key of ["allowUnknownAssets", "requireSameHostResource"]) {
    if (p[key] !== undefined && typeof p[key] !== "boolean") fail(key, "must be true or false");
  }
  const maxTimeoutSeconds = p.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS;
  if (maxTimeoutSeconds !== false && !(Number.isSafeInteger(maxTimeoutSeconds) && (maxTimeoutSeconds as number) > 0)) {
    fail("maxTimeoutSeconds", "must be a whole number of seconds above 0, or false");
  }
  const assets = list<KnownAsset>(p, "assets", (a) =>
    !a || !isCaip2(String(a.network)) || !nonEmptyString(a.address) || !nonEmptyString(a.symbol)
      ? "needs { network (CAIP-2), address, decimals, symbol }"
      : Number.isInteger(a.decimals) && a.decimals >= 0 && a.decimals <= 36
        ? undefined
        : "needs integer decimals from 0 to 36",
  );
  const assetCaps = list<AssetCap>(p, "assetCaps", (c) =>
    !c || !isCaip2(String(c.network)) || !nonEmptyString(c.asset)
      ? "needs { network (CAIP-2), asset, maxAmount }"
      : parseAtomicAmount(c.maxAmount) === undefined
        ? 'needs maxAmount in base units, e.g. "2000000"'
        : undefined,
  );
  const networks = list<string>(p, "networks", (n) =>
    typeof n !== "string"
      ? "is not a string"
      : Object.hasOwn(v1Networks, n)
        ? `is a protocol v1 network name: use its CAIP-2 id, ${v1Networks[n]}`
        : n === "*" || /^[-a-z0-9*]{1,8}:[-_a-zA-Z0-9*]{1,64}$/.test(n)
          ? undefined
          : "is not a CAIP-2 network pattern such as eip155:8453 or eip155:*",
  );
  const payees = list<string>(p, "payees", (a) => (nonEmptyString(a) ? undefined : "is not an address"));
  const origins = list<string>(p, "origins", (o) => (typeof o === "string" && normalizeOrigin(o) ? undefined : originProblem));
  return Object.freeze({
    maxAmountPerPayment: parsedCap!,
    allowUnknownAssets: (p.allowUnknownAssets as boolean | undefined) ?? false,
    assets: assets ?? [],
    assetCaps: assetCaps ?? [],
    maxTimeoutSeconds: maxTimeoutSeconds as number | false,
    networks,
    payees,
    origins: origins && Object.freeze(origins.map((o) => normalizeOrigin(o)!)),
    requireSameHostResource: (p.requireSameHostResource as boolean | undefined) ?? true,
  });
}

const originProblem = "is not an origin such as https://api.example.com or http://localhost:4021";

/** `HTTPS://API.Example.com:443` → `https://api.example.com`; `undefined` for anything that is not an origin pattern. */
function normalizeOrigin(origin: string): string | undefined {
  const match = /^(https?):\/\/([a-z0-9*]([-a-z0-9.*]*[a-z0-9*])?|\[[0-9a-f:.]+\])(?::([0-9]{1,5}|\*))?$/i.exec(origin);
  if (!match) return undefined;
  const [, scheme, host, , port] = match;
  const lower = `${scheme!.toLowerCase()}://${host!.toLowerCase()}`;
  const defaultPort = scheme!.toLowerCase() === "https" ? "443" : "80";
  return port && port !== defaultPort ? `${lower}:${port}` : lower;
}

/** Does an origin match a normalised pattern? `*` stands for any run of host or port characters, never `:` or `/`. */
function originMatches(pattern: string, origin: string): boolean {
  if (!pattern.includes("*")) return pattern === origin;
  const parts = pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join("[^:/]*")}$`).test(origin);
}

/** The request's origin is not allowed: the reason, else `undefined`. */
export function checkOrigin(policy: ResolvedPolicy, request: X402Request): string | undefined {
  if (!policy.origins) return undefined;
  const origin = new URL(request.url).origin;
  return policy.origins.some((p) => originMatches(p, origin)) ? undefined : `origin ${origin} is not in policy.origins`;
}

/** Payees that are nobody's: the EVM zero address, and Solana's all-zero key (the system program). */
const nobody = /^(0x0{40}|1{32})$/i;

/**
 * Why the policy refuses this requirement, else `undefined`. Also returns the asset it priced from
 * `knownAssets` (the policy's own, then the registered schemes').
 */
export function checkRequirement(
  policy: ResolvedPolicy,
  requirement: PaymentRequirement,
  challenge: PaymentChallenge,
  request: X402Request,
  knownAssets: readonly KnownAsset[],
): { reason?: string; asset?: KnownAsset } {
  const network = requirement.caip2 ?? requirement.network;
  if (policy.networks && !policy.networks.some((p) => matchesPattern(p, network))) {
    return { reason: `network ${network} is not in policy.networks` };
  }
  if (nobody.test(requirement.payTo)) return { reason: `payTo ${requirement.payTo} is the zero address: the money would be lost` };
  if (policy.payees && !policy.payees.some((p) => sameAddress(p, requirement.payTo))) {
    return { reason: `payee ${requirement.payTo} is not in policy.payees` };
  }
  if (policy.requireSameHostResource) {
    const resourceUrl = requirement.x402Version === 2 ? challenge.resource?.url : requirement.raw.resource;
    const reason = checkResourceHost(resourceUrl, request.url);
    if (reason) return { reason };
  }
  if (policy.maxTimeoutSeconds !== false && requirement.maxTimeoutSeconds > policy.maxTimeoutSeconds) {
    return {
      reason: `maxTimeoutSeconds ${requirement.maxTimeoutSeconds} is over policy.maxTimeoutSeconds (${policy.maxTimeoutSeconds})`,
    };
  }
  const amount = BigInt(requirement.amount);
  const asset = findKnownAsset(requirement.caip2, requirement.asset, knownAssets);
  const cap = requirement.caip2
    ? policy.assetCaps.find((c) => c.network === requirement.caip2 && sameAddress(c.asset, requirement.asset))
    : undefined;
  if (cap && amount > BigInt(cap.maxAmount)) {
    return { asset, reason: `${requirement.amount} base units of ${requirement.asset} is over its policy.assetCaps entry (${cap.maxAmount})` };
  }
  if (!asset) {
    return cap || policy.allowUnknownAssets
      ? {}
      : {
          reason: `asset ${requirement.asset} on ${network} is not a known stablecoin (add it to policy.assets or policy.assetCaps, or set policy.allowUnknownAssets)`,
        };
  }
  const usdCap = policy.maxAmountPerPayment;
  if (usdCap !== false && !isWithinUsd(amount, asset.decimals, usdCap)) {
    return {
      asset,
      reason: `${formatUnits(amount, asset.decimals)} ${asset.symbol} is over policy.maxAmountPerPayment (${formatUsd(usdCap)})`,
    };
  }
  return { asset };
}

function checkResourceHost(resourceUrl: unknown, requestUrl: string): string | undefined {
  if (typeof resourceUrl !== "string") return undefined;
  let resource: URL;
  try {
    // Relative to the request, so a protocol-relative `//elsewhere.example/x` names its host too.
    resource = new URL(resourceUrl, requestUrl);
  } catch {
    return `resource URL ${JSON.stringify(resourceUrl)} is not a valid URL`;
  }
  // Other schemes (an MCP tool's `mcp://tool/...`) name no host to compare.
  if (resource.protocol !== "http:" && resource.protocol !== "https:") return undefined;
  const requestHost = new URL(requestUrl).hostname;
  return resource.hostname === requestHost
    ? undefined
    : `the challenge is for a resource on ${resource.hostname}, but the request went to ${requestHost} (policy.requireSameHostResource)`;
}
