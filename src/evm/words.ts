/**
 * The few EVM encodings the schemes need: calls to fixed ERC-20 functions, written out
 * rather than taken from viem's barrels: importing any viem barrel makes esbuild wrap every viem
 * module it reaches in lazy initialisers, about 1 KB gzipped in a browser bundle. EIP-55 checksums and hex bytes
 * live in src/protocol (shared with sign-in-with-x), on the keccak viem itself uses (`@noble/hashes`).
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, utf8 } from "../protocol";
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

/*
 * abi.encode of static values: each is one 32-byte word, so an encoding is its words' hex digits in a row, and a
 * struct hash of static fields is keccak256(typeHash ‖ words).
 */

/** keccak256 of hex digits (no `0x`, whole bytes), as hex digits. */
export const keccakHex = (hex: string) =>
  bytesToHex(keccak_256(Uint8Array.from(hex.match(/../g) ?? [], (byte) => Number.parseInt(byte, 16)))).slice(2);
/** A value as one ABI word: an address or bytes32 (hex), or an unsigned integer. */
export const word = (value: string | number | bigint) =>
  (typeof value === "string" ? value.slice(2).toLowerCase() : BigInt(value).toString(16)).padStart(64, "0");
/** keccak256 of a string (a type, or a domain's name), as hex digits. */
export const typeHash = (type: string) => bytesToHex(keccak_256(utf8.encode(type))).slice(2);
