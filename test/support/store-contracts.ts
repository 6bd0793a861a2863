/**
 * The behaviour every store of a kind owes its plug-in, written once and run against each store
 * (test/unit/store-contracts.test.ts): memory, file and Redis. A store's own file tests only what is
 * its own (Redis's clock and scripts, a file's torn lines).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { BudgetEntry, BudgetStore, Ledger, LedgerRecord, SignInStore } from "../../src";
import type {
  ChannelHold,
  ChannelState,
  ChannelStore,
  JournalEntry,
  JournalPutOptions,
  JournalState,
  JournalStore,
} from "../../src/contracts";
import { reconcile, spendBy, unreconciled } from "../../src";

/** Opens a fresh, empty store; `now` is the clock the store reads, where it lets one be given. */
export type OpenBudgetStore = (now?: () => number) => BudgetStore | Promise<BudgetStore>;

const entry = (over: Partial<BudgetEntry> = {}): BudgetEntry => ({
  key: "b:client",
  limit: 1000,
  windowMs: undefined,
  ...over,
});

/** The budget store contract: reserve within the limit, commit at most the reservation, release, windows, atomicity. */
export function budgetStoreContract(
  name: string,
  open: OpenBudgetStore,
  { others }: { others?: () => Promise<BudgetStore[]> } = {},
) {
  describe(`${name}: the budget store contract`, () => {
    it("reserves while spent + reserved + amount fits the limit, and says what it held before", async () => {
      const store = await open();
      expect(await store.reserve(entry(), "a", 600)).toEqual({ ok: true, spent: 0, reserved: 0 });
      expect(await store.reserve(entry(), "b", 401)).toEqual({ ok: false, spent: 0, reserved: 600 });
      expect(await store.reserve(entry(), "b", 400)).toEqual({ ok: true, spent: 0, reserved: 600 });
      expect(await store.usage(entry())).toEqual({ spent: 0, reserved: 1000 });
    });

    it.each([undefined, 60_000])(
      "window %s: commit spends at most what was reserved, once; release frees only what is not committed; unknown ids change nothing",
      async (windowMs) => {
        const store = await open();
        const e = entry({ windowMs });
        await store.reserve(e, "a", 600);
        await store.reserve(e, "b", 300);
        await store.commit(e, "a", 250); // upto: settled below the maximum
        await store.commit(e, "b", 900); // never more than reserved
        expect(await store.usage(e)).toEqual({ spent: 550, reserved: 0 });
        await store.reserve(e, "c", 100);
        expect(await store.usage(e)).toEqual({ spent: 550, reserved: 100 });
        await store.release(e, "c");
        await store.release(e, "a"); // committed: stays
        await store.commit(e, "a", 100); // committed once only
        await store.commit(e, "nobody", 500);
        await store.release(e, "nobody");
        expect(await store.usage(e)).toEqual({ spent: 550, reserved: 0 });
      },
    );

    it("a window lets reservations and spend go once it has passed them; each key is its own budget", async () => {
      let now = 1_000_000;
      const store = await open(() => now);
      const daily = entry({ windowMs: 60_000 });
      await store.reserve(daily, "a", 700);
      await store.commit(daily, "a", 700);
      now += 30_000;
      await store.reserve(daily, "b", 300);
      expect((await store.reserve(daily, "c", 1)).ok).toBe(false);
      expect((await store.reserve(entry({ key: "other", windowMs: 60_000 }), "c", 1000)).ok).toBe(true);
      now += 30_000; // "a" is a minute old: out of the window
      expect(await store.usage(daily)).toEqual({ spent: 0, reserved: 300 });
      expect((await store.reserve(daily, "d", 700)).ok).toBe(true);
      now += 30_001;
      expect(await store.usage(daily)).toEqual({ spent: 0, reserved: 700 });
    });

    it.each([undefined, 60_000])(
      "window %s: a channel's hold counts as reserved until spent or let go, outlives the window, and is counted in full when overspent",
      async (windowMs) => {
        let now = 1_000_000;
        const store = await open(() => now);
        const e = entry({ windowMs });
        const hold = store.hold!.bind(store);
        expect(await hold(e, "ch", { add: 600 })).toEqual({ ok: true, spent: 0, reserved: 0, held: 0 });
        expect(await hold(e, "other", { add: 401 })).toEqual({ ok: false, spent: 0, reserved: 600, held: 0 });
        expect(await store.usage(e)).toEqual({ spent: 0, reserved: 600 });
        expect(await hold(e, "ch", { spend: 100 })).toMatchObject({ ok: true, held: 600 });
        expect(await store.usage(e)).toEqual({ spent: 100, reserved: 500 });
        now += 120_000; // two windows: the spend passes with a window, the hold does not
        expect(await store.usage(e)).toEqual({ spent: windowMs ? 0 : 100, reserved: 500 });
        // Spent beyond what the hold holds: the hold is emptied and all of it counts.
        expect(await hold(e, "ch", { spend: 700 })).toMatchObject({ held: 500 });
        expect(await store.usage(e)).toEqual({ spent: windowMs ? 700 : 800, reserved: 0 });
        expect(await hold(e, "ch", {})).toMatchObject({ ok: true, held: 0 });
        await hold(e, "ch", { add: 50 });
        await hold(e, "ch", { release: 20 });
        expect(await hold(e, "ch", { release: 100 })).toMatchObject({ held: 30 });
        await hold(e, "ch", { add: 40 });
        await hold(e, "ch", { release: "all" });
        expect(await store.usage(e)).toEqual({ spent: windowMs ? 700 : 800, reserved: 0 });
        // Reservations and holds share the limit; an add that does not fit changes nothing, spend and release included.
        await store.reserve(e, "r", 100);
        await hold(e, "ch", { add: 50 });
        const before = await store.usage(e);
        expect(await hold(e, "ch", { add: windowMs ? 151 : 51, spend: 20, release: 10 })).toMatchObject({ ok: false });
        expect(await store.usage(e)).toEqual(before);
        expect(await hold(e, "ch", { spend: 0, release: 0 })).toMatchObject({ held: 50 });
        expect(await store.usage(e)).toEqual(before);
      },
    );

    it("an attempt adds to a hold once and ends on it once, letting go only of what it added (recovered at once, or again after a kill)", async () => {
      const stores = [await open(), ...((await others?.()) ?? [])];
      const e = entry({ limit: 10_000 });
      await stores[0]!.hold!(e, "ch", { add: 900 });
      // Its call's spend, told by every process at once: spent once.
      await Promise.all(
        stores.flatMap((store) => [1, 2].map(() => store.hold!(e, "ch", { spend: 100, attempt: "a" }))),
      );
      expect(await stores[0]!.usage(e)).toEqual({ spent: 100, reserved: 800 });
      // A deposit added twice is held once; let go twice, let go once. One never added lets nothing go.
      await stores[0]!.hold!(e, "ch", { add: 300, attempt: "b" });
      await stores.at(-1)!.hold!(e, "ch", { add: 300, attempt: "b" });
      expect(await stores[0]!.usage(e)).toEqual({ spent: 100, reserved: 1100 });
      await stores[0]!.hold!(e, "ch", { release: 300, attempt: "b" });
      await stores.at(-1)!.hold!(e, "ch", { release: 300, attempt: "b" });
      await stores[0]!.hold!(e, "ch", { release: 300, attempt: "never-added" });
      expect(await stores[0]!.usage(e)).toEqual({ spent: 100, reserved: 800 });
      // Its end told again (a spend) changes nothing; the same attempt on another hold is another change.
      await stores[0]!.hold!(e, "ch", { spend: 100, attempt: "b" });
      expect(await stores[0]!.usage(e)).toEqual({ spent: 100, reserved: 800 });
      await stores[0]!.hold!(e, "other", { add: 50 });
      await stores[0]!.hold!(e, "other", { spend: 50, attempt: "a" });
      expect(await stores[0]!.usage(e)).toEqual({ spent: 150, reserved: 800 });
      // A change with no attempt is applied each time.
      await stores[0]!.hold!(e, "ch", { spend: 10 });
      await stores[0]!.hold!(e, "ch", { spend: 10 });
      expect(await stores[0]!.usage(e)).toEqual({ spent: 170, reserved: 780 });
    });

    it("a hold stands past its window in real time (a shared store keeps its keys)", async () => {
      const store = await open();
      const e = entry({ windowMs: 50 });
      await store.hold!(e, "ch", { add: 300 });
      await store.reserve(e, "r", 200);
      await new Promise((resolve) => setTimeout(resolve, 1300));
      expect(await store.usage(e)).toEqual({ spent: 0, reserved: 300 });
    });

    it("1000 concurrent reservations of 1 against a limit of 250 take exactly 250 (from every connection given)", async () => {
      const stores = [await open(), ...((await others?.()) ?? [])];
      const limited = entry({ limit: 250 });
      const answers = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => stores[i % stores.length]!.reserve(limited, `r${i}`, 1)),
      );
      expect(answers.filter((a) => a.ok)).toHaveLength(250);
      expect(await stores[0]!.usage(limited)).toEqual({ spent: 0, reserved: 250 });
    });
  });
}

const payer = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const record = (i: number, over: Partial<LedgerRecord> = {}): LedgerRecord => ({
  id: `r${i}`,
  time: `2026-11-${String(20 + (i % 3)).padStart(2, "0")}T10:00:00.000Z`,
  outcome: "settled",
  url: `https://${i % 2 ? "a" : "b"}.example/x`,
  method: "GET",
  scheme: "exact",
  network: "eip155:84532",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  amount: "1000",
  payer,
  ...over,
});

async function all(ledger: Ledger) {
  const list: LedgerRecord[] = [];
  for await (const r of ledger.records()) list.push(r);
  return list;
}

/** The ledger contract: records read back as appended, in order, and the ledger functions over them. */
export function ledgerContract(name: string, open: () => Ledger | Promise<Ledger>) {
  describe(`${name}: the ledger contract`, () => {
    it("a new ledger has no records; each record reads back equal, in the order appended, concurrent appends included", async () => {
      const ledger = await open();
      expect(await all(ledger)).toEqual([]);
      const first = record(0, { outcome: "pending", code: "PAYMENT_PENDING", transaction: `0x${"ab".repeat(32)}` });
      await ledger.append(first);
      const rest = Array.from({ length: 40 }, (_, i) => record(i + 1));
      await Promise.all(rest.map((r) => ledger.append(r)));
      expect(await all(ledger)).toEqual([first, ...rest]);
    });

    it("absent fields stay absent and every outcome round-trips", async () => {
      const ledger = await open();
      const outcomes = ["settled", "rejected", "unknown", "pending", "refused"] as const;
      const records = outcomes.map((outcome, i) => ({
        id: `o${i}`,
        time: "2026-11-26T00:00:00.000Z",
        outcome,
        url: "https://a.example/",
        method: "POST",
      }));
      for (const r of records) await ledger.append(r);
      const read = await all(ledger);
      expect(read).toEqual(records);
      for (const r of read) expect(Object.keys(r).sort()).toEqual(["id", "method", "outcome", "time", "url"]);
    });

    it("spendBy, unreconciled and reconcile work over it", async () => {
      const ledger = await open();
      await ledger.append(record(1));
      await ledger.append(record(2, { amount: "500" }));
      await ledger.append(record(3, { outcome: "unknown", code: "PAYMENT_OUTCOME_UNKNOWN" }));
      await ledger.append(record(4, { outcome: "rejected", code: "PAYMENT_REJECTED" }));
      expect(await spendBy(ledger, "asset")).toEqual([expect.objectContaining({ amount: "1500", count: 2 })]);
      expect((await unreconciled(ledger)).map((r) => r.id)).toEqual(["r3"]);
      const [unknown] = await unreconciled(ledger);
      await reconcile(ledger, unknown!, "settled", { transaction: `0x${"cd".repeat(32)}` });
      expect(await unreconciled(ledger)).toEqual([]);
      expect((await all(ledger)).at(-1)).toMatchObject({ outcome: "settled", reconciles: "r3" });
    });

    it("a settled record of an attempt it holds settled is not stored again (recovery and a resending may both learn it); other records of the attempt are", async () => {
      const ledger = await open();
      const unknown = record(1, { outcome: "unknown", code: "PAYMENT_OUTCOME_UNKNOWN", attempt: "a1" });
      const settled = record(2, { attempt: "a1" });
      await ledger.append(unknown);
      // Two learn it at once, then a third later: one is kept.
      await Promise.all([ledger.append(settled), ledger.append(record(3, { attempt: "a1" }))]);
      await ledger.append(record(4, { attempt: "a1" }));
      await ledger.append(record(5, { attempt: "a2" }));
      await ledger.append(record(6));
      await ledger.append(record(7));
      const read = await all(ledger);
      expect(read.map((r) => r.id)).toEqual(["r1", expect.stringMatching(/^r[23]$/), "r5", "r6", "r7"]);
      expect(await spendBy(ledger, "asset")).toEqual([expect.objectContaining({ count: 4 })]);
    });
  });
}

/** The sign-in store contract: a key not set reads as nothing; a set key reads back; keys are apart. */
export function signInStoreContract(name: string, open: () => SignInStore | Promise<SignInStore>) {
  describe(`${name}: the sign-in store contract`, () => {
    it("reads nothing for a key never set, what was set for a key set, the latest value, and keeps keys apart", async () => {
      const store = await open();
      const key = `https://a.example/x ${payer.toLowerCase()}`;
      expect((await store.get(key)) ?? undefined).toBeUndefined();
      await store.set(key, "eip155:84532");
      await store.set(`${key}2`, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
      expect(await store.get(key)).toBe("eip155:84532");
      await store.set(key, "eip155:8453");
      expect(await store.get(key)).toBe("eip155:8453");
      expect(await store.get(`${key}2`)).toBe("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
      expect((await store.get("https://b.example/x 0x0")) ?? undefined).toBeUndefined();
    });
  });
}

/** What a shared channel store's test can do to it that a process cannot: plant a crashed holder's lock and state. */
export interface ChannelStoreTricks {
  /** The lock's time to live the stores were opened with. */
  readonly lockTtlMs: number;
  /**
   * Leaves channel `id` as a process that took its lock, saved `state` and died would: the lock (another token,
   * fresh) never renewed nor released.
   */
  crashHolding(id: string, state: ChannelState | undefined): Promise<void>;
  /** Replaces the lock on `id` by another process's (as if the holder's had expired and a waiter had taken it). */
  steal(id: string): Promise<void>;
}

const channel = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const state = (charged: number, over: Partial<ChannelState> = {}): ChannelState => ({
  balance: "1000000",
  charged: String(charged),
  signed: String(charged),
  signature: `0x${"ab".repeat(65)}`,
  ...over,
});
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

/**
 * The channel store contract: one holder per channel at a time (across every store given: processes sharing it),
 * no starvation, save and peek, release once, abort while waiting, no save after release; for shared stores, a
 * crashed holder's lock taken over after its time to live and a holder that lost its lock unable to save.
 * `open` gives a fresh store (its own channels); `others` more stores sharing the last one opened.
 */
export function channelStoreContract(
  name: string,
  open: () => ChannelStore | Promise<ChannelStore>,
  { others, tricks }: { others?: () => Promise<ChannelStore[]>; tricks?: () => ChannelStoreTricks } = {},
) {
  const fleet = async () => [await open(), ...((await others?.()) ?? [])];

  describe(`${name}: the channel store contract`, () => {
    it("a channel not known holds undefined; save keeps, peek shows, the next hold finds it; undefined forgets", async () => {
      const store = await open();
      const id = channel(1);
      expect(await store.peek(id)).toBeUndefined();
      const first = await store.hold(id);
      expect(first.state).toBeUndefined();
      await first.save(state(5));
      expect(await store.peek(id)).toEqual(state(5));
      await first.save(state(7, { signed: "8", disputed: "the seller's total did not hold up" }));
      await first.release();
      const second = await store.hold(id);
      expect(second.state).toEqual(state(7, { signed: "8", disputed: "the seller's total did not hold up" }));
      await second.save(undefined);
      expect(await store.peek(id)).toBeUndefined();
      await second.release();
      expect((await store.peek(channel(2))) ?? undefined).toBeUndefined();
    });

    it("one holder at a time per channel, across the stores sharing it: 40 concurrent read-modify-writes", async () => {
      const stores = await fleet();
      const id = channel(3);
      let inside = 0;
      let most = 0;
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const hold = await stores[i % stores.length]!.hold(id);
          inside++;
          most = Math.max(most, inside);
          const charged = Number(hold.state?.charged ?? 0);
          await tick();
          await hold.save(state(charged + 1));
          inside--;
          await hold.release();
        }),
      );
      expect(most).toBe(1);
      expect(await stores[0]!.peek(id)).toEqual(state(40));
    });

    it("another channel is not held up by a held one", async () => {
      const stores = await fleet();
      const held = await stores[0]!.hold(channel(4));
      const other = await stores.at(-1)!.hold(channel(5));
      await other.release();
      await held.release();
    });

    it("no starvation: a store whose payments keep coming does not keep the channel from another", async () => {
      const stores = await fleet();
      const id = channel(6);
      const [busy, patient] = [stores[0]!, stores.at(-1)!];
      let turns = 0;
      let done = false;
      // Two lanes on one store: one of them is always waiting when the other lets go.
      const lane = async () => {
        while (!done && turns < 5000) {
          const hold = await busy.hold(id);
          turns++;
          await tick();
          await hold.release();
        }
      };
      const lanes = Promise.all([lane(), lane()]);
      while (turns < 2) await tick();
      // Each time the patient store asks, it is served within a few of the busy store's turns.
      const waited: number[] = [];
      for (let round = 0; round < 10; round++) {
        const asked = turns;
        const hold = await patient.hold(id);
        waited.push(turns - asked);
        await tick();
        await hold.release();
        await tick();
      }
      done = true;
      await lanes;
      expect(Math.max(...waited)).toBeLessThanOrEqual(5);
    });

    it("release is idempotent: a second call passes no turn on, nor lets another's hold go", async () => {
      const stores = await fleet();
      const id = channel(7);
      const first = await stores[0]!.hold(id);
      const holding = new Set<ChannelHold>();
      const waiters = [stores.at(-1)!, stores[0]!].map((store) =>
        store.hold(id).then((hold) => (holding.add(hold), hold)),
      );
      await first.release();
      await first.release();
      const winner = await Promise.race(waiters);
      await first.release();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(holding.size).toBe(1);
      await winner.save(state(1));
      await winner.release();
      await winner.release();
      const [a, b] = await Promise.all(waiters);
      expect(holding.size).toBe(2);
      expect((a === winner ? b : a)!.state).toEqual(state(1));
      await a!.release();
      await b!.release();
    });

    it("an abort while waiting rejects with ABORTED, and the turn passes on to the next", async () => {
      const stores = await fleet();
      const id = channel(8);
      const first = await stores[0]!.hold(id);
      const controller = new AbortController();
      const aborted = stores.at(-1)!.hold(id, controller.signal);
      await tick();
      const next = stores[0]!.hold(id);
      controller.abort();
      await expect(aborted).rejects.toMatchObject({ code: "ABORTED" });
      await first.save(state(1));
      await first.release();
      const hold = await next;
      expect(hold.state).toEqual(state(1));
      await hold.release();
      await expect(stores.at(-1)!.hold(id, AbortSignal.abort())).rejects.toMatchObject({ code: "ABORTED" });
      await (await stores.at(-1)!.hold(id)).release();
    });

    it("save after release throws and changes nothing", async () => {
      const store = await open();
      const id = channel(9);
      const hold = await store.hold(id);
      await hold.save(state(1));
      await hold.release();
      await expect(hold.save(state(2))).rejects.toThrow(/released/);
      expect(await store.peek(id)).toEqual(state(1));
    });

    if (!tricks) return;

    it("a crashed holder's lock is taken over once its time to live has passed, its saved state intact", async () => {
      const stores = await fleet();
      const { crashHolding } = tricks();
      const id = channel(10);
      // It signed up to 9 and saved that before sending: the most the seller can claim is on record.
      await crashHolding(id, state(8, { signed: "9" }));
      const hold = await stores.at(-1)!.hold(id);
      expect(hold.state).toEqual(state(8, { signed: "9" }));
      await hold.save(state(9, { signed: "10" }));
      await hold.release();
      expect(await stores[0]!.peek(id)).toEqual(state(9, { signed: "10" }));
    });

    it("a live holder keeps its lock past the time to live (renewed): the waiter waits, the holder saves", async () => {
      const stores = await fleet();
      const { lockTtlMs } = tricks();
      const id = channel(12);
      const hold = await stores[0]!.hold(id);
      let taken = false;
      const waiter = stores
        .at(-1)!
        .hold(id)
        .then((next) => ((taken = true), next));
      await new Promise((resolve) => setTimeout(resolve, 4 * lockTtlMs));
      expect(taken).toBe(false);
      await hold.save(state(3));
      await hold.release();
      const next = await waiter;
      expect(next.state).toEqual(state(3));
      await next.release();
    });

    it("a holder whose lock expired and was taken cannot save: it throws and overwrites nothing", async () => {
      const stores = await fleet();
      const { steal } = tricks();
      const id = channel(11);
      const hold: ChannelHold = await stores[0]!.hold(id);
      await hold.save(state(1));
      await steal(id);
      await expect(hold.save(state(2))).rejects.toThrow(/lock/);
      await expect(hold.save(undefined)).rejects.toThrow(/lock/);
      expect(await stores[0]!.peek(id)).toEqual(state(1));
      await hold.release();
      // The thief's lock (never released) expires in turn; the state it found is the one kept.
      const next = await stores.at(-1)!.hold(id);
      expect(next.state).toEqual(state(1));
      await next.release();
    });
  });
}

// ---------------------------------------------------------------- the payment journal's store

/** One journal entry of attempt `id` (an intent unless `over` says otherwise), written long ago. */
export const journaled = (id: string, over: Partial<JournalEntry> = {}): JournalEntry => ({
  id,
  key: "order_0000000000000042",
  state: "intent",
  at: 1_764_374_400_000,
  url: "https://seller.example/report",
  method: "GET",
  scheme: "exact",
  network: "eip155:84532",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
  amount: "10000",
  payer: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  terms: { requirement: { scheme: "exact", extra: { name: "USDC" } }, amount: "10000" } as never,
  ...over,
});
const ids = (entries: readonly JournalEntry[]) => entries.map((e) => e.id).sort();
/** Entries in the order of their ids (stores list the unfinished in an order of their own). */
const byId = (entries: readonly JournalEntry[]) =>
  [...entries].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));

const KEY = "order_0000000000000042";
const OTHER_KEY = "order_0000000000000043";
const STATES: readonly JournalState[] = ["intent", "signed", "pending", "unknown", "settled", "failed", "expired"];
/** Written out here, not taken from src: what may still move money (the rest is finished, and final). */
const OPEN: readonly JournalState[] = ["intent", "signed", "pending", "unknown"];

const W = "written";
const R = "refused";
type Written = typeof W | typeof R;
type Stored = JournalState | "none";

/** How attempt `a` of the key reaches each state before the write under test: the steps it was written at. */
const PATH: Record<Stored, readonly JournalState[]> = {
  none: [],
  intent: ["intent"],
  signed: ["intent", "signed"],
  pending: ["intent", "signed", "pending"],
  unknown: ["intent", "signed", "unknown"],
  settled: ["intent", "signed", "pending", "settled"],
  failed: ["intent", "failed"],
  expired: ["intent", "signed", "unknown", "expired"],
};

/**
 * What each write gets while the key's newest attempt `a` is at each state (none: not written yet), from the rules
 * of the store contract: a finished attempt is final; one unfinished attempt per key; `over` is a compare-and-set.
 * The writes: a new attempt `b` of the key; `a` moved forward; `a` moved back; `a` moved forward `over` the state it
 * is at. Not in the table, the same for every row: `a` over any other state is refused, another key's attempt and
 * an attempt with no key are written, and an older (finished) attempt of the key is refused.
 */
type Row = [
  stored: Stored,
  newAttempt: Written,
  forward: [JournalState, Written],
  back?: [JournalState, Written],
  overItsState?: Written,
];
// biome-ignore format: a table
const TABLE: readonly Row[] = [
  // stored      a new attempt  `a` forward          `a` back             `a` over its state
  ["none",       W,             ["intent", W]],
  ["intent",     R,             ["signed", W],       ["intent", W],       W],
  ["signed",     R,             ["pending", W],      ["intent", W],       W],
  ["pending",    R,             ["settled", W],      ["signed", W],       W],
  ["unknown",    R,             ["expired", W],      ["signed", W],       W],
  ["settled",    W,             ["settled", R],      ["pending", R],      R],
  ["failed",     W,             ["settled", R],      ["intent", R],       R],
  ["expired",    W,             ["settled", R],      ["unknown", R],      R],
];

/**
 * The rules of the store contract, written from its words alone (not from `journalRefuses`), over a map: what a
 * put gets, the key's latest and the unfinished, for the property test to hold each store against.
 */
function journalModel() {
  const entries = new Map<string, JournalEntry>();
  const newest = new Map<string, string>();
  const finished = (entry: JournalEntry | undefined) => entry !== undefined && !OPEN.includes(entry.state);
  const latest = (key: string) => {
    const id = newest.get(key);
    return id === undefined ? undefined : entries.get(id);
  };
  return {
    put(entry: JournalEntry, over: JournalState | undefined): boolean {
      const stored = entries.get(entry.id);
      if (over !== undefined && stored?.state !== over) return false;
      if (finished(stored)) return false;
      if (stored === undefined && entry.key !== undefined) {
        const newestOfKey = latest(entry.key);
        if (newestOfKey !== undefined && !finished(newestOfKey)) return false;
        newest.set(entry.key, entry.id);
      }
      entries.set(entry.id, entry);
      return true;
    },
    latest,
    unfinished: () => [...entries.values()].filter((entry) => !finished(entry)),
  };
}

/** The journal store contract: what is put reads back whole; a key's newest attempt; unfinished ones; shared. */
export function journalStoreContract(
  name: string,
  open: () => JournalStore | Promise<JournalStore>,
  { others }: { others?: () => Promise<JournalStore[]> } = {},
) {
  describe(`${name}: the journal store contract`, () => {
    it("an empty store has no key and nothing unfinished", async () => {
      const store = await open();
      expect(await store.latest("order_0000000000000042")).toBeUndefined();
      expect(await store.unfinished()).toEqual([]);
    });

    it("an entry reads back whole, its later writes replace it, and finished ones leave the unfinished", async () => {
      const store = await open();
      const intent = journaled("a");
      await store.put(intent);
      expect(await store.latest("order_0000000000000042")).toEqual(intent);
      const signed = journaled("a", {
        state: "signed",
        paymentHeader: { name: "PAYMENT-SIGNATURE", value: "eyJ4NDAyVmVyc2lvbiI6Mn0=" },
        validBefore: 1_764_378_000,
      });
      await store.put(signed);
      expect(await store.latest("order_0000000000000042")).toEqual(signed);
      expect(await store.unfinished()).toEqual([signed]);
      const settled = { ...signed, state: "settled" as const, transaction: `0x${"ab".repeat(32)}` };
      await store.put(settled);
      expect(await store.latest("order_0000000000000042")).toEqual(settled);
      expect(await store.unfinished()).toEqual([]);
    });

    it.each(["intent", "signed", "pending", "unknown"] as const)("%s is unfinished", async (state) => {
      const store = await open();
      await store.put(journaled("s", { state }));
      expect(ids(await store.unfinished())).toEqual(["s"]);
    });

    it.each(["settled", "failed", "expired"] as const)("%s is finished", async (state) => {
      const store = await open();
      await store.put(journaled("f", { state }));
      expect(await store.unfinished()).toEqual([]);
    });

    it("a key's newest attempt is the one first written last, whatever is written to older ones after", async () => {
      const store = await open();
      await store.put(journaled("old", { state: "unknown" }));
      await store.put(journaled("old", { state: "expired" }));
      expect(await store.put(journaled("new"))).toBe(true);
      expect((await store.latest("order_0000000000000042"))?.id).toBe("new");
      // An entry without a key is no key's, and is still unfinished.
      await store.put(journaled("anonymous", { key: undefined }));
      expect(ids(await store.unfinished())).toEqual(["anonymous", "new"]);
    });

    it("a finished attempt is final: a write over it, finished or not, is refused and writes nothing", async () => {
      const store = await open();
      const settled = journaled("done", { state: "settled", transaction: `0x${"cd".repeat(32)}` });
      expect(await store.put(journaled("done", { state: "signed" }))).toBe(true);
      expect(await store.put(settled)).toBe(true);
      for (const state of ["intent", "signed", "unknown", "failed", "settled"] as const)
        expect(await store.put(journaled("done", { state }))).toBe(false);
      expect(await store.latest("order_0000000000000042")).toEqual(settled);
      expect(await store.unfinished()).toEqual([]);
    });

    it("one attempt per key at a time: a new one is refused while the newest is unfinished, written once it ended", async () => {
      const store = await open();
      await store.put(journaled("first", { state: "signed" }));
      for (const state of ["intent", "signed"] as const)
        expect(await store.put(journaled("second", { state }))).toBe(false);
      expect(ids(await store.unfinished())).toEqual(["first"]);
      // Another key, or none, is not held up; the held key's own attempt goes on.
      expect(await store.put(journaled("other", { key: "order_0000000000000043" }))).toBe(true);
      expect(await store.put(journaled("none", { key: undefined }))).toBe(true);
      expect(await store.put(journaled("first", { state: "unknown" }))).toBe(true);
      expect(await store.put(journaled("first", { state: "failed" }))).toBe(true);
      expect(await store.put(journaled("second"))).toBe(true);
      expect((await store.latest("order_0000000000000042"))?.id).toBe("second");
    });

    it("`over`: written only if its attempt is at that state now (not when it is elsewhere or not written)", async () => {
      const store = await open();
      const dropped = journaled("a", { state: "failed", code: "PAYMENT_NOT_SENT" });
      expect(await store.put(dropped, { over: "intent" })).toBe(false);
      await store.put(journaled("a"));
      await store.put(journaled("a", { state: "signed" }));
      expect(await store.put(dropped, { over: "intent" })).toBe(false);
      expect((await store.latest("order_0000000000000042"))?.state).toBe("signed");
      expect(await store.put(journaled("a", { state: "unknown" }), { over: "signed" })).toBe(true);
      expect(await store.put(dropped, { over: "unknown" })).toBe(true);
      expect(await store.latest("order_0000000000000042")).toEqual(dropped);
    });

    describe("every stored state × every write (the key's newest attempt `a` at each state, or none yet)", () => {
      const cells = TABLE.flatMap((row) => [
        [row[0], "alone", row] as const,
        [row[0], "after an older attempt", row] as const,
      ]);
      it.each(cells)(
        "%s, %s: each write is written or refused as the table says; a refused one leaves everything as it was",
        async (stored, setup, [, newAttempt, forward, back, overItsState]) => {
          const ahead = (over: Partial<JournalEntry> = {}) => journaled("a", { state: forward[0], at: 2, ...over });
          const writes: (readonly [
            what: string,
            entry: JournalEntry,
            options: JournalPutOptions,
            expected: Written,
          ])[] = [
            ["a new attempt of its key", journaled("b", { at: 2 }), {}, newAttempt],
            ["a new attempt of its key, signed at once", journaled("b", { state: "signed", at: 2 }), {}, newAttempt],
            [`\`a\` moved forward to ${forward[0]}`, ahead(), {}, forward[1]],
            ...(back ? [[`\`a\` moved back to ${back[0]}`, ahead({ state: back[0] }), {}, back[1]] as const] : []),
            ...(overItsState && stored !== "none"
              ? [["`a` over its state", ahead(), { over: stored }, overItsState] as const]
              : []),
            ...STATES.filter((over) => over !== stored).map(
              (over) => [`\`a\` over ${over}`, ahead(), { over }, R] as const,
            ),
            ["another key's new attempt", journaled("c", { key: OTHER_KEY, at: 2 }), {}, W],
            ["a new attempt with no key", journaled("u", { key: undefined, at: 2 }), {}, W],
            ...(setup === "alone"
              ? []
              : STATES.map(
                  (state) => [`the older attempt written ${state}`, journaled("old", { state, at: 2 }), {}, R] as const,
                )),
          ];
          const setUp = async () => {
            const store = await open();
            if (setup !== "alone")
              for (const state of ["intent", "failed"] as const)
                expect(await store.put(journaled("old", { state }))).toBe(true);
            for (const state of PATH[stored]) expect(await store.put(journaled("a", { state }))).toBe(true);
            return { store, before: { latest: await store.latest(KEY), unfinished: byId(await store.unfinished()) } };
          };
          // A refused write changes nothing, so the refused ones go one after another to one store set up once; each
          // written one gets a store of its own.
          let refusing: Awaited<ReturnType<typeof setUp>> | undefined;
          for (const [what, entry, options, expected] of writes) {
            const { store, before } = expected === R ? (refusing ??= await setUp()) : await setUp();
            expect(await store.put(entry, options), `${what}: ${expected}`).toBe(expected === W);
            const after = { latest: await store.latest(KEY), unfinished: byId(await store.unfinished()) };
            if (expected === R) {
              expect(after, `${what}: refused, it left everything as it was`).toEqual(before);
              continue;
            }
            const unfinished = before.unfinished.filter((e) => e.id !== entry.id);
            if (OPEN.includes(entry.state)) unfinished.push(entry);
            expect(after.unfinished, `${what}: the unfinished after it`).toEqual(byId(unfinished));
            expect(after.latest, `${what}: the key's latest after it`).toEqual(
              entry.key === KEY ? entry : before.latest,
            );
            if (entry.key !== undefined) expect(await store.latest(entry.key)).toEqual(entry);
          }
        },
      );
    });

    it("a new attempt is refused over a pending or an unknown newest one, however long that one has stood", async () => {
      for (const state of ["pending", "unknown"] as const) {
        const store = await open();
        expect(await store.put(journaled("a", { state: "signed" }))).toBe(true);
        expect(await store.put(journaled("a", { state }), { over: "signed" })).toBe(true);
        // Its later writes (a recovery checking it again) keep it unfinished: the key stays held.
        expect(await store.put(journaled("a", { state, at: Date.now() }))).toBe(true);
        for (const late of STATES) expect(await store.put(journaled(`b-${late}`, { state: late }))).toBe(false);
        expect((await store.latest(KEY))?.id).toBe("a");
        expect(ids(await store.unfinished())).toEqual(["a"]);
      }
    });

    it("a failed or an expired attempt cannot be written over: not forward, not back, not `over` its own state", async () => {
      for (const ended of ["failed", "expired"] as const) {
        const store = await open();
        const last = journaled("a", { state: ended, code: "PAYMENT_NOT_SENT" });
        expect(await store.put(journaled("a", { state: "signed" }))).toBe(true);
        expect(await store.put(last)).toBe(true);
        for (const state of STATES) {
          expect(await store.put(journaled("a", { state }))).toBe(false);
          expect(await store.put(journaled("a", { state }), { over: ended })).toBe(false);
        }
        expect(await store.latest(KEY)).toEqual(last);
        expect(await store.unfinished()).toEqual([]);
      }
    });

    it("two unkeyed attempts are held at once: both unfinished, both read back whole, each moves on its own", async () => {
      const store = await open();
      const one = journaled("u1", { key: undefined });
      const two = journaled("u2", { key: undefined, url: "https://seller.example/other" });
      expect(await store.put(one)).toBe(true);
      expect(await store.put(two)).toBe(true);
      expect(byId(await store.unfinished())).toEqual([one, two]);
      const signed = { ...one, state: "signed" as const, paymentHeader: { name: "PAYMENT-SIGNATURE", value: "eyJ9" } };
      expect(await store.put(signed, { over: "intent" })).toBe(true);
      expect(byId(await store.unfinished())).toEqual([signed, two]);
      const dropped = { ...two, state: "failed" as const };
      expect(await store.put(dropped, { over: "intent" })).toBe(true);
      expect(byId(await store.unfinished())).toEqual([signed]);
      // The one that ended is final; the other still moves.
      expect(await store.put(two)).toBe(false);
      expect(await store.put({ ...signed, state: "unknown" }, { over: "signed" })).toBe(true);
      expect(byId(await store.unfinished())).toEqual([{ ...signed, state: "unknown" }]);
      // A third while one is open: no key, nothing to hold it up.
      expect(await store.put(journaled("u3", { key: undefined }))).toBe(true);
      expect(ids(await store.unfinished())).toEqual(["u1", "u3"]);
      expect(await store.latest(KEY)).toBeUndefined();
    });

    it.each(["intent", "signed", "pending", "unknown"] as const)(
      "an unkeyed attempt at %s neither holds up a keyed one nor is held up by one, and is no key's latest",
      async (state) => {
        const store = await open();
        expect(await store.put(journaled("u1", { key: undefined, state }))).toBe(true);
        expect(await store.put(journaled("a", { state }))).toBe(true);
        expect(await store.put(journaled("u2", { key: undefined, state }))).toBe(true);
        expect((await store.latest(KEY))?.id).toBe("a");
        expect(ids(await store.unfinished())).toEqual(["a", "u1", "u2"]);
        // The key is held by `a` alone: ending the unkeyed ones does not free it, ending `a` does.
        expect(await store.put(journaled("u1", { key: undefined, state: "settled" }))).toBe(true);
        expect(await store.put(journaled("b"))).toBe(false);
        expect(await store.put(journaled("a", { state: "failed" }))).toBe(true);
        expect(await store.put(journaled("b"))).toBe(true);
        expect((await store.latest(KEY))?.id).toBe("b");
        expect(ids(await store.unfinished())).toEqual(["b", "u2"]);
      },
    );

    if (others)
      it("another process's new attempt of a key: refused over each unfinished newest, written over each finished one", async () => {
        for (const stored of STATES) {
          const store = await open();
          const [other] = await others();
          for (const state of PATH[stored]) expect(await store.put(journaled("a", { state }))).toBe(true);
          expect(await other!.put(journaled("b")), stored).toBe(!OPEN.includes(stored));
          expect((await store.latest(KEY))?.id).toBe(OPEN.includes(stored) ? "a" : "b");
        }
      });

    it("random writes from a few attempts, keys and processes agree with the rules at every step (fast-check)", async () => {
      const attempts = ["a", "b", "c", "d"];
      const state = fc.constantFrom(...STATES);
      const run = fc.record({
        // Each attempt's key, fixed for it (an attempt is one key's, or none's), as the journal writes them.
        keys: fc.tuple(...attempts.map(() => fc.constantFrom(KEY, OTHER_KEY, undefined))),
        puts: fc.array(
          fc.record({
            attempt: fc.nat(attempts.length - 1),
            state,
            over: fc.option(state, { nil: undefined }),
            by: fc.nat(1),
          }),
          { minLength: 1, maxLength: 12 },
        ),
      });
      await fc.assert(
        fc.asyncProperty(run, async ({ keys, puts }) => {
          const stores = [await open(), ...(others ? await others() : [])];
          const model = journalModel();
          for (const [step, { attempt, state, over, by }] of puts.entries()) {
            const entry = journaled(attempts[attempt]!, { key: keys[attempt], state, at: step });
            const [writer, reader] = [stores[by % stores.length]!, stores[(by + step) % stores.length]!];
            expect(await writer.put(entry, { over }), `step ${step}`).toBe(model.put(entry, over));
            for (const key of [KEY, OTHER_KEY])
              expect(await reader.latest(key), `step ${step}`).toEqual(model.latest(key));
            expect(byId(await reader.unfinished()), `step ${step}`).toEqual(byId(model.unfinished()));
          }
        }),
        { numRuns: 40, seed: 44 },
      );
    });

    it("40 attempts written at once all read back", async () => {
      const store = await open();
      const many = Array.from({ length: 40 }, (_, i) =>
        journaled(`m${i}`, { key: `order_${String(i).padStart(16, "0")}` }),
      );
      await Promise.all(many.map((e) => store.put(e)));
      expect(ids(await store.unfinished())).toEqual(ids(many));
      expect(await store.latest("order_0000000000000007")).toEqual(many[7]);
    });

    if (others)
      it("another process's store on the same place reads what this one wrote, and the other way round", async () => {
        const store = await open();
        const [other] = await others();
        await store.put(journaled("mine"));
        expect((await other!.latest("order_0000000000000042"))?.id).toBe("mine");
        await other!.put(journaled("mine", { state: "settled" }));
        expect(await store.unfinished()).toEqual([]);
        expect((await store.latest("order_0000000000000042"))?.state).toBe("settled");
      });

    if (others)
      it("processes racing on one key: one new attempt of the key is written, one ending of an intent wins", async () => {
        const stores = [await open(), ...(await others())];
        for (let round = 0; round < 5; round++) {
          const key = `order_race${String(round).padStart(12, "0")}`;
          const news = await Promise.all(stores.map((s, i) => s.put(journaled(`r${round}p${i}`, { key }))));
          expect(news.filter(Boolean)).toHaveLength(1);
          const winner = `r${round}p${news.indexOf(true)}`;
          // The intent signed by its process and dropped by another's recovery at once: one of the two.
          const [signed, dropped] = await Promise.all([
            stores[0]!.put(journaled(winner, { key, state: "signed" }), { over: "intent" }),
            stores[1]!.put(journaled(winner, { key, state: "failed" }), { over: "intent" }),
          ]);
          expect(signed !== dropped).toBe(true);
          const read = await stores[stores.length - 1]!.latest(key);
          expect(read?.state).toBe(signed ? "signed" : "failed");
        }
      });
  });
}
