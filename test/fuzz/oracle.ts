/**
 * Independent oracles for the fuzz properties: what the wire documents (shared/protocol wire.md §1-§3,
 * evm.md §8-§10) and the README's spend-policy table say, written here without calling any
 * validator, codec or policy function of src/. Node's Buffer decodes base64, `buffer.isUtf8` checks
 * UTF-8, WHATWG `URL` reads URLs, viem computes EIP-55 checksums.
 */
import { isUtf8 } from "node:buffer";
import { getAddress } from "viem";

/** Documented limits: a challenge or settlement nested deeper than this is refused; a header over 64 KiB is refused. */
export const DEPTH_LIMIT = 32;
export const HEADER_LIMIT = 64 * 1024;
/** The largest 402 body parsed as text (characters). */
export const BODY_TEXT_LIMIT = 1024 * 1024;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Decoded = { ok: true; value: unknown } | { ok: false };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): v is string => typeof v === "string" && v !== "";

// ------------------------------------------------------------------------------ header codec

/**
 * The header codec as documented: standard base64 (x402-pay also takes the URL-safe alphabet, no or
 * partial padding, surrounding whitespace), then UTF-8, then JSON. Decoded by Node's Buffer; a
 * leading byte-order mark is dropped, as the WHATWG UTF-8 decode does.
 */
export function referenceDecode(text: string): Decoded {
  const match = /^([A-Za-z0-9+/_-]*)(=*)$/.exec(text.trim());
  if (!match) return { ok: false };
  const data = match[1]!;
  const padding = match[2]!.length;
  const tail = data.length % 4;
  // A lone trailing character is never base64; padding may only fill the last quantum.
  if (tail === 1 || padding > (4 - tail) % 4) return { ok: false };
  const bytes = Buffer.from(data.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  if (!isUtf8(bytes)) return { ok: false };
  let json = bytes.toString("utf8");
  if (json.startsWith("\uFEFF")) json = json.slice(1);
  try {
    return { ok: true, value: JSON.parse(json) };
  } catch {
    return { ok: false };
  }
}

/** Nesting of objects and arrays on the deepest path (a scalar is 0, `{}` is 1). Iterative. */
export function nesting(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    deepest = Math.max(deepest, depth + 1);
    // Past the limit the exact figure does not matter: stop descending.
    if (depth + 1 > DEPTH_LIMIT) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

// ------------------------------------------------------------------------------ wire rules (wire.md §1)

const UINT256_MAX = (1n << 256n) - 1n;

/** Atomic units: ASCII decimal digits, a uint256 (x402-pay reads at most 78 digits, the width of 2^256 - 1). */
export const isAtomic = (v: unknown): v is string =>
  typeof v === "string" && /^[0-9]+$/.test(v) && v.length <= 78 && BigInt(v) <= UINT256_MAX;

/** CAIP-2 `namespace:reference` (x402-pay allows references up to 64 characters). */
export const isChainId = (v: unknown): v is string =>
  typeof v === "string" && /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,64}$/.test(v);

/** A positive whole number of seconds, exactly representable. */
const isTimeout = (v: unknown): v is number =>
  typeof v === "number" && Number.isInteger(v) && v > 0 && v <= Number.MAX_SAFE_INTEGER;

/** PaymentRequirements (v2 §1.2, v1 §1.3): the fields x402-pay reads. Unknown fields are allowed. */
export function isWireRequirement(r: unknown, version: 1 | 2): r is Record<string, unknown> {
  if (!isObject(r)) return false;
  const common =
    nonEmptyString(r.scheme) &&
    nonEmptyString(r.asset) &&
    nonEmptyString(r.payTo) &&
    isTimeout(r.maxTimeoutSeconds) &&
    (r.extra === undefined || r.extra === null || isObject(r.extra));
  if (!common) return false;
  return version === 2
    ? isChainId(r.network) && isAtomic(r.amount)
    : nonEmptyString(r.network) &&
        isAtomic(r.maxAmountRequired) &&
        (r.resource === undefined || typeof r.resource === "string");
}

/**
 * PaymentRequired (v2 §1.1, v1 §1.3), requirements aside: `accepts` must be an array, its elements are judged one by
 * one.
 */
export function isWireChallenge(c: unknown): c is Record<string, unknown> & { x402Version: 1 | 2; accepts: unknown[] } {
  if (!isObject(c) || nesting(c) > DEPTH_LIMIT) return false;
  if (c.x402Version !== 1 && c.x402Version !== 2) return false;
  // `error: null` (a Java server's absent field) is no error.
  if (c.error !== undefined && c.error !== null && typeof c.error !== "string") return false;
  if (!Array.isArray(c.accepts)) return false;
  if (c.extensions !== undefined && c.extensions !== null && !isObject(c.extensions)) return false;
  if (c.x402Version === 2 && c.resource !== undefined && !(isObject(c.resource) && nonEmptyString(c.resource.url)))
    return false;
  return true;
}

export type ChallengeVerdict =
  | {
      ok: true;
      challenge: Record<string, unknown> & { x402Version: 1 | 2; accepts: unknown[] };
      source: "header" | "body";
    }
  | { ok: false; code: "INVALID_CHALLENGE" | "CHALLENGE_NOT_FOUND" };

/**
 * What reading a 402 must give (wire.md §3, x402-pay's lenient variant): the PAYMENT-REQUIRED header
 * when present and non-empty, else a JSON body (text or parsed) that names an `x402Version`.
 */
export function expectedChallenge(input: { header: string | null | undefined; body?: unknown }): ChallengeVerdict {
  const invalid = { ok: false, code: "INVALID_CHALLENGE" } as const;
  if (typeof input.header === "string" && input.header !== "") {
    if (input.header.length > HEADER_LIMIT) return invalid;
    const decoded = referenceDecode(input.header);
    if (!decoded.ok) return invalid;
    return isWireChallenge(decoded.value) ? { ok: true, challenge: decoded.value, source: "header" } : invalid;
  }
  let body = input.body;
  if (typeof body === "string") {
    try {
      body = body.length > BODY_TEXT_LIMIT ? undefined : JSON.parse(body);
    } catch {
      body = undefined;
    }
  }
  if (typeof body !== "object" || body === null || !("x402Version" in body))
    return { ok: false, code: "CHALLENGE_NOT_FOUND" };
  return isWireChallenge(body) ? { ok: true, challenge: body, source: "body" } : invalid;
}

/**
 * SettleResponse (wire.md §1.5): boolean `success`, the optional descriptive fields strings (or null,
 * which Java servers write for an absent field, read as absent), `extensions` an object or null.
 */
export function expectedSettlement(value: string | null | undefined): Record<string, unknown> | undefined {
  if (!value || value.length > HEADER_LIMIT) return undefined;
  const decoded = referenceDecode(value);
  if (!decoded.ok || !isObject(decoded.value) || nesting(decoded.value) > DEPTH_LIMIT) return undefined;
  const s = { ...decoded.value };
  if (typeof s.success !== "boolean") return undefined;
  for (const key of ["errorReason", "errorMessage", "payer", "transaction", "network", "amount"]) {
    if (s[key] === null) delete s[key];
    else if (s[key] !== undefined && typeof s[key] !== "string") return undefined;
  }
  if (s.extensions !== undefined && s.extensions !== null && !isObject(s.extensions)) return undefined;
  return s;
}

// ------------------------------------------------------------------------------ EVM exact (evm.md §8-§10)

/** Legacy v1 names → chain id (evm.md §8). */
export const V1_CHAIN_IDS: Readonly<Record<string, number>> = {
  ethereum: 1,
  sepolia: 11155111,
  abstract: 2741,
  "abstract-testnet": 11124,
  "base-sepolia": 84532,
  base: 8453,
  "avalanche-fuji": 43113,
  avalanche: 43114,
  iotex: 4689,
  sei: 1329,
  "sei-testnet": 1328,
  polygon: 137,
  "polygon-amoy": 80002,
  peaq: 3338,
  story: 1514,
  educhain: 41923,
  "skale-base-sepolia": 324705682,
  megaeth: 4326,
  monad: 143,
  stable: 988,
  "stable-testnet": 2201,
};

export interface Asset {
  network: string;
  address: string;
  decimals: number;
  symbol: string;
}

/** Stablecoins the README says the policy can price (evm.md §9, plus USDC on Ethereum and Avalanche). */
export const KNOWN_EVM_ASSETS: readonly Asset[] = [
  { network: "eip155:8453", address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", decimals: 6, symbol: "USDC" },
  { network: "eip155:84532", address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", decimals: 6, symbol: "USDC" },
  { network: "eip155:1", address: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", decimals: 6, symbol: "USDC" },
  { network: "eip155:43114", address: "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", decimals: 6, symbol: "USDC" },
  { network: "eip155:137", address: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", decimals: 6, symbol: "USDC" },
  { network: "eip155:42161", address: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", decimals: 6, symbol: "USDC" },
  { network: "eip155:421614", address: "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d", decimals: 6, symbol: "USDC" },
  { network: "eip155:143", address: "0x754704Bc059F8C67012fEd69BC8A327a5aafb603", decimals: 6, symbol: "USDC" },
  { network: "eip155:988", address: "0x779Ded0c9e1022225f8E0630b35a9b54bE713736", decimals: 6, symbol: "USDT0" },
  { network: "eip155:2201", address: "0x78Cf24370174180738C5B8E352B6D14c83a6c9A9", decimals: 6, symbol: "USDT0" },
  { network: "eip155:4326", address: "0xFAfDdbb3FC7688494971a79cc65DCa3EF82079E7", decimals: 18, symbol: "MegaUSD" },
];

/** 0x addresses are equal case-insensitively; anything else (base58) exactly. */
export const addressEquals = (a: string, b: string) => (/^0x/i.test(a) ? a.toLowerCase() === b.toLowerCase() : a === b);

/** EIP-55 checksums by viem, remembered (challenges repeat the same few addresses thousands of times). */
const checksums = new Map<string, string>();
const checksummed = (v: string) =>
  checksums.get(v) ?? (checksums.size > 10_000 && checksums.clear(), checksums.set(v, getAddress(v)).get(v)!);

/**
 * A 20-byte hex address that is all lower case, all upper case (no checksum either way), or correctly EIP-55
 * checksummed.
 */
const isEvmAddress = (v: string) =>
  /^0x[0-9a-fA-F]{40}$/.test(v) &&
  (v === v.toLowerCase() || v.slice(2) === v.slice(2).toUpperCase() || checksummed(v) === v);

/** The numeric chain id of a CAIP-2 `eip155:N` (decimal, no leading zero, a safe integer), else undefined. */
export function evmChainId(caip2: string | undefined): number | undefined {
  const m = caip2 === undefined ? null : /^eip155:([1-9][0-9]*)$/.exec(caip2);
  const id = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(id) ? id : undefined;
}

/** The CAIP-2 network of a requirement: v2 as given; v1 a CAIP-2 id as given, else the legacy name's id. */
export function caip2Of(r: Record<string, unknown>, version: 1 | 2): string | undefined {
  const network = r.network as string;
  if (version === 2 || isChainId(network)) return network;
  return Object.hasOwn(V1_CHAIN_IDS, network) ? `eip155:${V1_CHAIN_IDS[network]}` : undefined;
}

/** Can `exactEvm` (EIP-3009) pay this wire-valid requirement? (evm.md §10, x402-pay's stricter column.) */
export function exactEvmCanPay(r: Record<string, unknown>, version: 1 | 2): boolean {
  if (r.scheme !== "exact" || evmChainId(caip2Of(r, version)) === undefined) return false;
  if (!isEvmAddress(r.payTo as string) || !isEvmAddress(r.asset as string)) return false;
  const extra = (r.extra ?? {}) as Record<string, unknown>;
  if (extra.assetTransferMethod !== undefined && extra.assetTransferMethod !== "eip3009") return false;
  if (!nonEmptyString(extra.name) || !nonEmptyString(extra.version)) return false;
  // The facilitator needs validBefore more than 6 s ahead.
  return (r.maxTimeoutSeconds as number) > 6;
}

// ------------------------------------------------------------------------------ spend policy (README "Spend policy")

/** The policy as the test generated it: every option either absent (default) or a value. */
export interface PolicyModel {
  maxAmountPerPayment?: string | false;
  allowUnknownAssets?: boolean;
  assets?: Asset[];
  assetCaps?: { network: string; asset: string; maxAmount: string }[];
  maxTimeoutSeconds?: number | false;
  networks?: string[];
  payees?: string[];
  origins?: string[];
  requireSameHostResource?: boolean;
}

/** `*` matches any run of characters; everything else literally. */
function glob(pattern: string, value: string, any = "[^]*"): boolean {
  const source = pattern
    .split("*")
    .map((part) => [...part].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""))
    .join(any);
  return new RegExp(`^${source}$`).test(value);
}

/** `HTTPS://Seller.Example:443` → `https://seller.example` (scheme and host lower case, no default port). */
function normalOrigin(pattern: string): string {
  const lower = pattern.toLowerCase();
  return lower.replace(/^(https:\/\/[^/]*):443$/, "$1").replace(/^(http:\/\/[^/]*):80$/, "$1");
}

/** `"$0.10"` → 10/100 as [numerator, decimal places]. */
function usd(text: string): [bigint, number] {
  const [whole, fraction = ""] = text.replace(/^\$/, "").split(".");
  return [BigInt(`${whole}${fraction}` || "0"), fraction.length];
}

/** Is `atomic` base units of a token with `decimals` worth at most `limit` dollars? Exact rational comparison. */
export function withinUsd(atomic: bigint, decimals: number, limit: string): boolean {
  const [n, places] = usd(limit);
  // atomic / 10^decimals <= n / 10^places
  return atomic * 10n ** BigInt(places) <= n * 10n ** BigInt(decimals);
}

/** `*` in an origin pattern stands for host or port characters, never `:` or `/`. */
export function originAllowed(policy: PolicyModel, requestUrl: string): boolean {
  const origin = new URL(requestUrl).origin;
  return !policy.origins || policy.origins.some((o) => glob(normalOrigin(o), origin, "[^:/]*"));
}

/**
 * Would the spend policy allow paying this wire-valid, EVM-payable requirement, for a request to
 * `requestUrl`? One row of the README's table per check (all must pass), plus the options the
 * README's prose and `SpendPolicy` document: `maxTimeoutSeconds` (default 900), `assetCaps`
 * (an atomic cap per asset; a capped asset is payable up to it even if unknown; known assets keep
 * their USD cap too), and the zero address never being a payee.
 */
export function policyAllows(
  policy: PolicyModel,
  r: Record<string, unknown>,
  version: 1 | 2,
  challengeResource: unknown,
  requestUrl: string,
): boolean {
  const request = new URL(requestUrl);
  if (!originAllowed(policy, requestUrl)) return false;
  const network = caip2Of(r, version)!;
  if (policy.networks && !policy.networks.some((p) => glob(p, network))) return false;
  const payTo = r.payTo as string;
  if (/^0x0{40}$/i.test(payTo)) return false;
  if (policy.payees && !policy.payees.some((p) => addressEquals(p, payTo))) return false;
  if (policy.requireSameHostResource !== false) {
    const resourceUrl = version === 2 ? (challengeResource as { url?: unknown } | undefined)?.url : r.resource;
    if (typeof resourceUrl === "string") {
      // Read as the request would read it: relative to the request's URL.
      let resource: URL | undefined;
      try {
        resource = new URL(resourceUrl, request);
      } catch {
        return false;
      }
      if (/^https?:$/.test(resource.protocol) && resource.hostname !== request.hostname) return false;
    }
  }
  const timeoutLimit = policy.maxTimeoutSeconds ?? 900;
  if (timeoutLimit !== false && (r.maxTimeoutSeconds as number) > timeoutLimit) return false;
  const amount = BigInt((version === 2 ? r.amount : r.maxAmountRequired) as string);
  const asset = r.asset as string;
  const known = [...(policy.assets ?? []), ...KNOWN_EVM_ASSETS].find(
    (a) => a.network === network && addressEquals(a.address, asset),
  );
  const cap = (policy.assetCaps ?? []).find((c) => c.network === network && addressEquals(c.asset, asset));
  if (cap && amount > BigInt(cap.maxAmount)) return false;
  if (!known) return Boolean(cap) || policy.allowUnknownAssets === true;
  const limit = policy.maxAmountPerPayment ?? "$1";
  return limit === false || withinUsd(amount, known.decimals, limit);
}
