/**
 * Recovery against a mocked clock: `staleAfterMs` reached exactly, and one millisecond either side; a signed payment's
 * validity reached exactly, and one millisecond either side; and what recovery checks of its options and its signal.
 * The entries are written straight into a memory journal; the chain is scripted (the scheme's `settlement`).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createX402Client,
  memoryJournalStore,
  memoryLedger,
  paymentJournal,
  recoverPayments,
  type JournalEntry,
  type SettlementStatus,
} from "../../src";
import { exactEvm, uptoEvm, type EvmSettlement } from "../../src/evm";
import { journaled } from "../support/store-contracts";
import { account } from "../support/wallets";

/** The mocked clock's now: not a whole second, so that seconds and milliseconds cannot be confused. */
const NOW = 1_800_000_000_123;
const HEADER = { name: "PAYMENT-SIGNATURE", value: btoa(JSON.stringify({ x402Version: 2 })) };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: NOW });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A client with a journal over a memory store holding `entries`, its chain answering `status` to every query. */
async function journalWith(entries: JournalEntry[], status?: SettlementStatus) {
  const store = memoryJournalStore();
  for (const entry of entries) await store.put(entry);
  const asked: string[] = [];
  const settlement: EvmSettlement = {
    async check(query) {
      asked.push(query.attempt!);
      return status!;
    },
  };
  const client = createX402Client({
    schemes: [exactEvm({ signer: account, ...(status && { settlement }) })],
    plugins: [paymentJournal(store)],
  });
  return { store, client, asked };
}

/** Three intents (no key each), written one ms before, exactly at, and one ms after `now - staleAfterMs`. */
const around = (staleAfterMs: number) => [
  journaled("older", { key: undefined, at: NOW - staleAfterMs - 1 }),
  journaled("exactly", { key: undefined, at: NOW - staleAfterMs }),
  journaled("younger", { key: undefined, at: NOW - staleAfterMs + 1 }),
];

describe("staleAfterMs: an entry exactly that old is recovered, one a millisecond younger is left alone", () => {
  it.each([
    ["the default (60 s)", undefined, 60_000],
    ["0 (no other process)", 0, 0],
    ["1 ms", 1, 1],
    ["an hour", 3_600_000, 3_600_000],
  ])("%s", async (_, staleAfterMs, age) => {
    const { store, client } = await journalWith(around(age));
    const options = staleAfterMs === undefined ? {} : { staleAfterMs };
    const done = await recoverPayments(client, options);
    expect(done.map((d) => [d.entry.id, d.action])).toEqual([
      ["older", "dropped"],
      ["exactly", "dropped"],
    ]);
    expect(store.entries().map((e) => [e.id, e.state])).toEqual([
      ["older", "failed"],
      ["exactly", "failed"],
      ["younger", "intent"],
    ]);
    // One tick later the younger one is exactly that old: recovered then, written at the clock's now.
    vi.setSystemTime(NOW + 1);
    expect((await recoverPayments(client, options)).map((d) => [d.entry.id, d.action])).toEqual([
      ["younger", "dropped"],
    ]);
    expect(store.entries()[2]).toMatchObject({ state: "failed", code: "PAYMENT_NOT_SENT", at: NOW + 1 });
  });

  it("0: an entry written by a clock a millisecond ahead of this one is left alone", async () => {
    const { client } = await journalWith([journaled("ahead", { key: undefined, at: NOW + 1 })]);
    expect(await recoverPayments(client, { staleAfterMs: 0 })).toEqual([]);
  });

  it("a signed entry left alone while fresh is not looked up on the chain", async () => {
    const fresh = journaled("fresh", { state: "signed", paymentHeader: HEADER, at: NOW - 59_999 });
    const { client, asked } = await journalWith([fresh], { state: "pending", transaction: undefined, reason: "-" });
    expect(await recoverPayments(client)).toEqual([]);
    expect(asked).toEqual([]);
  });
});

describe("a signed payment's validity, failed on chain: expired only once its validBefore is past", () => {
  const FAILED: SettlementStatus = { state: "failed", transaction: undefined, reason: "expired unused" };
  /** Valid before this second: NOW is 1 ms before, exactly at, or 1 ms after it as the rows set the clock. */
  const validBefore = Math.floor(NOW / 1000);

  it.each([
    [-1, "kept", "unknown"],
    [0, "kept", "unknown"],
    [1, "expired", "expired"],
  ])("the clock %i ms from validBefore: %s", async (offset, action, state) => {
    vi.setSystemTime(validBefore * 1000 + offset);
    const entry = journaled("held", { state: "unknown", paymentHeader: HEADER, validBefore });
    const { store, client, asked } = await journalWith([entry], FAILED);
    const done = await recoverPayments(client, { staleAfterMs: 0 });
    expect(done).toEqual([
      { action, entry: action === "kept" ? entry : { ...entry, state, at: Date.now() }, reason: "expired unused" },
    ]);
    expect(store.entries()[0]!.state).toBe(state);
    expect(asked).toEqual(["held"]);
  });

  it("an entry without validBefore is never past it: kept", async () => {
    const entry = journaled("timeless", { state: "signed", paymentHeader: HEADER });
    const { client } = await journalWith([entry], FAILED);
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((d) => d.action)).toEqual(["kept"]);
  });

  it("a channel's voucher whose amount went to another call is over at once, valid or not", async () => {
    const terms = { ...journaled("x").terms, kind: "voucher" } as JournalEntry["terms"];
    const entry = journaled("voucher", { state: "signed", paymentHeader: HEADER, validBefore: 2 ** 40, terms });
    const { store, client } = await journalWith([entry], FAILED);
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((d) => d.action)).toEqual(["expired"]);
    expect(store.entries()[0]!.state).toBe("expired");
  });
});

describe("what recovery is given", () => {
  it("an entry past its intent that holds no signed header (not one the plug-in writes): left as it is, unchecked", async () => {
    // Ended only over an intent: such an entry is never ended on a guess (its reservation, if any, stays counted).
    const entry = journaled("headless", { state: "signed" });
    const { store, client, asked } = await journalWith([entry], { state: "settled" } as SettlementStatus);
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((d) => d.action)).toEqual(["unchecked"]);
    expect(store.entries()).toEqual([entry]);
    expect(asked).toEqual([]);
  });

  it("options out of their kind are INVALID_CONFIG, naming the option; nothing is ended", async () => {
    const { store, client } = await journalWith([journaled("a", { key: undefined })]);
    const whole = "a whole number of milliseconds, 0 or more";
    for (const [option, value, wanted] of [
      ["staleAfterMs", -1, whole],
      ["staleAfterMs", 1.5, whole],
      ["staleAfterMs", "60000", whole],
      ["staleAfterMs", Number.MAX_SAFE_INTEGER + 1, whole],
      ["signal", {}, "an AbortSignal"],
      ["resend", "https://seller.example", "a paid fetch: wrapFetchWithPayment(fetch, client)"],
    ] as const)
      await expect(recoverPayments(client, { [option]: value } as never)).rejects.toMatchObject({
        code: "INVALID_CONFIG",
        message: expect.stringMatching(
          new RegExp(`recoverPayments\\.${option}\\b.*${wanted.replace(/[()]/g, "\\$&")}`),
        ),
      });
    expect(store.entries()[0]!.state).toBe("intent");
    expect((await recoverPayments(client, { staleAfterMs: Number.MAX_SAFE_INTEGER })).length).toBe(0);
  });

  it("a client without a journal: INVALID_CONFIG saying what recovery needs", async () => {
    const client = createX402Client({ schemes: [exactEvm({ signer: account })] });
    await expect(recoverPayments(client)).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringMatching(
        /^recoverPayments: give it the client whose plug-ins include paymentJournal\(store\)/,
      ),
    });
  });

  it("an aborted signal stops it before it ends anything: ABORTED, the journal as it was", async () => {
    const { store, client } = await journalWith([journaled("a", { key: undefined })]);
    const controller = new AbortController();
    controller.abort(new Error("shutting down"));
    await expect(recoverPayments(client, { signal: controller.signal, staleAfterMs: 0 })).rejects.toMatchObject({
      code: "ABORTED",
    });
    expect(store.entries()[0]!.state).toBe("intent");
  });
});

describe("what recovery records and sends, from entries as a store holds them", () => {
  const SETTLED = { state: "settled", transaction: undefined, reason: "used" } as const;

  /** A client with a journal holding `entry` and a ledger; its chain answers `status`, and keeps the signal it got. */
  async function recording(entry: JournalEntry, status: SettlementStatus) {
    const store = memoryJournalStore();
    await store.put(entry);
    const ledger = memoryLedger();
    const signals: (AbortSignal | undefined)[] = [];
    const settlement: EvmSettlement = {
      async check(_, signal) {
        signals.push(signal);
        return status;
      },
    };
    const client = createX402Client({
      schemes: [exactEvm({ signer: account, settlement }), uptoEvm({ signer: account, settlement })],
      plugins: [paymentJournal(store), ledger],
    });
    return { client, ledger, signals };
  }
  const signed = (over: Partial<JournalEntry> = {}) =>
    journaled("a1", { state: "signed", paymentHeader: HEADER, ...over });

  it.each([
    ["exact", undefined, "10000"],
    ["upto", undefined, undefined],
    ["exact", "not base units", "10000"],
    ["exact", "12abc", "10000"],
    ["exact", "abc12", "10000"],
    ["upto", "12abc", undefined],
    ["upto", "4000", "4000"],
  ])("%s, the chain's amount %s: recorded settled at %s", async (scheme, amount, settledAmount) => {
    // Entries written before terms said whether the amount is a most: the scheme's name says it.
    const { client, ledger } = await recording(signed({ scheme }), { ...SETTLED, amount } as SettlementStatus);
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((d) => d.action)).toEqual(["settled"]);
    expect(ledger.list).toEqual([expect.objectContaining({ outcome: "settled", amount: "10000", attempt: "a1" })]);
    expect(ledger.list[0]!.settledAmount).toBe(settledAmount);
  });

  it("a channel's call charged: recorded with its kind, its deposit and its channel, no transaction", async () => {
    const terms = { ...journaled("x").terms, kind: "deposit", deposit: "500000" } as JournalEntry["terms"];
    const entry = signed({ terms, channel: "0xchannel" });
    const { client, ledger } = await recording(entry, { ...SETTLED, amount: "10000" });
    await recoverPayments(client, { staleAfterMs: 0 });
    expect(ledger.list[0]).toMatchObject({ kind: "deposit", deposit: "500000", channel: "0xchannel" });
    expect(ledger.list[0]!.transaction).toBeUndefined();
    const plain = await recording(signed({ terms: { ...terms, deposit: undefined } }), { ...SETTLED, amount: "1" });
    await recoverPayments(plain.client, { staleAfterMs: 0 });
    expect(plain.ledger.list[0]).toMatchObject({ kind: "deposit" });
    expect(Object.keys(plain.ledger.list[0]!)).not.toContain("deposit");
    expect(Object.keys(plain.ledger.list[0]!)).not.toContain("channel");
  });

  it("the chain and a resend are given recovery's signal; a kept HEAD is sent again, a kept entry not written again", async () => {
    const entry = signed({ method: "HEAD", key: undefined });
    const { client, signals } = await recording(entry, { state: "pending", transaction: undefined, reason: "-" });
    const controller = new AbortController();
    const asked: [string, AbortSignal | undefined][] = [];
    const resend = async (_: string, init: { method: string; signal?: AbortSignal }) => {
      asked.push([init.method, init.signal]);
      return new Response(null, { status: 200 });
    };
    const store = (
      client.plugins.find((p) => "store" in p) as unknown as { store: ReturnType<typeof memoryJournalStore> }
    ).store;
    const put = store.put.bind(store);
    let puts = 0;
    store.put = (...args) => (puts++, put(...args));
    const done = await recoverPayments(client, { staleAfterMs: 0, signal: controller.signal, resend });
    expect(done.map((d) => d.action)).toEqual(["kept"]);
    expect(asked).toEqual([["HEAD", controller.signal]]);
    expect(signals).toEqual([controller.signal]);
    expect(puts).toBe(0);
  });
});
