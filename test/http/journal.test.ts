/**
 * The payment journal against msw sellers: what is written before signing, before sending and at the end; a keyed
 * request whose payment is kept sends it again (after a "restart": a new client on the same store) and never signs
 * anew; recovery ends what a dead process left. The chain-checked paths of recovery run on anvil (test/interop).
 */
import { appendFileSync, existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import {
  budget,
  createX402Client,
  memoryBudgetStore,
  memoryJournalStore,
  memoryLedger,
  paymentJournal,
  quoteCache,
  recoverPayments,
  type JournalEntry,
  type JournalStore,
} from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { throwIfAborted } from "../../src/errors";
import { fileJournalStore } from "../../src/file";
import { useMswServer } from "../support/msw";
import { journaled } from "../support/store-contracts";
import { PATH, SELLER, account, createSeller, payingClient } from "../support/seller";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const KEY = "order_0000000000000042";
/** The budget entry of `budget({ limit: "$1", name: "j" })`, as its store keeps it. */
const BUDGET = { key: "j:client", limit: 1_000_000, windowMs: undefined };

/** A client with a journal over `store` (and a ledger), its signatures counted: one per process "life". */
function life(store: JournalStore) {
  const ledger = memoryLedger();
  const { client, signs } = payingClient({ plugins: [paymentJournal(store), ledger] });
  return { client, signs, ledger, pay: wrapFetchWithPayment(fetch, client) };
}

describe("what the journal writes", () => {
  it("the intent before signing, the signed header before it leaves, the settlement at the end", async () => {
    const store = memoryJournalStore();
    const seen: { atSigning?: JournalEntry[]; atSeller?: JournalEntry[] } = {};
    const seller = createSeller({
      intercept: (request) => {
        if (request.headers.has("payment-signature")) seen.atSeller = [...store.entries()];
        return undefined;
      },
    });
    server.use(seller.handler);
    const signer = {
      ...account,
      signTypedData: (request: never) => {
        seen.atSigning = [...store.entries()];
        return account.signTypedData(request);
      },
    };
    const client = createX402Client({ schemes: [exactEvm({ signer })], plugins: [paymentJournal(store)] });
    const response = await wrapFetchWithPayment(fetch, client)(url, { x402: { paymentId: KEY } });
    expect(response.status).toBe(200);
    expect(seen.atSigning).toEqual([expect.objectContaining({ state: "intent", key: KEY, amount: "10000" })]);
    const sent = seller.requests.at(-1)!.headers["payment-signature"];
    expect(seen.atSeller).toEqual([
      expect.objectContaining({ state: "signed", key: KEY, paymentHeader: { name: "PAYMENT-SIGNATURE", value: sent } }),
    ]);
    const [entry] = store.entries();
    expect(entry).toMatchObject({ state: "settled", key: KEY, network: "eip155:84532", payer: account.address });
    expect(entry!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(entry!.validBefore! * 1000).toBeGreaterThan(Date.now());
  });

  it("a signed payment is valid for the requirement's maxTimeoutSeconds from signing (60 s here); the plug-in's name", async () => {
    server.use(createSeller().handler);
    const store = memoryJournalStore();
    const journal = paymentJournal(store, { name: "audit" });
    expect(journal.name).toBe("audit");
    expect(paymentJournal(store).name).toBe("journal");
    const { client } = payingClient({ plugins: [journal] });
    const before = Math.floor(Date.now() / 1000);
    await wrapFetchWithPayment(fetch, client)(url);
    const after = Math.ceil(Date.now() / 1000);
    const { validBefore } = store.entries()[0]!;
    expect(validBefore).toBeGreaterThanOrEqual(before + 60);
    expect(validBefore).toBeLessThanOrEqual(after + 60);
  });

  it("a request without a key is journaled but matched to nothing: two GETs are two purchases", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const store = memoryJournalStore();
    const { pay, signs } = life(store);
    await pay(url);
    await pay(url);
    expect(signs).toHaveLength(2);
    expect(store.entries().map((e) => [e.state, e.key])).toEqual([
      ["settled", undefined],
      ["settled", undefined],
    ]);
  });

  it("a refusal before signing ends the intent as failed; nothing kept", async () => {
    server.use(createSeller().handler);
    const store = memoryJournalStore();
    const { client } = payingClient({
      plugins: [paymentJournal(store)],
      onBeforePayment: () => false,
    });
    await expect(wrapFetchWithPayment(fetch, client)(url, { x402: { paymentId: KEY } })).rejects.toMatchObject({
      code: "PAYMENT_REFUSED",
    });
    expect(store.entries()).toEqual([expect.objectContaining({ state: "failed", code: "PAYMENT_REFUSED" })]);
    expect(await store.unfinished()).toEqual([]);
  });

  it("a store that cannot write the intent refuses the payment before signing: PAYMENT_REFUSED, typed", async () => {
    server.use(createSeller().handler);
    const failing: JournalStore = { ...memoryJournalStore(), put: async () => Promise.reject(new Error("read-only")) };
    const { pay, signs } = life(failing);
    await expect(pay(url)).rejects.toMatchObject({
      code: "PAYMENT_REFUSED",
      message: expect.stringContaining("could not write the payment's intent (read-only): nothing was signed"),
    });
    expect(signs).toHaveLength(0);
  });

  it("a store that cannot write the signed payment stops it before it leaves: PAYMENT_NOT_SENT", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const store = memoryJournalStore();
    const failing: JournalStore = {
      ...store,
      put: async (entry) => {
        if (entry.state === "signed") throw new Error("disk full");
        return store.put(entry);
      },
    };
    const { pay } = life(failing);
    await expect(pay(url, { x402: { paymentId: KEY } })).rejects.toMatchObject({
      code: "PAYMENT_NOT_SENT",
      message: expect.stringContaining("disk full"),
    });
    expect(seller.payments).toHaveLength(0);
  });
});

describe("a plug-in that keeps the signed payment", () => {
  it("stopped by the request's abort while it keeps it: ABORTED as it is (not PAYMENT_NOT_SENT), nothing sent", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const controller = new AbortController();
    const keeper = {
      name: "keeper",
      async onSigned(_: unknown, request: { signal?: AbortSignal | undefined }) {
        controller.abort(new Error("the app gave up"));
        throwIfAborted(request.signal);
      },
    };
    const { client } = payingClient({ plugins: [keeper] });
    const error = await wrapFetchWithPayment(fetch, client)(url, { signal: controller.signal }).catch((e) => e);
    expect(error).toMatchObject({ code: "ABORTED", name: "AbortError" });
    expect(seller.requests.filter((r) => r.headers["payment-signature"])).toHaveLength(0);
  });

  it("failing with an error of its own: PAYMENT_NOT_SENT naming it, or `a plug-in` when it has no name", async () => {
    server.use(createSeller().handler);
    for (const [name, named] of [
      ["keeper", "keeper"],
      [undefined, "a plug-in"],
    ] as const) {
      const keeper = {
        ...(name && { name }),
        onSigned() {
          throw new Error("disk full");
        },
      };
      const { client } = payingClient({ plugins: [keeper] });
      const error = await wrapFetchWithPayment(fetch, client)(url).catch((e) => e);
      expect(error).toMatchObject({
        code: "PAYMENT_NOT_SENT",
        message: `${named} could not keep the signed payment (disk full), so it was not sent.`,
        details: { url, method: "GET", requirement: expect.objectContaining({ scheme: "exact" }) },
      });
    }
  });
});

describe("the journal hears an outcome last", () => {
  it("and ends its entry only once the ledger and the budget took it: a ledger or a budget store that failed leaves it open", async () => {
    server.use(createSeller().handler);
    const failingLedger = memoryLedger();
    failingLedger.append = () => Promise.reject(new Error("the ledger's disk is full"));
    const failingBudget = { ...memoryBudgetStore(), commit: () => Promise.reject(new Error("Redis went away")) };
    const cases = [
      [failingLedger, budget({ limit: "$1", name: "j" })],
      [memoryLedger(), budget({ limit: "$1", name: "j", store: failingBudget })],
      [memoryLedger(), budget({ limit: "$1", name: "j" })],
    ] as const;
    const states: string[] = [];
    for (const [ledger, spend] of cases) {
      const store = memoryJournalStore();
      const { client } = payingClient({ plugins: [paymentJournal(store), ledger, spend] });
      expect((await wrapFetchWithPayment(fetch, client)(url)).status).toBe(200);
      states.push(store.entries()[0]!.state);
    }
    expect(states).toEqual(["signed", "signed", "settled"]);
  });

  it("writes its intent before any budget reserves, wherever it stands among the plug-ins", async () => {
    server.use(createSeller().handler);
    const journal = memoryJournalStore();
    const inner = memoryBudgetStore();
    const seen: string[][] = [];
    const watching = {
      ...inner,
      reserve: (...args: Parameters<typeof inner.reserve>) => {
        seen.push(journal.entries().map((e) => `${e.state} ${e.id === args[1]}`));
        return inner.reserve(...args);
      },
    };
    const { client } = payingClient({ plugins: [budget({ limit: "$1", store: watching }), paymentJournal(journal)] });
    await wrapFetchWithPayment(fetch, client)(url);
    // The budget reserved under the attempt's id, which the intent already named.
    expect(seen).toEqual([["intent true"]]);
  });

  it("a process killed between the intent and signing: recovery drops the entry and releases what the budget reserved under it", async () => {
    server.use(createSeller().handler);
    const journal = memoryJournalStore();
    const budgetStore = memoryBudgetStore();
    const plugins = () => [budget({ limit: "$1", name: "j", store: budgetStore }), paymentJournal(journal)];
    // A wallet that never answers: the process dies while it is asked.
    const signer = { ...account, signTypedData: () => new Promise<never>(() => {}) };
    const dying = createX402Client({ schemes: [exactEvm({ signer })], plugins: plugins() });
    void wrapFetchWithPayment(fetch, dying)(url).catch(() => {});
    await expect.poll(() => budgetStore.usage(BUDGET)).toEqual({ spent: 0, reserved: 10_000 });
    const { client } = payingClient({ plugins: plugins() });
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((r) => r.action)).toEqual(["dropped"]);
    expect(await budgetStore.usage(BUDGET)).toEqual({ spent: 0, reserved: 0 });
    expect(journal.entries()).toEqual([expect.objectContaining({ state: "failed", code: "PAYMENT_NOT_SENT" })]);
  });

  it("an outcome not known stays reserved in the budget with a journal (ended as the chain says), spent without one", async () => {
    const lost = createSeller({
      intercept: (request) => (request.headers.has("payment-signature") ? HttpResponse.error() : undefined),
    });
    server.use(lost.handler);
    const usage: unknown[] = [];
    for (const journal of [true, false]) {
      const store = memoryBudgetStore();
      const plugins = [
        budget({ limit: "$1", name: "j", store }),
        ...(journal ? [paymentJournal(memoryJournalStore())] : []),
      ];
      const { client } = payingClient({ plugins });
      await expect(wrapFetchWithPayment(fetch, client)(url)).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
      usage.push(await store.usage(BUDGET));
    }
    expect(usage).toEqual([
      { spent: 0, reserved: 10_000 },
      { spent: 10_000, reserved: 0 },
    ]);
  });
});

describe("a keyed request after a restart", () => {
  it("whose answer was lost: the kept header is sent again, identical; nothing signed anew; the ledger records it", async () => {
    let answers = 0;
    const seller = createSeller({
      intercept: (request) => {
        // The first paid request reaches the seller, whose answer is lost (a reset connection).
        if (request.headers.has("payment-signature") && answers++ === 0) return HttpResponse.error();
        return undefined;
      },
    });
    server.use(seller.handler);
    const store = memoryJournalStore();
    const first = life(store);
    await expect(first.pay(url, { x402: { paymentId: KEY } })).rejects.toMatchObject({
      code: "PAYMENT_OUTCOME_UNKNOWN",
    });
    expect(store.entries()).toEqual([expect.objectContaining({ state: "unknown", key: KEY })]);

    // The process comes back: a new client on the same store, the same request and key.
    const second = life(store);
    const response = await second.pay(url, { x402: { paymentId: KEY } });
    expect(response.status).toBe(200);
    expect(second.signs).toHaveLength(0);
    const headers = seller.requests.map((r) => r.headers["payment-signature"]).filter(Boolean);
    expect(headers).toHaveLength(2);
    expect(headers[1]).toBe(headers[0]);
    expect(store.entries()).toEqual([expect.objectContaining({ state: "settled", key: KEY })]);
    expect(second.ledger.list).toEqual([expect.objectContaining({ outcome: "settled", url })]);
  });

  it("whose process died after signing (the entry says signed): sent again, identical, never signed anew", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const store = memoryJournalStore();
    // The first life signs, writes the signed header, and dies before the request leaves (its fetch never returns).
    const dying = life(store);
    const never = new AbortController();
    const hang = wrapFetchWithPayment(
      (input, init) =>
        new Headers(init?.headers).has("payment-signature") ? new Promise<Response>(() => {}) : fetch(input, init),
      dying.client,
    );
    void hang(url, { x402: { paymentId: KEY }, signal: never.signal }).catch(() => {});
    await expect.poll(() => store.entries()[0]?.state).toBe("signed");
    const kept = store.entries()[0]!.paymentHeader!.value;

    const second = life(store);
    expect((await second.pay(url, { x402: { paymentId: KEY } })).status).toBe(200);
    expect(second.signs).toHaveLength(0);
    expect(seller.requests.map((r) => r.headers["payment-signature"]).filter(Boolean)).toEqual([kept]);
    never.abort();
  });

  it("whose payment settled: asked again, the identical header goes again (the seller answers from its cache)", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const store = memoryJournalStore();
    await life(store).pay(url, { x402: { paymentId: KEY } });
    const again = life(store);
    expect((await again.pay(url, { x402: { paymentId: KEY } })).status).toBe(200);
    expect(again.signs).toHaveLength(0);
    const [a, b] = seller.requests.map((r) => r.headers["payment-signature"]).filter(Boolean);
    expect(b).toBe(a);
    // Its settlement was recorded when it settled: this answer is not a second one.
    expect(again.ledger.list).toEqual([]);
  });

  it("paid from a cached quote (the quote cache): the kept header goes, not a new signature", async () => {
    let answers = 0;
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature") && answers++ === 0 ? HttpResponse.error() : undefined,
    });
    server.use(seller.handler);
    const store = memoryJournalStore();
    await expect(life(store).pay(url, { x402: { paymentId: KEY } })).rejects.toMatchObject({
      code: "PAYMENT_OUTCOME_UNKNOWN",
    });
    const kept = store.entries()[0]!.paymentHeader!.value;
    // After the restart, with a quote cache that has learned the route: the keyed request would pay at once.
    const { client, signs } = payingClient({ plugins: [quoteCache(), paymentJournal(store)] });
    const pay = wrapFetchWithPayment(fetch, client);
    await pay(url);
    expect(signs).toHaveLength(1);
    const before = seller.requests.length;
    expect((await pay(url, { x402: { paymentId: KEY } })).status).toBe(200);
    expect(signs).toHaveLength(1);
    // One request, paid at once with the kept header: no 402 asked first.
    expect(seller.requests.slice(before).map((r) => r.headers["payment-signature"])).toEqual([kept]);
  });

  it("used for another resource while its payment is kept: refused, nothing signed or sent under it", async () => {
    const seller = createSeller();
    server.use(seller.handler, createSeller({ path: "/other" }).handler);
    const store = memoryJournalStore();
    await life(store).pay(url, { x402: { paymentId: KEY } });
    const next = life(store);
    await expect(next.pay(`${SELLER}/other`, { x402: { paymentId: KEY } })).rejects.toMatchObject({
      code: "PAYMENT_REFUSED",
      message: expect.stringContaining(`holds a payment for GET ${url}`),
    });
    expect(next.signs).toHaveLength(0);
  });

  it("whose attempt ended with nothing charged (refused): the key pays afresh", async () => {
    server.use(createSeller().handler);
    const store = memoryJournalStore();
    const refusing = payingClient({ plugins: [paymentJournal(store)], onBeforePayment: () => false });
    await wrapFetchWithPayment(fetch, refusing.client)(url, { x402: { paymentId: KEY } }).catch(() => {});
    const next = life(store);
    expect((await next.pay(url, { x402: { paymentId: KEY } })).status).toBe(200);
    expect(next.signs).toHaveLength(1);
  });
});

describe("one attempt per key at a time, across processes", () => {
  /** A client (a "process") with a journal and a budget over shared stores, whose wallet waits for `gate` if given. */
  function process(
    stores: { journal: JournalStore; budget: ReturnType<typeof memoryBudgetStore> },
    gate?: Promise<void>,
  ) {
    const signer = gate
      ? { ...account, signTypedData: async (request: never) => (await gate, account.signTypedData(request)) }
      : account;
    const plugins = [budget({ limit: "$1", name: "j", store: stores.budget }), paymentJournal(stores.journal)];
    const client = createX402Client({ schemes: [exactEvm({ signer })], plugins });
    return wrapFetchWithPayment(fetch, client);
  }
  const paid = (seller: ReturnType<typeof createSeller>) =>
    seller.requests.filter((r) => r.headers["payment-signature"]).length;

  it("a key asked again while its first attempt is not yet signed: the second takes its place, one payment in all", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const stores = { journal: memoryJournalStore(), budget: memoryBudgetStore() };
    let open!: () => void;
    const slow = process(stores, new Promise<void>((resolve) => (open = resolve)))(url, { x402: { paymentId: KEY } });
    const first = slow.then(
      () => "answered",
      (error) => error,
    );
    await expect.poll(() => stores.budget.usage(BUDGET)).toEqual({ spent: 0, reserved: 10_000 });
    // Another process (or a retry of the app's) asks for the same key while the first waits on its wallet.
    const second = await process(stores)(url, { x402: { paymentId: KEY } });
    expect(second.status).toBe(200);
    open();
    // The first signs, and is stopped before it leaves: its attempt was ended when the second took its place.
    expect(await first).toMatchObject({ code: "PAYMENT_NOT_SENT", message: expect.stringMatching(/took its place/) });
    expect(paid(seller)).toBe(1);
    expect(await stores.budget.usage(BUDGET)).toEqual({ spent: 10_000, reserved: 0 });
    expect(stores.journal.entries().map((e) => [e.state, e.code])).toEqual([
      ["failed", "PAYMENT_NOT_SENT"],
      ["settled", undefined],
    ]);
    // And the next ask after both: the settled payment goes again, identical; nothing is signed.
    await process(stores)(url, { x402: { paymentId: KEY } });
    expect(new Set(seller.requests.map((r) => r.headers["payment-signature"]).filter(Boolean)).size).toBe(1);
  });

  it("a key asked again after its process died at the wallet: its reservation is let go, the key paid once", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const stores = { journal: memoryJournalStore(), budget: memoryBudgetStore() };
    // Its wallet never answers: the process is as good as dead, holding its intent and its reservation.
    void process(stores, new Promise<void>(() => {}))(url, { x402: { paymentId: KEY } }).catch(() => {});
    await expect.poll(() => stores.budget.usage(BUDGET)).toEqual({ spent: 0, reserved: 10_000 });
    expect((await process(stores)(url, { x402: { paymentId: KEY } })).status).toBe(200);
    expect(await stores.budget.usage(BUDGET)).toEqual({ spent: 10_000, reserved: 0 });
    expect(paid(seller)).toBe(1);
  });

  it("a key asked again just as its first attempt is signed: the first goes on, and is what the second sends", async () => {
    // The seller takes its time with a paid request: the first stays `signed` while the second reads and writes.
    const seller = createSeller({
      intercept: async (request) => {
        if (request.headers.has("payment-signature")) await new Promise((resolve) => setTimeout(resolve, 200));
        return undefined;
      },
    });
    server.use(seller.handler);
    const journal = memoryJournalStore();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let signs = 0;
    const signer = { ...account, signTypedData: async (r: never) => (signs++, await gate, account.signTypedData(r)) };
    const stores = { journal, budget: memoryBudgetStore() };
    const client = createX402Client({
      schemes: [exactEvm({ signer })],
      plugins: [budget({ limit: "$1", name: "j", store: stores.budget }), paymentJournal(journal)],
    });
    const first = wrapFetchWithPayment(fetch, client)(url, { x402: { paymentId: KEY } });
    await expect.poll(() => signs).toBe(1);
    // The second read the intent; before it ends it, the first signs: the ending is refused, the signed one kept.
    const racing: JournalStore = {
      latest: (key) => journal.latest(key),
      unfinished: () => journal.unfinished(),
      async put(entry, options) {
        if (entry.code === "PAYMENT_NOT_SENT") {
          open();
          await expect.poll(() => journal.entries()[0]?.state, { interval: 5 }).toBe("signed");
        }
        return journal.put(entry, options);
      },
    };
    const second = await process({ journal: racing, budget: stores.budget })(url, { x402: { paymentId: KEY } });
    expect([(await first).status, second.status]).toEqual([200, 200]);
    expect(signs).toBe(1);
    const sent = seller.requests.map((r) => r.headers["payment-signature"]).filter(Boolean);
    expect(new Set(sent).size).toBe(1);
  });

  it("a recovery that drops an intent while its process still waits on the wallet: that payment never leaves", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const stores = { journal: memoryJournalStore(), budget: memoryBudgetStore() };
    let open!: () => void;
    const slow = process(stores, new Promise<void>((resolve) => (open = resolve)))(url, { x402: { paymentId: KEY } });
    const first = slow.catch((error) => error);
    await expect.poll(() => stores.budget.usage(BUDGET)).toEqual({ spent: 0, reserved: 10_000 });
    const plugins = [budget({ limit: "$1", name: "j", store: stores.budget }), paymentJournal(stores.journal)];
    const { client } = payingClient({ plugins });
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((r) => r.action)).toEqual(["dropped"]);
    open();
    expect(await first).toMatchObject({ code: "PAYMENT_NOT_SENT" });
    expect(paid(seller)).toBe(0);
    expect(await stores.budget.usage(BUDGET)).toEqual({ spent: 0, reserved: 0 });
    expect(stores.journal.entries()).toEqual([expect.objectContaining({ state: "failed", code: "PAYMENT_NOT_SENT" })]);
  });

  it("a recovery that finds the intent signed meanwhile leaves it to its process: paid once, spent once", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const journal = memoryJournalStore();
    const stores = { journal, budget: memoryBudgetStore() };
    // Recovery read the entry at its intent; the process signs it before recovery writes: the write is refused.
    const racing: JournalStore = {
      put: (entry, options) => journal.put(entry, options),
      latest: (key) => journal.latest(key),
      unfinished: async () => {
        const read = await journal.unfinished();
        open();
        await expect.poll(() => journal.entries()[0]?.state).not.toBe("intent");
        return read;
      },
    };
    let open!: () => void;
    const slow = process(stores, new Promise<void>((resolve) => (open = resolve)))(url, { x402: { paymentId: KEY } });
    await expect.poll(() => stores.budget.usage(BUDGET)).toEqual({ spent: 0, reserved: 10_000 });
    const plugins = [budget({ limit: "$1", name: "j", store: stores.budget }), paymentJournal(racing)];
    const { client } = payingClient({ plugins });
    const recovered = await recoverPayments(client, { staleAfterMs: 0 });
    expect(recovered.map((r) => [r.action, r.reason])).toEqual([
      ["unchecked", expect.stringMatching(/signed meanwhile/)],
    ]);
    expect((await slow).status).toBe(200);
    expect(paid(seller)).toBe(1);
    expect(await stores.budget.usage(BUDGET)).toEqual({ spent: 10_000, reserved: 0 });
  });

  it("a key whose newest attempt is signed, seen by a stale read: the new intent is refused, nothing signed", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const journal = memoryJournalStore();
    await journal.put(journaled("elsewhere", { state: "signed", at: Date.now() }));
    // Read before the other process wrote it: this process sees no attempt of the key (then, read again, it does).
    let reads = 0;
    const stale: JournalStore = {
      put: (entry, options) => journal.put(entry, options),
      latest: (key) => (reads++ === 0 ? undefined : journal.latest(key)),
      unfinished: () => journal.unfinished(),
    };
    const stores = { journal: stale, budget: memoryBudgetStore() };
    const error = await process(stores)(url, { x402: { paymentId: KEY } }).catch((e) => e);
    expect(error).toMatchObject({
      code: "PAYMENT_REFUSED",
      message: expect.stringMatching(/being paid by another attempt \(elsewhere, signed\): nothing was signed anew/),
      details: { url, method: "GET" },
    });
    expect(paid(seller)).toBe(0);
    expect(await stores.budget.usage(BUDGET)).toEqual({ spent: 0, reserved: 0 });
    expect(journal.entries().map((e) => e.id)).toEqual(["elsewhere"]);
  });
});

describe("recoverPayments", () => {
  it("drops what was never signed, leaves recent entries alone, and keeps what it cannot check on a chain", async () => {
    const store = memoryJournalStore();
    await store.put(journaled("never-signed"));
    await store.put(journaled("recent", { at: Date.now(), key: "order_0000000000000043" }));
    const header = { name: "PAYMENT-SIGNATURE", value: btoa("{}") };
    await store.put(journaled("signed", { state: "signed", paymentHeader: header, key: undefined }));
    const { client } = life(store);
    const done = await recoverPayments(client);
    expect(done.map((d) => [d.entry.id, d.action, d.reason])).toEqual([
      ["never-signed", "dropped", undefined],
      ["signed", "unchecked", expect.stringMatching(/has no chain to look it up on/)],
    ]);
    expect((await store.unfinished()).map((e) => e.id).sort()).toEqual(["recent", "signed"]);
    expect(store.entries().find((e) => e.id === "never-signed")).toMatchObject({ state: "failed" });
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((d) => d.action)).toEqual(["dropped", "unchecked"]);
  });

  it("a client without a journal is INVALID_CONFIG, and so is a journal without a store", async () => {
    const { client } = payingClient();
    await expect(recoverPayments(client)).rejects.toMatchObject({ code: "INVALID_CONFIG" });
    expect(() => paymentJournal(undefined as never)).toThrow(/journal store/);
  });
});

describe("the file store's own edges", () => {
  it("a line torn by a writer killed mid-write is skipped, the next put starts a line of its own; a shrunk file is an error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "x402-journal-"));
    try {
      const path = join(dir, "journal.jsonl");
      const store = fileJournalStore(path, { sync: false });
      await store.put({ ...(await firstEntry()), id: "whole" });
      appendFileSync(path, '{"id":"torn","state":"sig');
      await store.put({ ...(await firstEntry()), id: "after", key: "order_0000000000000043" });
      expect((await fileJournalStore(path).unfinished()).map((e) => e.id)).toEqual(["whole", "after"]);
      expect(await store.unfinished()).toHaveLength(2);
      writeFileSync(path, "");
      await expect(store.unfinished()).rejects.toThrow(/shrank while in use/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the file store's lock, shared by the processes of one machine", () => {
  it("a write waits while another holds the lock, goes once it is let go, and breaks one left 5 s unrenewed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "x402-journal-"));
    try {
      const path = join(dir, "journal.jsonl");
      const store = fileJournalStore(path, { sync: false });
      // Another process holds the lock (renewed just now): the write waits for it.
      writeFileSync(`${path}.lock`, "another-process-token");
      let written: boolean | undefined;
      const first = store.put(journaled("first")).then((ok) => (written = ok));
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(written).toBeUndefined();
      rmSync(`${path}.lock`);
      expect(await first).toBe(true);
      // One whose holder renewed it 3.5 s ago is still honoured; one 5.5 s old is broken and the write goes.
      writeFileSync(`${path}.lock`, "a-dead-process-token");
      const at = (ago: number) => (Date.now() - ago) / 1000;
      utimesSync(`${path}.lock`, at(3500), at(3500));
      let second: boolean | undefined;
      const waiting = store.put(journaled("first", { state: "signed" })).then((ok) => (second = ok));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(second).toBeUndefined();
      utimesSync(`${path}.lock`, at(5500), at(5500));
      expect(await waiting).toBe(true);
      expect(existsSync(`${path}.lock`)).toBe(false);
      expect((await fileJournalStore(path).latest(KEY))?.state).toBe("signed");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A journal's first entry for a paid request, as the plug-in writes it. */
async function firstEntry(): Promise<JournalEntry> {
  server.use(createSeller().handler);
  const store = memoryJournalStore();
  await life(store).pay(url, { x402: { paymentId: KEY } });
  return { ...store.entries()[0]!, state: "signed" };
}
