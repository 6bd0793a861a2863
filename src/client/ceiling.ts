/**
 * The per-request ceiling (`x402: { maxAmount }`): the most one request pays, as the caller was told the price. It is
 * a request guard, checked with the spend policy before anything is signed, in every round of the request.
 */
import { show, type Check, type RequestGuard } from "../contracts";
import {
  formatUnits,
  formatUsd,
  isCaip2,
  isWithinUsd,
  parseAtomicAmount,
  parseUsd,
  sameAddress,
  type KnownAsset,
  type Money,
  type PaymentRequirement,
} from "../protocol";

/**
 * The most one request may pay: a USD amount (`"$0.002"`) in stablecoins of known decimals (as
 * `policy.maxAmountPerPayment`), or base units of one asset on one network (`{ network, asset, amount }`), which
 * refuses every other asset. For `upto` and escrowed payments, the most the seller may take is what is compared; for a
 * batch-settlement channel, the call's price (not the deposit). `"$0"` pays nothing: leave it out for no ceiling.
 */
export type PaymentCeiling =
  | Money
  | {
      /** CAIP-2 network id, e.g. `eip155:8453`. */
      readonly network: string;
      /** Token address (EVM: any case) or mint (Solana). */
      readonly asset: string;
      /** Base units, e.g. `"2000"` (0.002 USDC): an integer string. */
      readonly amount: string;
    };

const SHAPE = 'a USD amount such as "$0.002", or { network (CAIP-2), asset, amount in base units such as "2000" }';

/** What is wrong with a ceiling (for `checkOptions`), else `undefined`. */
export const checkCeiling: Check = (value) => {
  if (typeof value === "string") return parseUsd(value) === undefined ? `${show(value)} is not ${SHAPE}` : undefined;
  if (typeof value === "number" || typeof value === "bigint")
    return `${show(value)} is a number: dollars or base units? Give ${SHAPE}`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `${show(value)} is not ${SHAPE}`;
  const keys = Object.keys(value).sort().join();
  const { network, asset, amount } = value as Record<string, unknown>;
  const fine =
    keys === "amount,asset,network" &&
    typeof network === "string" &&
    isCaip2(network) &&
    typeof asset === "string" &&
    asset.length > 0 &&
    parseAtomicAmount(amount) !== undefined;
  return fine ? undefined : `${show(value)} is not ${SHAPE}`;
};

/**
 * `guard` with the ceiling checked first (a request's own rules, such as an MCP tool's, still apply); `guard` itself
 * when there is no ceiling.
 */
export function ceilingGuard(
  ceiling: PaymentCeiling | undefined,
  guard?: RequestGuard | undefined,
): RequestGuard | undefined {
  if (ceiling === undefined) return guard;
  const check = ceilingCheck(ceiling, "x402.maxAmount");
  return {
    ...guard,
    check: (requirement, asset) => check(requirement, asset) ?? guard?.check?.(requirement, asset),
  };
}

/** The ceiling that pays what `requirement` asks and no more: its amount, in its asset, on its network. */
export const ceilingOf = (requirement: PaymentRequirement): PaymentCeiling =>
  Object.freeze({ network: requirement.caip2!, asset: requirement.asset, amount: requirement.amount });

/**
 * Why `requirement` is over the ceiling (a `policy` rejection naming both amounts, and the ceiling as `name`), else
 * `undefined`.
 */
export function ceilingCheck(ceiling: PaymentCeiling, name: string) {
  const usd = typeof ceiling === "string" ? parseUsd(ceiling)! : undefined;
  return (requirement: PaymentRequirement, asset: KnownAsset | undefined): string | undefined => {
    const amount = BigInt(requirement.amount);
    const inUnits = (atomic: bigint) => asset && `${formatUnits(atomic, asset.decimals)} ${asset.symbol}`;
    const asked = inUnits(amount) ?? `${amount} base units of ${requirement.asset}`;
    if (typeof ceiling === "string") {
      if (!asset)
        return (
          `asset ${requirement.asset} on ${requirement.caip2} has no known USD value, so it cannot be held to ` +
          `${name} (${formatUsd(usd!)})`
        );
      return isWithinUsd(amount, asset.decimals, usd!) ? undefined : `${asked} is over ${name} (${formatUsd(usd!)})`;
    }
    if (requirement.caip2 !== ceiling.network || !sameAddress(requirement.asset, ceiling.asset))
      return (
        `asset ${requirement.asset} on ${requirement.caip2} is not the one ${name} is in ` +
        `(${ceiling.asset} on ${ceiling.network})`
      );
    const max = BigInt(ceiling.amount);
    const allowed = inUnits(max) ?? `${max} base units`;
    return amount <= max ? undefined : `${asked} is over ${name} (${allowed})`;
  };
}
