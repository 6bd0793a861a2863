// The payment journal over a batch-settlement channel, against the unmodified reference seller and facilitator on
// anvil: a keyed call whose process died after signing, or whose answer was lost after the seller charged it, asked
// again and recovered. The seller's own count (its 200s with a settlement, seen by a proxy in front of it; its channel
// record; what it claims on chain) says each key was charged once; the ledger holds one settled record per key, and
// the budget spent what the seller charged, the rest of the deposit still held.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  budget,
  createX402Client,
  getPaymentReceipt,
  memoryBudgetStore,
  memoryJournalStore,
  memoryLedger,
  paymentJournal,
  recoverPayments,
  type JournalStore,
  type PaidFetch,
} from "../../src";
import { batchSettlementEvm, memoryChannelStore, type ChannelStore } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  PRICE_ATOMIC,
  WEATHER,
  fundedBuyer,
  startFaultProxy,
  startInteropStack,
  type FaultProxy,
  type InteropStack,
} from "../localnet/index.js";

let stack: InteropStack;
let proxy: FaultProxy;
beforeAll(async () => {
  stack = await startInteropStack({ batchSettlement: true });
  proxy = await startFaultProxy(stack.seller.url);
});
afterAll(async () => {
  await proxy?.stop();
  await stack?.stop();
});

const PRICE = Number(PRICE_ATOMIC);
const DEPOSIT = 10 * PRICE;
const BUDGET = { key: "journal:client", limit: 1_000_000, windowMs: undefined };
let run = 0;

/** One buyer's stores, shared by the lives of its process (a restart reads them again). */
async function world() {
  const buyer = await fundedBuyer(stack.usdc);
  const tag = `${++run}${Date.now().toString(36)}`;
  return {
    buyer,
    tag,
    journal: memoryJournalStore(),
    channels: memoryChannelStore(),
    budgetStore: memoryBudgetStore(),
    ledger: memoryLedger(),
  };
}
type World = Awaited<ReturnType<typeof world>>;

/** A life of the process: a client over the world's stores, paying through `fetcher`. */
function life(w: World, { journal = w.journal as JournalStore, channels = w.channels as ChannelStore } = {}) {
  const scheme = batchSettlementEvm({
    signer: w.buyer.account,
    rpc: stack.anvil.rpcUrl,
    deposit: { multiple: 10 },
    storage: channels,
  });
  const client = createX402Client({
    schemes: [scheme],
    plugins: [budget({ limit: "$1", name: "journal", store: w.budgetStore }), paymentJournal(journal), w.ledger],
  });
  return { client, pay: (fetcher: typeof fetch = fetch) => wrapFetchWithPayment(fetcher, client) };
}

const urlOf = (w: World, key: string) => `${proxy.url}/batch/weather?key=${w.tag}_${key}`;
const keyOf = (w: World, key: string) => `${w.tag}_${key}_0000000000`.slice(0, 40);
const ask = (w: World, pay: typeof fetch, key: string) =>
  pay(urlOf(w, key), { x402: { paymentId: keyOf(w, key) } } as RequestInit);

/** The seller's charges per key of this world: its 200s that reported a settlement (cut or not). */
function charges(w: World): Record<string, number> {
  const counted: Record<string, number> = {};
  for (const seen of proxy.paidRequests) {
    const key = /key=([^&]+)/.exec(seen.path)?.[1];
    if (!key?.startsWith(`${w.tag}_`) || !(seen.status === 200 && seen.settled)) continue;
    const name = key.slice(w.tag.length + 1);
    counted[name] = (counted[name] ?? 0) + 1;
  }
  return counted;
}
/** The vouchers sent for a key, by amount, in order. */
const sent = (w: World, key: string) =>
  proxy.paidRequests
    .filter((seen) => seen.path.endsWith(`key=${w.tag}_${key}`))
    .map((seen) => JSON.parse(atob(seen.paymentHeader)).payload.voucher.maxClaimableAmount as string);

/** The seller's record of the channel: what it counts as charged in all. */
const sellerCount = async (channel: string) =>
  Number((await stack.seller.batch!.scheme.getStorage().get(channel))?.chargedCumulativeAmount ?? 0);

/** Settled ledger records per key (the journal's entries name the key of each attempt). */
function settledRecords(w: World): Record<string, number> {
  const keys = new Map(w.journal.entries().map((entry) => [entry.id, entry.key]));
  const counted: Record<string, number> = {};
  for (const record of w.ledger.list) {
    if (record.outcome !== "settled") continue;
    const key = keys.get(record.attempt!) ?? "?";
    counted[key] = (counted[key] ?? 0) + 1;
  }
  return counted;
}

/** A fetch whose paid requests never leave: the process dies as it sends. */
const neverSent = async (input: RequestInfo | URL, init?: RequestInit) => {
  if (new Headers(init?.headers).has("payment-signature")) throw new TypeError("fetch failed: the process died");
  return fetch(input, init);
};
/** The journal of a process killed once it has written a signed entry: nothing after it is written. */
function dyingAfterSigned(store: JournalStore): JournalStore {
  let dead = false;
  return {
    latest: (key) => store.latest(key),
    unfinished: () => store.unfinished(),
    async put(entry, options) {
      if (dead) throw new Error("killed");
      const written = await store.put(entry, options);
      if (entry.state === "signed") dead = true;
      return written;
    },
  };
}

/** The first call of a world: it opens the channel (a deposit of ten calls); the channel's id. */
async function open(w: World): Promise<string> {
  const response = await ask(w, life(w).pay(), "first");
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual(WEATHER);
  return getPaymentReceipt(response)!.channel!.id;
}

describe("journal + batch-settlement on anvil: each key charged once by the seller", () => {
  it("the answer lost after the seller charged: asked again, nothing is signed and the key is not charged twice (PAYMENT_ALREADY_ATTEMPTED); recovery ends it settled, recorded once, spent once", async () => {
    const w = await world();
    const channel = await open(w);
    proxy.cutPaidResponses(1);
    await expect(ask(w, life(w).pay(), "lost")).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    expect(await sellerCount(channel)).toBe(2 * PRICE);
    expect(w.journal.entries().find((e) => e.key === keyOf(w, "lost"))).toMatchObject({ state: "unknown", channel });

    // The process comes back; the key is asked again. Its voucher goes once more, as it was, holding the channel: the
    // seller refuses it (its count is past it) and shows its count, which ends the voucher charged.
    const restarted = life(w);
    await expect(ask(w, restarted.pay(), "lost")).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    expect(await w.channels.peek(channel)).toMatchObject({ charged: String(2 * PRICE) });
    // Asked once more: known paid, nothing sent or signed.
    await expect(ask(w, restarted.pay(), "lost")).rejects.toMatchObject({ code: "PAYMENT_ALREADY_ATTEMPTED" });
    expect(sent(w, "lost")).toEqual([String(2 * PRICE), String(2 * PRICE)]);
    expect(await sellerCount(channel)).toBe(2 * PRICE);

    // Recovery ends it: settled, recorded in the ledger (reconciling its unknown record), its price spent from the hold.
    const done = await recoverPayments(restarted.client, { staleAfterMs: 0 });
    expect(done).toEqual([expect.objectContaining({ action: "settled" })]);
    expect(done[0]!.reason).toMatch(/charged its voucher/);
    expect(await w.journal.unfinished()).toEqual([]);
    expect(await recoverPayments(restarted.client, { staleAfterMs: 0 })).toEqual([]);

    // Another key pays on the channel, once, with no correction round.
    expect((await ask(w, restarted.pay(), "next")).status).toBe(200);
    expect(sent(w, "next")).toEqual([String(3 * PRICE)]);
    expect(await sellerCount(channel)).toBe(3 * PRICE);
    expect(charges(w)).toEqual({ first: 1, lost: 1, next: 1 });
    expect(settledRecords(w)).toEqual({ [keyOf(w, "first")]: 1, [keyOf(w, "lost")]: 1, [keyOf(w, "next")]: 1 });
    const lost = w.ledger.list.find((r) => r.outcome === "settled" && r.attempt === done[0]!.entry.id);
    expect(lost).toMatchObject({ kind: "voucher", channel, settledAmount: String(PRICE) });
    expect(await w.budgetStore.usage(BUDGET)).toEqual({ spent: 3 * PRICE, reserved: DEPOSIT - 3 * PRICE });
    // The seller's claim on chain agrees.
    await stack.seller.batch!.manager.claim();
    expect(await stack.batch!.channel(channel as `0x${string}`)).toEqual({
      balance: BigInt(DEPOSIT),
      totalClaimed: BigInt(3 * PRICE),
    });
  });

  it("killed after signing, and another key paid on the channel meanwhile: that call takes the amount (the seller never had the first), the key asked again pays afresh, once", async () => {
    const w = await world();
    const channel = await open(w);
    await expect(
      ask(w, life(w, { journal: dyingAfterSigned(w.journal) }).pay(neverSent), "died"),
    ).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    const died = w.journal.entries().find((e) => e.key === keyOf(w, "died"))!;
    expect(died.state).toBe("signed");
    expect(await w.channels.peek(channel)).toMatchObject({ signed: String(2 * PRICE), owners: { 2000: died.id } });

    // Another process pays another key: never on the held amount. Its voucher above it is refused with the seller's
    // count (the held one was never charged), which drops the held one; the call then takes that amount.
    const other = life(w);
    expect((await ask(w, other.pay(), "other")).status).toBe(200);
    expect(sent(w, "other")).toEqual([String(3 * PRICE), String(2 * PRICE)]);
    expect((await w.channels.peek(channel))?.ended?.[died.id]).toBe("dropped");

    // The key asked again: its kept voucher can no longer pay for it (its amount went to the other call), so it is
    // ended expired and the key pays afresh, once.
    expect((await ask(w, other.pay(), "died")).status).toBe(200);
    expect(sent(w, "died")).toEqual([String(3 * PRICE)]);
    expect(
      w.journal
        .entries()
        .filter((e) => e.key === keyOf(w, "died"))
        .map((e) => e.state),
    ).toEqual(["expired", "settled"]);
    expect(await sellerCount(channel)).toBe(3 * PRICE);
    expect(charges(w)).toEqual({ first: 1, other: 1, died: 1 });
    expect(await recoverPayments(other.client, { staleAfterMs: 0 })).toEqual([]);
    expect(settledRecords(w)).toEqual({ [keyOf(w, "first")]: 1, [keyOf(w, "other")]: 1, [keyOf(w, "died")]: 1 });
    expect(await w.budgetStore.usage(BUDGET)).toEqual({ spent: 3 * PRICE, reserved: DEPOSIT - 3 * PRICE });
  });

  it("killed after signing, nobody else paid: recovery told to resend sends the kept voucher, the seller charges it once; nothing signed anew", async () => {
    const w = await world();
    const channel = await open(w);
    await expect(
      ask(w, life(w, { journal: dyingAfterSigned(w.journal) }).pay(neverSent), "kept"),
    ).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    const restarted = life(w);
    const resend: PaidFetch = (url, init) => restarted.pay()(url, init);
    const done = await recoverPayments(restarted.client, { staleAfterMs: 0, resend });
    expect(done).toEqual([expect.objectContaining({ action: "settled" })]);
    expect(sent(w, "kept")).toEqual([String(2 * PRICE)]);
    expect(await sellerCount(channel)).toBe(2 * PRICE);
    expect(charges(w)).toEqual({ first: 1, kept: 1 });
    // The channel took the answer: the next call builds on it directly.
    expect(await w.channels.peek(channel)).toMatchObject({ charged: String(2 * PRICE) });
    expect((await w.channels.peek(channel))?.owners).toBeUndefined();
    expect(settledRecords(w)).toEqual({ [keyOf(w, "first")]: 1, [keyOf(w, "kept")]: 1 });
    expect(await w.budgetStore.usage(BUDGET)).toEqual({ spent: 2 * PRICE, reserved: DEPOSIT - 2 * PRICE });
    // The key asked again: paid already, nothing sent.
    await expect(ask(w, restarted.pay(), "kept")).rejects.toMatchObject({ code: "PAYMENT_ALREADY_ATTEMPTED" });
    expect(sent(w, "kept")).toHaveLength(1);
  });

  it("killed after signing the deposit that opens the channel: the next call does not build on it (the chain shows it never landed), deposits afresh; the first key pays afresh, its deposit let go of the budget", async () => {
    const w = await world();
    await expect(
      ask(w, life(w, { journal: dyingAfterSigned(w.journal) }).pay(neverSent), "opening"),
    ).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    // The budget holds the deposit that never landed.
    expect(await w.budgetStore.usage(BUDGET)).toEqual({ spent: 0, reserved: DEPOSIT });

    const restarted = life(w);
    const response = await ask(w, restarted.pay(), "second");
    expect(response.status).toBe(200);
    const channel = getPaymentReceipt(response)!.channel!.id;
    // One call's price: nothing charged for the voucher that never left.
    expect(sent(w, "second")).toEqual([String(PRICE)]);
    expect(await sellerCount(channel)).toBe(PRICE);

    expect((await ask(w, restarted.pay(), "opening")).status).toBe(200);
    expect(sent(w, "opening")).toEqual([String(2 * PRICE)]);
    expect(await sellerCount(channel)).toBe(2 * PRICE);
    expect(charges(w)).toEqual({ second: 1, opening: 1 });
    expect(await stack.batch!.channel(channel as `0x${string}`)).toMatchObject({ balance: BigInt(DEPOSIT) });
    expect(await w.budgetStore.usage(BUDGET)).toEqual({ spent: 2 * PRICE, reserved: DEPOSIT - 2 * PRICE });
  });
});
