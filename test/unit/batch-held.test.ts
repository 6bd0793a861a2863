/**
 * A batch-settlement channel's vouchers held unanswered, where what was signed and what was charged differ: who may
 * send each (src/evm/batch/owners.ts), what a looked-up payment's voucher came to (`checkSettlement`,
 * src/evm/batch/check.ts) and a kept voucher sent again (`resend`, src/evm/batch/resend.ts). The chain is scripted
 * (`channels(bytes32)` and `ecrecover` over EIP-1193) so that each edge is reached: a claim exactly equal to the held
 * voucher, one base unit less, a voucher exactly at the channel's balance. test/interop/journal-batch.test.ts runs the
 * same flows against the reference seller on anvil.
 */
import { decodeAbiParameters, encodeAbiParameters, recoverAddress, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import type { ChannelState, ChannelStore, SettlementQuery } from "../../src/contracts";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { batchSettlementEvm, memoryChannelStore } from "../../src/evm";
import {
  baseOf,
  emptied,
  heldByOthers,
  isEmptied,
  settleFromChain,
  settleOwners,
  withOwner,
} from "../../src/evm/batch/owners";
import { keptOrFromChain, type Channel, type Tools } from "../../src/evm/batch/open";
import { channelConfig, channelIdOf } from "../../src/evm/batch/wire";
import { PRICE, batchRequirement } from "../support/batch-seller";
import { SELLER, account } from "../support/seller";
import { rejection } from "../support/throws";

const NETWORK = "eip155:84532";
const URL = `${SELLER}/metered`;
const P = PRICE;
const s = (n: bigint) => String(n);

/** The seller's batch-settlement requirement, as the handshake parses it. */
const requirement = parseChallenge({
  header: encodeBase64Json({ x402Version: 2, resource: { url: URL }, accepts: [batchRequirement()] }),
}).requirements[0]!;
const ZERO_SALT = `0x${"0".repeat(64)}` as Hex;
/** The channel the scheme opens for `account` with the seller. */
const ID = channelIdOf(channelConfig(requirement, account.address, account.address, ZERO_SALT), 84532);

/** A scripted chain for NETWORK: `channels(id)` answers `onChain[id]`; `ecrecover` recovers; the calls asked. */
function scriptedChain(onChain: Record<string, { balance: bigint; claimed: bigint }> = {}) {
  const asked: Hex[] = [];
  const rpc = {
    async request({ method, params }: { method: string; params?: readonly unknown[] }) {
      if (method === "eth_chainId") return "0x14a34";
      if (method !== "eth_call") throw new Error(`not scripted: ${method}`);
      const { to, data } = (params as [{ to: Hex; data: Hex }])[0];
      asked.push(data);
      if (BigInt(to) === 1n) {
        const [hash, v, r, sig] = decodeAbiParameters(
          [{ type: "bytes32" }, { type: "uint8" }, { type: "bytes32" }, { type: "bytes32" }],
          data,
        );
        const signer = await recoverAddress({ hash, signature: { r, s: sig, v: BigInt(v) } });
        return encodeAbiParameters([{ type: "address" }], [signer]);
      }
      const [id] = decodeAbiParameters([{ type: "bytes32" }], `0x${data.slice(10)}`);
      const channel = onChain[id.toLowerCase()];
      return encodeAbiParameters(
        [{ type: "uint128" }, { type: "uint128" }],
        [channel?.balance ?? 0n, channel?.claimed ?? 0n],
      );
    },
  };
  return { rpc, asked };
}

/** A memory store that counts the holds not let go, with `state` kept for the channel. */
async function storeWith(state: ChannelState | undefined) {
  const inner = memoryChannelStore();
  if (state) {
    const hold = await inner.hold(ID);
    await hold.save(state);
    await hold.release();
  }
  let open = 0;
  const store: ChannelStore = {
    peek: (id) => inner.peek(id),
    async hold(id, signal) {
      const held = await inner.hold(id, signal);
      open++;
      let mine = true;
      return {
        state: held.state,
        save: (next) => held.save(next),
        async release() {
          if (mine) open--;
          mine = false;
          await held.release();
        },
      };
    },
  };
  return { store, open: () => open, state: () => inner.peek(ID) };
}

describe("owners: who may send a held voucher, and what became of it", () => {
  const state = (over: Partial<ChannelState> = {}): ChannelState => ({
    balance: s(10n * P),
    charged: s(3n * P),
    signed: s(4n * P),
    ...over,
  });

  it("held by others: vouchers above what was charged that another attempt signed; at the charge itself, none", () => {
    const owners = { [s(3n * P)]: "a3", [s(4n * P)]: "a4", [s(5n * P)]: "a5" };
    expect(heldByOthers(state({ owners }), "a5")).toEqual([[s(4n * P), "a4"]]);
    expect(heldByOthers(state({ owners }), undefined)).toEqual([
      [s(4n * P), "a4"],
      [s(5n * P), "a5"],
    ]);
    expect(heldByOthers(undefined, "a1")).toEqual([]);
    expect(heldByOthers(state(), "a1")).toEqual([]);
  });

  it("the next voucher builds on what was charged, above the most signed only while another attempt holds one", () => {
    expect(baseOf(undefined, "a1")).toBe(0n);
    expect(baseOf(state(), "a1")).toBe(3n * P);
    // Another's voucher unanswered: above it, never on its amount.
    expect(baseOf(state({ owners: { [s(4n * P)]: "a4" } }), "a5")).toBe(4n * P);
    // Our own (the same attempt correcting itself), or one the seller's count already covers: on the charge.
    expect(baseOf(state({ owners: { [s(4n * P)]: "a4" } }), "a4")).toBe(3n * P);
    expect(baseOf(state({ signed: s(3n * P), owners: { [s(3n * P)]: "a3" } }), "a5")).toBe(3n * P);
  });

  it("a voucher's owner is kept by its attempt; without one, the state is as it was", () => {
    const before = state({ owners: { [s(4n * P)]: "a4" } });
    expect(withOwner(before, 5n * P, "a5").owners).toEqual({ [s(4n * P)]: "a4", [s(5n * P)]: "a5" });
    expect(withOwner(before, 5n * P, undefined)).toBe(before);
  });

  it("the seller's count ends each held voucher: at or below it charged, one unit above it dropped", () => {
    const count = 4n * P;
    const settled = settleOwners(
      state({
        charged: s(count),
        owners: { [s(count)]: "at", [s(count + 1n)]: "above", [s(count - 1n)]: "below" },
        ended: { old: "dropped" },
      }),
    );
    expect(settled).toEqual({
      balance: s(10n * P),
      charged: s(count),
      signed: s(4n * P),
      ended: { old: "dropped", above: "dropped", at: "charged", below: "charged" },
    });
    expect("owners" in settled).toBe(false);
    // Nothing held, nothing ended: no `ended` at all.
    expect(settleOwners(state())).toEqual(state());
    expect("ended" in settleOwners(state())).toBe(false);
  });

  it("the latest 64 charged and the latest 256 dropped attempts are remembered, each kind apart", () => {
    const ended: Record<string, "charged" | "dropped"> = {};
    for (let i = 0; i < 300; i++) ended[`d${i}`] = "dropped";
    for (let i = 0; i < 70; i++) ended[`c${i}`] = "charged";
    const kept = settleOwners(state({ ended, owners: { [s(3n * P)]: "newest" } })).ended!;
    const charged = Object.keys(kept).filter((k) => kept[k] === "charged");
    const dropped = Object.keys(kept).filter((k) => kept[k] === "dropped");
    expect(charged).toHaveLength(64);
    expect(charged).toContain("newest");
    expect(charged).not.toContain("c6");
    expect(charged).toContain("c7");
    expect(dropped).toHaveLength(256);
    expect(dropped).not.toContain("d43");
    expect(dropped).toContain("d44");
    expect(dropped).toContain("d299");
    // Charged ones ended before the drops are kept all the same: the latest of each kind, not of all.
    const early: Record<string, "charged" | "dropped"> = { c0: "charged", c1: "charged" };
    for (let i = 0; i < 300; i++) early[`d${i}`] = "dropped";
    expect(Object.entries(settleOwners(state({ ended: early })).ended!).filter(([, end]) => end === "charged")).toEqual(
      [
        ["c0", "charged"],
        ["c1", "charged"],
      ],
    );
  });

  it("the chain ends held vouchers: claimed exactly, charged; one unit above the claim, still held; past the balance, dropped", () => {
    const owners = {
      [s(4n * P)]: "claimed",
      [s(4n * P + 1n)]: "above-claim",
      [s(10n * P)]: "at-balance",
      [s(10n * P + 1n)]: "past-balance",
    };
    const next = settleFromChain(state({ signed: s(10n * P + 1n), owners, ended: { old: "charged" } }), {
      balance: 10n * P,
      totalClaimed: 4n * P,
    });
    expect(next).toEqual({
      balance: s(10n * P),
      charged: s(4n * P),
      signed: s(10n * P + 1n),
      owners: { [s(4n * P + 1n)]: "above-claim", [s(10n * P)]: "at-balance" },
      ended: { "past-balance": "dropped", old: "charged", claimed: "charged" },
    });
  });

  it("from the chain: what the channel holds is the chain's; the charge never goes below ours; no owners left, none kept", () => {
    const ours = state({ charged: s(3n * P), owners: { [s(4n * P)]: "a4" } });
    const claimedLess = settleFromChain(ours, { balance: 7n * P, totalClaimed: 2n * P });
    expect(claimedLess).toMatchObject({ balance: s(7n * P), charged: s(3n * P), owners: { [s(4n * P)]: "a4" } });
    const claimedAll = settleFromChain(ours, { balance: 7n * P, totalClaimed: 5n * P });
    expect(claimedAll).toEqual({ balance: s(7n * P), charged: s(5n * P), signed: s(4n * P), ended: { a4: "charged" } });
    expect("owners" in claimedAll).toBe(false);
    expect(settleFromChain(state(), { balance: 10n * P, totalClaimed: 3n * P })).toEqual(state());
  });

  it("let go (withdrawn, refunded whole): only what became of its vouchers is kept, and only a state that keeps nothing else is taken for one", () => {
    const ended = { gone: "dropped", paid: "charged" } as const;
    const full = state({ charged: s(3n * P), owners: { [s(4n * P)]: "a4" }, ended, disputed: "bad count" });
    expect(emptied(full)).toEqual({ balance: "0", charged: "0", signed: "0", ended });
    expect(emptied(state())).toBeUndefined();
    expect(emptied(undefined)).toBeUndefined();
    expect(isEmptied(emptied(full)!)).toBe(true);
    // A channel stopped before anything was charged is not let go: its dispute stands.
    expect(isEmptied({ balance: "0", charged: "0", signed: "0", disputed: "bad count" })).toBe(false);
    expect(isEmptied({ balance: "0", charged: "0", signed: "0", owners: { [s(P)]: "a1" } })).toBe(false);
    expect(isEmptied({ balance: "0", charged: "0", signed: s(P) })).toBe(false);
    expect(isEmptied({ balance: s(P), charged: "0", signed: "0" })).toBe(false);
  });

  it("a state not kept, or let go, is read from the chain (what was claimed taken as charged), keeping what ended", async () => {
    const reading = (onChain: { balance: bigint; totalClaimed: bigint } | undefined) =>
      ({ readChannel: onChain && { channel: async () => onChain } }) as unknown as Tools;
    const channel = { requirement: { caip2: NETWORK }, id: ID } as unknown as Channel;
    const chain = { balance: 10n * P, totalClaimed: 3n * P };
    const fromChain = { balance: s(10n * P), charged: s(3n * P), signed: s(3n * P) };
    expect(await keptOrFromChain(reading(chain), channel, undefined)).toEqual(fromChain);
    expect(await keptOrFromChain(reading({ balance: 0n, totalClaimed: 3n * P }), channel, undefined)).toBeUndefined();
    expect(await keptOrFromChain(reading(undefined), channel, undefined)).toBeUndefined();
    const ended = { gone: "dropped" } as const;
    const letGo = emptied(state({ ended }))!;
    expect(await keptOrFromChain(reading(chain), channel, letGo)).toEqual({ ...fromChain, ended });
    // Nothing on chain, or no chain to ask: the state let go stands, its record with it.
    expect(await keptOrFromChain(reading({ balance: 0n, totalClaimed: 3n * P }), channel, letGo)).toEqual(letGo);
    expect(await keptOrFromChain(reading(undefined), channel, letGo)).toEqual(letGo);
    // A state in use is the store's, whatever the chain says.
    const inUse = state({ charged: s(2n * P) });
    expect(await keptOrFromChain(reading(chain), channel, inUse)).toBe(inUse);
  });
});

describe("checkSettlement: what a channel payment's voucher came to", () => {
  /** The scheme over `state` and a chain where the channel holds `onChain` (none: no rpc at all). */
  async function checker(state: ChannelState | undefined, onChain?: { balance: bigint; claimed: bigint }) {
    const chain = scriptedChain(onChain ? { [ID]: onChain } : {});
    const { store } = await storeWith(state);
    const scheme = batchSettlementEvm({ signer: account, storage: store, ...(onChain && { rpc: chain.rpc }) });
    const check = (amount: unknown, attempt: string | undefined, over: Partial<SettlementQuery> = {}) =>
      scheme.checkSettlement!({
        scheme: "batch-settlement",
        network: NETWORK,
        transaction: undefined,
        asset: requirement.asset,
        payTo: requirement.payTo,
        payer: account.address,
        amount: s(P),
        payload: {
          x402Version: 2,
          payload: { type: "voucher", voucher: { channelId: ID, maxClaimableAmount: amount } },
        },
        attempt,
        ...over,
      });
    return { check, asked: chain.asked };
  }
  /** Three calls charged, a fourth voucher (4 x the price) signed by `a4` and never answered. */
  const held: ChannelState = {
    balance: s(10n * P),
    charged: s(3n * P),
    signed: s(4n * P),
    owners: { [s(4n * P)]: "a4" },
  };

  it("a held voucher claimed on chain exactly: settled (charged), for the call's amount; one base unit less: pending", async () => {
    const exactly = await checker(held, { balance: 10n * P, claimed: 4n * P });
    expect(await exactly.check(s(4n * P), "a4")).toEqual({
      state: "settled",
      transaction: undefined,
      amount: s(P),
      reason: `the seller claimed ${4n * P} of channel ${ID} on chain, its voucher included`,
    });
    // The chain was asked of this channel.
    expect(exactly.asked.at(-1)!.endsWith(ID.slice(2))).toBe(true);
    const short = await checker(held, { balance: 10n * P, claimed: 4n * P - 1n });
    expect(await short.check(s(4n * P), "a4")).toEqual({
      state: "pending",
      transaction: undefined,
      reason: `its voucher for ${4n * P} is held unanswered: the seller's next answer on channel ${ID} tells its end`,
    });
  });

  it("a held voucher with no chain to ask: pending, never settled on our own signature", async () => {
    const { check } = await checker(held);
    expect(await check(s(4n * P), "a4")).toMatchObject({
      state: "pending",
      reason: expect.stringContaining("unanswered"),
    });
  });

  it("a voucher the seller's count ended: charged is settled, dropped is failed, whatever the chain shows", async () => {
    const ended: ChannelState = { ...held, owners: undefined, ended: { a4: "charged", a5: "dropped" } };
    const { check, asked } = await checker(ended, { balance: 10n * P, claimed: 0n });
    expect(await check(s(4n * P), "a4")).toEqual({
      state: "settled",
      transaction: undefined,
      amount: s(P),
      reason: `the seller charged its voucher for ${4n * P} (channel ${ID})`,
    });
    expect(await check(s(5n * P), "a5")).toEqual({
      state: "failed",
      transaction: undefined,
      reason: `the seller never had its voucher for ${5n * P}; that amount was signed again for another call`,
    });
    expect(asked).toEqual([]);
  });

  it("a voucher no owner holds, at or below the seller's count: settled; one base unit above it: pending", async () => {
    const counted: ChannelState = { balance: s(10n * P), charged: s(3n * P), signed: s(3n * P) };
    const { check } = await checker(counted, { balance: 10n * P, claimed: 5n * P });
    for (const amount of [3n * P, 2n * P])
      expect(await check(s(amount), "a")).toEqual({
        state: "settled",
        transaction: undefined,
        amount: s(P),
        reason: `the seller counts ${3n * P} charged on channel ${ID}, its voucher included`,
      });
    // Above the count and no record of it: the chain is not taken for it, whatever it claimed.
    expect(await check(s(3n * P + 1n), "a")).toEqual({
      state: "pending",
      transaction: undefined,
      reason: `channel ${ID} keeps no record of this attempt's voucher (another store, or one lost)`,
    });
  });

  it("a voucher another attempt signed: pending, even at or below the count and claimed on chain", async () => {
    const { check, asked } = await checker(
      { ...held, charged: s(4n * P), owners: { [s(4n * P)]: "a4" } },
      { balance: 10n * P, claimed: 4n * P },
    );
    expect(await check(s(4n * P), "other")).toMatchObject({
      state: "pending",
      reason: expect.stringContaining("no record"),
    });
    expect(asked).toEqual([]);
  });

  it("a channel the store does not know: pending, not settled", async () => {
    const { check } = await checker(undefined, { balance: 10n * P, claimed: 10n * P });
    expect(await check(s(P), "a1")).toMatchObject({ state: "pending", reason: expect.stringContaining("no record") });
  });

  it("the channel's id as the seller wrote it (upper case) finds its state", async () => {
    const { check } = await checker(held, { balance: 10n * P, claimed: 4n * P });
    const upper = `0x${ID.slice(2).toUpperCase()}`;
    const payload = { payload: { voucher: { channelId: upper, maxClaimableAmount: s(4n * P) } } };
    expect(await check(undefined, "a4", { payload })).toMatchObject({ state: "settled" });
  });

  it("no voucher to read, or no attempt named: pending, saying which", async () => {
    const { check } = await checker(held, { balance: 10n * P, claimed: 10n * P });
    for (const amount of [undefined, "", "-1", "1.5", 4000])
      expect(await check(amount, "a4"), String(amount)).toEqual({
        state: "pending",
        transaction: undefined,
        reason: "no voucher to look up: the payment's header is not kept",
      });
    expect(await check(s(4n * P), "a4", { payload: undefined })).toMatchObject({
      reason: "no voucher to look up: the payment's header is not kept",
    });
    const noId = { payload: { voucher: { channelId: 7, maxClaimableAmount: s(4n * P) } } };
    expect(await check(s(4n * P), "a4", { payload: noId })).toMatchObject({
      reason: expect.stringContaining("no voucher"),
    });
    expect(await check(s(4n * P), undefined)).toEqual({
      state: "pending",
      transaction: undefined,
      reason: "no attempt named: a channel keeps its vouchers by attempt",
    });
  });
});

describe("resend: a kept voucher sent again holds its channel, and the seller's answer ends it", () => {
  const request = { url: URL, method: "GET" } as never;
  /** The kept payment's payload: a voucher for `amount` on `channelId` (a deposit of `deposit` with it). */
  const kept = (
    amount: unknown,
    { channelId = ID as string, deposit }: { channelId?: string; deposit?: string } = {},
  ) => ({
    x402Version: 2,
    payload: {
      type: deposit ? "deposit" : "voucher",
      voucher: { channelId, maxClaimableAmount: amount, signature: "0x" },
      ...(deposit && { deposit: { amount: deposit } }),
    },
  });
  /** Three calls charged; `a4` signed 4 x the price, its answer lost. */
  const held: ChannelState = {
    balance: s(10n * P),
    charged: s(3n * P),
    signed: s(4n * P),
    owners: { [s(4n * P)]: "a4" },
  };
  /** The scheme over a store holding `state`, with a scripted chain where the channel holds `onChain`. */
  async function resendWith(state: ChannelState | undefined, onChain = { balance: 10n * P, claimed: 0n }) {
    const held = await storeWith(state);
    const scheme = batchSettlementEvm({
      signer: account,
      storage: held.store,
      rpc: scriptedChain({ [ID]: onChain }).rpc,
    });
    const resend = (payload: Record<string, unknown>, attempt: string | undefined) =>
      scheme.resend!(payload, { request, requirement, attempt });
    return { ...held, resend };
  }
  /** The seller's paid answer: its charge and its count. */
  const paid = (cumulative: bigint, balance = 10n * P) => ({
    success: true,
    transaction: "",
    network: NETWORK,
    extra: {
      chargedAmount: s(P),
      channelState: { channelId: ID, balance: s(balance), chargedCumulativeAmount: s(cumulative) },
    },
  });
  /** The seller's corrective 402 naming no voucher of its own: the chain's claim is its count. */
  const corrective = parseChallenge({
    header: encodeBase64Json({
      x402Version: 2,
      error: "invalid_batch_settlement_evm_cumulative_amount_mismatch",
      accepts: [batchRequirement()],
    }),
  });

  it("taken by the seller: charged, its owner ended, the channel's count the voucher's; the hold let go", async () => {
    const { resend, state, open } = await resendWith(held);
    const payment = (await resend(kept(s(4n * P)), "a4"))!;
    expect(open()).toBe(1);
    const outcome = await payment.accepted(paid(4n * P));
    expect(outcome).toEqual({ charge: s(P), channel: { id: ID, balance: s(10n * P), charged: s(4n * P) } });
    await payment.close();
    expect(open()).toBe(0);
    expect(await state()).toEqual({
      balance: s(10n * P),
      charged: s(4n * P),
      signed: s(4n * P),
      ended: { a4: "charged" },
    });
  });

  it("a kept deposit taken: the channel holds it", async () => {
    const { resend, state } = await resendWith({ balance: "0", charged: "0", signed: s(P), owners: { [s(P)]: "a1" } });
    const payment = (await resend(kept(s(P), { deposit: s(10n * P) }), "a1"))!;
    await payment.accepted(paid(P));
    await payment.close();
    expect(await state()).toMatchObject({ balance: s(10n * P), charged: s(P), ended: { a1: "charged" } });
  });

  it("refused with a count at its amount (its answer was lost the first time): charged; below it: dropped", async () => {
    for (const [claimed, end] of [
      [4n * P, "charged"],
      [4n * P - 1n, "dropped"],
    ] as const) {
      const { resend, state } = await resendWith(held, { balance: 10n * P, claimed });
      const payment = (await resend(kept(s(4n * P)), "a4"))!;
      expect(await payment.refused(corrective, "invalid_batch_settlement_evm_cumulative_amount_mismatch")).toBe(true);
      await payment.close();
      expect((await state())?.ended, String(claimed)).toEqual({ a4: end });
      expect(await state()).toMatchObject({ charged: s(claimed), signed: s(4n * P) });
    }
  });

  it("a dropped voucher is not sent: PAYMENT_REFUSED naming its amount and channel, the hold let go", async () => {
    const { resend, open } = await resendWith({ ...held, owners: undefined, ended: { a4: "dropped" } });
    const error = await rejection(resend(kept(s(4n * P)), "a4"));
    expect(error.code).toBe("PAYMENT_REFUSED");
    expect(error.message).toContain(`(${4n * P} on channel ${ID}) was not sent again`);
    expect(error.message).toContain(
      "its amount went to another call. Nothing was charged for it; ask again to pay afresh.",
    );
    expect(error.details).toMatchObject({ url: URL });
    expect(open()).toBe(0);
  });

  it("sent as it is (no hold) when the channel keeps no state, no attempt is named, or the voucher is not this channel's", async () => {
    const none = await resendWith(undefined);
    expect(await none.resend(kept(s(4n * P)), "a4")).toBeUndefined();
    expect(none.open()).toBe(0);
    const some = await resendWith(held);
    expect(await some.resend(kept(s(4n * P)), undefined)).toBeUndefined();
    expect(some.open()).toBe(0);
    for (const payload of [kept(s(4n * P), { channelId: `0x${"cd".repeat(32)}` }), kept("4e3"), kept(undefined)])
      expect(await some.resend(payload, "a4")).toBeUndefined();
    expect(some.open()).toBe(0);
    // Its id in upper case is still this channel's: held.
    const upper = (await some.resend(kept(s(4n * P), { channelId: `0x${ID.slice(2).toUpperCase()}` }), "a4"))!;
    expect(some.open()).toBe(1);
    await upper.close();
    expect(await some.state()).toEqual(held);
  });
});
