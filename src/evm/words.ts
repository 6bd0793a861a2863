/**
 * The few EVM encodings the schemes need: calls to fixed ERC-20 functions, written out
 * rather than taken from viem's barrels: importing any viem barrel makes esbuild wrap every viem
 * module it reaches in lazy initialisers, about 1 KB gzipped in a browser bundle. EIP-55 checksums and hex bytes
 * live in src/protocol (shared with sign-in-with-x), on the keccak viem itself uses (`@noble/hashes`).
 */
import type { Hex } from "./signer";

/**
 * Calldata for a call of static arguments (addresses, words, integers): a 4-byte selector, then each argument as a
 * word.
 */
export function erc20Call(selector: ERC20Selector | Hex, args: readonly (Hex | bigint)[]): Hex {
  let data: string = selector;
  for (const arg of args)
    data += (typeof arg === "bigint" ? arg.toString(16) : arg.slice(2).toLowerCase()).padStart(64, "0");
  return data as Hex;
}

/** The 4-byte selectors: `allowance(address,address)`, `nonces(address)`, `approve(address,uint256)`. */
export const ERC20 = { allowance: "0xdd62ed3e", nonces: "0x7ecebe00", approve: "0x095ea7b3" } as const;
export type ERC20Selector = (typeof ERC20)[keyof typeof ERC20];

/** The largest uint256: what an unlimited approval allows. */
export const MAX_UINT256 = 2n ** 256n - 1n;
