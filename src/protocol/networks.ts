/**
 * CAIP-2 network identifiers and network patterns such as `eip155:*`. The legacy v1 names of each
 * chain family live with its schemes (`src/evm`, `src/svm`), so a bundle carries only its own.
 */

const caip2Shape = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,64}$/;

/** True for a well-formed CAIP-2 chain id (`namespace:reference`). */
export function isCaip2(network: string): boolean {
  return caip2Shape.test(network);
}

/**
 * Does a pattern match a value? `*` matches any run of characters (of `star`, a regular expression
 * for one character); nothing else is special. Used for networks (`eip155:*`, `eip155:8453`, `*`)
 * and origins (`https://*.example.com`).
 */
export function matchesPattern(pattern: string, value: string, star = "."): boolean {
  const key = `${star} ${pattern}`;
  let regex = compiled.get(key);
  if (!regex) {
    const parts = pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
    // Patterns come from configuration (a few): compiled once each. Bounded all the same.
    if (compiled.size >= 256) compiled.clear();
    compiled.set(key, (regex = new RegExp(`^${parts.join(`${star}*`)}$`)));
  }
  return regex.test(value);
}

const compiled = /* @__PURE__ */ new Map<string, RegExp>();

/** How specific a pattern is: exact ids beat wildcards, longer literal text beats shorter. */
export function patternSpecificity(pattern: string): number {
  return pattern.includes("*") ? pattern.replace(/\*/g, "").length : 10_000;
}

/**
 * Uniswap's Permit2, at the same address on every EVM chain: Permit2 payments need the payer's ERC-20 allowance for it.
 */
export const PERMIT2_ADDRESS = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
