/**
 * Budgets through both wrappers against the msw seller: exact under concurrency, refused before any
 * wallet prompt, and each reservation settled by the outcome (committed when settled or unknown,
 * released when nothing was sent or the seller refused); upto commits what was settled.
 */
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { createX402Client, memoryBudgetStore, type AnyX402Error, type BudgetStore } from "../../src";
import { exactEvm, uptoEvm } from "../../src/evm";
import { useMswServer } from "../support/msw";
import {
  OTHER,
  OTHER_PAY_TO,
  PATH,
  SELLER,
  TX_HASH,
  createSeller,
  settlementHeader,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { countingSigner } from "../support/wallets";
import { rejection, wrappers } from "../support/wrappers";
import { budget as budgetPlugin } from "../../src";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
/** The seller's price: 0.01 USDC, 10,000 micro-dollars. */
const PRICE = 10_000;

/** A client paying exact with a counting wallet, a budget kept in `store`, and the failures it was told of. */
function budgetClient(budget: object | object[], store: BudgetStore = memoryBudgetStore()) {
  const { calls, signer } = countingSigner();
  const failed: AnyX402Error[] = [];
  const withStore = (b: object) => ({ store, ...b });
  const client = createX402Client({
    schemes: [exactEvm({ signer })],
    plugins: (Array.isArray(budget) ? budget : [budget]).map((b) => budgetPlugin(withStore(b) as never)),
    onPaymentFailed: (e) => void failed.push(e),
  });
  return { client, signs: calls, failed, store };
}

const usage = (store: BudgetStore, key = "client/life:client", limit = 1) =>
  store.usage({ key, limit, windowMs: undefined });

describe.each(wrappers)("$name: budgets", (wrapper) => {
  it("1000 concurrent requests against a budget of 25 payments: exactly 25 signed, paid and counted; the rest BUDGET_EXCEEDED before any prompt", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs, store } = budgetClient({ limit: "$0.25" });

    const results = await Promise.allSettled(Array.from({ length: 1000 }, () => wrapper.send(client, { url })));

    const paid = results.filter((r) => r.status === "fulfilled" && r.value.status === 200);
    const refused = results
      .map((r) => (r.status === "rejected" ? (r.reason as AnyX402Error) : undefined))
      .filter(Boolean);
    expect(paid).toHaveLength(25);
    expect(refused).toHaveLength(975);
    expect(new Set(refused.map((e) => e!.code))).toEqual(new Set(["BUDGET_EXCEEDED"]));
    expect(signs.length).toBe(25);
    expect(seller.payments).toHaveLength(25);
    expect(await usage(store)).toEqual({ spent: 25 * PRICE, reserved: 0 });
  }, 30_000);

  it("the error names the limit, what is spent and what is reserved", async () => {
    server.use(createSeller().handler);
    const { client, store } = budgetClient({ limit: "$0.025", per: "day", name: "daily" });
    await wrapper.send(client, { url });
    // Another payment under way holds a reservation.
    await store.reserve({ key: "daily:client", limit: 25_000, windowMs: 86_400_000 }, "elsewhere", 6_000);
    const error = await rejection(wrapper.send(client, { url }));
    expect(error).toMatchObject({
      code: "BUDGET_EXCEEDED",
      phase: "select",
      message:
        "Budget daily ($0.025 per day) cannot take $0.01 more: $0.01 spent and $0.006 reserved of $0.025. Nothing was signed.",
      details: {
        budget: "daily",
        limit: "$0.025",
        spent: "$0.01",
        reserved: "$0.006",
        amount: "$0.01",
        url,
        method: "GET",
      },
    });
  });

  it("a seller that refuses the payment: the reservation is released", async () => {
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? HttpResponse.json(
              {},
              {
                status: 402,
                headers: {
                  "PAYMENT-REQUIRED": Buffer.from(
                    JSON.stringify({ ...v2Challenge(), error: "insufficient_funds" }),
                  ).toString("base64"),
                },
              },
            )
          : undefined,
    });
    server.use(seller.handler);
    const { client, store } = budgetClient({ limit: "$0.01" });
    expect(await rejection(wrapper.send(client, { url }))).toMatchObject({ code: "PAYMENT_REJECTED" });
    expect(await usage(store)).toEqual({ spent: 0, reserved: 0 });
  });

  it("a paid request that gets no answer (outcome unknown): counted as spent", async () => {
    const seller = createSeller({
      intercept: (request) => (request.headers.has("payment-signature") ? HttpResponse.error() : undefined),
    });
    server.use(seller.handler);
    const { client, store } = budgetClient({ limit: "$0.015" });
    expect(await rejection(wrapper.send(client, { url }))).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    expect(await usage(store)).toEqual({ spent: PRICE, reserved: 0 });
    expect(await rejection(wrapper.send(client, { url }))).toMatchObject({ code: "BUDGET_EXCEEDED" });
  });

  it("refused by the approval hook, or the wallet declines: released, nothing counted", async () => {
    server.use(createSeller().handler);
    const store = memoryBudgetStore();
    const refusing = createX402Client({
      schemes: [exactEvm({ signer: countingSigner().signer })],
      plugins: [budgetPlugin({ limit: "$0.01", store })],
      onBeforePayment: () => false,
    });
    expect(await rejection(wrapper.send(refusing, { url }))).toMatchObject({ code: "PAYMENT_REFUSED" });
    const declining = createX402Client({
      schemes: [
        exactEvm({
          signer: countingSigner(async () =>
            Promise.reject(Object.assign(new Error("User rejected the request."), { code: 4001 })),
          ).signer,
        }),
      ],
      plugins: [budgetPlugin({ limit: "$0.01", store })],
    });
    expect(await rejection(wrapper.send(declining, { url }))).toMatchObject({ code: "USER_REJECTED" });
    expect(await usage(store)).toEqual({ spent: 0, reserved: 0 });
  });

  it("scope origin: each origin has its own budget; scope payee: each payTo", async () => {
    const here = createSeller();
    const there = createSeller({
      origin: OTHER,
      challenge: v2Challenge({
        accepts: [v2Requirement({ payTo: OTHER_PAY_TO })],
        resource: { url: `${OTHER}${PATH}` },
      }),
    });
    server.use(here.handler, there.handler);
    const perOrigin = budgetClient({ limit: "$0.01", scope: "origin" });
    await wrapper.send(perOrigin.client, { url });
    await wrapper.send(perOrigin.client, { url: `${OTHER}${PATH}` });
    expect(await rejection(wrapper.send(perOrigin.client, { url }))).toMatchObject({
      code: "BUDGET_EXCEEDED",
      details: { budget: "origin/life" },
    });
    expect(await usage(perOrigin.store, `origin/life:origin:${OTHER}`)).toEqual({ spent: PRICE, reserved: 0 });

    const perPayee = budgetClient({ limit: "$0.01", scope: "payee" });
    await wrapper.send(perPayee.client, { url: `${OTHER}${PATH}` });
    await wrapper.send(perPayee.client, { url });
    expect(await usage(perPayee.store, `payee/life:payee:eip155:84532:${OTHER_PAY_TO.toLowerCase()}`)).toEqual({
      spent: PRICE,
      reserved: 0,
    });
  });

  it("a list: every budget must hold, and the first that does not is named", async () => {
    server.use(createSeller().handler);
    const { client, signs, store } = budgetClient([{ limit: "$1" }, { limit: "$0.02", per: "hour", name: "hourly" }]);
    await wrapper.send(client, { url });
    await wrapper.send(client, { url });
    expect(await rejection(wrapper.send(client, { url }))).toMatchObject({
      code: "BUDGET_EXCEEDED",
      details: { budget: "hourly" },
    });
    expect(signs.length).toBe(2);
    // The refused payment's reservation in the first budget was given back.
    expect(await usage(store)).toEqual({ spent: 2 * PRICE, reserved: 0 });
  });

  it("a payment larger than a whole budget is no payable option at all (policy)", async () => {
    server.use(createSeller().handler);
    const { client, signs } = budgetClient({ limit: "$0.005" });
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0]).toMatchObject({
      code: "policy",
      reason: "$0.01 is more than budget client/life allows in all ($0.005)",
    });
    expect(signs.length).toBe(0);
  });

  it("a store that fails: BUDGET_UNAVAILABLE, nothing signed", async () => {
    server.use(createSeller().handler);
    const broken: BudgetStore = {
      ...memoryBudgetStore(),
      reserve: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379")),
    };
    const { client, signs, failed } = budgetClient({ limit: "$1" }, broken);
    const error = await rejection(wrapper.send(client, { url }));
    expect(error).toMatchObject({ code: "BUDGET_UNAVAILABLE", details: { budget: "client/life" } });
    expect(error.cause.message).toMatch(/ECONNREFUSED/);
    expect(signs.length).toBe(0);
    expect(failed.map((e) => e.code)).toEqual(["BUDGET_UNAVAILABLE"]);
  });

  it("upto: the maximum is reserved, what was settled is committed", async () => {
    const FACILITATOR = "0x1111111111111111111111111111111111111111";
    const requirement = v2Requirement({
      scheme: "upto",
      amount: "50000",
      extra: { name: "USDC", version: "2", assetTransferMethod: "permit2", facilitatorAddress: FACILITATOR },
    });
    let reservedDuringPayment: unknown;
    const store = memoryBudgetStore();
    const seller = createSeller({
      challenge: v2Challenge({ accepts: [requirement] }),
      paid: async (verdict) => {
        reservedDuringPayment = await usage(store);
        return HttpResponse.json(
          {},
          {
            headers: settlementHeader(2, {
              success: true,
              transaction: TX_HASH,
              network: "eip155:84532",
              payer: verdict.payer,
              amount: "1234",
            }),
          },
        );
      },
    });
    server.use(seller.handler);
    const client = createX402Client({
      schemes: [uptoEvm({ signer: countingSigner().signer })],
      plugins: [budgetPlugin({ limit: "$0.05", store })],
    });
    expect((await wrapper.send(client, { url })).status).toBe(200);
    expect(reservedDuringPayment).toEqual({ spent: 0, reserved: 50_000 });
    // 1234 base units of a 6-decimal stablecoin: $0.001234.
    expect(await usage(store)).toEqual({ spent: 1234, reserved: 0 });
  });
});
