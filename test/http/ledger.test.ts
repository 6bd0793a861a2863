/**
 * The receipts ledger through both wrappers: every outcome recorded once, with the payment's fields,
 * before the call returns (settled, rejected, unknown, refused), whatever the caller's hooks do; and
 * the questions asked of it (spend per origin, payee, day and asset; unknowns to reconcile).
 */
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import {
  budget,
  createX402Client,
  getPaymentReceipt,
  memoryBudgetStore,
  memoryLedger,
  reconcile,
  recordOutcomes,
  spendBy,
  unreconciled,
  type LedgerRecord,
} from "../../src";
import { exactEvm } from "../../src/evm";
import { useMswServer } from "../support/msw";
import {
  OTHER,
  OTHER_PAY_TO,
  PATH,
  PAY_TO,
  SELLER,
  TX_HASH,
  USDC_BASE_SEPOLIA,
  createSeller,
  encodeHeader,
  settlementHeader,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { account, countingSigner } from "../support/wallets";
import { rejection, wrappers } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const paidRequest = (request: Request) => request.headers.has("payment-signature");

function ledgerClient(options: Record<string, unknown> = {}) {
  const ledger = memoryLedger();
  const client = createX402Client({
    schemes: [exactEvm({ signer: countingSigner().signer })],
    plugins: [ledger],
    // Hooks that throw cannot keep a record out of the ledger.
    onPaymentSettled: () => {
      throw new Error("hook");
    },
    onPaymentFailed: () => {
      throw new Error("hook");
    },
    ...options,
  });
  return { client, ledger };
}

const payment = {
  url,
  method: "GET",
  scheme: "exact",
  network: "eip155:84532",
  asset: USDC_BASE_SEPOLIA,
  amount: "10000",
  payer: account.address,
  payee: PAY_TO,
  flow: "authorization" as const,
};

describe.each(wrappers)("$name: the ledger", (wrapper) => {
  it("a settled payment: one record with every field, in the ledger when the call returns", async () => {
    server.use(createSeller().handler);
    const { client, ledger } = ledgerClient();
    await wrapper.send(client, { url });
    expect(ledger.list).toEqual([
      {
        ...payment,
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        // The attempt the record is of: what the journal's recovery finds it by.
        attempt: expect.stringMatching(/^[0-9a-f]{32}$/),
        time: expect.any(String),
        outcome: "settled",
        code: undefined,
        settledAmount: "10000",
        transaction: TX_HASH,
      },
    ]);
    expect(Math.abs(Date.parse(ledger.list[0]!.time) - Date.now())).toBeLessThan(60_000);
  });

  it("rejected (the seller refused), unknown (no answer), refused (the policy, before signing): one record each", async () => {
    const { client, ledger } = ledgerClient();
    let answer: "refuse" | "lose" = "refuse";
    server.use(
      createSeller({
        intercept: (request) => {
          if (!paidRequest(request)) return undefined;
          return answer === "refuse"
            ? HttpResponse.json(
                {},
                {
                  status: 402,
                  headers: { "PAYMENT-REQUIRED": encodeHeader({ ...v2Challenge(), error: "insufficient_funds" }) },
                },
              )
            : HttpResponse.error();
        },
      }).handler,
    );
    expect(await rejection(wrapper.send(client, { url }))).toMatchObject({ code: "PAYMENT_REJECTED" });
    answer = "lose";
    expect(await rejection(wrapper.send(client, { url }))).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    server.use(createSeller({ challenge: v2Challenge({ accepts: [v2Requirement({ amount: "5000000" })] }) }).handler);
    expect(await rejection(wrapper.send(client, { url }))).toMatchObject({ code: "NO_PAYABLE_REQUIREMENT" });

    expect(ledger.list.map((r) => [r.outcome, r.code])).toEqual([
      ["rejected", "PAYMENT_REJECTED"],
      ["unknown", "PAYMENT_OUTCOME_UNKNOWN"],
      ["refused", "NO_PAYABLE_REQUIREMENT"],
    ]);
    expect(ledger.list[0]).toMatchObject({ ...payment, settledAmount: undefined, transaction: undefined });
    expect(ledger.list[1]).toMatchObject(payment);
    // Nothing was chosen: only the request is known.
    expect(ledger.list[2]).toMatchObject({ url, method: "GET", scheme: undefined, amount: undefined });
    expect(new Set(ledger.list.map((r) => r.id)).size).toBe(3);
  });

  it("a ledger that fails does not turn a paid response into an error", async () => {
    server.use(createSeller().handler);
    const { client } = ledgerClient({
      plugins: [
        recordOutcomes({ append: () => Promise.reject(new Error("disk full")), records: async function* () {} }),
      ],
    });
    expect((await wrapper.send(client, { url })).status).toBe(200);
  });

  it("two ledgers of one client, named apart: each records the payment once", async () => {
    server.use(createSeller().handler);
    const [first, audit] = [memoryLedger(), memoryLedger({ name: "audit" })];
    const rows: LedgerRecord[] = [];
    const mine = recordOutcomes(
      { append: async (r: LedgerRecord) => void rows.push(r), async *records() {} },
      {
        name: "mine",
      },
    );
    const { client } = ledgerClient({ plugins: [first, audit, mine] });
    expect((await wrapper.send(client, { url })).status).toBe(200);
    expect([first.list, audit.list, rows].map((list) => list.map((r) => [r.outcome, r.settledAmount]))).toEqual([
      [["settled", "10000"]],
      [["settled", "10000"]],
      [["settled", "10000"]],
    ]);
    expect([first.name, audit.name, mine.name]).toEqual(["ledger", "ledger audit", "ledger mine"]);
  });

  it("two ledgers of one client without names: INVALID_CONFIG naming the ledgers' own option", () => {
    expect(() => ledgerClient({ plugins: [memoryLedger(), memoryLedger()] })).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        message:
          'plugins: two plug-ins are named "ledger": give each ledger its own name (memoryLedger({ name }), ' +
          "fileLedger(path, { name }), redisLedger(redis, { name }) or recordOutcomes(store, { name })).",
      }),
    );
    expect(() => memoryLedger({ name: "" })).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });
});

// README: "A paid answer without a settlement report is `unknown` too." The payment left and the server
// never said whether it settled: not spend (`settled`), not nothing charged (`rejected`); kept for
// reconciling, and counted against the budget as spent until then.
describe.each(wrappers)("$name: a paid answer without a settlement report", (wrapper) => {
  const settled = settlementHeader(2, {
    success: true,
    transaction: TX_HASH,
    network: "eip155:84532",
    payer: account.address,
  });
  it.each([
    { answer: "200, no PAYMENT-RESPONSE", status: 200, headers: {}, outcome: "unknown", code: undefined },
    { answer: "201, no PAYMENT-RESPONSE", status: 201, headers: {}, outcome: "unknown", code: undefined },
    {
      answer: "200, an unreadable PAYMENT-RESPONSE",
      status: 200,
      headers: { "PAYMENT-RESPONSE": "not base64 json" },
      outcome: "unknown",
      code: undefined,
    },
    {
      answer: "400, no PAYMENT-RESPONSE",
      status: 400,
      headers: {},
      outcome: "unknown",
      code: "PAYMENT_OUTCOME_UNKNOWN",
    },
    {
      answer: "500, no PAYMENT-RESPONSE",
      status: 500,
      headers: {},
      outcome: "unknown",
      code: "PAYMENT_OUTCOME_UNKNOWN",
    },
    // The contrast: a report of success settles, whatever the status.
    { answer: "500 with a successful settlement", status: 500, headers: settled, outcome: "settled", code: undefined },
  ])(
    "$answer: recorded $outcome ($code), the price kept; the budget counts it spent",
    async ({ status, headers, outcome, code }) => {
      server.use(createSeller({ paid: () => HttpResponse.json({ data: "premium" }, { status, headers }) }).handler);
      const store = memoryBudgetStore();
      const ledger = memoryLedger();
      const client = createX402Client({
        schemes: [exactEvm({ signer: countingSigner().signer })],
        plugins: [ledger, budget({ limit: "$1", store })],
      });
      const reply = await wrapper.send(client, { url }).then(
        (r) => r.raw,
        (error) => error.response,
      );
      // The caller gets the answer as its library gives it, with a receipt that says whether it settled.
      expect(getPaymentReceipt(reply)).toMatchObject({ status, settled: outcome === "settled" });
      const unknown = outcome === "unknown";
      expect(ledger.list).toEqual([
        {
          ...payment,
          id: expect.any(String),
          attempt: expect.any(String),
          time: expect.any(String),
          outcome,
          code,
          settledAmount: unknown ? undefined : "10000",
          transaction: unknown ? undefined : TX_HASH,
        },
      ]);
      expect((await unreconciled(ledger)).map((r) => r.id)).toEqual(unknown ? [ledger.list[0]!.id] : []);
      expect(await spendBy(ledger, "asset")).toHaveLength(unknown ? 0 : 1);
      expect(await store.usage({ key: "client/life:client", limit: 1_000_000, windowMs: undefined })).toEqual({
        spent: 10_000,
        reserved: 0,
      });
    },
  );
});

describe("questions asked of a ledger", () => {
  const at = (time: string, over: Partial<LedgerRecord>): LedgerRecord => ({
    ...payment,
    id: `${time}-${Math.random()}`,
    time,
    outcome: "settled",
    settledAmount: "10000",
    ...over,
  });

  it("spend per origin, payee, UTC day and asset: settled records only, summed per asset, in the order first seen", async () => {
    const ledger = memoryLedger();
    const records = [
      at("2026-11-22T23:59:59.000Z", {}),
      at("2026-11-23T00:00:00.000Z", { url: `${OTHER}/a`, payee: OTHER_PAY_TO, settledAmount: "250" }),
      at("2026-11-23T10:00:00.000Z", { asset: USDC_BASE_SEPOLIA.toLowerCase(), settledAmount: undefined, amount: "7" }),
      at("2026-11-23T11:00:00.000Z", {
        network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
        asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
        settledAmount: "3",
      }),
      at("2026-11-23T12:00:00.000Z", { outcome: "unknown", settledAmount: undefined }),
      at("2026-11-23T12:00:01.000Z", { outcome: "rejected", settledAmount: undefined }),
    ];
    for (const record of records) await ledger.append(record);
    const sol = {
      network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
      asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
    };
    const usdc = { network: "eip155:84532", asset: USDC_BASE_SEPOLIA };
    expect(await spendBy(ledger, "origin")).toEqual([
      { key: SELLER, ...usdc, amount: "10007", count: 2 },
      { key: OTHER, ...usdc, amount: "250", count: 1 },
      { key: SELLER, ...sol, amount: "3", count: 1 },
    ]);
    expect((await spendBy(ledger, "payee")).map((r) => [r.key, r.amount])).toEqual([
      [PAY_TO, "10007"],
      [OTHER_PAY_TO, "250"],
      [PAY_TO, "3"],
    ]);
    expect(
      (await spendBy(ledger, "day")).map((r) => [r.key, r.asset === sol.asset ? "sol" : "usdc", r.amount]),
    ).toEqual([
      ["2026-11-22", "usdc", "10000"],
      ["2026-11-23", "usdc", "257"],
      ["2026-11-23", "sol", "3"],
    ]);
    expect((await spendBy(ledger, "asset")).map((r) => [r.key, r.amount, r.count])).toEqual([
      ["", "10257", 3],
      ["", "3", 1],
    ]);
    expect(
      (await spendBy(ledger, "asset", { since: "2026-11-23T00:00:00Z", until: new Date("2026-11-23T11:00:00Z") })).map(
        (r) => r.amount,
      ),
    ).toEqual(["257"]);
  });

  it("spend is never summed across networks: the same token address on two chains is two rows", async () => {
    const ledger = memoryLedger();
    await ledger.append(at("2026-11-23T10:00:00.000Z", {}));
    await ledger.append(at("2026-11-23T11:00:00.000Z", { network: "eip155:8453" }));
    expect((await spendBy(ledger, "asset")).map((r) => [r.network, r.amount])).toEqual([
      ["eip155:84532", "10000"],
      ["eip155:8453", "10000"],
    ]);
  });

  it("unknowns stay to reconcile until a reconciliation names them; a reconciled settlement counts as spend", async () => {
    const ledger = memoryLedger();
    const first = at("2026-11-23T12:00:00.000Z", { outcome: "unknown", settledAmount: undefined });
    const second = at("2026-11-23T12:00:01.000Z", { outcome: "unknown", settledAmount: undefined });
    await ledger.append(first);
    await ledger.append(second);
    expect((await unreconciled(ledger)).map((r) => r.id)).toEqual([first.id, second.id]);
    const record = await reconcile(ledger, first, "settled", { transaction: TX_HASH, settledAmount: "10000" });
    await reconcile(ledger, second, "rejected");
    expect(await unreconciled(ledger)).toEqual([]);
    expect(record).toMatchObject({
      ...payment,
      outcome: "settled",
      reconciles: first.id,
      transaction: TX_HASH,
      code: undefined,
    });
    expect((await spendBy(ledger, "asset")).map((r) => r.amount)).toEqual(["10000"]);
  });
});
