/**
 * Address encodings shared by the chain families and sign-in-with-x: EIP-55 checksums (on the keccak
 * viem itself uses, `@noble/hashes`, not on viem's barrels: see src/evm/words.ts) and base58.
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import { utf8 } from "./base64";

/** The EIP-55 form of a 20-byte hex address (the caller has checked its shape). */
export function checksumAddress(address: string): `0x${string}` {
  const lower = address.slice(2).toLowerCase();
  const hash = keccak_256(utf8.encode(lower));
  let out = "0x";
  for (let i = 0; i < 40; i++) {
    // Each address digit takes the case of the matching hash nibble: upper when it is 8 or more.
    const nibble = (hash[i >> 1]! >> (i & 1 ? 0 : 4)) & 15;
    out += nibble > 7 ? lower[i]!.toUpperCase() : lower[i];
  }
  return out as `0x${string}`;
}

/** `0x` and two lower-case hex digits per byte. */
export function bytesToHex(bytes: Uint8Array): `0x${string}` {
  let hex = "0x";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex as `0x${string}`;
}

/** The Bitcoin alphabet, as Solana writes addresses and signatures. */
export const BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Bytes → base58: each leading zero byte is a "1", the rest the big-endian number in base 58. */
export function bytesToBase58(bytes: Uint8Array): string {
  let n = 0n;
  for (const byte of bytes) n = (n << 8n) | BigInt(byte);
  let out = "";
  for (; n > 0n; n /= 58n) out = BASE58_ALPHABET[Number(n % 58n)] + out;
  for (let i = 0; i < bytes.length && bytes[i] === 0; i++) out = "1" + out;
  return out;
}

/** `base` to the power `exponent`, modulo `modulus` (square-and-multiply): curve point checks of Solana addresses and P-256 keys. */
export function powerMod(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  for (base = ((base % modulus) + modulus) % modulus; exponent > 0n; exponent >>= 1n, base = (base * base) % modulus) {
    if (exponent & 1n) result = (result * base) % modulus;
  }
  return result;
}

/** Base58 → bytes (each leading "1" a zero byte), or `undefined` when a character is not base58. */
export function base58ToBytes(text: string): Uint8Array | undefined {
  let n = 0n;
  for (const char of text) {
    const digit = BASE58_ALPHABET.indexOf(char);
    if (digit < 0) return undefined;
    n = n * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  for (; n > 0n; n >>= 8n) bytes.unshift(Number(n & 255n));
  return Uint8Array.from([...new Array<number>(/^1*/.exec(text)![0].length).fill(0), ...bytes]);
}
