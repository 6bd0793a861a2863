/**
 * The step after a failure. An error path is not done when it throws the right error: what it leaves behind (a
 * channel's hold, a budget's reservation, a voucher signed beyond what was charged) decides whether the NEXT call
 * works and what the seller can claim. Each case here fails once, then makes the next call and checks that it goes
 * through and that nothing is left held, reserved or over-signed.
 */
import { readFileSync } from "node:fs";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import {
  budget,
  createX402Client,
  memoryBudgetStore,
  quoteCache,
  type BudgetScope,
  type BudgetStore,
  type X402Client,
} from "../../src";
import type { ChannelStore } from "../../src/contracts";
import {
  authCaptureEvm,
  batchSettlementEvm,
  exactEvm,
  memoryChannelStore,
  type BatchSettlementEvmOptions,
} from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { PRICE, createBatchSeller } from "../support/batch-seller";
import { useMswServer } from "../support/msw";
import {
  PATH,
  PAY_TO,
  SELLER,
  TX_HASH,
  challengeResponse,
  countingSigner,
  createSeller,
  settlementHeader,
  v2Challenge,
} from "../support/seller";
import { VECTOR_NOW_MS } from "../support/vectors";
import { account, countingSigner as countingWallet } from "../support/wallets";
import { fetchWrapper, paidFetch, rejection, wrappers } from "../support/wrappers";

const server = useMswServer();

/** The seller refuses the first payment it is sent (insufficient funds), then takes them. */
const refusedOnce = (request: Request, state: { failed: boolean }) => {
  if (!request.headers.has("payment-signature") || state.failed) return undefined;
  state.failed = true;
  const header = Buffer.from(JSON.stringify({ ...v2Challenge(), error: "insufficient_funds" })).toString("base64");
  return HttpResponse.json({}, { status: 402, headers: { "PAYMENT-REQUIRED": header } });
};
/** A channel store that counts the holds not yet released (every hold must be let go, whatever happened). */
function countingStore(inner: ChannelStore = memoryChannelStore()) {
  let open = 0;
  const store: ChannelStore = {
    peek: (id) => inner.peek(id),
    async hold(id, signal) {
      const held = await inner.hold(id, signal);
      open++;
      let mine = true;
      return {
        state: held.state,
        save: (state) => held.save(state),
        async release() {
          if (mine) open--;
          mine = false;
          await held.release();
        },
      };
    },
  };
  return { store, open: () => open };
}

function batch(options: Partial<BatchSettlementEvmOptions> = {}, seller = createBatchSeller()) {
  server.use(seller.handler);
  const { signer, calls } = countingSigner();
  const { store, open } = countingStore();
  const scheme = batchSettlementEvm({ signer, rpc: seller.rpc, storage: store, ...options });
  const client = createX402Client({ schemes: [scheme], policy: { maxAmountPerPayment: "$1" } });
  const vouchers = () =>
    calls.filter((c) => c.primaryType === "Voucher").map((c) => BigInt(c.message.maxClaimableAmount as bigint));
  return { seller, scheme, client, open, vouchers, pay: () => fetchWrapper.send(client, { url: seller.url }) };
}

describe("batch-settlement: a payment whose open throws lets the channel go", () => {
  it("a chain read that fails: the next payment on the channel proceeds", async () => {
    const seller = createBatchSeller();
    let failing = true;
    const rpc = {
      request: (call: { method: string; params?: readonly unknown[] }) =>
        failing && call.method === "eth_call" ? Promise.reject(new Error("upstream down")) : seller.rpc.request(call),
    };
    const { pay, open } = batch({ rpc }, seller);
    expect((await rejection(pay())).code).toBe("RPC_FAILED");
    expect(open()).toBe(0);
    failing = false;
    expect((await pay()).status).toBe(200);
    expect(open()).toBe(0);
    expect(seller.vouchers.map((v) => [v.kind, v.max])).toEqual([["deposit", PRICE]]);
  });

  it("a deposit sizing that throws: the next payment proceeds", async () => {
    let calls = 0;
    const { pay, open, seller } = batch({
      deposit: () => {
        if (calls++ === 0) throw new Error("no sizing today");
        return 5n * PRICE;
      },
    });
    await rejection(pay());
    expect(open()).toBe(0);
    expect((await pay()).status).toBe(200);
    expect(open()).toBe(0);
    expect([...seller.channels.values()][0]).toMatchObject({ balance: 5n * PRICE, charged: PRICE });
  });

  it("a disputed channel refuses every later payment at once, and holds nothing after any of them", async () => {
    const { pay, open, seller, vouchers } = batch();
    await pay();
    seller.lie({ correctiveCharged: 5n * PRICE });
    seller.channels.values().next().value!.charged = 5n * PRICE;
    expect((await rejection(pay())).code).toBe("CHANNEL_DISPUTED");
    const signed = vouchers().length;
    for (let i = 0; i < 3; i++) {
      expect((await rejection(pay())).code).toBe("CHANNEL_DISPUTED");
      expect(open()).toBe(0);
    }
    expect(vouchers()).toHaveLength(signed);
  });
});

describe("batch-settlement: a refund after a lost answer signs for what was charged, never for what was signed", () => {
  it("the call whose answer was lost is not in the refund's voucher", async () => {
    const { seller, client, scheme, vouchers, open } = batch();
    const pay = (lose = false) =>
      wrapFetchWithPayment((input, init) => {
        const paid = new Headers(init?.headers).has("payment-signature");
        return lose && paid ? Promise.reject(new TypeError("fetch failed")) : globalThis.fetch(input, init);
      }, client)(seller.url);
    for (let i = 0; i < 3; i++) expect((await pay()).status).toBe(200);
    // The fourth call's voucher (4 x the price) is signed and sent; the answer never comes, nothing was served.
    await expect(pay(true)).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    expect(vouchers().at(-1)).toBe(4n * PRICE);
    expect(open()).toBe(0);
    const result = await scheme.refund(seller.url, { through: paidFetch(client) });
    expect(result).toMatchObject({ refunded: String(7n * PRICE), balance: String(3n * PRICE) });
    // One refund voucher, for the 3 calls charged.
    expect(seller.vouchers.at(-1)).toMatchObject({ kind: "refund", max: 3n * PRICE });
    expect(vouchers().at(-1)).toBe(3n * PRICE);
    expect(open()).toBe(0);
  });

  it("an answer lost after the seller served and charged: the refund is corrected to the seller's count, no more", async () => {
    const { seller, client, scheme, vouchers, open } = batch();
    const pay = (lose = false) =>
      wrapFetchWithPayment(async (input, init) => {
        const answer = await globalThis.fetch(input, init);
        if (lose && new Headers(init?.headers).has("payment-signature")) throw new TypeError("fetch failed");
        return answer;
      }, client)(seller.url);
    for (let i = 0; i < 3; i++) expect((await pay()).status).toBe(200);
    await expect(pay(true)).rejects.toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    const result = await scheme.refund(seller.url, { through: paidFetch(client) });
    // The seller served 4 calls: the refund is for its count (held up by our own signature of 4), never above.
    expect(result).toMatchObject({ refunded: String(6n * PRICE), balance: String(4n * PRICE) });
    expect(seller.vouchers.at(-1)).toMatchObject({ kind: "refund", max: 4n * PRICE });
    expect(vouchers().every((max) => max <= 4n * PRICE)).toBe(true);
    expect(open()).toBe(0);
  });

  it("after the refund, the next call pays on the channel from what was charged", async () => {
    const { seller, client, scheme, pay, open } = batch();
    for (let i = 0; i < 2; i++) await pay();
    await scheme.refund(seller.url, { through: paidFetch(client) });
    expect((await pay()).status).toBe(200);
    expect(seller.vouchers.map((v) => [v.kind, v.max])).toEqual([
      ["deposit", PRICE],
      ["voucher", 2n * PRICE],
      ["refund", 2n * PRICE],
      // The channel holds only what was charged: the third call tops it up.
      ["deposit", 3n * PRICE],
    ]);
    expect(open()).toBe(0);
  });
});

describe.each<BudgetScope>(["client", "origin", "payee"])(
  "a budget of scope %s: a refund lets go of the hold in the entry that holds it",
  (scope) => {
    const key = {
      client: "client/life:client",
      origin: `origin/life:origin:${SELLER}`,
      payee: `payee/life:payee:eip155:84532:${PAY_TO.toLowerCase()}`,
    }[scope];
    const usage = (store: BudgetStore) => store.usage({ key, limit: 1, windowMs: undefined });

    it("the deposit is held in the scope's entry, and the refund releases it there", async () => {
      const seller = createBatchSeller();
      server.use(seller.handler);
      const store = memoryBudgetStore();
      const scheme = batchSettlementEvm({ signer: countingSigner().signer, deposit: { multiple: 4 } });
      // $0.0075: the deposit of $0.004 fits; after the refund, $0.003 spent and a top-up of $0.004 fit only if the
      // refund let go of the $0.001 still held.
      const client = createX402Client({ schemes: [scheme], plugins: [budget({ limit: "$0.0075", scope, store })] });
      for (let i = 0; i < 3; i++) await fetchWrapper.send(client, { url: seller.url });
      expect(await usage(store)).toEqual({ spent: 3000, reserved: 1000 });
      await scheme.refund(seller.url, { through: paidFetch(client) });
      expect(await usage(store)).toEqual({ spent: 3000, reserved: 0 });
      expect((await fetchWrapper.send(client, { url: seller.url })).status).toBe(200);
      expect(await usage(store)).toEqual({ spent: 4000, reserved: 3000 });
    });
  },
);

describe("budgets: after each refusal the next payment goes through", () => {
  const url = `${SELLER}${PATH}`;
  /** A budget of exactly one payment ($0.01): any reservation left behind refuses the next. */
  const clientWith = (store: BudgetStore, over: Partial<Parameters<typeof createX402Client>[0]> = {}): X402Client =>
    createX402Client({
      schemes: [exactEvm({ signer: countingWallet().signer })],
      plugins: [budget({ limit: "$0.01", store })],
      ...over,
    });

  it.each([
    ["the seller refuses the payment", "PAYMENT_REJECTED"],
    ["the approval hook declines", "PAYMENT_REFUSED"],
    ["the wallet declines", "USER_REJECTED"],
    ["the request is aborted before it is sent", "ABORTED"],
  ])("%s", async (cause, code) => {
    const state = { failed: cause !== "the seller refuses the payment" };
    server.use(createSeller({ intercept: (request) => refusedOnce(request, state) }).handler);
    const store = memoryBudgetStore();
    const declining = countingWallet(() =>
      Promise.reject(Object.assign(new Error("User rejected the request."), { code: 4001 })),
    );
    const controller = new AbortController();
    const failing = clientWith(store, {
      ...(cause === "the approval hook declines" && { onBeforePayment: () => false }),
      ...(cause === "the wallet declines" && { schemes: [exactEvm({ signer: declining.signer })] }),
      ...(cause === "the request is aborted before it is sent" && {
        onBeforePayment: () => {
          controller.abort();
          return true;
        },
      }),
    });
    const error = await rejection(fetchWrapper.send(failing, { url, signal: controller.signal }));
    expect(error.code).toBe(code);
    expect(await store.usage({ key: "client/life:client", limit: 1, windowMs: undefined })).toEqual({
      spent: 0,
      reserved: 0,
    });
    expect((await fetchWrapper.send(clientWith(store), { url })).status).toBe(200);
  });
});

describe("budgets: a list whose second budget fails lets go of the first's reservation", () => {
  const url = `${SELLER}${PATH}`;

  it.each([
    ["its store fails", "BUDGET_UNAVAILABLE"],
    ["it is exceeded", "BUDGET_EXCEEDED"],
  ])("%s: the first budget holds nothing, and the next payment goes through", async (cause, code) => {
    server.use(createSeller().handler);
    const first = memoryBudgetStore();
    const inner = memoryBudgetStore();
    let failing = true;
    const second: BudgetStore = {
      ...inner,
      reserve: (entry, id, amount) =>
        failing && cause === "its store fails"
          ? Promise.reject(new Error("connect ECONNREFUSED"))
          : inner.reserve(entry, id, amount),
    };
    if (cause === "it is exceeded")
      await inner.reserve({ key: "second:client", limit: 10_000, windowMs: undefined }, "x", 10_000);
    const client = createX402Client({
      schemes: [exactEvm({ signer: countingWallet().signer })],
      plugins: [budget({ limit: "$0.01", store: first }), budget({ limit: "$0.01", name: "second", store: second })],
    });
    expect((await rejection(fetchWrapper.send(client, { url }))).code).toBe(code);
    const usage = () => first.usage({ key: "client/life:client", limit: 1, windowMs: undefined });
    expect(await usage()).toEqual({ spent: 0, reserved: 0 });
    failing = false;
    await inner.release({ key: "second:client", limit: 10_000, windowMs: undefined }, "x");
    expect((await fetchWrapper.send(client, { url })).status).toBe(200);
    expect(await usage()).toEqual({ spent: 10_000, reserved: 0 });
  });
});

describe.each(wrappers)("$name: a quote cache's probe ends with a request that failed", (wrapper) => {
  const url = `${SELLER}${PATH}`;
  /** Whether a request to the route would wait on a probe still running (the route's first request's). */
  const waits = (quotes: ReturnType<typeof quoteCache>) =>
    Promise.race([
      quotes.cache.probe(`GET ${url}`).then((done) => {
        done();
        return "no wait";
      }),
      new Promise((resolve) => setTimeout(() => resolve("waited"), 50)),
    ]);

  it.each([
    // The transport's own error (no payment was made): no code of ours.
    ["the first answer never comes (a network error)", undefined],
    ["the approval hook declines", "PAYMENT_REFUSED"],
    ["the seller refuses the payment", "PAYMENT_REJECTED"],
  ])("%s: the next request need not wait, and pays", async (cause, code) => {
    const state = { failed: false };
    const seller = createSeller({
      intercept: (request) => {
        if (state.failed) return undefined;
        if (cause.startsWith("the first answer") && !request.headers.has("payment-signature")) {
          state.failed = true;
          return HttpResponse.error();
        }
        return cause.startsWith("the seller") ? refusedOnce(request, state) : undefined;
      },
    });
    server.use(seller.handler);
    const quotes = quoteCache();
    let declined = false;
    const client = createX402Client({
      schemes: [exactEvm({ signer: countingWallet().signer })],
      plugins: [quotes],
      onBeforePayment: () => !(cause === "the approval hook declines" && !declined && (declined = true)),
    });
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe(code);
    expect(await waits(quotes)).toBe("no wait");
    expect((await wrapper.send(client, { url })).status).toBe(200);
  });
});

describe("auth-capture: after a refused or declined escrow payment, the next one goes through and is counted once", () => {
  const url = `${SELLER}${PATH}`;
  const vectors = JSON.parse(readFileSync(new URL("../vectors/auth-capture.json", import.meta.url), "utf8"));
  const escrow = vectors.vectors[0].requirements;

  it.each([
    ["the seller refuses the held payment", "PAYMENT_REJECTED"],
    ["the wallet declines", "USER_REJECTED"],
  ])("%s", async (cause, code) => {
    const state = { failed: cause !== "the seller refuses the held payment" };
    const challenge = v2Challenge({ accepts: [escrow] });
    const paid: unknown[] = [];
    server.use(
      http.get(url, ({ request }) => {
        if (!request.headers.has("payment-signature")) return challengeResponse(challenge);
        if (!state.failed) {
          state.failed = true;
          return challengeResponse({ ...challenge, error: "insufficient_funds" });
        }
        paid.push(request.headers.get("payment-signature"));
        const settle = { success: true, transaction: TX_HASH, network: escrow.network, amount: escrow.amount };
        return HttpResponse.json({ held: true }, { headers: settlementHeader(2, settle) });
      }),
    );
    const store = memoryBudgetStore();
    let declined = cause !== "the wallet declines";
    const signer = countingWallet((typed) => {
      if (declined) return account.signTypedData(typed as never);
      declined = true;
      return Promise.reject(Object.assign(new Error("User rejected the request."), { code: 4001 }));
    }).signer;
    // A budget of exactly one payment (10000 base units of USDC: $0.01).
    const client = createX402Client({
      schemes: [authCaptureEvm({ signer, now: () => VECTOR_NOW_MS })],
      plugins: [budget({ limit: "$0.01", store })],
    });
    expect((await rejection(fetchWrapper.send(client, { url }))).code).toBe(code);
    const usage = () => store.usage({ key: "client/life:client", limit: 1, windowMs: undefined });
    expect(await usage()).toEqual({ spent: 0, reserved: 0 });
    expect((await fetchWrapper.send(client, { url })).status).toBe(200);
    expect(paid).toHaveLength(1);
    expect(await usage()).toEqual({ spent: 10_000, reserved: 0 });
  });
});
