/**
 * batch-settlement through the wrappers, against a seller that keeps count as the reference server does (msw; see
 * test/support/batch-seller.ts): one deposit, then one voucher per call, strictly increasing; top-ups; a lost state
 * recovered from the seller's corrective 402 checked against the chain and our own signature; a seller whose account
 * does not hold up stops the channel before anything more is signed; deposits within the spend policy; refunds.
 */
import { describe, expect, it } from "vitest";
import {
  budget,
  createX402Client,
  getPaymentReceipt,
  memoryBudgetStore,
  memoryLedger,
  spendBy,
  type PaymentSnapshot,
} from "../../src";
import { ChannelDisputedError } from "../../src/entries/errors";
import type { ChannelStore } from "../../src/contracts";
import { batchSettlementEvm, memoryChannelStore, type BatchSettlementEvmOptions } from "../../src/evm";
import { PRICE, createBatchSeller } from "../support/batch-seller";
import { useMswServer } from "../support/msw";
import { countingSigner } from "../support/seller";
import { fetchWrapper, paidFetch, rejection, wrappers } from "../support/wrappers";

const server = useMswServer();

function setup(options: Partial<BatchSettlementEvmOptions> & { seller?: ReturnType<typeof createBatchSeller> } = {}) {
  const seller = options.seller ?? createBatchSeller();
  server.use(seller.handler);
  const { signer, calls } = countingSigner();
  const snapshots: PaymentSnapshot[] = [];
  const scheme = batchSettlementEvm({ signer, rpc: seller.rpc, ...options });
  const client = createX402Client({
    schemes: [scheme],
    policy: { maxAmountPerPayment: "$1" },
    onBeforePayment: (snapshot) => void snapshots.push(snapshot),
  });
  return { seller, client, scheme, snapshots, signs: calls, signer };
}

describe.each(wrappers)("$name: batch-settlement", (wrapper) => {
  it("deposits once, then pays each call with one voucher, strictly increasing; receipts show the charge and balance", async () => {
    const { seller, client, snapshots } = setup({ deposit: { multiple: 100 } });
    for (let i = 0; i < 100; i++) {
      const reply = await wrapper.send(client, { url: seller.url });
      expect(reply.status).toBe(200);
      const receipt = getPaymentReceipt(reply.raw)!;
      expect(receipt.settledAmount).toBe(String(PRICE));
      expect(receipt.channel).toMatchObject({ balance: String(100n * PRICE), charged: String(BigInt(i + 1) * PRICE) });
    }
    expect(seller.vouchers.map((v) => v.kind)).toEqual(["deposit", ...new Array(99).fill("voucher")]);
    expect(seller.vouchers.map((v) => v.max)).toEqual(Array.from({ length: 100 }, (_, i) => BigInt(i + 1) * PRICE));
    // The first call is approved as what it is: a deposit into the channel, beside the call's price.
    expect(snapshots[0]).toMatchObject({ amount: String(PRICE), deposit: String(100n * PRICE) });
    expect(snapshots.slice(1).every((s) => s.deposit === undefined)).toBe(true);
  });
});

describe("batch-settlement", () => {
  it("tops the channel up when the next voucher would pass its balance", async () => {
    const { seller, client } = setup();
    for (let i = 0; i < 12; i++) await fetchWrapper.send(client, { url: seller.url });
    // 10 x the price by default: calls 1 and 11 deposit.
    expect(seller.vouchers.map((v) => v.kind)).toEqual([
      "deposit",
      ...new Array(9).fill("voucher"),
      "deposit",
      "voucher",
    ]);
    expect([...seller.channels.values()][0]).toMatchObject({ balance: 20n * PRICE, charged: 12n * PRICE });
  });

  it("serializes concurrent calls on one channel: every voucher a new cumulative amount", async () => {
    const { seller, client } = setup({ deposit: { multiple: 50 }, seller: createBatchSeller({ delayMs: 5 }) });
    const replies = await Promise.all(Array.from({ length: 20 }, () => fetchWrapper.send(client, { url: seller.url })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const maxes = seller.vouchers.map((v) => v.max);
    expect(maxes).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i + 1) * PRICE));
  });

  it("a lost state recovers from the seller's corrective 402, checked against the chain and our signature", async () => {
    const first = setup();
    for (let i = 0; i < 3; i++) await fetchWrapper.send(first.client, { url: first.seller.url });
    // A restart: the same wallet, a fresh memory store.
    const scheme = batchSettlementEvm({ signer: first.signer, rpc: first.seller.rpc, storage: memoryChannelStore() });
    const client = createX402Client({ schemes: [scheme] });
    const reply = await fetchWrapper.send(client, { url: first.seller.url });
    expect(reply.status).toBe(200);
    expect(getPaymentReceipt(reply.raw)?.channel?.charged).toBe(String(4n * PRICE));
    // No second deposit: the chain shows the channel's balance; the refused voucher (at 1 x price) charged nothing.
    expect(first.seller.vouchers.map((v) => [v.kind, v.max])).toEqual([
      ["deposit", PRICE],
      ["voucher", 2n * PRICE],
      ["voucher", 3n * PRICE],
      ["voucher", 4n * PRICE],
    ]);
  });

  it("refuses a correction charging more than the voucher the seller holds, and signs nothing more on the channel", async () => {
    const { seller, client, signs } = setup();
    await fetchWrapper.send(client, { url: seller.url });
    // The seller now counts more than we ever signed, and asks for a voucher above it.
    seller.lie({ correctiveCharged: 5n * PRICE });
    seller.channels.values().next().value!.charged = 5n * PRICE;
    const error = await rejection(fetchWrapper.send(client, { url: seller.url }));
    expect(error).toBeInstanceOf(ChannelDisputedError);
    expect(error.details.reason).toMatch(/more than the voucher it holds/);
    const signed = signs.length;
    const again = await rejection(fetchWrapper.send(client, { url: seller.url }));
    expect(again.code).toBe("CHANNEL_DISPUTED");
    expect(signs.length).toBe(signed);
  });

  it.each([
    ["a count that is not ours plus the charge", { reportExtra: 1n }, /counts/],
    ["a charge over the price", { chargedAmount: String(PRICE + 1n) }, /charged 1001 for a call priced 1000/],
  ])("a paid answer with %s is returned, and the channel stops", async (_, lies, reason) => {
    const { seller, client, signs } = setup();
    seller.lie(lies);
    const reply = await fetchWrapper.send(client, { url: seller.url });
    expect(reply.status).toBe(200);
    // Counted at the worst: the call cost its price.
    expect(getPaymentReceipt(reply.raw)?.settledAmount).toBe(String(PRICE));
    const signed = signs.length;
    const error = await rejection(fetchWrapper.send(client, { url: seller.url }));
    expect(error.code).toBe("CHANNEL_DISPUTED");
    expect(error.details.reason).toMatch(reason);
    expect(signs.length).toBe(signed);
  });

  it("a deposit whose settlement is pending is not made again: the next call pays by voucher", async () => {
    const { seller, client, signs } = setup();
    seller.lie({ pendingDeposit: true });
    const error = await rejection(fetchWrapper.send(client, { url: seller.url }));
    expect(error.code).toBe("PAYMENT_PENDING");
    seller.lie({});
    const reply = await fetchWrapper.send(client, { url: seller.url });
    expect(reply.status).toBe(200);
    expect(seller.vouchers.map((v) => [v.kind, v.max])).toEqual([
      ["deposit", PRICE],
      ["voucher", 2n * PRICE],
    ]);
    // The wallet authorised one deposit, and no second one while the first may still land.
    expect(signs.filter((r) => r.primaryType === "ReceiveWithAuthorization")).toHaveLength(1);
  });

  it("a pending deposit that never lands: the next call learns it from the chain and deposits then", async () => {
    const { seller, client, signs } = setup();
    seller.lie({ lostDeposit: true });
    expect((await rejection(fetchWrapper.send(client, { url: seller.url }))).code).toBe("PAYMENT_PENDING");
    seller.lie({});
    const reply = await fetchWrapper.send(client, { url: seller.url });
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ kind: "deposit", channel: { charged: String(PRICE) } });
    expect(signs.filter((r) => r.primaryType === "ReceiveWithAuthorization")).toHaveLength(2);
  });

  it("sizes the deposit within the spend policy", async () => {
    const seller = createBatchSeller();
    server.use(seller.handler);
    const { signer } = countingSigner();
    const snapshots: PaymentSnapshot[] = [];
    const client = createX402Client({
      schemes: [batchSettlementEvm({ signer, deposit: { amount: "50000000" } })],
      policy: { maxAmountPerPayment: "$0.005" },
      onBeforePayment: (s) => void snapshots.push(s),
    });
    await fetchWrapper.send(client, { url: seller.url });
    expect(snapshots[0]?.deposit).toBe("5000");
    expect(seller.vouchers[0]).toMatchObject({ kind: "deposit" });
  });

  /** The deposit the first call of a fresh channel authorises, with `deposit` sizing it. */
  async function firstDeposit(deposit: BatchSettlementEvmOptions["deposit"], extra = {}, maxAmountPerPayment = "$1") {
    const seller = createBatchSeller({ extra });
    server.use(seller.handler);
    const snapshots: PaymentSnapshot[] = [];
    const client = createX402Client({
      schemes: [batchSettlementEvm({ signer: countingSigner().signer, rpc: seller.rpc, deposit })],
      policy: { maxAmountPerPayment },
      onBeforePayment: (s) => void snapshots.push(s),
    });
    await fetchWrapper.send(client, { url: seller.url });
    const [sent] = seller.vouchers;
    expect(sent?.kind).toBe("deposit");
    return snapshots[0]?.deposit;
  }

  it("a seller's minDeposit raises a smaller deposit to it, never past the policy; one that is no amount is ignored", async () => {
    expect(await firstDeposit({ multiple: 2 }, { minDeposit: "7000" })).toBe("7000");
    expect(await firstDeposit({ multiple: 20 }, { minDeposit: "7000" })).toBe("20000");
    expect(await firstDeposit({ multiple: 2 }, { minDeposit: "7000" }, "$0.005")).toBe("5000");
    for (const minDeposit of ["0", "-7000", "7000.5", "x7000", "7000x", `${"9".repeat(41)}`])
      expect(await firstDeposit({ multiple: 2 }, { minDeposit })).toBe("2000");
  });

  it("a sizing function sees the call; its answer is raised to what the call needs and held to the policy", async () => {
    const seen: unknown[] = [];
    const told = (amount: bigint) => (context: unknown) => (seen.push(context), amount);
    expect(await firstDeposit(told(500n), { minDeposit: "300" })).toBe(String(PRICE));
    expect(seen[0]).toMatchObject({ price: PRICE, needed: PRICE, balance: 0n, minDeposit: 300n, limit: 1_000_000n });
    expect(await firstDeposit(told(10n ** 12n))).toBe("1000000");
    expect(await firstDeposit(told(4321n))).toBe("4321");
    expect(await firstDeposit({ amount: "2500" })).toBe("2500");
  });

  it("without chain reads, a corrective 402 is believed in nothing: the error asks for an rpc", async () => {
    const first = setup();
    await fetchWrapper.send(first.client, { url: first.seller.url });
    const { signer, calls } = countingSigner();
    const client = createX402Client({ schemes: [batchSettlementEvm({ signer })] });
    const error = await rejection(fetchWrapper.send(client, { url: first.seller.url }));
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.details.option).toBe("rpc");
    expect(error.message).toMatch(/cumulative_amount_mismatch.*nothing was charged/);
    // The refused voucher only: no second one.
    expect(calls.filter((r) => r.primaryType === "Voucher")).toHaveLength(1);
  });

  it("a store that cannot save after the seller answered does not turn a paid call into an error", async () => {
    const inner = memoryChannelStore();
    let saves = 0;
    const storage: ChannelStore = {
      peek: (id) => inner.peek(id),
      async hold(id, signal) {
        const held = await inner.hold(id, signal);
        return {
          ...held,
          save: async (state) => {
            // The save before sending works; the one after the answer finds its lock gone.
            if (++saves % 2 === 0) throw new Error("the lock on the channel expired");
            await held.save(state);
          },
        };
      },
    };
    const { seller, client } = setup({ storage });
    const reply = await fetchWrapper.send(client, { url: seller.url });
    expect(reply.status).toBe(200);
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ kind: "deposit", settledAmount: String(PRICE) });
    expect(saves).toBe(2);
  });

  it("refunds what the channel holds beyond what was charged", async () => {
    const { seller, client, scheme } = setup();
    for (let i = 0; i < 3; i++) await fetchWrapper.send(client, { url: seller.url });
    const result = await scheme.refund(seller.url, { through: paidFetch(client) });
    expect(result).toMatchObject({ refunded: String(7n * PRICE), balance: String(3n * PRICE) });
    expect(seller.vouchers.at(-1)).toMatchObject({ kind: "refund", max: 3n * PRICE });
  });
});

describe("batch-settlement outcomes", () => {
  it("the ledger records deposits, vouchers, top-ups and refunds as different kinds", async () => {
    const seller = createBatchSeller();
    server.use(seller.handler);
    const { signer } = countingSigner();
    const ledger = memoryLedger();
    const scheme = batchSettlementEvm({ signer, deposit: { multiple: 2 } });
    const client = createX402Client({ schemes: [scheme], plugins: [ledger] });
    for (let i = 0; i < 3; i++) await fetchWrapper.send(client, { url: seller.url });
    // Deposits are at least what the call needs: 2 x the price here, so call 3 tops up.
    await scheme.refund(seller.url, { through: paidFetch(client) });
    const records = [];
    for await (const record of ledger.records()) records.push(record);
    expect(records.map((r) => [r.kind, r.deposit, r.settledAmount])).toEqual([
      ["deposit", String(2n * PRICE), String(PRICE)],
      ["voucher", undefined, String(PRICE)],
      ["top-up", String(2n * PRICE), String(PRICE)],
      ["refund", undefined, String(PRICE)],
    ]);
    expect(new Set(records.map((r) => r.channel)).size).toBe(1);
    // What came back is not spend: the three calls' charges are.
    expect(await spendBy(ledger, "asset")).toEqual([expect.objectContaining({ amount: String(3n * PRICE), count: 3 })]);
  });

  it("a deposit must fit the budget as a whole; the budget counts each call's charge as spent", async () => {
    const seller = createBatchSeller();
    server.use(seller.handler);
    const { signer, calls } = countingSigner();
    // $0.005 of budget: a deposit of 10 x $0.001 does not fit, though one call would.
    const tight = createX402Client({
      schemes: [batchSettlementEvm({ signer })],
      plugins: [budget({ limit: "$0.005" })],
    });
    const error = await rejection(fetchWrapper.send(tight, { url: seller.url }));
    expect(error.code).toBe("BUDGET_EXCEEDED");
    expect(calls.length).toBe(0);
    // $0.02: the deposit fits; three calls spend $0.003 of it.
    const store = memoryBudgetStore();
    const scheme = batchSettlementEvm({ signer });
    const roomy = createX402Client({
      schemes: [scheme],
      plugins: [budget({ limit: "$0.02", store })],
    });
    for (let i = 0; i < 3; i++) await fetchWrapper.send(roomy, { url: seller.url });
    // Micro-dollars: 3 calls of $0.001 spent; the rest of the deposit of $0.01 held.
    const entry = { key: "client/life:client", limit: 1, windowMs: undefined };
    expect(await store.usage(entry)).toEqual({ spent: 3000, reserved: 7000 });
    // A store without holds (one of the user's own) holds the deposit only while its call is under way.
    const { hold: _, ...plain } = memoryBudgetStore();
    const other = createX402Client({
      schemes: [scheme],
      plugins: [budget({ limit: "$0.02", store: plain })],
    });
    for (let i = 0; i < 3; i++) await fetchWrapper.send(other, { url: seller.url });
    expect(await plain.usage(entry)).toEqual({ spent: 3000, reserved: 0 });
  });

  it("a budget holds the deposit until the channel spends it or a refund returns it", async () => {
    const seller = createBatchSeller();
    server.use(seller.handler);
    const { signer } = countingSigner();
    const store = memoryBudgetStore();
    const entry = { key: "client/life:client", limit: 1, windowMs: undefined };
    const scheme = batchSettlementEvm({ signer, deposit: { multiple: 4 } });
    const client = createX402Client({ schemes: [scheme], plugins: [budget({ limit: "$0.006", store })] });
    for (let i = 0; i < 3; i++) await fetchWrapper.send(client, { url: seller.url });
    expect(await store.usage(entry)).toEqual({ spent: 3000, reserved: 1000 });
    await fetchWrapper.send(client, { url: seller.url });
    expect(await store.usage(entry)).toEqual({ spent: 4000, reserved: 0 });
    // Call 5 tops up by 4 x $0.001: $0.004 spent + $0.004 is over $0.006, though the call alone is not.
    expect((await rejection(fetchWrapper.send(client, { url: seller.url }))).code).toBe("BUDGET_EXCEEDED");
    const roomy = createX402Client({ schemes: [scheme], plugins: [budget({ limit: "$0.01", store })] });
    await fetchWrapper.send(roomy, { url: seller.url });
    expect(await store.usage(entry)).toEqual({ spent: 5000, reserved: 3000 });
    // The refund of what the channel holds beyond the charges lets the budget's hold go.
    const refunded = await scheme.refund(seller.url, { through: paidFetch(roomy) });
    expect(refunded).toMatchObject({ refunded: String(3n * PRICE) });
    expect(await store.usage(entry)).toEqual({ spent: 5000, reserved: 0 });
  });

  it("a budget that lost the hold (a fresh store) reserves each voucher as a payment of its own", async () => {
    const seller = createBatchSeller();
    server.use(seller.handler);
    const { signer } = countingSigner();
    const scheme = batchSettlementEvm({ signer, deposit: { multiple: 10 } });
    await fetchWrapper.send(createX402Client({ schemes: [scheme] }), { url: seller.url });
    const store = memoryBudgetStore();
    const client = createX402Client({ schemes: [scheme], plugins: [budget({ limit: "$0.002", store })] });
    await fetchWrapper.send(client, { url: seller.url });
    await fetchWrapper.send(client, { url: seller.url });
    expect(await store.usage({ key: "client/life:client", limit: 1, windowMs: undefined })).toEqual({
      spent: 2000,
      reserved: 0,
    });
    expect((await rejection(fetchWrapper.send(client, { url: seller.url }))).code).toBe("BUDGET_EXCEEDED");
  });
});
