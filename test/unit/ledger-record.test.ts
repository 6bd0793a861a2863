/** How an outcome becomes a ledger record: its kind from the error code, the network as CAIP-2 where known. */
import { describe, expect, it } from "vitest";
import {
  PaymentIdConflictError,
  Permit2AllowanceError,
  PaymentRejectedError,
  PaymentOutcomeUnknownError,
  NoPayableRequirementError,
} from "../../src/entries/errors";
import type { AnyX402Error } from "../../src";
import { ledgerRecord } from "../../src/extensions/ledger/record";

const request = { url: "https://a.example/x", method: "GET" };
const terms = {
  x402Version: 1,
  url: request.url,
  method: "GET",
  requirement: {},
  scheme: "exact",
  network: "base-sepolia",
  amount: "10",
  upTo: false,
  displayAmount: undefined,
  asset: "0xabc",
  payTo: "0xdef",
  payer: "0x123",
  flow: "authorization",
} as const;
const payment = { terms, requirement: { caip2: "eip155:84532" } as never };
const failed = (error: AnyX402Error) => ledgerRecord({ settled: false, error, challenge: undefined, request, payment });

describe("ledger records", () => {
  it.each([
    [new PaymentRejectedError("no", { details: {} as never }), "rejected"],
    [new Permit2AllowanceError("no", { details: {} as never }), "rejected"],
    [new PaymentIdConflictError("no", { details: {} as never }), "rejected"],
    [new PaymentOutcomeUnknownError("maybe", { details: {} as never }), "unknown"],
    [new NoPayableRequirementError([]), "refused"],
  ])("%s: %s", (error, outcome) => {
    expect(failed(error)).toMatchObject({ outcome, code: error.code });
  });

  it("a v1 payment is recorded on its CAIP-2 network; without one, on the network as offered", () => {
    expect(failed(new PaymentRejectedError("no", { details: {} as never })).network).toBe("eip155:84532");
    expect(
      ledgerRecord({
        settled: false,
        error: new PaymentRejectedError("no", { details: {} as never }),
        challenge: undefined,
        request,
        payment: { terms, requirement: {} as never },
      }).network,
    ).toBe("base-sepolia");
  });

  it("a settled record: the payer the settlement names, and as settled amount what was reported, else the price (never upto's maximum)", () => {
    const receipt = (over: object) => ({
      ...terms,
      status: 200,
      settled: true,
      settlement: undefined,
      transaction: "0x1",
      settledAmount: undefined,
      extensions: {},
      ...over,
    });
    const settled = (over: object) =>
      ledgerRecord({ settled: true, receipt: receipt(over) as never, challenge: {} as never, request, payment });
    expect(settled({ payer: "0x456" })).toMatchObject({
      outcome: "settled",
      payer: "0x456",
      amount: "10",
      settledAmount: "10",
    });
    expect(settled({ settledAmount: "7" }).settledAmount).toBe("7");
    expect(settled({ upTo: true, scheme: "upto" })).toMatchObject({ amount: "10", settledAmount: undefined });
    expect(settled({ upTo: true, scheme: "upto", settledAmount: "3" }).settledAmount).toBe("3");
    // Paid, and not said to have settled: no settled amount.
    expect(settled({ settled: false })).toMatchObject({ outcome: "unknown", settledAmount: undefined });
  });
});
