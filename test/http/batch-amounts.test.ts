/**
 * batch-settlement where what was signed and what was charged differ: a voucher the seller refused, a corrective 402
 * (the seller's count is not ours), an answer lost after the seller charged it or before it had it. A refund is signed
 * for what was charged (a voucher above it would let the seller claim calls it never served), a withdrawal asks back
 * what the chain says was not claimed, and recovery ends each key as the seller's count has it. Against the msw seller
 * that keeps count as the reference server does (test/support/batch-seller.ts) and its stand-in chain; the reference
 * seller on anvil runs the same kinds of flows in test/interop/journal-batch.test.ts.
 */
import { http, HttpResponse } from "msw";
import { afterEach, describe, expect, it } from "vitest";
import {
  createX402Client,
  memoryJournalStore,
  memoryLedger,
  paymentJournal,
  recoverPayments,
  type RecoveredPayment,
} from "../../src";
import type { ChannelRefund, ChannelStore } from "../../src/contracts";
import { batchSettlementEvm, memoryChannelStore } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { PRICE, batchRequirement, createBatchSeller } from "../support/batch-seller";
import { useMswServer } from "../support/msw";
import { countingSigner, decodeHeader, encodeHeader } from "../support/seller";
import { paidFetch, rejection } from "../support/wrappers";

const server = useMswServer();
// Each world watches what its seller is sent: let go of the watch after each test.
afterEach(() => void server.events.removeAllListeners("request:start"));
const P = PRICE;

/** A payment id for `name`. */
const keyOf = (name: string) => `order_${name}`.padEnd(24, "0");

/** A fetch whose paid request never leaves: the seller never has its voucher. */
const neverSent: typeof fetch = async (input, init) => {
  if (new Headers(init?.headers).has("payment-signature")) throw new TypeError("fetch failed: the process died");
  return globalThis.fetch(input, init);
};
/** A fetch that loses the seller's paid answer: the seller charged the voucher, the buyer never reads it. */
const answerLost: typeof fetch = async (input, init) => {
  const response = await globalThis.fetch(input, init);
  if (new Headers(init?.headers).has("payment-signature") && response.status === 200)
    throw new TypeError("fetch failed: the connection was reset");
  return response;
};

/** A buyer with a journal and a ledger paying the msw batch seller; every voucher the seller is sent, by kind. */
function world() {
  const seller = createBatchSeller();
  server.use(seller.handler);
  const { signer } = countingSigner();
  const channels = memoryChannelStore();
  const journal = memoryJournalStore();
  const scheme = batchSettlementEvm({ signer, rpc: seller.rpc, storage: channels });
  const client = createX402Client({ schemes: [scheme], plugins: [paymentJournal(journal), memoryLedger()] });
  const sent: { type: string; max: bigint }[] = [];
  server.events.on("request:start", ({ request }) => {
    const header = request.headers.get("payment-signature");
    if (request.url !== seller.url || !header) return;
    const { payload } = decodeHeader(header) as { payload: { type: string; voucher: { maxClaimableAmount: string } } };
    sent.push({ type: payload.type, max: BigInt(payload.voucher.maxClaimableAmount) });
  });
  const pay = (name: string, through: typeof fetch = (input, init) => globalThis.fetch(input, init)) =>
    wrapFetchWithPayment(through, client)(seller.url, { x402: { paymentId: keyOf(name) } } as RequestInit);
  /** The vouchers sent of `type`, from the `from`th on. */
  const maxes = (type: string, from = 0) =>
    sent
      .slice(from)
      .filter((v) => v.type === type)
      .map((v) => v.max);
  const channelId = () => [...seller.channels.keys()][0]!;
  /** The journal's entry id for `name` (its latest attempt). */
  const attemptOf = (name: string) => [...journal.entries()].reverse().find((e) => e.key === keyOf(name))!.id;
  /** Recovery's action per key, for every entry it ended. */
  const recovered = async () => {
    const done: readonly RecoveredPayment[] = await recoverPayments(client, { staleAfterMs: 0 });
    const keys = new Map(journal.entries().map((e) => [e.id, e.key]));
    return Object.fromEntries(done.map((d) => [keys.get(d.entry.id)!.replace(/^order_|0+$/g, ""), d.action]));
  };
  /** Three calls paid: three charged of the deposit of ten. */
  const threeCalls = async () => {
    for (const name of ["one", "two", "three"]) expect((await pay(name)).status).toBe(200);
  };
  return { seller, scheme, client, channels, journal, sent, pay, maxes, channelId, attemptOf, recovered, threeCalls };
}

/** The seller refuses the next voucher it is sent (not a count: its own reason), then takes them again. */
function refuseNextVoucher(url: string) {
  let refused = false;
  server.use(
    http.get(url, ({ request }) => {
      if (refused || !request.headers.has("payment-signature")) return undefined;
      refused = true;
      const challenge = { x402Version: 2, error: "insufficient_funds", accepts: [batchRequirement()] };
      return new HttpResponse("{}", { status: 402, headers: { "PAYMENT-REQUIRED": encodeHeader(challenge) } });
    }),
  );
}

describe("a refund after what was signed and what was charged parted", () => {
  it("a voucher the seller refused: the refund's voucher is what was charged (3), never the most signed (4)", async () => {
    const w = world();
    await w.threeCalls();
    refuseNextVoucher(w.seller.url);
    expect((await rejection(w.pay("refused"))).code).toBe("PAYMENT_REJECTED");
    expect(await w.channels.peek(w.channelId())).toMatchObject({ charged: String(3n * P), signed: String(4n * P) });
    const from = w.sent.length;
    const result = await w.scheme.refund(w.seller.url, { through: paidFetch(w.client) });
    expect(w.maxes("refund", from)).toEqual([3n * P]);
    expect(result).toMatchObject({ refunded: String(7n * P), balance: String(3n * P) });
    expect(w.seller.channels.get(w.channelId())).toMatchObject({ balance: 3n * P, charged: 3n * P });
    // The refused key is ended failed (nothing moved): recovery has nothing to end.
    expect(w.journal.entries().find((e) => e.key === keyOf("refused"))?.state).toBe("failed");
    expect(await w.recovered()).toEqual({});
  });

  it("after a corrective 402 (the seller never had a held voucher): the refund is signed for the charge (4), not the most signed (5)", async () => {
    const w = world();
    await w.threeCalls();
    expect((await rejection(w.pay("died", neverSent))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    // The next call builds above the held voucher (5); the seller's count (3) drops it, and the call takes 4.
    const from = w.sent.length;
    expect((await w.pay("next")).status).toBe(200);
    expect(w.maxes("voucher", from)).toEqual([5n * P, 4n * P]);
    expect(await w.channels.peek(w.channelId())).toMatchObject({ charged: String(4n * P), signed: String(5n * P) });
    const refundFrom = w.sent.length;
    const result = await w.scheme.refund(w.seller.url, { through: paidFetch(w.client) });
    expect(w.maxes("refund", refundFrom)).toEqual([4n * P]);
    expect(result).toMatchObject({ refunded: String(6n * P), balance: String(4n * P) });
    // Recovery: the held voucher was never charged (its amount went to the next call).
    expect(await w.recovered()).toEqual({ died: "expired" });
  });

  it("an answer lost after the seller charged: the refund (3) is corrected by the seller's count, and what comes back is what it did not charge (6)", async () => {
    const w = world();
    await w.threeCalls();
    expect((await rejection(w.pay("lost", answerLost))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(w.seller.channels.get(w.channelId())).toMatchObject({ charged: 4n * P });
    const from = w.sent.length;
    const result = await w.scheme.refund(w.seller.url, { through: paidFetch(w.client) });
    expect(w.maxes("refund", from)).toEqual([3n * P, 4n * P]);
    expect(result).toMatchObject({ refunded: String(6n * P), balance: String(4n * P) });
    expect(await w.channels.peek(w.channelId())).toMatchObject({ balance: String(4n * P), charged: String(4n * P) });
    // Recovery: the lost answer's voucher was charged.
    expect(await w.recovered()).toEqual({ lost: "settled" });
  });

  it("an answer lost before the seller had it: the refund is signed for the charge (3) at once, the whole rest comes back", async () => {
    const w = world();
    await w.threeCalls();
    expect((await rejection(w.pay("never", neverSent))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(await w.channels.peek(w.channelId())).toMatchObject({ charged: String(3n * P), signed: String(4n * P) });
    const from = w.sent.length;
    const result = await w.scheme.refund(w.seller.url, { through: paidFetch(w.client) });
    expect(w.maxes("refund", from)).toEqual([3n * P]);
    expect(result).toMatchObject({ refunded: String(7n * P), balance: String(3n * P) });
    // Never charged: not settled (the held voucher is past what the channel now holds).
    expect(Object.values(await w.recovered())).not.toContain("settled");
  });

  it("a refund the seller corrects keeps what the channel knew of its held vouchers: a dropped one is not answered settled", async () => {
    const w = world();
    await w.threeCalls();
    // Held (4) and dropped by the next call's correction (which takes 4); then an answer lost after a charge (5).
    expect((await rejection(w.pay("died", neverSent))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect((await w.pay("next")).status).toBe(200);
    expect((await rejection(w.pay("lost", answerLost))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(w.seller.channels.get(w.channelId())).toMatchObject({ charged: 5n * P });
    const died = w.attemptOf("died");
    expect((await w.channels.peek(w.channelId()))?.ended?.[died]).toBe("dropped");
    // The refund's voucher (4) is refused with the seller's count (5): corrected, then refunded.
    const from = w.sent.length;
    const result = await w.scheme.refund(w.seller.url, { through: paidFetch(w.client) });
    expect(w.maxes("refund", from)).toEqual([4n * P, 5n * P]);
    expect(result).toMatchObject({ refunded: String(5n * P), balance: String(5n * P) });
    const state = await w.channels.peek(w.channelId());
    expect(state?.ended).toMatchObject({ [died]: "dropped", [w.attemptOf("lost")]: "charged" });
    expect(state?.owners).toBeUndefined();
    // The key whose voucher was dropped was never charged; the one whose answer was lost was.
    expect(await w.recovered()).toEqual({ died: "expired", lost: "settled" });
  });
});

describe("a withdrawal after what was signed and what was charged parted", () => {
  it("asks back what the chain says the seller has not claimed, whatever was signed beyond it", async () => {
    const w = world();
    await w.threeCalls();
    w.seller.claim();
    // Signed 4, the answer lost after the seller charged it: the seller may still claim it; the chain says 3 claimed.
    expect((await rejection(w.pay("lost", answerLost))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(await w.channels.peek(w.channelId())).toMatchObject({ charged: String(3n * P), signed: String(4n * P) });
    const plan = await w.scheme.withdrawal(w.seller.url, { through: paidFetch(w.client) });
    expect(plan.amount).toBe(String(7n * P));
    // The channel is let go here, but for what became of its vouchers: the next payment reads it from the chain.
    expect(await w.channels.peek(w.channelId())).toEqual(emptiedState);
    // Once the seller claims the lost call's voucher, the chain says 6.
    w.seller.claim();
    expect((await w.scheme.withdrawal(w.seller.url, { through: paidFetch(w.client) })).amount).toBe(String(6n * P));
  });

  it("a voucher refused by the seller does not lower it: the chain's unclaimed balance (10 - 3)", async () => {
    const w = world();
    await w.threeCalls();
    w.seller.claim();
    refuseNextVoucher(w.seller.url);
    expect((await rejection(w.pay("refused"))).code).toBe("PAYMENT_REJECTED");
    expect((await w.scheme.withdrawal(w.seller.url, { through: paidFetch(w.client) })).amount).toBe(String(7n * P));
  });
});

describe("recovery where the chain decides", () => {
  it("a held voucher the seller claimed on chain exactly is settled; claimed one base unit short, it is kept", async () => {
    const w = world();
    await w.threeCalls();
    expect((await rejection(w.pay("lost", answerLost))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    const channel = w.seller.channels.get(w.channelId())!;
    channel.claimed = 4n * P - 1n;
    expect(await w.recovered()).toEqual({ lost: "kept" });
    channel.claimed = 4n * P;
    expect(await w.recovered()).toEqual({ lost: "settled" });
    expect(await w.recovered()).toEqual({});
  });
});

/** Answers the refund (a payment whose payload is a refund) with `answer`; the rest as the seller does. */
const refundAnswered = (url: string, answer: () => Response) =>
  server.use(
    http.get(url, ({ request }) => {
      const header = request.headers.get("payment-signature");
      if (header && (decodeHeader(header) as { payload: { type: string } }).payload.type === "refund") return answer();
      return undefined;
    }),
  );
const settled = (over: Record<string, unknown>) =>
  HttpResponse.json(
    { message: "Refund acknowledged" },
    {
      headers: {
        "PAYMENT-RESPONSE": encodeHeader({ success: true, transaction: TX, network: "eip155:84532", ...over }),
      },
    },
  );
const TX = `0x${"cd".repeat(32)}`;

describe("what a refund reports, and what it keeps", () => {
  it("the client's plug-ins are told what came back: the seller, the channel, the amount, the balance left, the transaction", async () => {
    const w = world();
    const told: ChannelRefund[] = [];
    const client = createX402Client({
      schemes: [w.scheme],
      plugins: [{ name: "refunds", onRefund: (refund: ChannelRefund) => void told.push(refund) }],
    });
    await w.threeCalls();
    const result = await w.scheme.refund(w.seller.url, { through: paidFetch(client) });
    expect(result).toEqual({
      channel: w.channelId(),
      refunded: String(7n * P),
      balance: String(3n * P),
      transaction: TX,
      settlement: expect.objectContaining({ success: true, amount: String(7n * P), transaction: TX }),
    });
    const requirement = batchRequirement();
    expect(told).toEqual([
      {
        url: w.seller.url,
        scheme: "batch-settlement",
        network: "eip155:84532",
        asset: requirement.asset,
        payTo: requirement.payTo,
        payer: w.scheme.payer,
        channel: w.channelId(),
        amount: String(7n * P),
        balance: String(3n * P),
        transaction: TX,
      },
    ]);
  });

  it("more refunded than the channel held: its balance is 0 and it is let go; no transaction named is none", async () => {
    const w = world();
    await w.threeCalls();
    refundAnswered(w.seller.url, () => settled({ amount: String(20n * P), transaction: "" }));
    const result = await w.scheme.refund(w.seller.url, { through: paidFetch(w.client) });
    expect(result).toMatchObject({ refunded: String(20n * P), balance: "0", transaction: undefined });
    expect(await w.channels.peek(w.channelId())).toEqual(emptiedState);
  });

  it("one base unit short of all it held refunded: the channel kept with 1; exactly all of it: let go", async () => {
    const w = world();
    await w.threeCalls();
    refundAnswered(w.seller.url, () => settled({ amount: String(10n * P - 1n) }));
    expect(await w.scheme.refund(w.seller.url, { through: paidFetch(w.client) })).toMatchObject({ balance: "1" });
    expect(await w.channels.peek(w.channelId())).toMatchObject({ balance: "1", charged: String(3n * P) });
    const v = world();
    await v.threeCalls();
    refundAnswered(v.seller.url, () => settled({ amount: String(10n * P) }));
    expect(await v.scheme.refund(v.seller.url, { through: paidFetch(v.client) })).toMatchObject({ balance: "0" });
    expect(await v.channels.peek(v.channelId())).toEqual(emptiedState);
  });

  it("a paid answer whose settlement names no amount refunds nothing: PAYMENT_REJECTED naming the channel and payer; the state kept", async () => {
    const w = world();
    await w.threeCalls();
    const before = await w.channels.peek(w.channelId());
    refundAnswered(w.seller.url, () => settled({ amount: "" }));
    const error = await rejection(w.scheme.refund(w.seller.url, { through: paidFetch(w.client) }));
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.message).toContain(`did not refund channel ${w.channelId()}`);
    expect(error.details).toMatchObject({
      url: w.seller.url,
      payer: w.scheme.payer,
      requirement: expect.objectContaining({ scheme: "batch-settlement" }),
    });
    expect(await w.channels.peek(w.channelId())).toEqual(before);
  });

  it("a channel neither the store nor the chain knows: refused before anything is signed", async () => {
    const w = world();
    const from = w.sent.length;
    const error = await rejection(w.scheme.refund(w.seller.url, { through: paidFetch(w.client) }));
    expect(error).toMatchObject({ code: "INVALID_CONFIG", message: expect.stringContaining("holds nothing beyond") });
    expect(error.details.option).toMatch(/^channel 0x[0-9a-f]{64}$/);
    expect(w.sent.length).toBe(from);
  });

  it("a refund the seller corrects never lowers the most signed on record (5), though the seller holds less (4)", async () => {
    const w = world();
    await w.threeCalls();
    expect((await rejection(w.pay("died", neverSent))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    // Built above the held voucher (5), corrected (the seller counts 3), taken at 4: its answer lost.
    expect((await rejection(w.pay("next", answerLost))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(await w.channels.peek(w.channelId())).toMatchObject({ charged: String(3n * P), signed: String(5n * P) });
    expect(w.seller.channels.get(w.channelId())).toMatchObject({ charged: 4n * P, signedMax: 4n * P });
    const from = w.sent.length;
    const result = await w.scheme.refund(w.seller.url, { through: paidFetch(w.client) });
    expect(w.maxes("refund", from)).toEqual([3n * P, 4n * P]);
    expect(result).toMatchObject({ refunded: String(6n * P), balance: String(4n * P) });
    expect(await w.channels.peek(w.channelId())).toMatchObject({ charged: String(4n * P), signed: String(5n * P) });
    expect(await w.recovered()).toEqual({ died: "expired", next: "settled" });
  });
});

/** A channel let go (withdrawn, refunded whole): nothing but what became of its vouchers, each attempt by name. */
const emptiedState = {
  balance: "0",
  charged: "0",
  signed: "0",
  ended: expect.objectContaining({}) as Record<string, "charged" | "dropped">,
};

describe("what a channel let go leaves for recovery", () => {
  // Found by this test (src/evm/batch/withdraw.ts, refund.ts): a withdrawal, or a refund that left nothing, forgot the
  // channel's state, `ended` with it, so once the state was read again from the chain, a dropped voucher at or below
  // the seller's count was taken for charged (check.ts: "no owner, at or below the count: settled"), and recovery ended
  // its key settled though it was never served. Now `ended` is kept (owners.ts, `emptied`).
  it("a withdrawal keeps what became of the channel's held vouchers: a key whose voucher was dropped is not answered settled later", async () => {
    const w = world();
    await w.threeCalls();
    expect((await rejection(w.pay("died", neverSent))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect((await w.pay("next")).status).toBe(200);
    await w.scheme.withdrawal(w.seller.url, { through: paidFetch(w.client) });
    // The withdrawal is not sent; the seller claims what it charged, and the next call reads the channel from the chain.
    w.seller.claim();
    expect((await w.pay("after")).status).toBe(200);
    expect(await w.recovered()).toEqual({ died: "expired" });
  });

  it("so does a refund of all it held", async () => {
    const w = world();
    await w.threeCalls();
    expect((await rejection(w.pay("died", neverSent))).code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect((await w.pay("next")).status).toBe(200);
    refundAnswered(w.seller.url, () => settled({ amount: String(10n * P) }));
    expect(await w.scheme.refund(w.seller.url, { through: paidFetch(w.client) })).toMatchObject({ balance: "0" });
    const left = await w.channels.peek(w.channelId());
    expect(left).toEqual(emptiedState);
    expect(Object.values(left?.ended ?? {})).toContain("dropped");
    w.seller.claim();
    expect((await w.pay("after")).status).toBe(200);
    expect(await w.recovered()).toEqual({ died: "expired" });
  });
});

describe("a refund's hold and record", () => {
  it("a state lost (a fresh store), corrected by the seller: the most signed on record is the seller's voucher (3), never below it", async () => {
    const w = world();
    await w.threeCalls();
    const fresh = memoryChannelStore();
    const scheme = batchSettlementEvm({ signer: countingSigner().signer, rpc: w.seller.rpc, storage: fresh });
    const client = createX402Client({ schemes: [scheme] });
    expect(await scheme.refund(w.seller.url, { through: paidFetch(client) })).toMatchObject({
      refunded: String(7n * P),
    });
    expect(await fresh.peek(w.channelId())).toMatchObject({ charged: String(3n * P), signed: String(3n * P) });
  });

  it("returns only once its hold on the channel is let go (a store whose release takes a while)", async () => {
    const w = world();
    await w.threeCalls();
    const inner = memoryChannelStore();
    let released = 0;
    const slow: ChannelStore = {
      peek: (id) => inner.peek(id),
      async hold(id, signal) {
        const held = await inner.hold(id, signal);
        return {
          state: held.state,
          save: (state) => held.save(state),
          async release() {
            await new Promise((resolve) => setTimeout(resolve, 5));
            await held.release();
            released++;
          },
        };
      },
    };
    const scheme = batchSettlementEvm({ signer: countingSigner().signer, rpc: w.seller.rpc, storage: slow });
    await scheme.refund(w.seller.url, { through: paidFetch(createX402Client({ schemes: [scheme] })) });
    expect(released).toBe(1);
  });

  it("its refusals name the refund, the seller's url and the GET that asked", async () => {
    const w = world();
    await w.threeCalls();
    const where = { url: w.seller.url, method: "GET" };
    server.use(http.get(w.seller.url, () => HttpResponse.json({ free: true })));
    const notTerms = await rejection(w.scheme.refund(w.seller.url, { through: paidFetch(w.client) }));
    expect(notTerms).toMatchObject({
      code: "CHALLENGE_NOT_FOUND",
      message: `refund: ${w.seller.url} answered 200, not 402 with its terms.`,
      details: where,
    });
    const amount = await rejection(w.scheme.refund(w.seller.url, { through: paidFetch(w.client), amount: "0" }));
    expect(amount.message).toBe('refund: amount must be base units above 0, such as "1000000".');
  });
});
