/**
 * The behaviour every store of a kind owes its plug-in, written once and run against each store
 * (test/unit/store-contracts.test.ts): memory, file and Redis. A store's own file tests only what is
 * its own (Redis's clock and scripts, a file's torn lines).
 */
import { describe, expect, it } from "vitest";
import type { BudgetEntry, BudgetStore, Ledger, LedgerRecord, SignInStore } from "../../src";
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
