/**
 * Assets that are not USDC, without HTTP: the per-request ceiling's check (`ceilingCheck`, `ceilingOf`), the most the
 * policy lets one payment move (`paymentLimit`, which sizes a channel's deposit) and a budget's valuation, each over 0,
 * 2, 6, 8 and 18 decimals and an asset of unknown decimals. The paid paths are in test/http/decimals.test.ts. Every
 * amount is written out, not computed.
 */
import { describe, expect, it } from "vitest";
import { budget, type X402Plugin } from "../../src";
import { ceilingCheck, ceilingGuard, ceilingOf } from "../../src/client/ceiling";
import { reserve } from "../../src/client/plugins";
import { checkRequirement, paymentLimit, resolvePolicy, type SpendPolicy } from "../../src/client/policy";
import type { KnownAsset, PaymentChallenge, PaymentRequirement } from "../../src/protocol";

const NETWORK = "eip155:84532";
const MYSTERY = "0xc0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0";

interface Row {
  readonly asset: KnownAsset;
  /** What $2.5 buys: [the most within it, one base unit more, that one as shown]. */
  readonly twoFifty: readonly [string, string, string];
  /** 37 and 38 base units, as shown. */
  readonly thirtySeven: readonly [string, string];
  /** The most one micro-dollar buys ($0.000001), and one base unit more, valued. */
  readonly micro: readonly [at: string | undefined, over: string, valued: string];
}

const token = (decimals: number, hex: string): KnownAsset => ({
  network: NETWORK,
  address: `0x${hex.repeat(20)}`,
  decimals,
  symbol: `TOK${decimals}`,
});

const ROWS: readonly Row[] = [
  { asset: token(0, "a0"), twoFifty: ["2", "3", "3"], thirtySeven: ["37", "38"], micro: [undefined, "1", "$1"] },
  {
    asset: token(2, "a2"),
    twoFifty: ["250", "251", "2.51"],
    thirtySeven: ["0.37", "0.38"],
    micro: [undefined, "1", "$0.01"],
  },
  {
    asset: token(6, "a6"),
    twoFifty: ["2500000", "2500001", "2.500001"],
    thirtySeven: ["0.000037", "0.000038"],
    micro: ["1", "2", "$0.000002"],
  },
  {
    asset: token(8, "a8"),
    twoFifty: ["250000000", "250000001", "2.50000001"],
    thirtySeven: ["0.00000037", "0.00000038"],
    micro: ["100", "101", "$0.000002"],
  },
  {
    asset: token(18, "b2"),
    twoFifty: ["2500000000000000000", "2500000000000000001", "2.500000000000000001"],
    thirtySeven: ["0.000000000000000037", "0.000000000000000038"],
    micro: ["1000000000000", "1000000000001", "$0.000002"],
  },
];

const asking = (asset: Pick<KnownAsset, "address">, amount: string) =>
  ({
    x402Version: 2,
    scheme: "exact",
    network: NETWORK,
    caip2: NETWORK,
    amount,
    asset: asset.address,
    payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
    maxTimeoutSeconds: 60,
    extra: {},
    raw: {},
  }) as unknown as PaymentRequirement;

/** The policy's verdict on `requirement` priced as `asset`. */
const verdict = (policy: SpendPolicy, requirement: PaymentRequirement, asset: KnownAsset | undefined) =>
  checkRequirement(resolvePolicy(policy), {
    requirement,
    asset,
    flow: "upfront",
    challenge: { x402Version: 2, accepts: [] } as unknown as PaymentChallenge,
    request: { url: "https://seller.example/premium", method: "GET" },
  });

describe.each(ROWS)("$asset.decimals decimals", ({ asset, twoFifty, thirtySeven, micro }) => {
  const shown = (amount: string) => `${amount} ${asset.symbol}`;

  it("a USD ceiling ($2.5): the most it buys passes, one base unit more is named in the asset's units", () => {
    const check = ceilingCheck("$2.5", "x402.maxAmount");
    expect(check(asking(asset, twoFifty[0]), asset)).toBeUndefined();
    expect(check(asking(asset, twoFifty[1]), asset)).toBe(`${shown(twoFifty[2])} is over x402.maxAmount ($2.5)`);
  });

  it("a ceiling in base units (37) means 37 base units whatever the decimals, shown in the asset's units", () => {
    const check = ceilingCheck({ network: NETWORK, asset: asset.address, amount: "37" }, "x402.maxAmount");
    expect(check(asking(asset, "37"), asset)).toBeUndefined();
    expect(check(asking(asset, "38"), asset)).toBe(
      `${shown(thirtySeven[1])} is over x402.maxAmount (${shown(thirtySeven[0])})`,
    );
  });

  it("ceilingOf (a quote's maxAmount) holds exactly the quoted amount, in the asset's base units", () => {
    const ceiling = ceilingOf(asking(asset, twoFifty[0]));
    expect(ceiling).toEqual({ network: NETWORK, asset: asset.address, amount: twoFifty[0] });
    expect(Object.isFrozen(ceiling)).toBe(true);
    const guard = ceilingGuard(ceiling)!;
    expect(guard.check!(asking(asset, twoFifty[0]), asset)).toBeUndefined();
    expect(guard.check!(asking(asset, twoFifty[1]), asset)).toBe(
      // $2.5 buys 2 whole units of a 0-decimals token.
      `${shown(twoFifty[2])} is over x402.maxAmount (${shown(asset.decimals === 0 ? "2" : "2.5")})`,
    );
  });

  it("paymentLimit (what sizes a channel's deposit) is the most the policy's $2.5 cap lets through, to the base unit", () => {
    const policy = { maxAmountPerPayment: "$2.5" };
    const limit = paymentLimit(resolvePolicy(policy), asking(asset, "1"), asset);
    expect(limit).toBe(BigInt(twoFifty[0]));
    expect(verdict(policy, asking(asset, twoFifty[0]), asset)).toBeUndefined();
    expect(verdict(policy, asking(asset, twoFifty[1]), asset)).toBe(
      `${shown(twoFifty[2])} is over policy.maxAmountPerPayment ($2.5)`,
    );
  });

  it("paymentLimit: an assetCaps entry below the USD cap is the limit; above it, the USD cap is", () => {
    const capped = (maxAmount: string) => ({
      maxAmountPerPayment: "$2.5",
      assetCaps: [{ network: NETWORK, asset: asset.address, maxAmount }],
    });
    expect(paymentLimit(resolvePolicy(capped("1")), asking(asset, "1"), asset)).toBe(1n);
    expect(paymentLimit(resolvePolicy(capped(`${twoFifty[1]}0`)), asking(asset, "1"), asset)).toBe(BigInt(twoFifty[0]));
  });

  it("a budget counts a payment in micro-dollars rounded up: $0.000001 holds the most one buys, not one base unit more", () => {
    const b = budget({ limit: "$0.000001" });
    const check = (amount: string) => b.checkRequirement!(asking(asset, amount), asset, { url: "", method: "GET" });
    if (micro[0] !== undefined) expect(check(micro[0])).toBeUndefined();
    expect(check(micro[1])).toBe(`${micro[2]} is more than budget client/life allows in all ($0.000001)`);
  });
});

describe("one base unit of a many-decimals token is never counted as nothing", () => {
  it.each([8, 18])("%i decimals: a $0.000001 budget takes one payment of 1 base unit, not two", async (decimals) => {
    const asset = token(decimals, "d0");
    const plugins: X402Plugin[] = [budget({ limit: "$0.000001" })];
    const once = () =>
      reserve({ plugins } as never, { asset: asset.address, amount: "1", payTo: "0x1" } as never, {
        asset,
        requirement: { caip2: NETWORK } as never,
        request: { url: "https://a.example/x", method: "GET" },
        attempt: crypto.randomUUID(),
      });
    expect(await once()).toHaveLength(1);
    await expect(once()).rejects.toMatchObject({
      code: "BUDGET_EXCEEDED",
      details: { reserved: "$0.000001", amount: "$0.000001" },
    });
  });
});

describe("paymentLimit without a USD cap", () => {
  const asset = token(18, "b2");
  const entry = { network: NETWORK, asset: asset.address, maxAmount: "37" };

  it("maxAmountPerPayment false: an asset of known decimals is limited by its assetCaps entry alone, or not at all", () => {
    expect(paymentLimit(resolvePolicy({ maxAmountPerPayment: false }), asking(asset, "1"), asset)).toBeUndefined();
    const capped = resolvePolicy({ maxAmountPerPayment: false, assetCaps: [entry] });
    expect(paymentLimit(capped, asking(asset, "1"), asset)).toBe(37n);
  });

  it("an assetCaps entry limits its own asset on its own network, not the same address elsewhere nor another asset", () => {
    const elsewhere = resolvePolicy({
      maxAmountPerPayment: false,
      assetCaps: [
        { ...entry, network: "eip155:8453" },
        { ...entry, asset: MYSTERY },
      ],
    });
    expect(paymentLimit(elsewhere, asking(asset, "1"), asset)).toBeUndefined();
  });
});

describe("an asset of unknown decimals", () => {
  const unknown = { address: MYSTERY };

  it("a USD ceiling refuses it, however little it asks; one in its base units holds it", () => {
    expect(ceilingCheck("$1000", "maxPrice")(asking(unknown, "1"), undefined)).toBe(
      `asset ${MYSTERY} on ${NETWORK} has no known USD value, so it cannot be held to maxPrice ($1000)`,
    );
    const check = ceilingCheck({ network: NETWORK, asset: MYSTERY, amount: "37" }, "maxPrice");
    expect(check(asking(unknown, "37"), undefined)).toBeUndefined();
    expect(check(asking(unknown, "38"), undefined)).toBe(
      `38 base units of ${MYSTERY} is over maxPrice (37 base units)`,
    );
  });

  it("the policy refuses it; paymentLimit is its assetCaps entry, or none at all", () => {
    expect(verdict({ maxAmountPerPayment: false }, asking(unknown, "1"), undefined)).toMatch(
      /is not a known stablecoin/,
    );
    expect(paymentLimit(resolvePolicy({}), asking(unknown, "1"), undefined)).toBeUndefined();
    const capped = { assetCaps: [{ network: NETWORK, asset: MYSTERY, maxAmount: "37" }] };
    expect(paymentLimit(resolvePolicy(capped), asking(unknown, "1"), undefined)).toBe(37n);
    expect(verdict(capped, asking(unknown, "37"), undefined)).toBeUndefined();
    expect(verdict(capped, asking(unknown, "38"), undefined)).toBe(
      `38 base units of ${MYSTERY} is over its policy.assetCaps entry (37)`,
    );
  });

  it("an assetCaps entry for its address on another network, or for another asset, does not make it payable", () => {
    const elsewhere = {
      assetCaps: [
        { network: "eip155:8453", asset: MYSTERY, maxAmount: "37" },
        { network: NETWORK, asset: token(6, "a6").address, maxAmount: "37" },
      ],
    };
    expect(verdict(elsewhere, asking(unknown, "1"), undefined)).toMatch(/is not a known stablecoin/);
  });
});
