// The payment journal against the unmodified reference seller and facilitator on anvil: a paid request whose answer
// is lost after the seller settled leaves an `unknown` entry; recovery asks the chain (the authorization used) and
// ends it settled, recorded in the ledger; a payment signed and never sent is kept, its money never moved, and after
// its validity (the chain's clock and ours past it) expired. What a budget reserved for each attempt (in memory and in
// Redis) is ended with it: spent when it settled, released when it never could move money, counted until then.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  budget,
  createX402Client,
  memoryBudgetStore,
  memoryJournalStore,
  memoryLedger,
  paymentJournal,
  recoverPayments,
  type BudgetStore,
  type JournalStore,
  type PaidFetch,
} from "../../src";
import { evmSettlement, exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { redisBudgetStore } from "../../src/redis";
import { PRICE_ATOMIC, fundedBuyer, rpc, startInteropStack, type Buyer, type InteropStack } from "../localnet/index.js";
import { connectRedis, startRedis, type RedisServer } from "../support/redis";

let stack: InteropStack;
let redisServer: RedisServer;
let redis: Awaited<ReturnType<typeof connectRedis>>;
beforeAll(async () => {
  [stack, redisServer] = await Promise.all([startInteropStack(), startRedis()]);
  redis = await connectRedis(redisServer.url);
});
afterAll(async () => {
  redis?.destroy();
  await Promise.all([stack?.stop(), redisServer?.stop()]);
});

const BUDGET = { key: "journal:client", limit: 1_000_000, windowMs: undefined };
const LIMIT = "$1";
let run = 0;
/** A budget store of each kind, as a restarted process reads it again (Redis: a new store over the same keys). */
const budgetStores: Record<string, () => () => BudgetStore> = {
  memory: () => {
    const store = memoryBudgetStore();
    return () => store;
  },
  Redis: () => {
    const prefix = `journal-${++run}:`;
    return () => redisBudgetStore(redis, { prefix });
  },
};

/** A client of `buyer` with a journal over `store`, a ledger, a budget of $1, and a chain to ask. */
function life(
  buyer: Buyer,
  store: JournalStore,
  budgetStore: BudgetStore = memoryBudgetStore(),
  ledger = memoryLedger(),
) {
  const settlement = evmSettlement({ rpc: stack.anvil.rpcUrl });
  const client = createX402Client({
    schemes: [exactEvm({ signer: buyer.account, settlement })],
    // The journal after the budget: it writes its intent first all the same, so it names the budget's reservation.
    plugins: [budget({ limit: LIMIT, name: "journal", store: budgetStore }), paymentJournal(store), ledger],
  });
  return { client, ledger, usage: () => budgetStore.usage(BUDGET) };
}

/** A fetch whose paid requests never get an answer: the process dies with them in flight. */
const hang = (input: RequestInfo | URL, init?: RequestInit) =>
  new Headers(init?.headers).has("payment-signature") ? new Promise<Response>(() => {}) : fetch(input, init);

describe.each(Object.keys(budgetStores))("recoverPayments on anvil, the budget in %s", (kind) => {
  it("an answer lost after the seller settled: recovery finds the authorization used, ends it settled, records it, spends its reservation", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const store = memoryJournalStore();
    const budgetStore = budgetStores[kind]!();
    const ledger = memoryLedger();
    const { client, usage } = life(buyer, store, budgetStore(), ledger);
    // The seller answers, and the answer is lost on its way back (every time it is asked).
    const losing = async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await fetch(input, init);
      if (new Headers(init?.headers).has("payment-signature")) throw new TypeError("fetch failed: connection reset");
      return response;
    };
    const pay = wrapFetchWithPayment(losing, client);
    await expect(pay(`${stack.seller.url}/weather`)).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    expect(store.entries()).toEqual([expect.objectContaining({ state: "unknown" })]);
    // Not known yet: counted as reserved, under the attempt's id, for whoever learns the end.
    expect(await usage()).toEqual({ spent: 0, reserved: 1000 });

    // The process comes back.
    const restarted = life(buyer, store, budgetStore(), ledger);
    const done = await recoverPayments(restarted.client, { staleAfterMs: 0 });
    expect(done).toEqual([expect.objectContaining({ action: "settled" })]);
    const [entry] = store.entries();
    expect(entry).toMatchObject({ state: "settled", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await store.unfinished()).toEqual([]);
    // The ledger's `unknown` record of the attempt is reconciled, with the transaction found on chain.
    const [unknown, settled] = ledger.list;
    expect(unknown).toMatchObject({ outcome: "unknown", attempt: entry!.id });
    expect(settled).toMatchObject({
      outcome: "settled",
      amount: String(PRICE_ATOMIC),
      payer: buyer.address,
      attempt: entry!.id,
      reconciles: unknown!.id,
      transaction: entry!.transaction,
    });
    expect(ledger.list).toHaveLength(2);
    expect(await restarted.usage()).toEqual({ spent: 1000, reserved: 0 });
    // Recovering again finds nothing, and spends nothing twice.
    expect(await recoverPayments(restarted.client, { staleAfterMs: 0 })).toEqual([]);
    expect(await restarted.usage()).toEqual({ spent: 1000, reserved: 0 });
  });

  it("signed and never sent (the process died before it left): kept, unmoved and still reserved; the key asked again sends it, settles once and spends the reservation", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const store = memoryJournalStore();
    const budgetStore = budgetStores[kind]!();
    const { client } = life(buyer, store, budgetStore());
    const stop = new AbortController();
    const key = `order_${kind}_kept_000001`;
    const url = `${stack.seller.url}/weather`;
    void wrapFetchWithPayment(hang, client)(url, { signal: stop.signal, x402: { paymentId: key } }).catch(() => {});
    await expect.poll(() => store.entries()[0]?.state).toBe("signed");
    const restarted = life(buyer, store, budgetStore());
    const done = await recoverPayments(restarted.client, { staleAfterMs: 0 });
    expect(done).toEqual([expect.objectContaining({ action: "kept" })]);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n);
    expect(await restarted.usage()).toEqual({ spent: 0, reserved: 1000 });

    const response = await wrapFetchWithPayment(fetch, restarted.client)(url, { x402: { paymentId: key } });
    expect(response.status).toBe(200);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    expect(store.entries()).toEqual([expect.objectContaining({ state: "settled", key })]);
    expect(await restarted.usage()).toEqual({ spent: 1000, reserved: 0 });
    stop.abort();
  });

  it("recovery told to resend (a paid fetch): a kept GET is sent again now, as it was; settled once, recorded with its transaction, spent", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const store = memoryJournalStore();
    const budgetStore = budgetStores[kind]!();
    const { client } = life(buyer, store, budgetStore());
    const stop = new AbortController();
    void wrapFetchWithPayment(hang, client)(`${stack.seller.url}/weather`, { signal: stop.signal }).catch(() => {});
    await expect.poll(() => store.entries()[0]?.state).toBe("signed");
    stop.abort();
    const [signed] = store.entries();
    // A POST the journal holds (its body is not kept): recovery cannot send it again as it was, so it stays kept.
    const payload = JSON.parse(atob(signed!.paymentHeader!.value));
    payload.payload.authorization.nonce = `0x${"5a".repeat(32)}`;
    const paymentHeader = { ...signed!.paymentHeader!, value: btoa(JSON.stringify(payload)) };
    await store.put({
      ...signed!,
      id: "a-post",
      method: "POST",
      paymentHeader,
      terms: { ...signed!.terms, method: "POST" },
    });
    const ledger = memoryLedger();
    const restarted = life(buyer, store, budgetStore(), ledger);
    const sent: string[] = [];
    const watching = (input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(new Headers(init?.headers).get("payment-signature") ?? "unpaid");
      return fetch(input, init);
    };
    const paid = wrapFetchWithPayment(watching, restarted.client);
    const asked: string[] = [];
    const resend: PaidFetch = (url, init) => (asked.push(init.method), paid(url, init));
    const done = await recoverPayments(restarted.client, { staleAfterMs: 0, resend });
    expect(done.map((d) => [d.entry.method, d.action])).toEqual([
      ["GET", "settled"],
      ["POST", "kept"],
    ]);
    expect(done[0]!.reason).toMatch(/sent again/);
    expect(asked).toEqual(["GET"]);
    // The kept header, as it was: nothing signed anew, nothing asked unpaid.
    expect(sent).toEqual([signed!.paymentHeader!.value]);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    const [entry] = store.entries();
    expect(entry).toMatchObject({ state: "settled", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(ledger.list).toEqual([
      expect.objectContaining({ outcome: "settled", attempt: entry!.id, transaction: entry!.transaction }),
    ]);
    expect(await restarted.usage()).toEqual({ spent: 1000, reserved: 0 });
  });

  it("killed after the intent, before signing: recovery drops it and releases its reservation", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const store = memoryJournalStore();
    const budgetStore = budgetStores[kind]!();
    // A wallet that never answers: the process dies while it is asked.
    const signer = { ...buyer.account, signTypedData: () => new Promise<never>(() => {}) };
    const client = createX402Client({
      schemes: [exactEvm({ signer })],
      plugins: [paymentJournal(store), budget({ limit: LIMIT, name: "journal", store: budgetStore() })],
    });
    void wrapFetchWithPayment(fetch, client)(`${stack.seller.url}/weather`).catch(() => {});
    await expect.poll(() => budgetStore().usage(BUDGET)).toEqual({ spent: 0, reserved: 1000 });
    expect(store.entries()).toEqual([expect.objectContaining({ state: "intent" })]);
    const restarted = life(buyer, store, budgetStore());
    expect(await recoverPayments(restarted.client, { staleAfterMs: 0 })).toEqual([
      expect.objectContaining({ action: "dropped" }),
    ]);
    expect(await restarted.usage()).toEqual({ spent: 0, reserved: 0 });
  });
});

describe("the journal ends an entry last, once the ledger and the budget took the outcome", () => {
  it("a ledger that failed leaves the entry open; recovery records the payment then, once", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const store = memoryJournalStore();
    const ledger = memoryLedger();
    const append = ledger.append.bind(ledger);
    let failing = true;
    ledger.append = (record) => (failing ? Promise.reject(new Error("the ledger's disk is full")) : append(record));
    const { client, usage } = life(buyer, store, memoryBudgetStore(), ledger);
    const response = await wrapFetchWithPayment(fetch, client)(`${stack.seller.url}/weather`);
    expect(response.status).toBe(200);
    expect(store.entries()).toEqual([expect.objectContaining({ state: "signed" })]);
    expect(await usage()).toEqual({ spent: 1000, reserved: 0 });

    failing = false;
    const done = await recoverPayments(client, { staleAfterMs: 0 });
    expect(done.map((d) => d.action)).toEqual(["settled"]);
    expect(ledger.list).toEqual([expect.objectContaining({ outcome: "settled", attempt: store.entries()[0]!.id })]);
    expect(await usage()).toEqual({ spent: 1000, reserved: 0 });
  });

  it("killed after the ledger wrote the settlement, before the journal's end: recovery ends it and records nothing twice", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const inner = memoryJournalStore();
    // The process dies as it would write `settled`: that write never happens.
    const store: JournalStore = {
      latest: (key) => inner.latest(key),
      unfinished: () => inner.unfinished(),
      put: (entry) => (entry.state === "settled" ? Promise.reject(new Error("killed")) : inner.put(entry)),
    };
    const ledger = memoryLedger();
    const { client } = life(buyer, store, memoryBudgetStore(), ledger);
    expect((await wrapFetchWithPayment(fetch, client)(`${stack.seller.url}/weather`)).status).toBe(200);
    expect(ledger.list).toEqual([expect.objectContaining({ outcome: "settled" })]);
    expect(inner.entries()).toEqual([expect.objectContaining({ state: "signed" })]);

    const done = await recoverPayments(life(buyer, inner, memoryBudgetStore(), ledger).client, { staleAfterMs: 0 });
    expect(done.map((d) => d.action)).toEqual(["settled"]);
    expect(inner.entries()).toEqual([expect.objectContaining({ state: "settled" })]);
    expect(ledger.list).toHaveLength(1);
  });
});

// Last: it moves the chain's clock forward for good.
describe("a signed payment held past its validity", () => {
  afterAll(() => {
    vi.useRealTimers();
  });

  it("is kept while valid, then expired (the chain's clock and ours past it): its reservation released, and the key pays afresh, once", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const store = memoryJournalStore();
    const budgetStore = budgetStores.Redis!();
    const { client } = life(buyer, store, budgetStore());
    const stop = new AbortController();
    const key = "order_expired_0000000001";
    const url = `${stack.seller.url}/weather`;
    // Two payments signed and never sent: one keyed, one not.
    const hung = wrapFetchWithPayment(hang, client);
    void hung(url, { signal: stop.signal, x402: { paymentId: key } }).catch(() => {});
    void hung(url, { signal: stop.signal }).catch(() => {});
    await expect.poll(() => store.entries().map((e) => e.state)).toEqual(["signed", "signed"]);
    stop.abort();
    const [keyed, loose] = [store.entries().find((e) => e.key), store.entries().find((e) => !e.key)];
    expect(
      (await recoverPayments(life(buyer, store, budgetStore()).client, { staleAfterMs: 0 })).map((d) => d.action),
    ).toEqual(["kept", "kept"]);
    expect(await budgetStore().usage(BUDGET)).toEqual({ spent: 0, reserved: 2000 });

    // Time passes beyond what they were signed for: on the chain and here (the seller and facilitator share this clock).
    const later = (Math.max(keyed!.validBefore!, loose!.validBefore!) + 30) * 1000;
    await rpc(stack.anvil.rpcUrl, "evm_mine", [Math.ceil(later / 1000)]);
    vi.useFakeTimers({ toFake: ["Date"], now: later });
    const restarted = life(buyer, store, budgetStore());

    // The key is asked again: its payment cannot move money any more, so its reservation goes and a new one is
    // signed, and paid once.
    const response = await wrapFetchWithPayment(fetch, restarted.client)(url, { x402: { paymentId: key } });
    expect(response.status).toBe(200);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    expect(await restarted.usage()).toEqual({ spent: 1000, reserved: 1000 });
    const forKey = store.entries().filter((e) => e.key === key);
    expect(forKey.map((e) => e.state)).toEqual(["expired", "settled"]);
    expect(forKey[1]!.paymentHeader!.value).not.toBe(keyed!.paymentHeader!.value);

    // The other is ended by recovery: expired, released.
    const done = await recoverPayments(restarted.client, { staleAfterMs: 0 });
    expect(done).toEqual([
      expect.objectContaining({ action: "expired", entry: expect.objectContaining({ id: loose!.id }) }),
    ]);
    expect(done[0]!.reason).toMatch(/expired unused/);
    expect(await restarted.usage()).toEqual({ spent: 1000, reserved: 0 });
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
  });
});
