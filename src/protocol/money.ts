/** Amounts: atomic integer strings, USD limits, and the stablecoins whose decimals are known. */

/** A USD amount as a string: `"$0.10"` or `"0.10"` (never a float, which cannot hold cents exactly). */
export type Money = `$${string}` | string;

/** A token the spend policy can price: a USD stablecoin with known decimals. */
export interface KnownAsset {
  /** CAIP-2 network id, e.g. `eip155:8453`. */
  network: string;
  /** Token address (EVM: any case) or mint (Solana). */
  address: string;
  decimals: number;
  symbol: string;
}

/** Address equality: 0x addresses compare case-insensitively, others (base58) exactly. */
export const sameAddress = (a: string, b: string) => (/^0x/i.test(a) ? a.toLowerCase() === b.toLowerCase() : a === b);

/** The asset at `address` on `network` in `assets`, if any (0x addresses compare case-insensitively). */
export function findKnownAsset(
  network: string | undefined,
  address: string,
  assets: readonly KnownAsset[],
): KnownAsset | undefined {
  return network ? assets.find((a) => a.network === network && sameAddress(a.address, address)) : undefined;
}

/** Scale of USD limits: amounts are held as integers of 10^-18 dollars, so comparisons are exact. */
const USD_SCALE = 18;

/** Parses a USD amount into 10^-18 dollar units. `undefined` when it is not a plain decimal amount. */
export function parseUsd(money: Money): bigint | undefined {
  const [, whole, fraction = ""] = /^\$?\s*([0-9]+)(?:\.([0-9]*))?$/.exec(money.trim().replace(/_/g, "")) ?? [];
  return whole === undefined || fraction.length > USD_SCALE
    ? undefined
    : BigInt(whole + fraction.padEnd(USD_SCALE, "0"));
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
