/**
 * What a batch-settlement payment keeps after the seller's paid answer (src/evm/batch/answer.ts `acceptAnswer`): the
 * charge it reports, checked against the price, its count against ours plus that charge, its channel id against
 * ours; a balance lower than ours believed, a higher one not; anything unchecked taken at its worst. The mutation
 * run's survivors there were the edges of each rule.
 */
import { describe, expect, it } from "vitest";
import { acceptAnswer } from "../../src/evm/batch/answer";

const ID = `0x${"ab".repeat(32)}` as const;
const PRICE = 1000n;
/** A channel holding 10,000 with 3,000 charged; this call's voucher allows 4,000 (`next`). */
const open = (deposit?: bigint) =>
  ({
    requirement: { amount: String(PRICE) },
    chainId: 84532,
    config: {},
    id: ID,
    next: 4000n,
    deposit,
  }) as never;
const current = { balance: "10000", charged: "3000", signed: "4000" };
const answer = (extra: Record<string, unknown>) => ({ success: true, transaction: "", network: "eip155:84532", extra });
const state = (channelState: Record<string, unknown>, chargedAmount?: string) =>
  answer({ ...(chargedAmount !== undefined && { chargedAmount }), channelState: { channelId: ID, ...channelState } });

describe("acceptAnswer", () => {
  it("a charge of the price, counted as ours plus it: kept as reported", () => {
    const { state: kept, outcome } = acceptAnswer(
      open(),
      current,
      state({ chargedCumulativeAmount: "4000", balance: "10000" }, "1000"),
    );
    expect(kept).toEqual({ balance: "10000", charged: "4000", signed: "4000" });
    expect(outcome).toEqual({ charge: "1000", channel: { id: ID, balance: "10000", charged: "4000" } });
  });

  it("a charge under the price is what the call cost; the price itself is no dispute", () => {
    expect(acceptAnswer(open(), current, state({ chargedCumulativeAmount: "3400" }, "400")).outcome.charge).toBe("400");
    expect(acceptAnswer(open(), current, state({}, "1000")).state.disputed).toBeUndefined();
  });

  it("one unit over the price is disputed: the channel is kept at the most signed", () => {
    const { state: kept, outcome } = acceptAnswer(open(), current, state({}, "1001"));
    expect(kept.disputed).toBe("the seller charged 1001 for a call priced 1000");
    expect(kept.charged).toBe("4000");
    expect(outcome.charge).toBe("1000");
  });

  it("a count that is not ours plus the charge is disputed, by one unit either way", () => {
    for (const cumulative of ["3999", "4001"]) {
      const { state: kept } = acceptAnswer(open(), current, state({ chargedCumulativeAmount: cumulative }, "1000"));
      expect(kept.disputed).toBe(`the seller counts ${cumulative} charged in all, where ours is 3000 + 1000`);
      expect(kept.charged).toBe("4000");
    }
  });

  it("another channel's id is disputed; ours in another case is not", () => {
    const other = `0x${"cd".repeat(32)}`;
    const { state: kept } = acceptAnswer(open(), current, state({ channelId: other }, "1000"));
    expect(kept.disputed).toBe(`the seller reported another channel (${other})`);
    expect(
      acceptAnswer(open(), current, state({ channelId: ID.toUpperCase().replace("0X", "0x") }, "1000")).state.disputed,
    ).toBeUndefined();
  });

  it("no charge reported: the call cost its price, the channel charged what the voucher allows", () => {
    const { state: kept, outcome } = acceptAnswer(open(), current, answer({}));
    expect(kept).toEqual({ balance: "10000", charged: "4000", signed: "4000" });
    expect(outcome.charge).toBe("1000");
    expect(acceptAnswer(open(), current, undefined).outcome.charge).toBe("1000");
  });

  it("a balance lower than ours is believed, a higher one is not; a deposit counts in ours", () => {
    expect(acceptAnswer(open(), current, state({ balance: "9000" }, "1000")).state.balance).toBe("9000");
    expect(acceptAnswer(open(), current, state({ balance: "10001" }, "1000")).state.balance).toBe("10000");
    expect(acceptAnswer(open(5000n), current, state({}, "1000")).state.balance).toBe("15000");
    expect(acceptAnswer(open(5000n), current, state({ balance: "14999" }, "1000")).state.balance).toBe("14999");
  });

  it("amounts that are not amounts are not read: the charge at its worst", () => {
    for (const chargedAmount of ["-1", "1e3", "0x10", ""]) {
      const { outcome, state: kept } = acceptAnswer(open(), current, state({}, chargedAmount));
      expect([outcome.charge, kept.charged], chargedAmount).toEqual(["1000", "4000"]);
    }
  });
});
