/** The spend policy: what x402-pay will pay for without asking, checked before anything is signed. */
import {
  formatUnits,
  formatUsd,
  isCaip2,
  isWithinUsd,
  matchesPattern,
  originOf,
  parseAtomicAmount,
  parseUsd,
  sameAddress,
  type KnownAsset,
  type Money,
  type PaymentChallenge,
  type PaymentRequirement,
} from "../protocol";
import {
  PAYMENT_FLOWS,
  checkOptions,
  every,
  fail,
  is,
  nonEmpty,
  show,
  type EscrowTerms,
  type PaymentFlow,
  type X402Request,
} from "../contracts";

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
  maxAmountPerPayment?: Money | false | undefined;
  /** Pay in assets whose value x402-pay cannot tell and that have no `assetCaps` entry (uncapped). Default `false`. */
  allowUnknownAssets?: boolean | undefined;
  /** More USD stablecoins to treat as known, beyond those the registered schemes know (USDC...). */
  assets?: readonly KnownAsset[] | undefined;
  /** Atomic caps per asset. An asset with a cap is payable up to it, known to the policy or not. */
  assetCaps?: readonly AssetCap[] | undefined;
  /**
   * Longest validity a signed payment may have (the requirement's `maxTimeoutSeconds`), in seconds. Default 900 (15
   * minutes). `false`: no limit. batch-settlement and auth-capture are held to it too: there it bounds the signed
   * deposit or pre-approval, not the channel or the escrow's capture window, which are read from `extra`.
   */
  maxTimeoutSeconds?: number | false | undefined;
  /** Allow-list of networks (CAIP-2 patterns: `"eip155:8453"`, `"eip155:*"`). `[]` allows none. */
  networks?: readonly string[] | undefined;
  /**
   * Allow-list of payees (`payTo`): 0x addresses compare case-insensitively, others (base58) exactly. `[]` allows none.
   */
  payees?: readonly string[] | undefined;
  /**
   * Allow-list of request origins (`"https://api.example.com"`, `"https://*.example.com"`; an MCP server over stdio:
   * `"mcp://weather"`). `[]` allows none.
   */
  origins?: readonly string[] | undefined;
  /**
   * Refuse a challenge whose resource URL names another host than the request's. Default `true`.
   * Turn off only for a server that is known to report a different public host.
   */
  requireSameHostResource?: boolean | undefined;
  /**
   * Allow-list of payment flows (`extra.paymentFlow`): `["escrow", "authorization"]` pays only where the money is taken
   * after delivery or held refundably, never before. Default: all three.
   */
  flows?: readonly PaymentFlow[] | undefined;
  /**
   * The largest fee an escrow may take from a payment (auth-capture's `extra.maxFeeBps`), in basis points of it: `100`
   * is 1 %. The fee goes to the escrow's fee recipient out of what the payee receives. Default: no limit.
   */
  maxFeeBps?: number | undefined;
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
  readonly flows: readonly PaymentFlow[] | undefined;
  readonly maxFeeBps: number | undefined;
}

const bool = is((v) => typeof v === "boolean", "true or false");

/**
 * 15 minutes: how long a one-off signed payment may wait to be settled (the reference server asks 300 s). The
 * stateful schemes need no more: a batch-settlement requirement's `maxTimeoutSeconds` is its deposit authorization's
 * validity (the channel lives on, until a withdrawal that waits `extra.withdrawDelay`), and auth-capture's is the
 * pre-approval's (`preApprovalExpiry`), while what is held lives until `extra.captureDeadline`/`refundDeadline`.
 */
const DEFAULT_MAX_TIMEOUT_SECONDS = 900;

/**
 * Validates and freezes a policy. Mistakes throw `InvalidConfigError` here, at construction, not at
 * the first 402. `v1Networks` (from the registered schemes) lets a v1 network name be told what to use.
 */
export function resolvePolicy(
  policy: SpendPolicy = {},
  v1Networks: Readonly<Record<string, string>> = {},
): ResolvedPolicy {
  if (typeof policy !== "object" || policy === null) fail("policy", "must be an object");
  const network = is(
    (n) => n === "*" || /^[-a-z0-9*]{1,8}:[-_a-zA-Z0-9*]{1,64}$/.test(n),
    "a CAIP-2 network pattern such as eip155:8453 or eip155:*",
  );
  checkOptions("policy.", policy, {
    maxAmountPerPayment: is(
      (v) => v === false || (typeof v === "string" && parseUsd(v) !== undefined),
      'a USD amount as a string such as "$0.10", or false',
    ),
    allowUnknownAssets: bool,
    assets: every(
      is(
        (a) =>
          a &&
          isCaip2(String(a.network)) &&
          nonEmpty(a.address) &&
          nonEmpty(a.symbol) &&
          Number.isInteger(a.decimals) &&
          a.decimals >= 0 &&
          a.decimals <= 36,
        "{ network (CAIP-2), address, decimals (0 to 36), symbol }",
      ),
    ),
    assetCaps: every(
      is(
        (c) => c && isCaip2(String(c.network)) && nonEmpty(c.asset) && parseAtomicAmount(c.maxAmount) !== undefined,
        '{ network (CAIP-2), asset, maxAmount in base units such as "2000000" }',
      ),
    ),
    maxTimeoutSeconds: is(
      (v) => v === false || (Number.isSafeInteger(v) && v > 0),
      "a whole number of seconds above 0, or false",
    ),
    networks: every((n) =>
      Object.hasOwn(v1Networks, n)
        ? `${show(n)} is a protocol v1 network name: use its CAIP-2 id, ${v1Networks[n]}`
        : network(n),
    ),
    payees: every(is(nonEmpty, "an address")),
    origins: every(
      is(
        (o) => typeof o === "string" && normalizeOrigin(o),
        "an origin such as https://api.example.com, http://localhost:4021 or mcp://weather",
      ),
    ),
    requireSameHostResource: bool,
    flows: every(is((f) => PAYMENT_FLOWS.includes(f), '"authorization", "upfront" or "escrow"')),
    maxFeeBps: is((v) => Number.isInteger(v) && v >= 0 && v <= 10_000, "basis points, a whole number from 0 to 10000"),
  });
  const p = policy;
  const cap = p.maxAmountPerPayment ?? "$1";
  const list = <T>(entries: readonly T[] | undefined) => entries && Object.freeze([...entries]);
  return Object.freeze({
    maxAmountPerPayment: cap === false ? false : parseUsd(cap)!,
    allowUnknownAssets: p.allowUnknownAssets ?? false,
    assets: list(p.assets) ?? [],
    assetCaps: list(p.assetCaps) ?? [],
    maxTimeoutSeconds: p.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS,
    networks: list(p.networks),
    payees: list(p.payees),
    origins: list(p.origins?.map((o) => normalizeOrigin(o)!)),
    requireSameHostResource: p.requireSameHostResource ?? true,
    flows: list(p.flows),
    maxFeeBps: p.maxFeeBps,
  });
}

/**
 * `HTTPS://API.Example.com:443` → `https://api.example.com`; `mcp://weather` (an MCP server by name) as it is;
 * `undefined` for anything that is not an origin pattern.
 */
export function normalizeOrigin(origin: string): string | undefined {
  const match = /^(https?|mcp):\/\/([a-z0-9*]([-a-z0-9.*]*[a-z0-9*])?|\[[0-9a-f:.]+\])(?::([0-9]{1,5}|\*))?$/.exec(
    origin.toLowerCase(),
  );
  if (!match) return undefined;
  const [, scheme, host, , port] = match;
  return port && port !== ({ https: "443", http: "80" } as Record<string, string>)[scheme!]
    ? `${scheme}://${host}:${port}`
    : `${scheme}://${host}`;
}

/** The request's origin is not allowed: the reason, else `undefined`. */
export function checkOrigin(policy: ResolvedPolicy, request: Pick<X402Request, "url">): string | undefined {
  if (!policy.origins || inOrigins(policy.origins, request.url)) return undefined;
  return `origin ${originOf(request.url)} is not in policy.origins`;
}

/** Is the URL's origin one of `patterns` (normalised: `normalizeOrigin`)? */
export function inOrigins(patterns: readonly string[], url: string): boolean {
  const origin = originOf(url);
  // In an origin, `*` stands for host or port characters, never `:` or `/`.
  return patterns.some((p) => matchesPattern(p, origin, "[^:/]"));
}

/** Payees that are nobody's: the EVM zero address, and Solana's all-zero key (the system program). */
const nobody = /^(0x0{40}|1{32})$/i;

/** An allow-list (`undefined`: no list) lets in an entry that passes `test`. */
const allows = (list: readonly string[] | undefined, test: (entry: string) => boolean) => !list || list.some(test);

/**
 * Why the policy refuses this requirement, else `undefined`. Called once a scheme can pay it (so its
 * network has a CAIP-2 id), with the asset priced from the known assets (the policy's own, then the
 * registered schemes').
 */
export function checkRequirement(
  policy: ResolvedPolicy,
  {
    requirement,
    asset,
    flow,
    escrow,
    challenge,
    request,
  }: {
    requirement: PaymentRequirement;
    asset: KnownAsset | undefined;
    flow: PaymentFlow;
    escrow?: EscrowTerms | undefined;
    challenge: PaymentChallenge;
    request: X402Request;
  },
): string | undefined {
  const { caip2: network, payTo } = requirement;
  if (!allows(policy.networks, (p) => matchesPattern(p, network!)))
    return `network ${network} is not in policy.networks`;
  if (nobody.test(payTo)) return `payTo ${payTo} is the zero address: the money would be lost`;
  if (!allows(policy.payees, (p) => sameAddress(p, payTo))) return `payee ${payTo} is not in policy.payees`;
  if (!allows(policy.flows, (f) => f === flow)) return `paymentFlow ${flow} is not in policy.flows`;
  if (escrow && policy.maxFeeBps !== undefined && escrow.fees.maxBps > policy.maxFeeBps)
    return `an escrow fee of up to ${escrow.fees.maxBps} bps is over policy.maxFeeBps (${policy.maxFeeBps})`;
  const resourceUrl = requirement.x402Version === 2 ? challenge.resource?.url : requirement.raw.resource;
  const elsewhere = policy.requireSameHostResource && checkResourceHost(resourceUrl, request.url);
  if (elsewhere) return elsewhere;
  if (policy.maxTimeoutSeconds !== false && requirement.maxTimeoutSeconds > policy.maxTimeoutSeconds) {
    return (
      `maxTimeoutSeconds ${requirement.maxTimeoutSeconds} is over policy.maxTimeoutSeconds ` +
      `(${policy.maxTimeoutSeconds})`
    );
  }
  const amount = BigInt(requirement.amount);
  const cap = policy.assetCaps.find((c) => c.network === network && sameAddress(c.asset, requirement.asset));
  if (cap && amount > BigInt(cap.maxAmount)) {
    return (
      `${requirement.amount} base units of ${requirement.asset} is over its policy.assetCaps entry ` +
      `(${cap.maxAmount})`
    );
  }
  if (!asset) {
    return cap || policy.allowUnknownAssets
      ? undefined
      : `asset ${requirement.asset} on ${network} is not a known stablecoin (add it to policy.assets or ` +
          `policy.assetCaps, or set policy.allowUnknownAssets)`;
  }
  const usdCap = policy.maxAmountPerPayment;
  if (usdCap !== false && !isWithinUsd(amount, asset.decimals, usdCap)) {
    return (
      `${formatUnits(amount, asset.decimals)} ${asset.symbol} is over policy.maxAmountPerPayment ` +
      `(${formatUsd(usdCap)})`
    );
  }
  return undefined;
}

/**
 * The most the policy lets one payment of `requirement`'s asset move (base units): its `assetCaps` entry, and for an
 * asset of known decimals `maxAmountPerPayment`, whichever is lower; `undefined` when neither caps it.
 */
export function paymentLimit(
  policy: ResolvedPolicy,
  requirement: PaymentRequirement,
  asset: KnownAsset | undefined,
): bigint | undefined {
  const cap = policy.assetCaps.find((c) => c.network === requirement.caip2 && sameAddress(c.asset, requirement.asset));
  const usd = policy.maxAmountPerPayment;
  const limits = [
    cap && BigInt(cap.maxAmount),
    asset && usd !== false ? (usd * 10n ** BigInt(asset.decimals)) / 10n ** 18n : undefined,
  ].filter((limit) => limit !== undefined);
  // The lowest (bigints: no Math.min).
  return limits.sort((a, b) => (a < b ? -1 : 1))[0];
}

function checkResourceHost(resourceUrl: unknown, requestUrl: string): string | undefined {
  // The usual case, the request's own URL echoed, passes on one parse (a host is its own host).
  // Equivalent for mutation: without the type check `new URL(undefined, request)` resolves to the request's own
  // host, which passes too.
  // Stryker disable next-line ConditionalExpression: equivalent (above)
  if (typeof resourceUrl !== "string" || (resourceUrl === requestUrl && URL.canParse(requestUrl))) return undefined;
  let resource: URL;
  try {
    // Relative to the request, so a protocol-relative `//elsewhere.example/x` names its host too.
    resource = new URL(resourceUrl, requestUrl);
  } catch {
    return `resource URL ${JSON.stringify(resourceUrl)} is not a valid URL`;
  }
  // Other schemes (an MCP tool's `mcp://tool/...`) name no host to compare, nor does a request to a
  // server reached by name (an MCP server over stdio, `mcp://weather`).
  const request = new URL(requestUrl);
  if (!/^https?:$/.test(resource.protocol) || !/^https?:$/.test(request.protocol)) return undefined;
  const requestHost = request.hostname;
  return resource.hostname === requestHost
    ? undefined
    : `the challenge is for a resource on ${resource.hostname}, not ${requestHost} (policy.requireSameHostResource)`;
}
