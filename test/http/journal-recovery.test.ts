/**
 * What recovery leaves in the budget and the ledger, for every way it ends an entry. A "process" pays through the real
 * client (journal, memory budget, memory ledger) against an msw seller and dies at a chosen step; a new client on the
 * same stores recovers, its chain scripted (the scheme's `settlement`, the seam `evmSettlement` fills): what it
 * answers is chosen, so every answer is reached without anvil (test/interop/journal.test.ts proves the same on a real
 * chain). After each recovery: the action, the entry, the budget's spent and reserved, the ledger, and that a second
 * recovery changes nothing.
 */
import { readFileSync } from "node:fs";
import { http, HttpResponse } from "msw";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  budget,
  createX402Client,
  memoryBudgetStore,
  memoryJournalStore,
  memoryLedger,
  paymentJournal,
  recoverPayments,
  recordOutcomes,
  type JournalStore,
  type LedgerRecord,
  type PaidFetch,
  type PaymentScheme,
  type SettlementQuery,
  type SettlementStatus,
} from "../../src";
import { authCaptureEvm, exactEvm, uptoEvm, type EvmSettlement } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { useMswServer } from "../support/msw";
import {
  PATH,
  SELLER,
  TX_HASH,
  challengeResponse,
  createSeller,
  settlementHeader,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { VECTOR_NOW_MS } from "../support/vectors";
import { account, countingSigner } from "../support/wallets";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
/** The transaction the scripted chain names (the seller's answer names TX_HASH). */
const CHAIN_TX = `0x${"cd".repeat(32)}`;

afterEach(() => {
  vi.useRealTimers();
});

type Answer = SettlementStatus | Error;
const SETTLED: Answer = {
  state: "settled",
  transaction: CHAIN_TX,
  amount: "10000",
  reason: "the authorization was used",
};
const FAILED: Answer = { state: "failed", transaction: undefined, reason: "the authorization expired unused" };
const PENDING: Answer = { state: "pending", transaction: undefined, reason: "it can still move money" };
const DOWN: Answer = new Error("the node is down");

/** A chain whose every answer is `answer`, and the queries it was asked. */
function scriptedChain(answer: Answer = PENDING) {
  const asked: SettlementQuery[] = [];
  const settlement: EvmSettlement = {
    async check(query) {
      asked.push(query);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return { settlement, asked };
}

/** How the seller answers a paid request: settles it, loses its answer, says pending, or refuses it (a 402). */
type PaidAnswer = "settle" | "lose" | "pending" | "refuse";

/** The seller, its answer to a paid request switchable between requests. */
function seller(challenge = v2Challenge()) {
  const state = { answer: "settle" as PaidAnswer, wait: undefined as Promise<void> | undefined };
  const made = createSeller({
    challenge,
    intercept: async (request) => {
      if (!request.headers.has("payment-signature")) return undefined;
      await state.wait;
      if (state.answer === "lose") return HttpResponse.error();
      if (state.answer === "refuse") return challengeResponse({ ...challenge, error: "invalid_payment" });
      if (state.answer === "pending")
        return HttpResponse.json(
          {},
          {
            status: 402,
            headers: settlementHeader(2, {
              success: false,
              errorReason: "settlement_pending",
              transaction: TX_HASH,
              network: "eip155:84532",
            }),
          },
        );
      return undefined;
    },
  });
  server.use(made.handler);
  return Object.assign(state, { requests: made.requests });
}

/** The stores a fleet shares: its journal, its budget's store, its ledger. */
function fleetStores() {
  return { journal: memoryJournalStore(), budget: memoryBudgetStore(), ledger: memoryLedger() };
}
type Stores = ReturnType<typeof fleetStores>;

/** One process's client over the shared stores: `scheme` pays, a budget of `limit` named "j", a journal, a ledger. */
function processOn(stores: Stores, scheme: PaymentScheme, journal: JournalStore = stores.journal) {
  return createX402Client({
    schemes: [scheme],
    policy: { maxAmountPerPayment: "$10" },
    plugins: [budget({ limit: "$10", name: "j", store: stores.budget }), paymentJournal(journal), stores.ledger],
  });
}

/** The budget's spent and reserved (micro-dollars: USDC's base units). */
const usage = (stores: Stores) => stores.budget.usage({ key: "j:client", limit: 10_000_000, windowMs: undefined });

/** A fetch whose paid requests never get an answer: the process dies with them in flight. */
const hang = (input: RequestInfo | URL, init?: RequestInit) =>
  new Headers(init?.headers).has("payment-signature") ? new Promise<Response>(() => {}) : fetch(input, init);

/** Where the first process dies: at the wallet (`intent`), after signing (`signed`), or its answer lost or pending. */
type Death = "intent" | "signed" | "unknown" | "pending";

/** The first process pays through `scheme` and dies as `death` says, leaving its entry and its reservation. */
async function dies(stores: Stores, death: Death, sell: ReturnType<typeof seller>, scheme?: PaymentScheme) {
  const signer =
    death === "intent" ? { ...account, signTypedData: () => new Promise<never>(() => {}) } : countingSigner().signer;
  const client = processOn(stores, scheme ?? exactEvm({ signer }));
  sell.answer = death === "unknown" ? "lose" : "pending";
  const paying = wrapFetchWithPayment(death === "signed" ? hang : fetch, client)(url);
  const ended = paying.then(
    () => "answered",
    (error) => error.code,
  );
  if (death === "unknown" || death === "pending")
    expect(await ended).toBe(death === "unknown" ? "PAYMENT_OUTCOME_UNKNOWN" : "PAYMENT_PENDING");
  else await expect.poll(() => stores.journal.entries().at(-1)?.state).toBe(death);
  await expect.poll(async () => (await usage(stores)).reserved).toBeGreaterThan(0);
  sell.answer = "settle";
  return stores.journal.entries().at(-1)!;
}

interface Row {
  name: string;
  death: Death;
  chain?: Answer | "none";
  /** Recovery runs once the signed payment is past its validity. */
  late?: boolean;
  /** Recovery sends kept GETs again (`resend`), and the seller answers so. */
  resend?: PaidAnswer;
  /** A resend is given, which recovery must not use. */
  resendUnused?: boolean;
  action: string;
  state: string;
  reason?: RegExp;
  /** spent, reserved. */
  usage: [number, number];
  /** Each ledger record: its outcome, its settled amount, its transaction. */
  ledger: [string, string | undefined, string | undefined][];
}

const FINISHED = ["settled", "expired", "dropped"];
const rows: Row[] = [
  {
    name: "an answer lost, settled on chain: spent once at the amount, recorded reconciling the unknown record",
    death: "unknown",
    chain: SETTLED,
    action: "settled",
    state: "settled",
    usage: [10_000, 0],
    ledger: [
      ["unknown", undefined, undefined],
      ["settled", "10000", CHAIN_TX],
    ],
  },
  {
    name: "a pending settlement, settled on chain with no hash named: spent, recorded with the seller's transaction",
    death: "pending",
    chain: { ...(SETTLED as object), transaction: undefined } as Answer,
    action: "settled",
    state: "settled",
    usage: [10_000, 0],
    ledger: [
      ["pending", undefined, TX_HASH],
      ["settled", "10000", TX_HASH],
    ],
  },
  {
    name: "signed and never answered, settled on chain (another process sent it): spent, recorded once",
    death: "signed",
    chain: SETTLED,
    action: "settled",
    state: "settled",
    usage: [10_000, 0],
    ledger: [["settled", "10000", CHAIN_TX]],
  },
  {
    name: "an answer lost, failed on chain while still valid (a nonce not yet used): kept, still reserved",
    death: "unknown",
    chain: FAILED,
    action: "kept",
    state: "unknown",
    reason: /expired unused/,
    usage: [0, 10_000],
    ledger: [["unknown", undefined, undefined]],
  },
  {
    name: "an answer lost, failed on chain and past its validity: expired, its reservation released, nothing recorded",
    death: "unknown",
    chain: FAILED,
    late: true,
    action: "expired",
    state: "expired",
    usage: [0, 0],
    ledger: [["unknown", undefined, undefined]],
  },
  {
    name: "signed, failed on chain and past its validity: expired and released",
    death: "signed",
    chain: FAILED,
    late: true,
    action: "expired",
    state: "expired",
    usage: [0, 0],
    ledger: [],
  },
  {
    name: "a pending settlement still pending on chain, past its validity: kept (it may still move), reserved",
    death: "pending",
    chain: PENDING,
    late: true,
    action: "kept",
    state: "pending",
    usage: [0, 10_000],
    ledger: [["pending", undefined, TX_HASH]],
  },
  {
    name: "an answer lost, the chain cannot be asked (its node is down): unchecked, its reservation counted",
    death: "unknown",
    chain: DOWN,
    action: "unchecked",
    state: "unknown",
    reason: /the node is down/,
    usage: [0, 10_000],
    ledger: [["unknown", undefined, undefined]],
  },
  {
    name: "signed, a scheme with no chain to ask: unchecked, its reservation counted (not released, not spent)",
    death: "signed",
    chain: "none",
    action: "unchecked",
    state: "signed",
    reason: /has no chain to look it up on/,
    usage: [0, 10_000],
    ledger: [],
  },
  {
    name: "killed at the wallet (never signed): dropped, released, the chain not asked",
    death: "intent",
    action: "dropped",
    state: "failed",
    usage: [0, 0],
    ledger: [],
  },
  {
    name: "settled on chain, a resend given: not sent again (only kept payments are), spent once",
    death: "signed",
    chain: SETTLED,
    resendUnused: true,
    action: "settled",
    state: "settled",
    usage: [10_000, 0],
    ledger: [["settled", "10000", CHAIN_TX]],
  },
  {
    name: "signed, pending on chain, sent again and settled by the seller: spent once, recorded with its transaction",
    death: "signed",
    resend: "settle",
    action: "settled",
    state: "settled",
    reason: /sent again: the seller answered 200/,
    usage: [10_000, 0],
    ledger: [["settled", "10000", TX_HASH]],
  },
  {
    name: "an answer lost, pending on chain, sent again and refused by the seller: kept, still reserved, nothing recorded",
    death: "unknown",
    resend: "refuse",
    action: "kept",
    state: "unknown",
    usage: [0, 10_000],
    ledger: [["unknown", undefined, undefined]],
  },
  {
    name: "signed, pending on chain, sent again and the seller's settlement still pending: kept, still reserved",
    death: "signed",
    resend: "pending",
    action: "kept",
    state: "signed",
    usage: [0, 10_000],
    ledger: [],
  },
  {
    name: "signed, pending on chain, sent again and its answer lost again: kept, still reserved",
    death: "signed",
    resend: "lose",
    action: "kept",
    state: "signed",
    usage: [0, 10_000],
    ledger: [],
  },
];

describe("what recovery leaves in the budget and the ledger", () => {
  it.each(rows)("$name", async (row) => {
    const sell = seller();
    const stores = fleetStores();
    const dead = await dies(stores, row.death, sell);
    const before = stores.ledger.list.length;
    expect(await usage(stores)).toEqual({ spent: 0, reserved: 10_000 });
    if (row.late) vi.useFakeTimers({ toFake: ["Date"], now: dead.validBefore! * 1000 + 1 });

    const chain = scriptedChain(row.chain === "none" ? undefined : row.chain);
    const scheme = exactEvm({
      signer: countingSigner().signer,
      ...(row.chain !== "none" && { settlement: chain.settlement }),
    });
    const client = processOn(stores, scheme);
    const sent: string[] = [];
    const paid = wrapFetchWithPayment((input, init) => {
      const header = new Headers(init?.headers).get("payment-signature");
      if (header) sent.push(header);
      return fetch(input, init);
    }, client);
    const resend: PaidFetch | undefined =
      row.resendUnused || row.resend
        ? (to, init) => ((sell.answer = row.resend ?? "settle"), paid(to, init))
        : undefined;
    const recovered = await recoverPayments(client, { staleAfterMs: 0, ...(resend && { resend }) });

    expect(recovered.map((r) => [r.entry.id, r.action])).toEqual([[dead.id, row.action]]);
    if (row.reason) expect(recovered[0]!.reason).toMatch(row.reason);
    expect(stores.journal.entries()).toEqual([expect.objectContaining({ id: dead.id, state: row.state })]);
    expect(await usage(stores)).toEqual({ spent: row.usage[0], reserved: row.usage[1] });
    const ledger = stores.ledger.list;
    expect(ledger.map((r) => [r.outcome, r.settledAmount, r.transaction])).toEqual(row.ledger);
    expect(ledger.slice(before).every((r) => r.attempt === dead.id)).toBe(true);
    const settled = ledger.find((r) => r.outcome === "settled");
    if (settled) {
      expect(settled).toMatchObject({
        url,
        method: "GET",
        scheme: "exact",
        network: "eip155:84532",
        asset: dead.asset,
        amount: "10000",
        payer: account.address,
        payee: dead.payTo,
      });
      // The attempt's open record (unknown, pending) is reconciled by it.
      expect(settled.reconciles).toBe(before > 0 ? ledger[0]!.id : undefined);
    }
    // The chain is asked about the payment as it was signed (the dead process's attempt, its header's payload).
    if (row.death !== "intent" && row.chain !== "none") {
      expect(chain.asked[0]).toMatchObject({
        attempt: dead.id,
        scheme: "exact",
        network: "eip155:84532",
        transaction: dead.transaction,
        asset: dead.asset,
        payTo: dead.payTo,
        payer: account.address,
        amount: "10000",
        payload: JSON.parse(atob(dead.paymentHeader!.value)),
      });
    } else expect(chain.asked).toEqual([]);
    // A resending sends the kept header as it was, nothing signed anew.
    expect(sent).toEqual(row.resend ? [dead.paymentHeader!.value] : []);

    // Run again: nothing moves a second time; an entry it ended is not read again.
    const entries = stores.journal.entries();
    const again = await recoverPayments(client, { staleAfterMs: 0 });
    expect(again.map((r) => r.action)).toEqual(FINISHED.includes(row.action) ? [] : [row.resend ? "kept" : row.action]);
    expect(await usage(stores)).toEqual({ spent: row.usage[0], reserved: row.usage[1] });
    expect(stores.ledger.list).toEqual(ledger);
    expect(stores.journal.entries()).toEqual(entries);
  });

  it("a kept POST is not sent again (the journal keeps no body): kept, still reserved, the seller not asked", async () => {
    const sell = seller();
    const stores = fleetStores();
    const client = processOn(stores, exactEvm({ signer: account }));
    void wrapFetchWithPayment(hang, client)(url, { method: "POST", body: "{}" });
    await expect.poll(() => stores.journal.entries()[0]?.state).toBe("signed");
    const asked: string[] = [];
    const resend: PaidFetch = async (to, init) => (asked.push(init.method), fetch(to));
    const next = processOn(stores, exactEvm({ signer: account, settlement: scriptedChain(PENDING).settlement }));
    const done = await recoverPayments(next, { staleAfterMs: 0, resend });
    expect(done.map((r) => [r.entry.method, r.action])).toEqual([["POST", "kept"]]);
    expect(asked).toEqual([]);
    expect(sell.requests.filter((r) => r.headers["payment-signature"])).toEqual([]);
    expect(await usage(stores)).toEqual({ spent: 0, reserved: 10_000 });
  });

  it("an intent signed meanwhile by its own process: left to it (unchecked), its reservation counted, nothing recorded; then paid and spent once", async () => {
    const sell = seller();
    const stores = fleetStores();
    const { journal } = stores;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const signer = {
      ...account,
      signTypedData: async (request: never) => (await gate, account.signTypedData(request)),
    };
    const slow = wrapFetchWithPayment(fetch, processOn(stores, exactEvm({ signer })))(url);
    await expect.poll(() => usage(stores)).toEqual({ spent: 0, reserved: 10_000 });
    // Recovery read the entry at its intent; the process signs it before recovery writes.
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
    // The seller holds its paid request until recovery is done.
    let answer!: () => void;
    sell.wait = new Promise<void>((resolve) => (answer = resolve));
    const recovered = await recoverPayments(processOn(stores, exactEvm({ signer: account }), racing), {
      staleAfterMs: 0,
    });
    expect(recovered.map((r) => r.action)).toEqual(["unchecked"]);
    expect(recovered[0]!.entry.state).toBe("intent");
    expect(await usage(stores)).toEqual({ spent: 0, reserved: 10_000 });
    expect(stores.ledger.list).toEqual([]);
    answer();
    expect((await slow).status).toBe(200);
    expect(await usage(stores)).toEqual({ spent: 10_000, reserved: 0 });
    expect(stores.ledger.list.map((r) => r.outcome)).toEqual(["settled"]);
  });

  it("a budget store that fails as recovery ends an entry: left open and counted, and the next recovery ends it once", async () => {
    const sell = seller();
    const stores = fleetStores();
    const dead = await dies(stores, "unknown", sell);
    const commit = stores.budget.commit.bind(stores.budget);
    let failing = true;
    stores.budget.commit = (...args) => (failing ? Promise.reject(new Error("Redis went away")) : commit(...args));
    const client = processOn(stores, exactEvm({ signer: account, settlement: scriptedChain(SETTLED).settlement }));
    const first = await recoverPayments(client, { staleAfterMs: 0 });
    expect(first.map((r) => [r.action, r.reason])).toEqual([
      ["unchecked", "ending it failed (Redis went away): left open"],
    ]);
    expect(first[0]!.entry).toBe(stores.journal.entries()[0]);
    expect(stores.journal.entries()[0]).toMatchObject({ id: dead.id, state: "unknown" });
    expect(await usage(stores)).toEqual({ spent: 0, reserved: 10_000 });
    expect(stores.ledger.list.map((r) => r.outcome)).toEqual(["unknown"]);
    failing = false;
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((r) => r.action)).toEqual(["settled"]);
    expect(await usage(stores)).toEqual({ spent: 10_000, reserved: 0 });
    expect(stores.ledger.list.map((r) => r.outcome)).toEqual(["unknown", "settled"]);
  });

  it("a ledger that failed as recovery recorded: the entry left open, its budget already spent; the next recovery records it once and spends nothing twice", async () => {
    const sell = seller();
    const stores = fleetStores();
    await dies(stores, "signed", sell);
    const append = stores.ledger.append.bind(stores.ledger);
    let failing = true;
    stores.ledger.append = (record) => (failing ? Promise.reject(new Error("the disk is full")) : append(record));
    const client = processOn(stores, exactEvm({ signer: account, settlement: scriptedChain(SETTLED).settlement }));
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((r) => r.action)).toEqual(["unchecked"]);
    expect(stores.journal.entries()[0]!.state).toBe("signed");
    expect(await usage(stores)).toEqual({ spent: 10_000, reserved: 0 });
    failing = false;
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((r) => r.action)).toEqual(["settled"]);
    expect(await usage(stores)).toEqual({ spent: 10_000, reserved: 0 });
    expect(stores.ledger.list.map((r) => [r.outcome, r.transaction])).toEqual([["settled", CHAIN_TX]]);
  });

  it("a settled record already in a ledger (written before the process died): recovery ends the entry and records nothing twice, even in a ledger that would take a second", async () => {
    const sell = seller();
    const stores = fleetStores();
    const dead = await dies(stores, "signed", sell);
    // A ledger of one's own (recordOutcomes), which keeps whatever it is given.
    const list: LedgerRecord[] = [];
    const plain = recordOutcomes({
      append: async (record: LedgerRecord) => void list.push(record),
      records: async function* () {
        yield* list;
      },
    });
    const written = { id: "written-before", time: new Date().toISOString(), url, method: "GET", attempt: dead.id };
    await plain.append({ ...written, outcome: "settled" });
    const client = createX402Client({
      schemes: [exactEvm({ signer: account, settlement: scriptedChain(SETTLED).settlement })],
      plugins: [budget({ limit: "$10", name: "j", store: stores.budget }), paymentJournal(stores.journal), plain],
    });
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((r) => r.action)).toEqual(["settled"]);
    expect(list.map((r) => r.id)).toEqual(["written-before"]);
    expect(stores.journal.entries()[0]!.state).toBe("settled");
    expect(await usage(stores)).toEqual({ spent: 10_000, reserved: 0 });
  });

  it("two ledgers: each records the settled payment once, each reconciling its own open record", async () => {
    const sell = seller();
    const stores = fleetStores();
    const second = memoryLedger({ name: "audit" });
    const both = (scheme: PaymentScheme) =>
      createX402Client({
        schemes: [scheme],
        plugins: [budget({ limit: "$10", name: "j", store: stores.budget }), paymentJournal(stores.journal)].concat(
          stores.ledger,
          second,
        ),
      });
    sell.answer = "lose";
    await expect(wrapFetchWithPayment(fetch, both(exactEvm({ signer: account })))(url)).rejects.toMatchObject({
      code: "PAYMENT_OUTCOME_UNKNOWN",
    });
    const client = both(exactEvm({ signer: account, settlement: scriptedChain(SETTLED).settlement }));
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((r) => r.action)).toEqual(["settled"]);
    for (const ledger of [stores.ledger, second]) {
      const [unknown, settled] = ledger.list;
      expect(ledger.list.map((r) => r.outcome)).toEqual(["unknown", "settled"]);
      expect(settled!.reconciles).toBe(unknown!.id);
    }
    expect(await usage(stores)).toEqual({ spent: 10_000, reserved: 0 });
  });

  it("several entries at once: each ends as the chain says of it, the ledgers read once, each settled one recorded once", async () => {
    const sell = seller();
    const stores = fleetStores();
    const first = await dies(stores, "unknown", sell);
    const other = await dies(stores, "signed", sell);
    let reads = 0;
    const records = stores.ledger.records.bind(stores.ledger);
    stores.ledger.records = () => (reads++, records());
    const client = processOn(stores, exactEvm({ signer: account, settlement: scriptedChain(SETTLED).settlement }));
    const recovered = await recoverPayments(client, { staleAfterMs: 0 });
    expect(recovered.map((r) => [r.entry.id, r.action])).toEqual([
      [first.id, "settled"],
      [other.id, "settled"],
    ]);
    expect(reads).toBe(1);
    expect(stores.ledger.list.map((r) => [r.outcome, r.attempt])).toEqual([
      ["unknown", first.id],
      ["settled", first.id],
      ["settled", other.id],
    ]);
    expect(await usage(stores)).toEqual({ spent: 20_000, reserved: 0 });
  });
});

describe("a payment whose amount is a most: recorded and spent at what the chain says moved (#45)", () => {
  const FACILITATOR = "0x1111111111111111111111111111111111111111";
  /** 5 USDC at most, settled through FACILITATOR. */
  const upto = v2Requirement({
    scheme: "upto",
    amount: "5000000",
    extra: { name: "USDC", version: "2", assetTransferMethod: "permit2", facilitatorAddress: FACILITATOR },
  });
  const vectors = JSON.parse(readFileSync(new URL("../vectors/auth-capture.json", import.meta.url), "utf8"));
  const escrow = vectors.vectors[0].requirements as Record<string, unknown>;

  /** The seller of `requirement` loses its answer to the paid request; then recovery asks a chain that says `status`. */
  async function recovered(kind: "upto" | "auth-capture", status: Answer) {
    const requirement = kind === "upto" ? upto : escrow;
    const challenge = v2Challenge({ accepts: [requirement] });
    server.use(
      http.all(url, ({ request }) =>
        request.headers.has("payment-signature") ? HttpResponse.error() : challengeResponse(challenge),
      ),
    );
    const stores = fleetStores();
    const scheme = (settlement?: EvmSettlement) =>
      kind === "upto"
        ? uptoEvm({ signer: account, ...(settlement && { settlement }) })
        : authCaptureEvm({ signer: account, now: () => VECTOR_NOW_MS, ...(settlement && { settlement }) });
    await expect(wrapFetchWithPayment(fetch, processOn(stores, scheme()))(url)).rejects.toMatchObject({
      code: "PAYMENT_OUTCOME_UNKNOWN",
    });
    const most = Number(requirement.amount);
    expect(await usage(stores)).toEqual({ spent: 0, reserved: most });
    const client = processOn(stores, scheme(scriptedChain(status).settlement));
    const done = await recoverPayments(client, { staleAfterMs: 0 });
    expect(done.map((r) => r.action)).toEqual(["settled"]);
    return { stores, most, settled: stores.ledger.list.find((r) => r.outcome === "settled")! };
  }

  it.each(["upto", "auth-capture"] as const)(
    "%s charged below its most: the ledger's settled amount and the budget's spent are the chain's amount",
    async (kind) => {
      const { stores, settled, most } = await recovered(kind, { ...(SETTLED as object), amount: "1234" } as Answer);
      expect(settled).toMatchObject({ scheme: kind, amount: String(most), settledAmount: "1234" });
      expect(await usage(stores)).toEqual({ spent: 1234, reserved: 0 });
    },
  );

  it.each(["upto", "auth-capture"] as const)(
    "%s used on chain for an amount not known: no settled amount recorded, its most spent (never counted less)",
    async (kind) => {
      const { stores, settled, most } = await recovered(kind, { ...(SETTLED as object), amount: undefined } as Answer);
      expect(settled.settledAmount).toBeUndefined();
      expect(settled.amount).toBe(String(most));
      expect(await usage(stores)).toEqual({ spent: most, reserved: 0 });
    },
  );

  it("exact, the chain naming a transaction that moved more (another payment in it too): recorded and spent at what was signed", async () => {
    const sell = seller();
    const stores = fleetStores();
    await dies(stores, "unknown", sell);
    const chain = scriptedChain({ ...(SETTLED as object), amount: "25000" } as Answer);
    const client = processOn(stores, exactEvm({ signer: account, settlement: chain.settlement }));
    expect((await recoverPayments(client, { staleAfterMs: 0 })).map((r) => r.action)).toEqual(["settled"]);
    expect(stores.ledger.list.at(-1)).toMatchObject({ outcome: "settled", amount: "10000", settledAmount: "10000" });
    expect(await usage(stores)).toEqual({ spent: 10_000, reserved: 0 });
  });

  it("upto sent again by recovery, the seller settling below the most: recorded and spent at what the seller settled", async () => {
    const challenge = v2Challenge({ accepts: [upto] });
    let lose = true;
    server.use(
      http.all(url, async ({ request }) => {
        const header = request.headers.get("payment-signature");
        if (!header) return challengeResponse(challenge);
        if (lose) return HttpResponse.error();
        const settle = { success: true, transaction: TX_HASH, network: "eip155:84532", amount: "777" };
        return HttpResponse.json({ data: "metered" }, { headers: settlementHeader(2, settle) });
      }),
    );
    const stores = fleetStores();
    await expect(
      wrapFetchWithPayment(fetch, processOn(stores, uptoEvm({ signer: account })))(url),
    ).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    lose = false;
    const client = processOn(stores, uptoEvm({ signer: account, settlement: scriptedChain(PENDING).settlement }));
    const resend = wrapFetchWithPayment(fetch, client);
    const done = await recoverPayments(client, { staleAfterMs: 0, resend });
    expect(done.map((r) => r.action)).toEqual(["settled"]);
    expect(stores.ledger.list.at(-1)).toMatchObject({ outcome: "settled", amount: "5000000", settledAmount: "777" });
    expect(await usage(stores)).toEqual({ spent: 777, reserved: 0 });
  });
});
