/** CAIP-2 network identifiers, the legacy v1 names, and network patterns such as `eip155:*`. */

const caip2Shape = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,64}$/;

/** Protocol v1 EVM network names → chain id (the reference's table). */
export const EVM_V1_NETWORKS: Readonly<Record<string, number>> = {
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

export const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
export const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
export const SOLANA_TESTNET = "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z";

/** Protocol v1 Solana network names → CAIP-2. */
export const SVM_V1_NETWORKS: Readonly<Record<string, string>> = {
  solana: SOLANA_MAINNET,
  "solana-devnet": SOLANA_DEVNET,
  "solana-testnet": SOLANA_TESTNET,
};

/** True for a well-formed CAIP-2 chain id (`namespace:reference`). */
export function isCaip2(network: string): boolean {
  return caip2Shape.test(network);
}

/**
 * The CAIP-2 id of a network as offered: v2 networks must already be CAIP-2; v1 names are looked
 * up in the tables above. `undefined` when the name is unknown or malformed.
 */
export function toCaip2(network: string, x402Version: 1 | 2): string | undefined {
  if (x402Version === 1) {
    if (Object.hasOwn(EVM_V1_NETWORKS, network)) return `eip155:${EVM_V1_NETWORKS[network]}`;
    if (Object.hasOwn(SVM_V1_NETWORKS, network)) return SVM_V1_NETWORKS[network];
  }
  return isCaip2(network) ? network : undefined;
}

/** The numeric chain id of an `eip155:N` network, or `undefined`. Strict: decimal digits only. */
export function toEvmChainId(caip2: string): number | undefined {
  const match = /^eip155:([1-9][0-9]{0,15})$/.exec(caip2);
  if (!match) return undefined;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}

/**
 * Does a pattern match a value? `*` matches any run of characters; nothing else is special.
 * Used for networks (`eip155:*`, `eip155:8453`, `*`) and origins (`https://*.example.com`).
 */
export function matchesPattern(pattern: string, value: string): boolean {
  if (!pattern.includes("*")) return pattern === value;
  const parts = pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`).test(value);
}

/** How specific a pattern is: exact ids beat wildcards, longer literal text beats shorter. */
export function patternSpecificity(pattern: string): number {
  return pattern.includes("*") ? pattern.replace(/\*/g, "").length : 10_000;
}
