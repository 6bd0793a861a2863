/**
 * Solana addresses as bytes, and program-derived addresses. Written here instead of taken from kit
 * (`getAddressEncoder`, `isAddress`, `getProgramDerivedAddress`), which would add 1.6 KB gzipped
 * to a browser bundle for four small functions. Tests compare both on random inputs.
 */
import { base58ToBytes, concatBytes, powerMod, utf8 } from "../protocol";

/** The 32 bytes of a base58 address, or `undefined` when it is not one. */
export function addressToBytes(address: unknown): Uint8Array | undefined {
  if (typeof address !== "string" || address.length < 32 || address.length > 44) return undefined;
  const bytes = base58ToBytes(address);
  return bytes?.length === 32 ? bytes : undefined;
}

export const isSolanaAddress = (value: unknown): value is string => addressToBytes(value) !== undefined;

// Curve25519: the field prime p, and the twisted Edwards constant d = −121665/121666 mod p
// (written out, so nothing is computed at import; a test derives it).
export const P = (1n << 255n) - 19n;
export const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;

/** `base` to the power `exponent`, modulo p. */
export const power = (base: bigint, exponent: bigint): bigint => powerMod(base, exponent, P);

/**
 * Would these 32 bytes decompress to an ed25519 point (as the runtime's `create_program_address`
 * checks)? y is the little-endian value without its top (sign) bit; x² = u / v with u = y² − 1 and
 * v = d·y² + 1 (never 0) must be a square mod p. u / v is a square exactly when u·v is (they differ
 * by the square v²), which Euler's criterion tells with one exponentiation.
 */
export function isOnCurve(bytes: Uint8Array): boolean {
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? bytes[i]! & 0x7f : bytes[i]!);
  const y2 = (y * y) % P;
  const uv = ((y2 + P - 1n) * (D * y2 + 1n)) % P;
  return uv === 0n || power(uv, (P - 1n) / 2n) === 1n;
}

const marker = /* @__PURE__ */ utf8.encode("ProgramDerivedAddress");

/** The program-derived address of `seeds` under `program`, with the highest bump that is off the curve. */
export async function findProgramAddress(seeds: Uint8Array[], program: Uint8Array): Promise<Uint8Array> {
  for (let bump = 255; bump >= 0; bump--) {
    const hash = new Uint8Array(
      await crypto.subtle.digest("SHA-256", concatBytes([...seeds, [bump], program, marker])),
    );
    if (!isOnCurve(hash)) return hash;
  }
  throw new Error("No program-derived address exists for these seeds.");
}
