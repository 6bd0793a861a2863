import { describe, expect, it } from "vitest";
import { DEFAULT_ASSETS as EVM_REFERENCE_ASSETS } from "@x402/evm";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { DEFAULT_ASSETS as SVM_REFERENCE_ASSETS, V1_TO_V2_NETWORK_MAP } from "@x402/svm";
import { EVM_KNOWN_ASSETS, EVM_V1_NETWORKS, toEvmChainId } from "../../src/evm";
import { SVM_KNOWN_ASSETS, SVM_V1_NETWORKS } from "../../src/svm";
import {
  decodeBase64Json,
  encodeBase64Json,
  formatUnits,
  matchesPattern,
  parseAtomicAmount,
  parseChallenge,
  parseUsd,
  decodeSettlement,
  findKnownAsset,
} from "../../src/entries/protocol";
import { isWithinUsd, patternSpecificity } from "../../src/protocol";

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
    // Gaps of every length modulo 4: padding is added to reach a multiple of 4, so a gap of four is what atob would
    // accept.
    for (const gap of [" ", "\r\n", "\t\t\t", "    ", "\r\n\r\n"]) {
      expect(decodeBase64Json(header.slice(0, 4) + gap + header.slice(4))).toEqual({
        ok: false,
        reason: "is not base64",
      });
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

  // What the spend policy prices and which chain a v1 name pays on are money: each entry is the
  // reference's (@x402/evm and @x402/svm 2.27), field by field. Ours may list fewer.
  it("every known stablecoin is in the reference's table with the same network, address, decimals and symbol", () => {
    const reference = [EVM_REFERENCE_ASSETS, SVM_REFERENCE_ASSETS].flatMap((table) =>
      Object.entries(table as Record<string, readonly { asset: string; decimals: number; symbol: string }[]>).flatMap(
        ([network, assets]) =>
          assets.map(({ asset, decimals, symbol }) => ({ network, address: asset, decimals, symbol })),
      ),
    );
    for (const asset of [...EVM_KNOWN_ASSETS, ...SVM_KNOWN_ASSETS]) expect(reference).toContainEqual({ ...asset });
    expect(EVM_KNOWN_ASSETS).toHaveLength(11);
    expect(SVM_KNOWN_ASSETS).toHaveLength(2);
  });

  it("every v1 network name names the reference's chain", () => {
    for (const [name, caip2] of Object.entries(EVM_V1_NETWORKS))
      expect([name, caip2]).toEqual([name, `eip155:${(EVM_NETWORK_CHAIN_ID_MAP as Record<string, number>)[name]}`]);
    expect(SVM_V1_NETWORKS).toEqual(V1_TO_V2_NETWORK_MAP);
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

describe("pattern specificity", () => {
  it("an exact id beats any wildcard, even one with more literal text", () => {
    expect(patternSpecificity("eip155:1")).toBeGreaterThan(patternSpecificity("eip155:12345678*"));
    expect(patternSpecificity("eip155:8453")).toBeGreaterThan(patternSpecificity("eip155:8453*"));
  });

  it("among wildcards, longer literal text beats shorter, however many stars", () => {
    expect(patternSpecificity("eip155:*")).toBeGreaterThan(patternSpecificity("*:*"));
    expect(patternSpecificity("eip155:*")).toBeGreaterThan(patternSpecificity("*"));
  });
});

describe("money", () => {
  it.each([
    ["$1", 10n ** 18n],
    ["$0.10", 10n ** 17n],
    ["0.000001", 10n ** 12n],
    ["$10", 10n * 10n ** 18n],
    [" $1 ", 10n ** 18n],
    ["$ 2.5", 25n * 10n ** 17n],
    ["$1_000", 1000n * 10n ** 18n],
    ["0.000000000000000001", 1n],
    ["0.0000000000000000001", undefined],
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

  it("finds a known asset by address, 0x addresses in any case, whatever the case of the prefix", () => {
    const usdc = {
      network: "eip155:8453",
      address: "0X833589FCD6EDB6E08F4C7C32D4F71B54BDA02913",
      decimals: 6,
      symbol: "USDC",
    };
    expect(findKnownAsset("eip155:8453", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", [usdc])).toBe(usdc);
    expect(findKnownAsset("eip155:1", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", [usdc])).toBeUndefined();
    const mint = {
      network: "solana:mainnet",
      address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      decimals: 6,
      symbol: "USDC",
    };
    expect(findKnownAsset("solana:mainnet", mint.address.toLowerCase(), [mint])).toBeUndefined();
  });

  it("formats units", () => {
    expect(formatUnits(1_500_000n, 6)).toBe("1.5");
    expect(formatUnits(1000n, 6)).toBe("0.001");
    expect(formatUnits(0n, 6)).toBe("0");
  });
});

/** A v2 requirement as the wire has it (USDC on Base Sepolia). */
const wireRequirement = {
  scheme: "exact",
  network: "eip155:84532",
  amount: "1000",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
  maxTimeoutSeconds: 60,
};

describe("parseChallenge", () => {
  const requirement = {
    ...wireRequirement,
    extra: { name: "USDC", version: "2", futureField: [1, 2] },
    futureTopLevel: true,
  };

  it("keeps each requirement verbatim and unknown fields intact", () => {
    const challenge = parseChallenge({
      header: encodeBase64Json({
        x402Version: 2,
        resource: { url: "https://a.example/x" },
        accepts: [requirement],
        extensions: { z: { info: 1 } },
      }),
    });
    expect(challenge.requirements[0]!.raw).toEqual(requirement);
    expect(challenge.extensions).toEqual({ z: { info: 1 } });
    expect(challenge.source).toBe("header");
  });

  it("accepts a v2 challenge in the body only", () => {
    const challenge = parseChallenge({
      header: null,
      body: JSON.stringify({ x402Version: 2, resource: { url: "https://a.example/x" }, accepts: [requirement] }),
    });
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
    const v1 = {
      scheme: "exact",
      network: "base-sepolia",
      maxAmountRequired: "1000",
      asset: requirement.asset,
      payTo: requirement.payTo,
      maxTimeoutSeconds: 60,
    };
    const challenge = parseChallenge({
      header: null,
      body: {
        x402Version: 1,
        accepts: [
          { ...v1, description: null, mimeType: 5, outputSchema: null },
          { ...v1, resource: 42 },
        ],
      },
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
    expect(() => parseChallenge({ header: "A".repeat(64 * 1024 + 4) })).toThrowError(
      expect.objectContaining({ code: "INVALID_CHALLENGE" }),
    );
  });

  it("explains an HTML paywall", () => {
    expect(() =>
      parseChallenge({ header: null, body: "<!doctype html><p>Pay</p>", contentType: "text/html" }),
    ).toThrowError(expect.objectContaining({ code: "CHALLENGE_NOT_FOUND", message: expect.stringMatching(/HTML/) }));
  });
});

describe("parseChallenge: a server that writes absent text as null", () => {
  const accepts = [wireRequirement];
  it.each([1, 2])('v%i: "error": null is no error, and the challenge is read', (x402Version) => {
    const v1 = {
      ...accepts[0],
      network: "base-sepolia",
      amount: undefined,
      maxAmountRequired: "1000",
      resource: "https://api.example.com/x",
      description: "",
      mimeType: "",
    };
    const body =
      x402Version === 1
        ? { x402Version, error: null, accepts: [v1] }
        : { x402Version, error: null, accepts, resource: { url: "https://api.example.com/x" } };
    const challenge = parseChallenge({ header: encodeBase64Json(body) });
    expect(challenge.error).toBeUndefined();
    expect(challenge.requirements).toHaveLength(1);
  });
});

describe("parseChallenge: where the challenge is, and what it must be", () => {
  const requirement = wireRequirement;
  const v2 = (more: Record<string, unknown> = {}) => ({
    x402Version: 2,
    resource: { url: "https://a.example/x" },
    accepts: [requirement],
    ...more,
  });
  const failure = (input: Parameters<typeof parseChallenge>[0]) => {
    try {
      parseChallenge(input);
    } catch (e) {
      return e as { code: string; message: string };
    }
    throw new Error("expected a failure");
  };
  const html =
    "The 402 response is an HTML paywall for browsers, not an x402 challenge. Do not send `Accept: text/html`, or ask the server for its API response.";
  const none =
    "The 402 response has no PAYMENT-REQUIRED header and no x402 JSON body. In a browser, a server on another origin must list PAYMENT-REQUIRED in Access-Control-Expose-Headers.";

  it.each([
    ["an HTML content type, whatever the body", { contentType: "TEXT/HTML; charset=utf-8", body: "" }, html],
    ["an HTML page without a content type", { body: "<!doctype html><p>Pay</p>" }, html],
    ["an HTML page after blank lines", { body: "\n  <html><p>Pay</p></html>" }, html],
    [
      "JSON that is not a challenge, with markup inside",
      { contentType: "application/json", body: '{"error":"<b>pay first</b>"}' },
      none,
    ],
    ["text with a < in it", { contentType: "text/plain", body: "price < 1 USD" }, none],
    ["a parsed JSON array holding markup", { body: ["<p>pay</p>"] }, none],
    ["a bare JSON number", { body: "402" }, none],
    ["nothing at all", {}, none],
  ])("%s → CHALLENGE_NOT_FOUND, told apart as HTML or not", (_, input, message) => {
    const error = failure({ header: null, ...input });
    expect(error.code).toBe("CHALLENGE_NOT_FOUND");
    expect(error.message).toBe(message);
  });

  it("reads a body of up to 1 MiB, and no more", () => {
    const json = JSON.stringify(v2());
    const padded = (length: number) => json + " ".repeat(length - json.length);
    expect(parseChallenge({ header: null, body: padded(1024 * 1024) }).source).toBe("body");
    expect(failure({ header: null, body: padded(1024 * 1024 + 1) }).code).toBe("CHALLENGE_NOT_FOUND");
  });

  it("reads a header of exactly 64 KiB", () => {
    const padded = (n: number) => v2({ extensions: { pad: { info: "x".repeat(n) } } });
    let n = 48_000;
    while (encodeBase64Json(padded(n + 1)).length <= 64 * 1024) n++;
    const header = encodeBase64Json(padded(n));
    expect(header).toHaveLength(64 * 1024);
    expect(parseChallenge({ header }).extensions).toEqual({ pad: { info: "x".repeat(n) } });
    expect(failure({ header: encodeBase64Json(padded(n + 1)) }).message).toBe(
      "The PAYMENT-REQUIRED header is 65540 bytes, over the 65536-byte limit.",
    );
  });

  it("says which part is not a JSON object: the header, or the body", () => {
    expect(failure({ header: encodeBase64Json([v2()]) }).message).toBe(
      "The PAYMENT-REQUIRED header is not a JSON object.",
    );
    expect(failure({ header: null, body: Object.assign([], { x402Version: 2, accepts: [] }) }).message).toBe(
      "The 402 body is not a JSON object.",
    );
  });

  it("reads a challenge nested 32 levels deep, refuses 33", () => {
    const nested = (levels: number) => {
      let value: unknown = {};
      for (let i = 2; i < levels; i++) value = { next: value };
      return v2({ extensions: value as Record<string, unknown> });
    };
    expect(parseChallenge({ header: encodeBase64Json(nested(32)) }).requirements).toHaveLength(1);
    expect(failure({ header: encodeBase64Json(nested(33)) })).toMatchObject({
      code: "INVALID_CHALLENGE",
      message: "The challenge is nested more than 32 levels deep.",
    });
  });

  it("v1: a top-level resource string (sent by some v1 servers) is kept in raw, not read as v2's resource", () => {
    const v1 = {
      scheme: "exact",
      network: "base-sepolia",
      maxAmountRequired: "1000",
      asset: requirement.asset,
      payTo: requirement.payTo,
      maxTimeoutSeconds: 60,
    };
    const challenge = parseChallenge({
      header: null,
      body: { x402Version: 1, resource: "https://a.example/x", accepts: [v1] },
    });
    expect(challenge.requirements).toHaveLength(1);
    expect(challenge.resource).toBeUndefined();
    expect(challenge.raw.resource).toBe("https://a.example/x");
  });

  it("an element of accepts that is not an object is listed as invalid, not thrown on", () => {
    const challenge = parseChallenge({
      header: encodeBase64Json(v2({ accepts: [null, "exact", [requirement], requirement] })),
    });
    expect(challenge.requirements.map((r) => r.index)).toEqual([3]);
    expect(challenge.invalid.map((i) => [i.index, i.reason])).toEqual([
      [0, "must be a JSON object"],
      [1, "must be a JSON object"],
      [2, "must be a JSON object"],
    ]);
  });

  it("extra and extensions may be null (read as absent); any other non-object is refused", () => {
    const challenge = parseChallenge({
      header: encodeBase64Json(
        v2({
          extensions: null,
          accepts: [
            { ...requirement, extra: null },
            { ...requirement, extra: "USDC" },
            { ...requirement, extra: [] },
          ],
        }),
      ),
    });
    expect(challenge.extensions).toBeUndefined();
    expect(challenge.requirements.map((r) => [r.index, r.extra])).toEqual([[0, {}]]);
    expect(challenge.invalid.map((i) => i.reason)).toEqual(["extra must be an object", "extra must be an object"]);
    expect(failure({ header: encodeBase64Json(v2({ extensions: "none" })) }).message).toBe(
      "The x402 v2 challenge is malformed: extensions must be an object.",
    );
  });

  it("v2: a resource, if present, is an object with a url; null is refused", () => {
    expect(failure({ header: encodeBase64Json(v2({ resource: null })) }).message).toBe(
      "The x402 v2 challenge is malformed: resource must be an object.",
    );
    expect(failure({ header: encodeBase64Json(v2({ resource: { url: "" } })) }).message).toBe(
      "The x402 v2 challenge is malformed: resource.url must not be empty.",
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

  it('reads a settlement that sends absent fields as null (a Java server\'s "payer": null), as if they were absent', () => {
    const sent = {
      success: false,
      errorReason: "insufficient_funds",
      errorMessage: null,
      transaction: null,
      network: "base-sepolia",
      payer: null,
      amount: null,
    };
    expect(decodeSettlement(encodeBase64Json(sent))).toStrictEqual({
      success: false,
      errorReason: "insufficient_funds",
      network: "base-sepolia",
    });
    expect(decodeSettlement(encodeBase64Json({ ...sent, payer: 42 }))).toBeUndefined();
  });

  it("reads a settlement whose extensions are null", () => {
    const settled = { success: true, transaction: "0xabc", network: "eip155:84532", extensions: null };
    expect(decodeSettlement(encodeBase64Json(settled))).toEqual(settled);
    expect(decodeSettlement(encodeBase64Json({ ...settled, extensions: "none" }))).toBeUndefined();
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

describe("randomBytes (a pool drawn 4 KiB at a time)", () => {
  it("never hands out the same bytes twice, across pool refills, and any length", async () => {
    const { randomBytes } = await import("../../src/protocol");
    const seen = new Set<string>();
    // 1,000 nonces of 32 bytes: eight refills of the pool.
    for (let i = 0; i < 1000; i++) {
      const bytes = randomBytes(32);
      expect(bytes).toHaveLength(32);
      seen.add(Buffer.from(bytes).toString("hex"));
    }
    expect(seen.size).toBe(1000);
    expect(randomBytes(5000)).toHaveLength(5000);
    expect(randomBytes(0)).toHaveLength(0);
    // The bytes are random: 32,000 bytes hold every byte value, none far more often than the rest.
    const counts = new Array(256).fill(0);
    for (const hex of seen) for (const byte of Buffer.from(hex, "hex")) counts[byte]++;
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(Math.max(...counts)).toBeLessThan(210);
  });

  it("a caller changing its bytes changes nobody else's", async () => {
    const { randomBytes } = await import("../../src/protocol");
    const a = randomBytes(16);
    a.fill(0);
    const b = randomBytes(16);
    expect([...b].some((x) => x !== 0)).toBe(true);
  });
});
