/**
 * A refund (and a withdrawal's look at the terms) is a request the scheme's state builds: it goes through the caller's
 * own paying stack, fetch or axios, and the handshake every payment takes: its bounded read of the 402, its envelope,
 * its correction round (once, never twice), its typed errors (a seller's refusal is the seller's, not a configuration
 * error), and the client's plug-ins told what came back. After every failure the next call is made: nothing stays held.
 */
import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { createX402Client, memoryLedger, type LedgerRecord } from "../../src";
import { batchSettlementEvm, memoryChannelStore } from "../../src/evm";
import { BATCH_PATH, PRICE, createBatchSeller } from "../support/batch-seller";
import { useMswServer } from "../support/msw";
import { SELLER, challengeResponse, countingSigner, decodeHeader, encodeHeader, v2Challenge } from "../support/seller";
import { fetchWrapper, paidAxios, paidFetch, rejection } from "../support/wrappers";

const server = useMswServer();

/** A client paying `seller` through batch-settlement, with a ledger, and the stacks a refund may go through. */
function setup(seller = createBatchSeller()) {
  server.use(seller.handler);
  const { signer, calls } = countingSigner();
  const ledger = memoryLedger();
  const scheme = batchSettlementEvm({ signer, rpc: seller.rpc });
  const client = createX402Client({ schemes: [scheme], plugins: [ledger] });
  return { seller, scheme, client, ledger, signs: calls, signer };
}

async function recordsOf(ledger: ReturnType<typeof memoryLedger>) {
  const records: LedgerRecord[] = [];
  for await (const record of ledger.records()) records.push(record);
  return records;
}

/** Every PAYMENT-SIGNATURE the seller at `url` was sent, decoded, as msw saw it. */
function watchPayments(url: string) {
  const sent: Record<string, unknown>[] = [];
  server.events.on("request:start", ({ request }) => {
    const header = request.headers.get("payment-signature");
    if (request.url === url && header) sent.push(decodeHeader(header) as Record<string, unknown>);
  });
  return sent;
}

const stacks = [
  { name: "fetch", through: paidFetch },
  { name: "axios", through: paidAxios },
] as const;

describe.each(stacks)("a refund through $name", ({ through }) => {
  it("goes through the stack's handshake: one envelope, the client's ledger told, the hold let go", async () => {
    const { seller, scheme, client, ledger } = setup();
    for (let i = 0; i < 3; i++) await fetchWrapper.send(client, { url: seller.url });
    const sent = watchPayments(seller.url);
    const result = await scheme.refund(seller.url, { through: through(client) });
    expect(result).toMatchObject({ refunded: String(7n * PRICE), balance: String(3n * PRICE) });
    // The envelope every payment takes: the requirement verbatim, the resource, a refund voucher for what was charged.
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      x402Version: 2,
      resource: { url: `${SELLER}${BATCH_PATH}` },
      accepted: { scheme: "batch-settlement", amount: String(PRICE) },
      payload: { type: "refund", voucher: { maxClaimableAmount: String(3n * PRICE) } },
    });
    const records = await recordsOf(ledger);
    expect(records.at(-1)).toMatchObject({ kind: "refund", settledAmount: String(7n * PRICE) });
    // The next call on the channel is not kept waiting by the refund.
    expect((await fetchWrapper.send(client, { url: seller.url })).status).toBe(200);
  });

  it("a state lost (a fresh store) is corrected once from the seller's 402, then refunded for what was charged", async () => {
    const { seller, client, signer } = setup();
    for (let i = 0; i < 3; i++) await fetchWrapper.send(client, { url: seller.url });
    // Another process, knowing nothing of the channel: the chain says nothing was claimed.
    const fresh = batchSettlementEvm({ signer, rpc: seller.rpc, storage: memoryChannelStore() });
    const freshClient = createX402Client({ schemes: [fresh] });
    const sent = watchPayments(seller.url);
    const result = await fresh.refund(seller.url, { through: through(freshClient) });
    expect(result).toMatchObject({ refunded: String(7n * PRICE) });
    const maxes = sent.map(
      (s) => (s.payload as { voucher: { maxClaimableAmount: string } }).voucher.maxClaimableAmount,
    );
    expect(maxes).toEqual(["0", String(3n * PRICE)]);
  });
});

describe("a refund's failures are typed, and leave nothing held", () => {
  it("a seller that refuses the refund: PAYMENT_REJECTED (the seller's), and the next payment and refund go on", async () => {
    const { seller, scheme, client } = setup();
    for (let i = 0; i < 2; i++) await fetchWrapper.send(client, { url: seller.url });
    let refuse = true;
    server.use(
      http.get(seller.url, ({ request }) => {
        const header = request.headers.get("payment-signature");
        if (!refuse || !header || (decodeHeader(header) as { payload: { type: string } }).payload.type !== "refund")
          return undefined;
        refuse = false;
        const failed = { success: false, errorReason: "refund_not_allowed", transaction: "", network: "eip155:84532" };
        return new HttpResponse("{}", { status: 402, headers: { "PAYMENT-RESPONSE": encodeHeader(failed) } });
      }),
    );
    const error = await rejection(scheme.refund(seller.url, { through: paidFetch(client) }));
    expect(error).toMatchObject({ code: "PAYMENT_REJECTED", reason: "refund_not_allowed" });
    expect((await fetchWrapper.send(client, { url: seller.url })).status).toBe(200);
    expect(await scheme.refund(seller.url, { through: paidFetch(client) })).toMatchObject({
      refunded: String(7n * PRICE),
    });
  });

  it("a seller that keeps correcting: refused after one correction, never a third voucher", async () => {
    const seller = createBatchSeller({ lies: { correctiveCharged: 5n * PRICE } });
    const { scheme, client, signer } = setup(seller);
    for (let i = 0; i < 2; i++) await fetchWrapper.send(client, { url: seller.url });
    const fresh = batchSettlementEvm({ signer, rpc: seller.rpc, storage: memoryChannelStore() });
    const sent = watchPayments(seller.url);
    const error = await rejection(
      fresh.refund(seller.url, { through: paidFetch(createX402Client({ schemes: [fresh] })) }),
    );
    // The correction claims more charged than the voucher it holds: disputed, not signed for.
    expect(["PAYMENT_REJECTED", "CHANNEL_DISPUTED"]).toContain(error.code);
    expect(sent.length).toBeLessThanOrEqual(2);
    // The channel is not left held: the original client's refund goes on.
    expect(await scheme.refund(seller.url, { through: paidFetch(client) })).toMatchObject({
      refunded: String(8n * PRICE),
    });
  });

  it("a seller whose answer is not its terms: CHALLENGE_NOT_FOUND, not a configuration error", async () => {
    const { scheme, client } = setup();
    server.use(http.get(`${SELLER}/free`, () => HttpResponse.json({ free: true })));
    const error = await rejection(scheme.refund(`${SELLER}/free`, { through: paidFetch(client) }));
    expect(error.code).toBe("CHALLENGE_NOT_FOUND");
    expect(error.message).toContain("answered 200, not 402");
  });

  it("a 402 flooding its body is read bounded: a typed error, nothing signed", async () => {
    const { scheme, client, signs } = setup();
    const megabyte = "x".repeat(1024 * 1024);
    server.use(
      http.get(`${SELLER}/flood`, () => {
        const stream = new ReadableStream({
          pull(controller) {
            controller.enqueue(new TextEncoder().encode(megabyte));
          },
        });
        return new HttpResponse(stream, { status: 402, headers: { "content-type": "application/json" } });
      }),
    );
    const error = await rejection(scheme.refund(`${SELLER}/flood`, { through: paidFetch(client) }));
    expect(error.code).toMatch(/INVALID_CHALLENGE|CHALLENGE_NOT_FOUND/);
    expect(signs).toHaveLength(0);
  });

  it("a stack that does not pay (a bare fetch): INVALID_CONFIG naming `through`, nothing signed", async () => {
    const { seller, scheme, client, signs } = setup();
    await fetchWrapper.send(client, { url: seller.url });
    const before = signs.length;
    const bare = (input: string, init: RequestInit) => globalThis.fetch(input, init);
    const error = await rejection(scheme.refund(seller.url, { through: bare as never }));
    // A bare fetch ignores `x402`: the seller's 402 comes back, and the session was never run.
    expect(error.code).toBe("CHALLENGE_NOT_FOUND");
    const none = await rejection(scheme.refund(seller.url, undefined as never));
    expect(none).toMatchObject({ code: "INVALID_CONFIG", details: { option: "through" } });
    expect(signs.length).toBe(before);
  });

  it("an abort before the refund leaves: ABORTED, and the next refund goes through", async () => {
    const { seller, scheme, client } = setup();
    for (let i = 0; i < 2; i++) await fetchWrapper.send(client, { url: seller.url });
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(scheme.refund(seller.url, { through: paidFetch(client), signal: controller.signal }));
    expect(error.code).toBe("ABORTED");
    expect(await scheme.refund(seller.url, { through: paidFetch(client) })).toMatchObject({
      refunded: String(8n * PRICE),
    });
  });
});

describe("a refund's edges", () => {
  /** Answers the refund (a payment header whose payload is a refund) with `answer`, the rest as the seller does. */
  const refundAnswered = (url: string, answer: () => Response) =>
    server.use(
      http.get(url, ({ request }) => {
        const header = request.headers.get("payment-signature");
        if (header && (decodeHeader(header) as { payload: { type: string } }).payload.type === "refund")
          return answer();
        return undefined;
      }),
    );

  it("an amount that is not base units above 0: INVALID_CONFIG naming it, nothing sent", async () => {
    const { seller, scheme, client } = setup();
    await fetchWrapper.send(client, { url: seller.url });
    const sent = watchPayments(seller.url);
    for (const amount of ["0", "abc", "-5", "1.5"]) {
      const error = await rejection(scheme.refund(seller.url, { through: paidFetch(client), amount }));
      expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option: "amount" } });
    }
    expect(sent).toEqual([]);
  });

  it("an amount asks for that much: the refund's payload names it, the channel keeps the rest", async () => {
    const { seller, scheme, client } = setup();
    for (let i = 0; i < 2; i++) await fetchWrapper.send(client, { url: seller.url });
    const sent = watchPayments(seller.url);
    const result = await scheme.refund(seller.url, { through: paidAxios(client), amount: "3000" });
    expect(result).toMatchObject({ refunded: "3000", balance: String(10n * PRICE - 3000n) });
    expect(sent[0]).toMatchObject({ payload: { type: "refund", amount: "3000" } });
  });

  it("a channel holding nothing beyond what was charged: refused before anything is signed", async () => {
    const { seller, scheme, client } = setup();
    await fetchWrapper.send(client, { url: seller.url });
    await scheme.refund(seller.url, { through: paidFetch(client) });
    const sent = watchPayments(seller.url);
    const error = await rejection(scheme.refund(seller.url, { through: paidFetch(client) }));
    expect(error.message).toContain("holds nothing beyond what was charged");
    expect(sent).toEqual([]);
  });

  it("a seller offering no batch-settlement there: UNPAYABLE_REQUIREMENT, nothing signed", async () => {
    const { scheme, client, signs } = setup();
    server.use(http.get(`${SELLER}/exact-only`, () => challengeResponse(v2Challenge())));
    const error = await rejection(scheme.refund(`${SELLER}/exact-only`, { through: paidFetch(client) }));
    expect(error.code).toBe("UNPAYABLE_REQUIREMENT");
    expect(error.message).toContain("does not offer batch-settlement");
    expect(signs).toHaveLength(0);
  });

  it("answered 200 without a settlement: PAYMENT_REJECTED naming the status; the channel's state is kept", async () => {
    const { seller, scheme, client } = setup();
    for (let i = 0; i < 2; i++) await fetchWrapper.send(client, { url: seller.url });
    refundAnswered(seller.url, () => HttpResponse.json({ ok: true }));
    const error = await rejection(scheme.refund(seller.url, { through: paidFetch(client) }));
    expect(error).toMatchObject({ code: "PAYMENT_REJECTED", details: { status: 200, reason: "status 200" } });
    server.resetHandlers(seller.handler);
    expect(await scheme.refund(seller.url, { through: paidFetch(client) })).toMatchObject({
      refunded: String(8n * PRICE),
    });
  });

  it("answered 502 without a word: PAYMENT_OUTCOME_UNKNOWN (it may have been refunded), never a refusal", async () => {
    const { seller, scheme, client, ledger } = setup();
    for (let i = 0; i < 2; i++) await fetchWrapper.send(client, { url: seller.url });
    refundAnswered(seller.url, () => new HttpResponse("bad gateway", { status: 502 }));
    const error = await rejection(scheme.refund(seller.url, { through: paidFetch(client) }));
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    // Nothing is recorded as come back while it is not known to have.
    expect((await recordsOf(ledger)).filter((r) => r.kind === "refund")).toEqual([]);
  });
});

describe("a withdrawal asks the seller's terms through the paying stack", () => {
  it("without an amount, it asks back what the chain says the seller has not claimed; without rpc it says so", async () => {
    const { seller, scheme, client, signer } = setup();
    for (let i = 0; i < 2; i++) await fetchWrapper.send(client, { url: seller.url });
    const plan = await scheme.withdrawal(seller.url, { through: paidFetch(client) });
    // The seller's stand-in chain: the deposit of 10 x the price, nothing claimed yet.
    expect(plan.amount).toBe(String(10n * PRICE));
    const blind = batchSettlementEvm({ signer });
    const error = await rejection(blind.withdrawal(seller.url, { through: paidFetch(client) }));
    expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option: "rpc" } });
    const zero = await rejection(scheme.withdrawal(seller.url, { through: paidFetch(client), amount: "0" }));
    expect(zero).toMatchObject({ code: "INVALID_CONFIG", details: { option: "amount" } });
  });

  it("reads the channel from the 402, signs nothing, and forgets the channel", async () => {
    const { seller, scheme, client, signs } = setup();
    for (let i = 0; i < 2; i++) await fetchWrapper.send(client, { url: seller.url });
    const before = signs.length;
    const plan = await scheme.withdrawal(seller.url, { through: paidAxios(client), amount: "5000" });
    expect(plan).toMatchObject({ amount: "5000", withdrawDelay: 900 });
    expect(signs.length).toBe(before);
    server.use(http.get(`${SELLER}/gone`, () => new HttpResponse("not here", { status: 404 })));
    const error = await rejection(scheme.withdrawal(`${SELLER}/gone`, { through: paidFetch(client) }));
    expect(error.code).toBe("CHALLENGE_NOT_FOUND");
  });
});
