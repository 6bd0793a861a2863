/**
 * The runtime half of the wire shapes, free of zod: the predicates the schemas' refinements name, the
 * JSON object test and the nesting limit. `schemas.ts` builds the zod schemas from these predicates;
 * `validators.generated.ts`, generated from those schemas, calls them by name. The wrappers import
 * only this module and the generated one, so zod stays out of their bundles.
 */
import { parseAtomicAmount } from "./money";
import { isCaip2 } from "./networks";

/**
 * Not the empty string. (The refinements' predicates: the generator maps each refinement to one of them by identity.)
 */
export const isNonEmpty = (value: string): boolean => value !== "";

/** A base-10 integer string within uint256 (`parseAtomicAmount` reads it). */
export const isAtomicAmount = (value: string): boolean => parseAtomicAmount(value) !== undefined;

/** A whole number above 0 that a double holds exactly. */
export const isPositiveInteger = (value: number): boolean => Number.isSafeInteger(value) && value > 0;

/**
 * A payment id (payment-identifier, wire.md §7): 16 to 128 characters of `a-z A-Z 0-9 _ -`, the reference's
 * `PAYMENT_ID_PATTERN` and lengths.
 */
export const isPaymentIdText = (value: string): boolean => /^[\w-]{16,128}$/.test(value);

/**
 * A builder code (builder-code, ERC-8021): 1 to 32 characters of `a-z 0-9 _`, the reference's `BUILDER_CODE_PATTERN`.
 */
export const isBuilderCodeText = (value: string): boolean => /^[a-z0-9_]{1,32}$/.test(value);

export { isCaip2 };

/** A JSON object: not null, not an array. zod's own object test, the one `z.looseObject` applies. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Deepest nesting x402-pay reads in a challenge or settlement; deeper input is refused before any wallet prompt. */
export const MAX_JSON_DEPTH = 32;

/** Is a decoded JSON value nested deeper than `max` objects and arrays? Iterative: no recursion to overflow. */
export function isTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth >= max) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Optional text fields of a settlement. Some servers send an absent one as `null` (the Java reference's `"payer":
 * null`).
 */
export const SETTLEMENT_TEXT_FIELDS = [
  "errorReason",
  "errorMessage",
  "payer",
  "transaction",
  "network",
  "amount",
] as const;
