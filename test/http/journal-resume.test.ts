/**
 * A key asked again whose payment the journal keeps, the chain scripted (the scheme's `settlement`): a kept payment
 * past its validity is looked up, ended `expired` (its reservation released) when the chain says it can no longer move
 * money, and sent again otherwise; a channel's voucher the seller charged is never sent twice. And how long a signed
 * payment is held valid, on a mocked clock. test/interop/journal.test.ts proves the expired path on anvil.
 */
import { HttpResponse } from "msw";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  budget,
  createX402Client,
  memoryBudgetStore,
  memoryJournalStore,
  memoryLedger,
  paymentJournal,
  type BudgetStore,
  type JournalEntry,
  type SettlementStatus,
} from "../../src";
import { exactEvm, type EvmSettlement } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { useMswServer } from "../support/msw";
import {
  PATH,
  SELLER,
  TX_HASH,
  createSeller,
  settlementHeader,
  v1Challenge,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { journaled } from "../support/store-contracts";
import { account, countingSigner } from "../support/wallets";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const KEY = "order_0000000000000042";
const BUDGET = { key: "j:client", limit: 1_000_000, windowMs: undefined };

afterEach(() => {
  vi.useRealTimers();
});

const FAILED: SettlementStatus = { state: "failed", transaction: undefined, reason: "expired unused" };
const PENDING: SettlementStatus = { state: "pending", transaction: undefined, reason: "it can still move money" };
const SETTLED: SettlementStatus = { state: "settled", transaction: undefined, amount: "10000", reason: "charged" };

/** A scheme's chain that answers `answer` (or throws it), and the attempts it was asked about. */
function scriptedChain(answer: SettlementStatus | Error) {
  const asked: (string | undefined)[] = [];
  const settlement: EvmSettlement = {
    async check(query) {
      asked.push(query.attempt);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return { settlement, asked };
}

/** A process over the shared stores: a budget of $1 named "j", a journal, a ledger; its signatures counted. */
function processOn(
  stores: { journal: ReturnType<typeof memoryJournalStore>; budget: BudgetStore },
  settlement?: EvmSettlement,
) {
  const { signer, calls } = countingSigner();
  const ledger = memoryLedger();
  const client = createX402Client({
    schemes: [exactEvm({ signer, ...(settlement && { settlement }) })],
    plugins: [budget({ limit: "$1", name: "j", store: stores.budget }), paymentJournal(stores.journal), ledger],
  });
  return { pay: wrapFetchWithPayment(fetch, client), signs: calls, ledger };
}

/** A fetch whose paid requests never get an answer: the process dies with them in flight. */
const hang = (input: RequestInfo | URL, init?: RequestInit) =>
  new Headers(init?.headers).has("payment-signature") ? new Promise<Response>(() => {}) : fetch(input, init);

/** A first process signs a keyed payment and dies before it leaves; the clock then moves `later` ms past its validity. */
async function keptThenLater(later: number | undefined) {
  // A seller that settles whatever header comes (one past its validity too: the chain, not the seller, is asked).
  const seller = createSeller({
    intercept: (request) =>
      request.headers.has("payment-signature")
        ? HttpResponse.json(
            { data: "premium" },
            { headers: settlementHeader(2, { success: true, transaction: TX_HASH, network: "eip155:84532" }) },
          )
        : undefined,
  });
  server.use(seller.handler);
  const stores = { journal: memoryJournalStore(), budget: memoryBudgetStore() };
  const { signer } = countingSigner();
  const client = createX402Client({
    schemes: [exactEvm({ signer })],
    plugins: [budget({ limit: "$1", name: "j", store: stores.budget }), paymentJournal(stores.journal)],
  });
  void wrapFetchWithPayment(hang, client)(url, { x402: { paymentId: KEY } });
  await expect.poll(() => stores.journal.entries()[0]?.state).toBe("signed");
  const kept = stores.journal.entries()[0]!;
  if (later !== undefined) vi.useFakeTimers({ toFake: ["Date"], now: kept.validBefore! * 1000 + later });
  const sent = () => seller.requests.map((r) => r.headers["payment-signature"]).filter(Boolean);
  return { stores, kept, sent };
}

describe("a keyed request whose kept payment is past its validity", () => {
  it("failed on chain: ended expired and its reservation released; the key pays afresh, once, spent once", async () => {
    const { stores, kept, sent } = await keptThenLater(1);
    expect(await stores.budget.usage(BUDGET)).toEqual({ spent: 0, reserved: 10_000 });
    const chain = scriptedChain(FAILED);
    const next = processOn(stores, chain.settlement);
    expect((await next.pay(url, { x402: { paymentId: KEY } })).status).toBe(200);
    expect(chain.asked).toEqual([kept.id]);
    expect(next.signs).toHaveLength(1);
    expect(sent()).toHaveLength(1);
    expect(sent()[0]).not.toBe(kept.paymentHeader!.value);
    expect(stores.journal.entries().map((e) => [e.id === kept.id, e.state])).toEqual([
      [true, "expired"],
      [false, "settled"],
    ]);
    expect(stores.journal.entries()[0]).toMatchObject({ at: kept.validBefore! * 1000 + 1 });
    expect(await stores.budget.usage(BUDGET)).toEqual({ spent: 10_000, reserved: 0 });
    expect(next.ledger.list.map((r) => r.outcome)).toEqual(["settled"]);
  });

  it.each([
    ["still pending on chain", PENDING, 1],
    ["the chain cannot be asked", new Error("the node is down"), 1],
    ["failed on chain, but exactly at its validity (not past it)", FAILED, 0],
  ] as const)("%s: the kept header is sent again, nothing signed anew, spent once", async (_, answer, later) => {
    const { stores, kept, sent } = await keptThenLater(later);
    const chain = scriptedChain(answer);
    const next = processOn(stores, chain.settlement);
    expect((await next.pay(url, { x402: { paymentId: KEY } })).status).toBe(200);
    expect(next.signs).toHaveLength(0);
    expect(sent()).toEqual([kept.paymentHeader!.value]);
    expect(stores.journal.entries().map((e) => e.state)).toEqual(["settled"]);
    expect(await stores.budget.usage(BUDGET)).toEqual({ spent: 10_000, reserved: 0 });
  });

  it("still valid: the chain is not asked, the kept header goes", async () => {
    const { stores, kept, sent } = await keptThenLater(undefined);
    const chain = scriptedChain(FAILED);
    const next = processOn(stores, chain.settlement);
    expect((await next.pay(url, { x402: { paymentId: KEY } })).status).toBe(200);
    expect(chain.asked).toEqual([]);
    expect(sent()).toEqual([kept.paymentHeader!.value]);
  });

  it("failed on chain, but its reservation cannot be released (the budget's store fails): not expired, the new attempt refused, nothing signed, still counted", async () => {
    const { stores, kept, sent } = await keptThenLater(1);
    const failing = { ...stores, budget: { ...stores.budget, release: () => Promise.reject(new Error("Redis away")) } };
    const next = processOn(failing, scriptedChain(FAILED).settlement);
    await expect(next.pay(url, { x402: { paymentId: KEY } })).rejects.toMatchObject({
      code: "PAYMENT_REFUSED",
      message: expect.stringContaining(`being paid by another attempt (${kept.id}, signed)`),
    });
    expect(next.signs).toHaveLength(0);
    expect(sent()).toEqual([]);
    expect(stores.journal.entries()).toEqual([kept]);
    expect(await stores.budget.usage(BUDGET)).toEqual({ spent: 0, reserved: 10_000 });
  });
});

describe("a key another attempt holds, its store failing as it is read again", () => {
  it("the new attempt is refused naming no attempt: PAYMENT_REFUSED, nothing signed", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const journal = memoryJournalStore();
    await journal.put(journaled("elsewhere", { state: "signed", at: Date.now(), url }));
    // The first read sees no attempt of the key (a stale read); the second, to name the holder, fails.
    let reads = 0;
    const stale = {
      put: journal.put.bind(journal),
      unfinished: () => journal.unfinished(),
      latest: () => (reads++ === 0 ? undefined : Promise.reject(new Error("Redis away"))),
    };
    const next = processOn({ journal: stale as never, budget: memoryBudgetStore() });
    await expect(next.pay(url, { x402: { paymentId: KEY } })).rejects.toMatchObject({
      code: "PAYMENT_REFUSED",
      message: `The key ${KEY} is being paid by another attempt: nothing was signed anew. Ask again once it ends: its payment is then sent again, never a new one.`,
    });
    expect(next.signs).toHaveLength(0);
  });
});

describe("a keyed request whose kept payment is a channel's voucher", () => {
  /** A voucher entry of the key, as a batch-settlement payment leaves it, for the seller's route. */
  const voucher = (over: Partial<JournalEntry>) =>
    journaled("voucher-attempt", {
      url,
      key: KEY,
      paymentHeader: { name: "PAYMENT-SIGNATURE", value: btoa(JSON.stringify({ x402Version: 2 })) },
      terms: { ...journaled("x").terms, kind: "voucher", requirement: v2Requirement() } as JournalEntry["terms"],
      ...over,
    });

  it.each([
    ["charged and answered (settled)", { state: "settled" } as const, PENDING, "and answered it"],
    ["its answer lost, charged as its channel says", { state: "unknown" } as const, SETTLED, "its answer was lost"],
  ])("%s: PAYMENT_ALREADY_ATTEMPTED, nothing sent or signed", async (_, over, answer, said) => {
    const seller = createSeller();
    server.use(seller.handler);
    const stores = { journal: memoryJournalStore(), budget: memoryBudgetStore() };
    await stores.journal.put(voucher(over));
    const chain = scriptedChain(answer);
    const next = processOn(stores, chain.settlement);
    await expect(next.pay(url, { x402: { paymentId: KEY } })).rejects.toMatchObject({
      code: "PAYMENT_ALREADY_ATTEMPTED",
      message: expect.stringContaining(
        `The key ${KEY} was paid already: the seller charged its exact voucher (${said})`,
      ),
    });
    expect(chain.asked).toEqual(over.state === "settled" ? [] : ["voucher-attempt"]);
    expect(next.signs).toHaveLength(0);
    expect(seller.requests.filter((r) => r.headers["payment-signature"])).toEqual([]);
  });

  it("dropped by its channel (failed), whatever its validity: ended expired, and the key pays afresh", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const stores = { journal: memoryJournalStore(), budget: memoryBudgetStore() };
    await stores.journal.put(voucher({ state: "signed", validBefore: 2 ** 40 }));
    const next = processOn(stores, scriptedChain(FAILED).settlement);
    expect((await next.pay(url, { x402: { paymentId: KEY } })).status).toBe(200);
    expect(next.signs).toHaveLength(1);
    expect(stores.journal.entries().map((e) => e.state)).toEqual(["expired", "settled"]);
  });
});

describe("how long a signed payment is held valid (the journal's validBefore)", () => {
  /** Not a whole second: ceil and floor differ. */
  const NOW = 1_800_000_000_123;

  // A requirement's maxTimeoutSeconds is a positive whole number (the handshake refuses others), so the journal's
  // default hour is never reached through a 402.
  it.each([
    ["60 s, as the requirement says", 60, 60],
    ["600 s", 600, 600],
  ])("%s", async (_, maxTimeoutSeconds, seconds) => {
    vi.useFakeTimers({ toFake: ["Date"], now: NOW });
    const challenge = v2Challenge({ accepts: [v2Requirement({ maxTimeoutSeconds })] });
    server.use(
      createSeller({
        challenge,
        intercept: (r) => (r.headers.has("payment-signature") ? HttpResponse.error() : undefined),
      }).handler,
    );
    const journal = memoryJournalStore();
    const client = createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [paymentJournal(journal)] });
    const error = await wrapFetchWithPayment(fetch, client)(url).catch((e) => e);
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(journal.entries()[0]).toMatchObject({ state: "unknown", validBefore: 1_800_000_001 + seconds });
  });

  it("a v1 requirement's network is written as its CAIP-2 id", async () => {
    server.use(createSeller({ challenge: v1Challenge() }).handler);
    const journal = memoryJournalStore();
    const client = createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [paymentJournal(journal)] });
    expect((await wrapFetchWithPayment(fetch, client)(url)).status).toBe(200);
    expect(journal.entries()[0]).toMatchObject({ state: "settled", network: "eip155:84532", scheme: "exact" });
  });
});

describe("paymentJournal's own options", () => {
  it("a store without put or latest, and an empty name, are INVALID_CONFIG", () => {
    const store = memoryJournalStore();
    for (const bad of [{ ...store, put: undefined }, { ...store, latest: undefined }, null])
      expect(() => paymentJournal(bad as never)).toThrow(
        expect.objectContaining({
          code: "INVALID_CONFIG",
          message: expect.stringMatching(/^paymentJournal: give it a journal store/),
        }),
      );
    expect(() => paymentJournal(store, { name: "" })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining("journal.name") }),
    );
  });
});
