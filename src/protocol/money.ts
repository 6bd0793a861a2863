/** Amounts: atomic integer strings, USD limits, and the stablecoins whose decimals are known. */

/** A USD amount: `"$0.10"`, `"0.10"`, or a number of dollars. */
export type Money = `$${string}` | string | number;

/** A token the spend policy can price: a USD stablecoin with known decimals. */
export interface KnownAsset {
  /** CAIP-2 network id, e.g. `eip155:8453`. */
  network: string;
  /** Token address (EVM: any case) or mint (Solana). */
  address: string;
  decimals: number;
  symbol: string;
}

/** USD stablecoins whose decimals x402-pay knows (from the reference's default asset table). */
export const KNOWN_ASSETS: readonly KnownAsset[] = [
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
  { network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", decimals: 6, symbol: "USDC" },
  { network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", address: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", decimals: 6, symbol: "USDC" },
];

const sameAddress = (a: string, b: string) =>
  a.startsWith("0x") || a.startsWith("0X") ? a.toLowerCase() === b.toLowerCase() : a === b;

/** The known asset at `address` on `network`, searching `extra` first, then the built-in table. */
export function findKnownAsset(
  network: string | undefined,
  address: string,
  extra: readonly KnownAsset[] = [],
): KnownAsset | undefined {
  if (!network) return undefined;
  const match = (a: KnownAsset) => a.network === network && sameAddress(a.address, address);
  return extra.find(match) ?? KNOWN_ASSETS.find(match);
}

/** Scale of USD limits: amounts are held as integers of 10^-18 dollars, so comparisons are exact. */
const USD_SCALE = 18;

/** Parses a USD amount into 10^-18 dollar units. `undefined` when it is not a plain decimal amount. */
export function parseUsd(money: Money): bigint | undefined {
  const text = typeof money === "number" ? (Number.isFinite(money) ? money.toFixed(USD_SCALE) : "") : money.trim();
  const match = /^\$?\s*([0-9]+)(?:\.([0-9]*))?$/.exec(text.replace(/_/g, ""));
  if (!match || (match[2] ?? "").length > USD_SCALE) return undefined;
  return BigInt(match[1] + (match[2] ?? "").padEnd(USD_SCALE, "0"));
}

/** Is `atomic` units of a token with `decimals` worth at most `limit` (from `parseUsd`)? */
export function isWithinUsd(atomic: bigint, decimals: number, limit: bigint): boolean {
  return atomic * 10n ** BigInt(USD_SCALE) <= limit * 10n ** BigInt(decimals);
}

/** `1500000` with 6 decimals → `"1.5"`. */
export function formatUnits(atomic: bigint, decimals: number): string {
  const text = atomic.toString().padStart(decimals + 1, "0");
  const whole = text.slice(0, text.length - decimals);
  const fraction = text.slice(text.length - decimals).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

/** `10n ** 18n` units of `parseUsd` → `"$0.1"`. */
export function formatUsd(limit: bigint): string {
  return `$${formatUnits(limit, USD_SCALE)}`;
}

const MAX_UINT256 = (1n << 256n) - 1n;

/** Parses an atomic amount: base-10 digits only, within uint256. */
export function parseAtomicAmount(value: unknown): bigint | undefined {
  if (typeof value !== "string" || !/^[0-9]{1,78}$/.test(value)) return undefined;
  const amount = BigInt(value);
  return amount <= MAX_UINT256 ? amount : undefined;
}
