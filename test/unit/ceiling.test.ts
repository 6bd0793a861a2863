// The per-request ceiling's own rules (`x402: { maxAmount }`): which values it takes and what it says of the rest, and
// how it sits in front of a request's own guard. The paid paths are in test/http/ceiling.test.ts.
import { describe, expect, it } from "vitest";
import { ceilingCheck, ceilingGuard, checkCeiling } from "../../src/client/ceiling";
import type { RequestGuard } from "../../src/contracts";
import type { KnownAsset, PaymentRequirement } from "../../src/protocol";

const USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const ceiling = { network: "eip155:84532", asset: USDC, amount: "2000" };
const usdc = { symbol: "USDC", decimals: 6 } as KnownAsset;
const asking = (amount: string, over: Partial<PaymentRequirement> = {}) =>
  ({ amount, asset: USDC, caip2: "eip155:84532", ...over }) as PaymentRequirement;

describe("checkCeiling: what a ceiling may be", () => {
  it.each([["$0.002"], ["$0"], [ceiling], [{ ...ceiling, asset: USDC.toLowerCase() }]])("takes %j", (value) => {
    expect(checkCeiling(value)).toBeUndefined();
  });

  it.each([0.002, 2000n])("refuses the number %s, asking which it meant", (value) => {
    expect(checkCeiling(value)).toMatch(/is a number: dollars or base units\? Give a USD amount/);
  });

  it.each([
    ["a word", "cheap"],
    ["null", null],
    ["an array", ["$1"]],
    ["an extra field", { ...ceiling, payTo: USDC }],
    ["a field missing", { network: ceiling.network, asset: USDC }],
    ["a network that is not a string", { ...ceiling, network: 84532 }],
    ["a network that is not CAIP-2", { ...ceiling, network: "base-sepolia" }],
    ["an asset that is not a string", { ...ceiling, asset: 7 }],
    ["an empty asset", { ...ceiling, asset: "" }],
    ["an amount that is not base units", { ...ceiling, amount: "0.002" }],
    // A one-entry list reads as its one string (String(["eip155:84532"])): only the type check tells them apart.
    ["a network given as a list", { ...ceiling, network: [ceiling.network] }],
    ["an asset given as a list", { ...ceiling, asset: [USDC] }],
    ["nothing (undefined, as an MCP tool's cap left empty)", undefined],
    ["true", true],
  ])("refuses %s, naming both shapes", (_, value) => {
    expect(checkCeiling(value)).toMatch(/is not a USD amount such as "\$0\.002", or \{ network \(CAIP-2\), asset/);
  });
});

describe("ceilingCheck: the requirement held to it", () => {
  it("base units of one asset: at the ceiling passes, one over is named in the asset's units", () => {
    const check = ceilingCheck(ceiling, "x402.maxAmount");
    expect(check(asking("2000"), usdc)).toBeUndefined();
    expect(check(asking("2001"), usdc)).toBe("0.002001 USDC is over x402.maxAmount (0.002 USDC)");
    expect(check(asking("2001"), undefined)).toBe(
      `2001 base units of ${USDC} is over x402.maxAmount (2000 base units)`,
    );
  });

  it("another asset or network is refused whatever it asks, naming the one the ceiling is in", () => {
    const check = ceilingCheck(ceiling, "x402.maxAmount");
    expect(check(asking("1", { caip2: "eip155:8453" }), usdc)).toBe(
      `asset ${USDC} on eip155:8453 is not the one x402.maxAmount is in (${USDC} on eip155:84532)`,
    );
  });

  it("a USD ceiling holds only assets of known value", () => {
    const check = ceilingCheck("$0.002", "maxPrice");
    expect(check(asking("2000"), usdc)).toBeUndefined();
    expect(check(asking("2001"), usdc)).toBe("0.002001 USDC is over maxPrice ($0.002)");
    expect(check(asking("1"), undefined)).toBe(
      `asset ${USDC} on eip155:84532 has no known USD value, so it cannot be held to maxPrice ($0.002)`,
    );
  });
});

describe("ceilingGuard: the ceiling in front of a request's own guard", () => {
  it("no ceiling: the guard as it is; a guard without a check of its own: the ceiling alone", () => {
    const guard: RequestGuard = {};
    expect(ceilingGuard(undefined, guard)).toBe(guard);
    const only = ceilingGuard(ceiling, guard)!;
    expect(only.check!(asking("2000"), usdc)).toBeUndefined();
    expect(only.check!(asking("2001"), usdc)).toMatch(/over x402\.maxAmount/);
  });

  it("the ceiling speaks first; within it, the guard's own check decides", () => {
    const guard: RequestGuard = {
      check: (requirement) => (requirement.amount === "1000" ? "not that one" : undefined),
    };
    const both = ceilingGuard(ceiling, guard)!;
    expect(both.check!(asking("3000"), usdc)).toMatch(/over x402\.maxAmount/);
    expect(both.check!(asking("1000"), usdc)).toBe("not that one");
    expect(both.check!(asking("1500"), usdc)).toBeUndefined();
  });
});
