// The CLI's exit codes: one per family, each documented, and every error code placed in one.
import { describe, expect, it } from "vitest";
import {
  BudgetExceededError,
  DiscoveryFailedError,
  NoPayableRequirementError,
  PaymentOutcomeUnknownError,
  PaymentRejectedError,
} from "../../src/entries/errors";
import { EXIT, EXIT_TABLE, exitCodeOf } from "../../src/cli/exit";

describe("exit codes", () => {
  it("every code is distinct and documented once in the table --help and the README show", () => {
    const codes = Object.values(EXIT);
    expect(new Set(codes).size).toBe(codes.length);
    expect(EXIT_TABLE.map(([code]) => code).sort((a, b) => a - b)).toEqual([...codes].sort((a, b) => a - b));
  });

  it.each([
    [new NoPayableRequirementError([]), EXIT.refused],
    [new BudgetExceededError("over", { details: {} as never }), EXIT.budget],
    [new PaymentRejectedError("no", { details: {} as never }), EXIT.rejected],
    [new PaymentOutcomeUnknownError("?", { details: {} as never }), EXIT.unknown],
    [new DiscoveryFailedError("down", { details: { url: "https://f.example" } }), EXIT.network],
    [new TypeError("fetch failed"), EXIT.network],
    [new TypeError("Failed to fetch"), EXIT.network],
    [new DiscoveryFailedError("answered 404", { details: { url: "https://f.example", status: 404 } }), EXIT.discovery],
    [new DiscoveryFailedError("malformed", { details: { url: "https://f.example", status: 200 } }), EXIT.discovery],
    [Object.assign(new Error("stop"), { name: "AbortError" }), EXIT.aborted],
    [new RangeError("a bug"), EXIT.internal],
  ])("%s → %i", (error, code) => {
    expect(exitCodeOf(error)).toBe(code);
  });
});

describe("the table and the edges", () => {
  it("every row says something of its own", () => {
    const sentences = EXIT_TABLE.map(([, text]) => text);
    expect(sentences.every((text) => text.length > 10)).toBe(true);
    expect(new Set(sentences).size).toBe(sentences.length);
  });

  it("only fetch's own TypeError is a network failure", () => {
    expect(exitCodeOf(new Error("fetch failed"))).toBe(EXIT.internal);
    expect(exitCodeOf(new TypeError("x is not a function"))).toBe(EXIT.internal);
  });
});
