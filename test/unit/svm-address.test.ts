// x402-pay's own base58 address reading and program-derived addresses, compared with kit's on
// random and edge-case inputs: they must agree on every one.
import {
  getAddressDecoder,
  getAddressEncoder,
  getBase58Decoder,
  getProgramDerivedAddress,
  isAddress,
  isOffCurveAddress,
  type Address,
} from "@solana/kit";
import { describe, expect, it } from "vitest";
import { D, P, addressToBytes, findProgramAddress, isOnCurve, isSolanaAddress, power } from "../../src/svm/address";
import { findAssociatedTokenAddress, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../src/svm";
import { bytesToBase58 } from "../../src/protocol";
import { findAssociatedTokenPda } from "@solana-program/token";

const toAddress = (bytes: Uint8Array) => getAddressDecoder().decode(bytes);
const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));

describe("base58", () => {
  it("writes random bytes (signatures, addresses, leading zeros, none) exactly as kit does", () => {
    const samples = [
      new Uint8Array(0),
      new Uint8Array(3),
      ...Array.from({ length: 200 }, (_, i) => random(1 + (i % 70))),
    ];
    for (let zeros = 1; zeros <= 64; zeros += 7)
      samples.push(new Uint8Array(64).map((_b, i) => (i < zeros ? 0 : random(1)[0]!)));
    for (const bytes of samples) expect(bytesToBase58(bytes)).toBe(getBase58Decoder().decode(bytes));
  });
});

describe("Solana address bytes", () => {
  it("reads random addresses, and those with leading zero bytes, exactly as kit does", () => {
    const samples = Array.from({ length: 300 }, () => random(32));
    for (let zeros = 1; zeros <= 32; zeros++)
      samples.push(new Uint8Array(32).map((_b, i) => (i < zeros ? 0 : random(1)[0]! | 1)));
    for (const bytes of samples) {
      const address = toAddress(bytes);
      expect(addressToBytes(address)).toEqual(new Uint8Array(getAddressEncoder().encode(address)));
      expect(addressToBytes(address)).toEqual(bytes);
    }
  });

  it("accepts and refuses the same strings as kit's isAddress", () => {
    const valid = toAddress(random(32));
    const candidates: unknown[] = [
      valid,
      "11111111111111111111111111111111",
      "111111111111111111111111111111111",
      "1111111111111111111111111111111",
      valid.slice(1),
      `${valid}1`,
      `1${valid}`,
      valid.replace(/.$/, "0"),
      valid.replace(/.$/, "O"),
      valid.replace(/.$/, "I"),
      valid.replace(/.$/, "l"),
      "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
      "JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFG",
      getAddressDecoder().decode(new Uint8Array(32).fill(255)),
      "",
      ` ${valid}`,
      42,
      null,
      undefined,
    ];
    // Base58 strings of 31 and 33 bytes, in the address length range.
    for (const n of [31, 33]) candidates.push(toAddress(new Uint8Array(32).fill(7)).slice(0, 32) + "2".repeat(n - 31));
    for (const candidate of candidates) {
      const kit = typeof candidate === "string" && isAddress(candidate);
      expect([candidate, isSolanaAddress(candidate)]).toEqual([candidate, kit]);
    }
  });
});

describe("program-derived addresses", () => {
  it("uses the curve's own constant: d = -121665/121666 mod p", () => {
    expect(D).toBe((P - ((121665n * power(121666n, P - 2n)) % P)) % P);
    expect((D * 121666n + 121665n) % P).toBe(0n);
  });

  it("tells on-curve points from off-curve hashes as kit does", async () => {
    // Public keys are on the curve; about half of random byte strings are not.
    for (let i = 0; i < 20; i++) {
      const { publicKey } = await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"]);
      expect(isOnCurve(new Uint8Array(await crypto.subtle.exportKey("raw", publicKey)))).toBe(true);
    }
    let off = 0;
    for (let i = 0; i < 400; i++) {
      const bytes = random(32);
      expect(!isOnCurve(bytes)).toBe(isOffCurveAddress(toAddress(bytes)));
      if (!isOnCurve(bytes)) off++;
    }
    expect(off).toBeGreaterThan(100);
    expect(off).toBeLessThan(300);
  });

  it("finds the same address and bump as kit for random seeds", async () => {
    for (let i = 0; i < 60; i++) {
      const program = random(32);
      const seeds = [random(32), random(i % 5), new TextEncoder().encode("seed")];
      const [expected] = await getProgramDerivedAddress({ programAddress: toAddress(program), seeds });
      expect(toAddress(await findProgramAddress(seeds, program))).toBe(expected);
    }
  });

  it("derives associated token accounts as the token program client does, under Token and Token-2022", async () => {
    const mint = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU" as Address;
    for (const tokenProgram of [TOKEN_PROGRAM, TOKEN_2022_PROGRAM] as Address[]) {
      for (let i = 0; i < 10; i++) {
        const owner = toAddress(random(32));
        const [expected] = await findAssociatedTokenPda({ owner, mint, tokenProgram });
        expect(await findAssociatedTokenAddress(owner, mint, tokenProgram)).toBe(expected);
      }
    }
  });
});
