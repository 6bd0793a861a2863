/**
 * The few EVM encodings the schemes need: EIP-55 addresses, hex bytes, and calls to fixed ERC-20
 * functions. Built on the keccak viem itself uses (`@noble/hashes`), not on viem's barrels: importing
 * any viem barrel makes esbuild wrap every viem module it reaches in lazy initialisers, about 1 KB
 * gzipped in a browser bundle that already carries the same hash through `viem/accounts`.
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import type { Hex } from "./signer";

const encoder = /* @__PURE__ */ new TextEncoder();

/** `0x` and two lower-case hex digits per byte. */
export function bytesToHex(bytes: Uint8Array): Hex {
  let hex = "0x";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex as Hex;
}

/** The EIP-55 form of a 20-byte hex address (the caller has checked its shape). */
export function checksumAddress(address: string): Hex {
  const lower = address.slice(2).toLowerCase();
  const hash = keccak_256(encoder.encode(lower));
  let out = "0x";
  for (let i = 0; i < 40; i++) {
    // Each address digit takes the case of the matching hash nibble: upper when it is 8 or more.
    const nibble = (hash[i >> 1]! >> (i & 1 ? 0 : 4)) & 15;
    out += nibble > 7 ? lower[i]!.toUpperCase() : lower[i];
  }
  return out as Hex;
}

/** Calldata for one of the fixed-arity ERC-20 functions the Permit2 approval paths call. */
export function erc20Call(selector: ERC20Selector, args: readonly (Hex | bigint)[]): Hex {
  let data: string = selector;
  for (const arg of args) data += (typeof arg === "bigint" ? arg.toString(16) : arg.slice(2).toLowerCase()).padStart(64, "0");
  return data as Hex;
}

/** The 4-byte selectors: `allowance(address,address)`, `nonces(address)`, `approve(address,uint256)`. */
export const ERC20 = { allowance: "0xdd62ed3e", nonces: "0x7ecebe00", approve: "0x095ea7b3" } as const;
export type ERC20Selector = (typeof ERC20)[keyof typeof ERC20];

/** The largest uint256: what an unlimited approval allows. */
export const MAX_UINT256 = 2n ** 256n - 1n;
