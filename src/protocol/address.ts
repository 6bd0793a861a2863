/**
 * Address encodings shared by the chain families and sign-in-with-x: EIP-55 checksums (on the keccak
 * viem itself uses, `@noble/hashes`, not on viem's barrels: see src/evm/words.ts) and base58.
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import { utf8 } from "./base64";

/** The EIP-55 form of a 20-byte hex address (the caller has checked its shape). */
export function checksumAddress(address: string): `0x${string}` {
  const lower = address.slice(2).toLowerCase();
  // A client pays a few payees in a few tokens: each checksum is hashed once (bounded all the same).
  const known = checksums.get(lower);
  if (known) return known;
  if (checksums.size >= 1024) checksums.clear();
  const hash = keccak_256(utf8.encode(lower));
  let out = "0x";
  for (let i = 0; i < 40; i++) {
    // Each address digit takes the case of the matching hash nibble: upper when it is 8 or more.
    const nibble = (hash[i >> 1]! >> (i & 1 ? 0 : 4)) & 15;
    out += nibble > 7 ? lower[i]!.toUpperCase() : lower[i];
  }
  checksums.set(lower, out as `0x${string}`);
  return out as `0x${string}`;
}

const checksums = /* @__PURE__ */ new Map<string, `0x${string}`>();

/**
 * Random bytes from the platform's CSPRNG, drawn 4 KiB at a time: each `getRandomValues` call costs more than the bytes
 * (Node validates and wraps it).
 */
export function randomBytes(length: number): Uint8Array {
  if (length > POOL_BYTES) return crypto.getRandomValues(new Uint8Array(length));
  if (poolAt + length > POOL_BYTES) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  // A copy, and the pool's bytes zeroed once handed out: no two callers ever share a byte.
  const bytes = pool.slice(poolAt, poolAt + length);
  pool.fill(0, poolAt, (poolAt += length));
  return bytes;
}

const POOL_BYTES = 4096;
const pool = /* @__PURE__ */ new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;

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
  for (let i = 0; i < bytes.length && bytes[i] === 0; i++) out = `1${out}`;
  return out;
}

/**
 * `base` to the power `exponent`, modulo `modulus` (square-and-multiply): curve point checks of Solana addresses and
 * P-256 keys.
 */
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

/** Whether two byte strings are equal. */
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

/** Joins byte arrays (or arrays of byte values) into one. */
export function concatBytes(parts: readonly (Uint8Array | readonly number[])[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) out.set(part, (offset += part.length) - part.length);
  return out;
}
