import { describe, expect, it } from "vitest";
import { EVM_V1_NETWORKS, toEvmChainId } from "../../src/evm";
import { SVM_V1_NETWORKS } from "../../src/svm";
import {
  decodeBase64Json,
  encodeBase64Json,
  formatUnits,
  isWithinUsd,
  matchesPattern,
  parseAtomicAmount,
  parseChallenge,
  parseUsd,
  decodeSettlement,
} from "../../src";

describe("header codec (wire.md §2 vectors)", () => {
  it.each([
    [{ d: "Prémium ✓" }, "eyJkIjoiUHLDqW1pdW0g4pyTIn0="],
    [{ bazaar: { status: "success" } }, "eyJiYXphYXIiOnsic3RhdHVzIjoic3VjY2VzcyJ9fQ=="],
  ])("encodes %j as the reference does", (value, header) => {
    expect(encodeBase64Json(value)).toBe(header);
    expect(decodeBase64Json(header)).toEqual({ ok: true, value });
  });

  it("accepts URL-safe and unpadded base64", () => {
    const standard = encodeBase64Json({ q: "??>>" });
    expect(standard).toMatch(/[+/]/);
    const urlSafe = standard.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    expect(decodeBase64Json(urlSafe)).toEqual({ ok: true, value: { q: "??>>" } });
  });

  it.each([
    ["not base64", "%%%"],
    ["a lone trailing character", "abcde"],
    ["non-JSON", btoa("hello")],
    ["invalid UTF-8", btoa("\xff\xfe")],
  ])("rejects %s", (_, text) => {
    expect(decodeBase64Json(text).ok).toBe(false);
  });

  it("accepts whitespace around a value, and refuses it inside (atob alone would skip it)", () => {
    const header = encodeBase64Json({ a: 1 });
    expect(decodeBase64Json(` ${header}\r\n`)).toEqual({ ok: true, value: { a: 1 } });
    // Gaps of every length modulo 4: padding is added to reach a multiple of 4, so a gap of four is what atob would accept.
    for (const gap of [" ", "\r\n", "\t\t\t", "    ", "\r\n\r\n"]) {
      expect(decodeBase64Json(header.slice(0, 4) + gap + header.slice(4))).toEqual({ ok: false, reason: "is not base64" });
    }
  });

  it("accepts a value that lost one of its two padding characters", () => {
    const header = encodeBase64Json({ a: 1 });
    expect(header).toMatch(/[^=]==$/);
    expect(decodeBase64Json(header.slice(0, -1))).toEqual({ ok: true, value: { a: 1 } });
  });

  it.each([
    ["a lone trailing character", "abcde", "is not base64"],
    ["padding in the middle", "ab=cde==", "is not base64"],
    ["three padding characters", "abcd===", "is not base64"],
    ["bytes that are not UTF-8", btoa("\xff\xfe"), "does not decode to UTF-8 text"],
    ["UTF-8 that is not JSON", btoa("hello"), "does not decode to JSON"],
  ])("names what failed: %s", (_, text, reason) => {
    expect(decodeBase64Json(text)).toEqual({ ok: false, reason });
  });

  it("encodes large multi-byte payloads without stack overflow", () => {
    const value = { s: "é".repeat(200_000) };
    expect(decodeBase64Json(encodeBase64Json(value))).toEqual({ ok: true, value });
  });
});

describe("networks", () => {
  it("v1 names map to CAIP-2 ids, per chain family", () => {
    expect(EVM_V1_NETWORKS["base-sepolia"]).toBe("eip155:84532");
    expect(EVM_V1_NETWORKS.base).toBe("eip155:8453");
    expect(EVM_V1_NETWORKS.ethereum).toBe("eip155:1");
    expect(SVM_V1_NETWORKS["solana-devnet"]).toBe("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
    expect(Object.keys(EVM_V1_NETWORKS)).toHaveLength(21);
  });

  it.each([
    ["eip155:8453", 8453],
    ["eip155:84532abc", undefined],
    ["eip155:0x14a34", undefined],
    ["eip155:0", undefined],
    ["solana:mainnet", undefined],
  ] as const)("toEvmChainId(%s) = %s (stricter than the reference)", (network, id) => {
    expect(toEvmChainId(network)).toBe(id);
  });

  it.each([
    ["eip155:*", "eip155:8453", true],
    ["eip155:*", "solana:abc", false],
    ["*", "anything:at-all", true],
    ["eip155:8453", "eip155:84532", false],
    ["eip155:8.53", "eip155:8453", false],
    ["https://*.example.com", "https://api.example.com", true],
  ] as const)("matchesPattern(%s, %s) = %s", (pattern, value, expected) => {
    expect(matchesPattern(pattern, value)).toBe(expected);
  });
});

describe("money", () => {
  it.each([
    ["$1", 10n ** 18n],
    ["$0.10", 10n ** 17n],
    ["0.000001", 10n ** 12n],
    ["$1,00", undefined],
    ["-1", undefined],
    ["abc", undefined],
  ] as const)("parseUsd(%j)", (money, expected) => {
    expect(parseUsd(money)).toBe(expected);
  });

  it("compares atomic amounts to USD limits exactly", () => {
    const tenCents = parseUsd("$0.10")!;
    expect(isWithinUsd(100_000n, 6, tenCents)).toBe(true);
    expect(isWithinUsd(100_001n, 6, tenCents)).toBe(false);
    expect(isWithinUsd(10n ** 17n, 18, tenCents)).toBe(true);
    expect(isWithinUsd(10n ** 17n + 1n, 18, tenCents)).toBe(false);
  });

  it.each([
    ["10000", 10000n],
    ["0", 0n],
    ["0.01", undefined],
    ["-1", undefined],
    ["0x2710", undefined],
    [10000, undefined],
    [(1n << 256n).toString(), undefined],
    [((1n << 256n) - 1n).toString(), (1n << 256n) - 1n],
  ] as const)("parseAtomicAmount(%j)", (value, expected) => {
    expect(parseAtomicAmount(value)).toBe(expected);
  });

  it("formats units", () => {
    expect(formatUnits(1_500_000n, 6)).toBe("1.5");
    expect(formatUnits(1000n, 6)).toBe("0.001");
    expect(formatUnits(0n, 6)).toBe("0");
  });
});

describe("parseChallenge", () => {
  const requirement = {
    scheme: "exact",
    network: "eip155:84532",
    amount: "1000",
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
    maxTimeoutSeconds: 60,
    extra: { name: "USDC", version: "2", futureField: [1, 2] },
    futureTopLevel: true,
  };

  it("keeps each requirement verbatim and unknown fields intact", () => {
    const challenge = parseChallenge({ header: encodeBase64Json({ x402Version: 2, resource: { url: "https://a.example/x" }, accepts: [requirement], extensions: { z: { info: 1 } } }) });
    expect(challenge.requirements[0]!.raw).toEqual(requirement);
    expect(challenge.extensions).toEqual({ z: { info: 1 } });
    expect(challenge.source).toBe("header");
  });

  it("accepts a v2 challenge in the body only", () => {
    const challenge = parseChallenge({ header: null, body: JSON.stringify({ x402Version: 2, resource: { url: "https://a.example/x" }, accepts: [requirement] }) });
    expect(challenge.x402Version).toBe(2);
    expect(challenge.source).toBe("body");
  });

  it("keeps bad requirements apart with their reasons", () => {
    const challenge = parseChallenge({
      header: encodeBase64Json({
        x402Version: 2,
        accepts: [
          requirement,
          { ...requirement, amount: "0.01" },
          { ...requirement, network: "base" },
          { ...requirement, maxTimeoutSeconds: "60" },
          { ...requirement, maxTimeoutSeconds: 1.5 },
        ],
      }),
    });
    expect(challenge.requirements).toHaveLength(1);
    expect(challenge.invalid.map((i) => i.reason)).toEqual([
      "amount must be a base-10 integer string within uint256",
      "network must be a CAIP-2 id such as eip155:8453",
      "maxTimeoutSeconds must be a number",
      "maxTimeoutSeconds must be a positive integer",
    ]);
  });

  it("v1: checks the resource URL it reads, not the descriptive fields it does not", () => {
    const v1 = { scheme: "exact", network: "base-sepolia", maxAmountRequired: "1000", asset: requirement.asset, payTo: requirement.payTo, maxTimeoutSeconds: 60 };
    const challenge = parseChallenge({
      header: null,
      body: { x402Version: 1, accepts: [{ ...v1, description: null, mimeType: 5, outputSchema: null }, { ...v1, resource: 42 }] },
    });
    expect(challenge.requirements.map((r) => r.index)).toEqual([0]);
    expect(challenge.invalid.map((i) => i.reason)).toEqual(["resource must be a string"]);
  });

  it.each([
    ["wrong version", { x402Version: 3, accepts: [] }, /Unsupported x402Version 3/],
    ["missing version", { accepts: [] }, /Unsupported x402Version undefined/],
    ["missing accepts", { x402Version: 2 }, /accepts/],
    ["an array", [1], /not a JSON object/],
  ])("rejects %s with INVALID_CHALLENGE", (_, value, message) => {
    expect(() => parseChallenge({ header: encodeBase64Json(value) })).toThrowError(
      expect.objectContaining({ code: "INVALID_CHALLENGE", message: expect.stringMatching(message) }),
    );
  });

  it("rejects a header over 64 KiB", () => {
    expect(() => parseChallenge({ header: "A".repeat(64 * 1024 + 4) })).toThrowError(expect.objectContaining({ code: "INVALID_CHALLENGE" }));
  });

  it("explains an HTML paywall", () => {
    expect(() => parseChallenge({ header: null, body: "<!doctype html><p>Pay</p>", contentType: "text/html" })).toThrowError(
      expect.objectContaining({ code: "CHALLENGE_NOT_FOUND", message: expect.stringMatching(/HTML/) }),
    );
  });
});

describe("decodeSettlement", () => {
  it("reads a settlement and refuses garbage", () => {
    const ok = { success: true, transaction: "0xabc", network: "eip155:84532", payer: "0x1" };
    expect(decodeSettlement(encodeBase64Json(ok))).toEqual(ok);
    expect(decodeSettlement(encodeBase64Json({ nope: 1 }))).toBeUndefined();
    expect(decodeSettlement("!!")).toBeUndefined();
    expect(decodeSettlement(null)).toBeUndefined();
  });

  const ok = { success: true, transaction: "0xabc", network: "eip155:84532", payer: "0x1" };

  it("reads a header of exactly 64 KiB and ignores a longer one", () => {
    const padded = (n: number) => ({ ...ok, extensions: { pad: "x".repeat(n) } });
    // The longest padding that still fits: one more character makes the value 4 characters longer.
    let n = 49_000;
    while (encodeBase64Json(padded(n + 1)).length <= 64 * 1024) n++;
    expect(encodeBase64Json(padded(n))).toHaveLength(64 * 1024);
    expect(decodeSettlement(encodeBase64Json(padded(n)))).toEqual(padded(n));
    expect(encodeBase64Json(padded(n + 1))).toHaveLength(64 * 1024 + 4);
    expect(decodeSettlement(encodeBase64Json(padded(n + 1)))).toBeUndefined();
  });

  it("ignores a settlement nested more than 32 levels deep, reads a shallower one", () => {
    const nested = (levels: number) => {
      let value: unknown = {};
      for (let i = 0; i < levels; i++) value = { next: value };
      return { ...ok, extensions: value as Record<string, unknown> };
    };
    expect(decodeSettlement(encodeBase64Json(nested(10)))).toEqual(nested(10));
    expect(decodeSettlement(encodeBase64Json(nested(40)))).toBeUndefined();
  });
});
