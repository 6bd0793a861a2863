/**
 * Budgets without HTTP: the options' checks and how payments are valued (rounded up, never under). The
 * memory store's reserve / commit / release and windows are the store contract (store-contracts.test.ts).
 */
import { describe, expect, it, vi } from "vitest";
import {
  budget,
  createX402Client,
  memoryBudgetStore,
  type BudgetEntry,
  type BudgetOptions,
  type BudgetStore,
  type X402Plugin,
} from "../../src";
import { reserve } from "../../src/client/plugins";
import { exactEvm } from "../../src/evm";
import type { KnownAsset } from "../../src/protocol";
import { account } from "../support/wallets";

type Payment = { network: string; asset: string; amount: string; payTo?: string };
const at = { url: "https://a.example/x", method: "GET" };
/** A budget plug-in's check, as the client asks it of a requirement. */
const check = (plugin: X402Plugin, payment: Payment, asset: KnownAsset | undefined) =>
  plugin.checkRequirement!(
    { caip2: payment.network, asset: payment.asset, amount: payment.amount } as never,
    asset,
    at,
  );
/** The reservations of `plugins` for one payment, in order, as the client makes them. */
const reserveIn = (
  plugins: X402Plugin[],
  payment: Payment,
  asset: KnownAsset | undefined,
  request: { url: string; method: string; signal?: AbortSignal } = at,
) =>
  reserve(
    { plugins } as never,
    { asset: payment.asset, amount: payment.amount, payTo: payment.payTo ?? "0x1" } as never,
    { asset, requirement: { caip2: payment.network } as never, request, attempt: crypto.randomUUID() },
  );
/** A store that records the entries it is asked about. */
function recording(store: BudgetStore = memoryBudgetStore()) {
  const entries: BudgetEntry[] = [];
  return {
    entries,
    store: {
      ...store,
      reserve: (entry: BudgetEntry, id: string, amount: number) => (
        entries.push(entry), store.reserve(entry, id, amount)
      ),
    },
  };
}

const _entry = (over: Partial<BudgetEntry> = {}): BudgetEntry => ({
  key: "b:client",
  limit: 1000,
  windowMs: undefined,
  ...over,
});

describe("budget options", () => {
  const usdc = {
    network: "eip155:84532",
    address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    decimals: 6,
    symbol: "USDC",
  };
  const over = (b: BudgetOptions) =>
    check(budget(b), { network: usdc.network, asset: usdc.address, amount: `${10n ** 20n}` }, usdc);

  it("defaults: the client's whole life, named by scope and window; limits in micro-dollars, rounded down", async () => {
    const plain = budget({ limit: "$5.0000019" });
    expect(plain.name).toBe("budget client/life");
    expect(over({ limit: "$5.0000019" })).toMatch(/allows in all \(\$5\.000001\)$/);
    expect([
      budget({ limit: "1", per: "day", scope: "origin" }).name,
      over({ limit: "1", per: "day", scope: "origin" }),
    ]).toEqual([
      "budget origin/day",
      expect.stringMatching(/budget origin\/day allows in all \(\$1 per day, per origin\)$/),
    ]);
    expect(over({ limit: "$2", per: 90_000, scope: "payee" })).toMatch(
      /budget payee\/90000 allows in all \(\$2 per 90000 ms, per payee\)$/,
    );
    const { entries, store } = recording();
    await reserveIn(
      [budget({ limit: "$5.0000019", per: "day", store })],
      { network: usdc.network, asset: usdc.address, amount: "1" },
      usdc,
    );
    expect(entries).toEqual([{ key: "client/day:client", limit: 5_000_001, windowMs: 86_400_000 }]);
  });

  it("each budget keeps its own memory store unless given one", async () => {
    const payment = { network: usdc.network, asset: usdc.address, amount: "600000" };
    // Two $1 budgets of the same name in two clients: each has its own memory, so both take $0.60.
    await reserveIn([budget({ limit: "$1" })], payment, usdc);
    await expect(reserveIn([budget({ limit: "$1" })], payment, usdc)).resolves.toHaveLength(1);
    const { entries, store } = recording();
    await reserveIn([budget({ limit: "$1", store })], payment, usdc);
    expect(entries).toHaveLength(1);
  });

  it.each([
    [{ limit: 5 }, "budget.limit"],
    [{ limit: "five dollars" }, "budget.limit"],
    [{ limit: "$0" }, "budget.limit"],
    [{ limit: "$0.0000001" }, "budget.limit"],
    [{ limit: "$9000000001" }, "budget.limit"],
    [{ limit: "$1", per: "month" }, "budget.per"],
    [{ limit: "$1", per: 0 }, "budget.per"],
    [{ limit: "$1", per: 1.5 }, "budget.per"],
    [{ limit: "$1", scope: "payer" }, "budget.scope"],
    [{ limit: "$1", name: "has space" }, "budget.name"],
    [{ limit: "$1", store: {} }, "budget.store"],
    [{ limit: "$1", value: "$1" }, "budget.value"],
    [{ limit: "$1", max: "$1" }, "budget.max"],
    [null, "budget"],
  ])("%j: INVALID_CONFIG naming %s", (options, option) => {
    expect(() => budget(options as never)).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", details: { option } }),
    );
  });

  it("two budgets of one client named alike: INVALID_CONFIG from createX402Client", () => {
    expect(() =>
      createX402Client({
        schemes: [exactEvm({ signer: account })],
        plugins: [budget({ limit: "$1" }), budget({ limit: "$2" })],
      }),
    ).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        message:
          'plugins: two plug-ins are named "budget client/life": give each budget its own name (budget({ name })).',
      }),
    );
  });
});

describe("valuing payments", () => {
  const usdc = {
    network: "eip155:84532",
    address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    decimals: 6,
    symbol: "USDC",
  };
  const dai = { ...usdc, decimals: 18, symbol: "DAI" };
  const payment = (amount: string) => ({ network: usdc.network, asset: usdc.address, amount });

  it("a stablecoin of known decimals: to the micro-dollar, a fraction of one counted as one", () => {
    const b = budget({ limit: "$1" });
    expect(check(b, payment("1000000"), usdc)).toBeUndefined();
    expect(check(b, payment("1000001"), usdc)).toBe("$1.000001 is more than budget client/life allows in all ($1)");
    expect(check(b, payment(`${10n ** 18n}`), dai)).toBeUndefined();
    expect(check(b, payment(`${10n ** 18n + 1n}`), dai)).toMatch(/^\$1\.000001 is more than/);
  });

  it("an asset of unknown worth is refused unless the budget's value function prices it", () => {
    const plain = budget({ limit: "$1" });
    const told = budget({ limit: "$1", name: "told", value: ({ amount }) => (amount === "7" ? "$0.7" : undefined) });
    expect(check(plain, payment("7"), undefined)).toMatch(/^budget client\/life cannot value asset 0x036C/);
    expect(check(told, payment("7"), undefined)).toBeUndefined();
    expect(check(told, payment("8"), undefined)).toMatch(/^budget told cannot value/);
  });

  it("aborted while a reserve is under way: ABORTED, and the reservation the store makes is released", async () => {
    const store = memoryBudgetStore();
    const controller = new AbortController();
    const aborting = {
      ...store,
      reserve(...args: Parameters<typeof store.reserve>) {
        const reserving = store.reserve(...args);
        controller.abort();
        return reserving;
      },
    };
    const request = { url: "https://a.example/x", method: "GET", signal: controller.signal };
    await expect(
      reserveIn([budget({ limit: "$1", store: aborting })], payment("1000"), usdc, request),
    ).rejects.toMatchObject({ code: "ABORTED" });
    await vi.waitFor(async () =>
      expect(await store.usage({ key: "client/life:client", limit: 1_000_000, windowMs: undefined })).toEqual({
        spent: 0,
        reserved: 0,
      }),
    );
  });

  it("a store that throws: BUDGET_UNAVAILABLE, and the budgets reserved before it are released", async () => {
    const store = memoryBudgetStore();
    const broken = { ...memoryBudgetStore(), reserve: async () => Promise.reject(new Error("ECONNREFUSED")) };
    const budgets = [
      budget({ limit: "$1", name: "first", store }),
      budget({ limit: "$1", name: "second", store: broken }),
    ];
    const request = { url: "https://a.example/x", method: "GET" };
    await expect(reserveIn(budgets, payment("1000"), usdc, request)).rejects.toMatchObject({
      code: "BUDGET_UNAVAILABLE",
      details: { budget: "second", url: request.url },
    });
    expect(await store.usage({ key: "first:client", limit: 1_000_000, windowMs: undefined })).toEqual({
      spent: 0,
      reserved: 0,
    });
  });
});

describe("each window's length", () => {
  const usdc = {
    network: "eip155:84532",
    address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    decimals: 6,
    symbol: "USDC",
  };
  const payment = { network: usdc.network, asset: usdc.address, amount: "600000", payTo: "0x1" };
  const request = { url: "https://a.example/x", method: "GET" };

  it.each([
    { per: "minute", ms: 60_000 },
    { per: "hour", ms: 3_600_000 },
    { per: "day", ms: 86_400_000 },
    { per: "week", ms: 604_800_000 },
    { per: 90_000, ms: 90_000 },
  ] as const)("per $per: a payment counts for $ms ms, and not one ms more", async ({ per, ms }) => {
    let now = 1_700_000_000_000;
    const { entries, store } = recording(memoryBudgetStore(() => now));
    const budgets = [budget({ limit: "$1", per, store })];
    const [held] = await reserveIn(budgets, payment, usdc, request);
    expect(entries[0]!.windowMs).toBe(ms);
    await held!.commit();
    now += ms - 1;
    await expect(reserveIn(budgets, payment, usdc, request)).rejects.toMatchObject({
      code: "BUDGET_EXCEEDED",
      details: { spent: "$0.6" },
    });
    now += 1;
    expect(await reserveIn(budgets, payment, usdc, request)).toHaveLength(1);
  });

  it("without a window, a payment counts for good", async () => {
    let now = 1_700_000_000_000;
    const budgets = [budget({ limit: "$1", store: memoryBudgetStore(() => now) })];
    await (await reserveIn(budgets, payment, usdc, request))[0]!.commit();
    now += 10 * 604_800_000;
    await expect(reserveIn(budgets, payment, usdc, request)).rejects.toMatchObject({ code: "BUDGET_EXCEEDED" });
  });
});

describe("committing a settled amount", () => {
  const usdc = {
    network: "eip155:84532",
    address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    decimals: 6,
    symbol: "USDC",
  };
  const request = { url: "https://a.example/x", method: "GET" };
  /** A store that records what it is asked to commit, and commits it as asked (no clamping of its own). */
  function recordingStore() {
    const commits: number[] = [];
    const inner = memoryBudgetStore();
    return {
      commits,
      store: {
        ...inner,
        commit: async (_entry: BudgetEntry, _id: string, amount: number) => void commits.push(amount),
      },
    };
  }

  it("a settled amount over the reserved maximum is committed as the maximum, never more", async () => {
    const { commits, store } = recordingStore();
    const [hold] = await reserveIn(
      [budget({ limit: "$1", store })],
      { network: usdc.network, asset: usdc.address, amount: "50000", payTo: "0x1" },
      usdc,
      request,
    );
    await hold!.commit("90000");
    expect(commits).toEqual([50_000]);
  });

  it("a settled amount the budget cannot value is committed as the reserved maximum, not as nothing", async () => {
    const { commits, store } = recordingStore();
    const value = ({ amount }: { amount: string }) => (amount === "5" ? "$0.5" : undefined);
    const [hold] = await reserveIn(
      [budget({ limit: "$1", store, value })],
      { network: usdc.network, asset: "0xabc", amount: "5", payTo: "0x1" },
      undefined,
      request,
    );
    await hold!.commit("3");
    expect(commits).toEqual([500_000]);
  });
});

describe("a value function that changes its mind or throws", () => {
  const payment = { network: "eip155:84532", asset: "0xabc", amount: "7", payTo: "0x1" };
  const request = { url: "https://a.example/x", method: "GET" };

  it("throwing: cannot tell, so the requirement is refused with a reason", () => {
    const thrower = budget({
      limit: "$1",
      value: () => {
        throw new Error("price feed down");
      },
    });
    expect(check(thrower, payment, undefined)).toMatch(/^budget client\/life cannot value asset 0xabc/);
  });

  it("no value at reservation time (after it had one): PAYMENT_REFUSED, nothing reserved", async () => {
    let calls = 0;
    const store = memoryBudgetStore();
    const fickle = budget({ limit: "$1", store, value: () => (calls++ === 0 ? "$0.5" : undefined) });
    expect(check(fickle, payment, undefined)).toBeUndefined();
    await expect(reserveIn([fickle], payment, undefined, request)).rejects.toMatchObject({ code: "PAYMENT_REFUSED" });
    expect(await store.usage({ key: "client/life:client", limit: 1, windowMs: undefined })).toEqual({
      spent: 0,
      reserved: 0,
    });
  });
});

describe("from the mutation run", () => {
  it("in a window, a committed reservation is neither committed again nor released", async () => {
    const store = memoryBudgetStore(() => 0);
    const daily = { key: "w", limit: 1000, windowMs: 60_000 };
    await store.reserve(daily, "a", 600);
    await store.commit(daily, "a", 500);
    await store.commit(daily, "a", 100);
    await store.release(daily, "a");
    expect(await store.usage(daily)).toEqual({ spent: 500, reserved: 0 });
  });

  it.each([
    [null, "budget", "must be { limit, per?, scope?, name?, store?, value? }"],
    [{ limit: "$1", max: 1 }, "budget.max", "is not an option (options: limit, per, scope, name, store, value)"],
    [{ limit: "$0" }, "budget.limit", 'must be a USD amount from "$0.000001" to "$9000000000", such as "$5"'],
    [
      { limit: "$9000000000.000001" },
      "budget.limit",
      'must be a USD amount from "$0.000001" to "$9000000000", such as "$5"',
    ],
    [{ limit: "$1", per: "month" }, "budget.per", '"minute", "hour", "day", "week" or milliseconds above 0'],
    [{ limit: "$1", scope: "payer" }, "budget.scope", '"client", "origin" or "payee"'],
    [{ limit: "$1", name: "" }, "budget.name", "1 to 64 characters of a-z, A-Z, 0-9, _, ., / and -"],
    [
      { limit: "$1", store: { reserve() {}, commit() {} } },
      "budget.store",
      "a budget store { reserve, commit, release, usage }",
    ],
    [
      { limit: "$1", store: { reserve() {}, release() {} } },
      "budget.store",
      "a budget store { reserve, commit, release, usage }",
    ],
    [
      { limit: "$1", store: { commit() {}, release() {} } },
      "budget.store",
      "a budget store { reserve, commit, release, usage }",
    ],
    [{ limit: "$1", value: 1 }, "budget.value", "a function"],
  ])("%j: the message names %s and says %s", (options, option, problem) => {
    expect(() => budget(options as never)).toThrow(
      expect.objectContaining({ message: `${option}: ${problem}.`, details: { option } }),
    );
  });

  it("$9000000000 is the largest limit", () => {
    expect(
      check(
        budget({ limit: "$9000000000" }),
        { network: "eip155:1", asset: "0xabc", amount: "9000000000000000" },
        { network: "eip155:1", address: "0xabc", decimals: 6, symbol: "USDC" },
      ),
    ).toBeUndefined();
  });

  it("a value a function tells is rounded up to the micro-dollar: two payments of $0.0000001 do not fit a budget of $0.000001", async () => {
    const store = memoryBudgetStore();
    const tiny = [budget({ limit: "$0.000001", store, value: () => "$0.0000001" })];
    const payment = { network: "eip155:84532", asset: "0xabc", amount: "1", payTo: "0x1" };
    await reserveIn(tiny, payment, undefined);
    await expect(reserveIn(tiny, payment, undefined)).rejects.toMatchObject({
      code: "BUDGET_EXCEEDED",
      message:
        "Budget client/life ($0.000001) cannot take $0.000001 more: $0 spent and $0.000001 reserved of $0.000001. Nothing was signed.",
    });
  });

  it("the refusals' sentences: a store that fails, a value that changed its mind", async () => {
    const payment = { network: "eip155:84532", asset: "0xabc", amount: "1", payTo: "0x1" };
    const broken = { ...memoryBudgetStore(), reserve: () => Promise.reject(new Error("down")) };
    await expect(
      reserveIn([budget({ limit: "$1", store: broken, value: () => "$0.1" })], payment, undefined),
    ).rejects.toMatchObject({
      message: "The store of budget client/life did not answer, so nothing was paid (budgets fail closed).",
    });
    await expect(
      reserveIn([budget({ limit: "$1", value: () => undefined })], payment, undefined),
    ).rejects.toMatchObject({
      message: "Budget client/life cannot value this payment: nothing was signed.",
    });
  });
});

describe("budget: a channel's deposit held in the store", () => {
  const USDC: KnownAsset = { network: "eip155:84532", address: "0xusdc", decimals: 6, symbol: "USDC" };
  const entry: BudgetEntry = { key: "client/life:client", limit: 1, windowMs: undefined };
  const CHANNEL = `0x${"ab".repeat(32)}`;
  /** The plug-in's reservation of one channel payment: the call's price and, for a deposit, what it moves. */
  const pay = (plugin: X402Plugin, price: string, deposit?: string, channel = CHANNEL) =>
    plugin.reserve!({ asset: "0xusdc", amount: price, payTo: "0x1", deposit } as never, {
      asset: USDC,
      requirement: { caip2: "eip155:84532" } as never,
      request: at,
      channel,
      attempt: crypto.randomUUID(),
    });
  const refund = (plugin: X402Plugin, amount: string, balance: string, channel = CHANNEL) =>
    plugin.onRefund!(
      {
        url: at.url,
        scheme: "batch-settlement",
        network: "eip155:84532",
        asset: "0xusdc",
        payTo: "0x1",
        payer: "0x2",
        channel,
        amount,
        balance,
        transaction: undefined,
      },
      { asset: USDC },
    );

  it("holds a deposit whole; a call spends its charge from the hold, once; a refused deposit lets it go", async () => {
    const store = memoryBudgetStore();
    const plugin = budget({ limit: "$1", store });
    const first = await pay(plugin, "1000", "500000");
    expect(await store.usage(entry)).toEqual({ spent: 0, reserved: 500_000 });
    await first!.commit("700"); // charged below the price
    await first!.commit("700");
    await first!.release();
    expect(await store.usage(entry)).toEqual({ spent: 700, reserved: 499_300 });
    // A voucher the hold covers reserves nothing more; unknown outcome: the price is spent.
    const second = await pay(plugin, "1000");
    expect(await store.usage(entry)).toEqual({ spent: 700, reserved: 499_300 });
    await second!.commit();
    expect(await store.usage(entry)).toEqual({ spent: 1700, reserved: 498_300 });
    // A voucher refused (nothing charged) leaves the hold as it was.
    await (await pay(plugin, "1000"))!.release();
    expect(await store.usage(entry)).toEqual({ spent: 1700, reserved: 498_300 });
    // A top-up that does not fit is refused; one refused by the seller lets go of what it added.
    await expect(pay(plugin, "1000", "600000")).rejects.toMatchObject({ code: "BUDGET_EXCEEDED" });
    await (await pay(plugin, "1000", "400000"))!.release();
    expect(await store.usage(entry)).toEqual({ spent: 1700, reserved: 498_300 });
  });

  it("a hold too small for the call reserves what it lacks, and lets that go if nothing was charged", async () => {
    const store = memoryBudgetStore();
    const plugin = budget({ limit: "$1", store });
    await (await pay(plugin, "1000", "1500"))!.commit("1000"); // 500 left in the hold
    const short = await pay(plugin, "1000");
    expect(await store.usage(entry)).toEqual({ spent: 1000, reserved: 1000 });
    await short!.release();
    expect(await store.usage(entry)).toEqual({ spent: 1000, reserved: 500 });
    await (await pay(plugin, "1000"))!.commit("1000");
    expect(await store.usage(entry)).toEqual({ spent: 2000, reserved: 0 });
  });

  it("a refund lets go of what came back, all of the hold when the channel holds nothing more; channel ids in any case", async () => {
    const store = memoryBudgetStore();
    const plugin = budget({ limit: "$1", store });
    await (await pay(plugin, "1000", "500000"))!.commit("1000");
    await refund(plugin, "100000", "399000", CHANNEL.toUpperCase().replace("0X", "0x"));
    expect(await store.usage(entry)).toEqual({ spent: 1000, reserved: 399_000 });
    // Another channel's refund changes nothing here.
    await refund(plugin, "100000", "0", `0x${"cd".repeat(32)}`);
    expect(await store.usage(entry)).toEqual({ spent: 1000, reserved: 399_000 });
    await refund(plugin, "1", "0");
    expect(await store.usage(entry)).toEqual({ spent: 1000, reserved: 0 });
  });

  it("a store without holds: the deposit must fit whole while its call is under way, the charge is spent", async () => {
    const { hold: _, ...plain } = memoryBudgetStore();
    const plugin = budget({ limit: "$1", store: plain });
    const reservation = await pay(plugin, "1000", "500000");
    expect(await plain.usage(entry)).toEqual({ spent: 0, reserved: 500_000 });
    await reservation!.commit("1000");
    expect(await plain.usage(entry)).toEqual({ spent: 1000, reserved: 0 });
    await refund(plugin, "499000", "0"); // nothing to let go
    expect(await plain.usage(entry)).toEqual({ spent: 1000, reserved: 0 });
  });
});
