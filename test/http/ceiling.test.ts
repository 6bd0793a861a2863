/**
 * The per-request ceiling, `x402: { maxAmount }`, through both wrappers: the red team's price bait (the page said
 * $0.002, the 402 asks $0.02, under every cap) is refused before anything is signed, in every round of the request
 * (a cached quote, a seller's second 402), and a quote can be paid for what it said, not more.
 */
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { NoPayableRequirementError } from "../../src/entries/errors";
import {
  createX402Client,
  getPaymentReceipt,
  quoteCache,
  type PaymentCeiling,
  type PaymentRequestOptions,
  type X402ClientOptions,
} from "../../src";
import { normalize, quoteListing, type DiscoveryListing } from "../../src/discovery";
import { batchSettlementEvm, exactEvm, uptoEvm } from "../../src/evm";
import { PRICE, createBatchSeller } from "../support/batch-seller";
import {
  PATH,
  SELLER,
  USDC_BASE,
  USDC_BASE_SEPOLIA,
  challengeResponse,
  createSeller,
  payingClient,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { countingSigner } from "../support/wallets";
import { rejection, wrappers, type Wrapper } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const UNKNOWN_TOKEN = "0x1111111111111111111111111111111111111111";

/** A seller asking `amount` base units of USDC on Base Sepolia (6 decimals): 20000 is $0.02. */
const asking = (amount: string, over: Record<string, unknown> = {}) =>
  createSeller({ challenge: v2Challenge({ accepts: [v2Requirement({ amount, ...over })] }) });

const reasons = (error: { details: { rejected: { reason: string }[] } }) => error.details.rejected.map((r) => r.reason);

/** Sends once with `x402`; the refusal, after asserting the wallet was never asked and no payment reached the seller. */
async function refused(
  wrapper: Wrapper,
  seller: ReturnType<typeof createSeller>,
  x402: PaymentRequestOptions,
  options: Partial<X402ClientOptions> = {},
) {
  server.use(seller.handler);
  const { client, signs } = payingClient(options);
  const error = await rejection(wrapper.send(client, { url, x402 }));
  expect(error).toBeInstanceOf(NoPayableRequirementError);
  expect(signs).toHaveLength(0);
  expect(seller.payments).toHaveLength(0);
  expect(seller.requests).toHaveLength(1);
  return error;
}

/** Sends once with `x402`: paid, the seller verified the one signature. */
async function paid(
  wrapper: Wrapper,
  seller: ReturnType<typeof createSeller>,
  x402: PaymentRequestOptions,
  options: Partial<X402ClientOptions> = {},
) {
  server.use(seller.handler);
  const { client, signs } = payingClient(options);
  const reply = await wrapper.send(client, { url, x402 });
  expect(reply.status, reply.text).toBe(200);
  expect(signs).toHaveLength(1);
  expect(seller.verdicts).toEqual([expect.objectContaining({ ok: true })]);
  return reply;
}

const inUsdcSepolia = (amount: string): PaymentCeiling => ({
  network: "eip155:84532",
  asset: USDC_BASE_SEPOLIA,
  amount,
});

describe.each(wrappers)("$name: x402.maxAmount, a ceiling for one request", (wrapper) => {
  it("the bait: told $0.002, asked $0.02 (under the $1 cap): refused, the asked and allowed amounts named", async () => {
    const error = await refused(wrapper, asking("20000"), { maxAmount: "$0.002" });
    expect(error.details.rejected).toEqual([
      expect.objectContaining({ index: 0, code: "policy", amount: "20000", asset: USDC_BASE_SEPOLIA }),
    ]);
    expect(reasons(error)).toEqual(["0.02 USDC is over x402.maxAmount ($0.002)"]);
    expect(error.message).toContain("0.02 USDC is over x402.maxAmount ($0.002)");
  });

  it("a ceiling equal to the price pays it", async () => {
    const reply = await paid(wrapper, asking("2000"), { maxAmount: "$0.002" });
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ amount: "2000", displayAmount: "0.002 USDC" });
  });

  it("a ceiling above the price pays the price, not the ceiling", async () => {
    const seller = asking("2000");
    await paid(wrapper, seller, { maxAmount: "$0.05" });
    expect(seller.payments[0].payload.authorization.value).toBe("2000");
  });

  it("in base units of one asset: up to it is paid (the address in any case), one unit more is refused", async () => {
    await paid(wrapper, asking("2000"), { maxAmount: inUsdcSepolia("2000") });
    server.resetHandlers();
    await paid(wrapper, asking("2000"), {
      maxAmount: { network: "eip155:84532", asset: USDC_BASE_SEPOLIA.toLowerCase(), amount: "2000" },
    });
    server.resetHandlers();
    const error = await refused(wrapper, asking("2001"), { maxAmount: inUsdcSepolia("2000") });
    expect(reasons(error)).toEqual(["0.002001 USDC is over x402.maxAmount (0.002 USDC)"]);
  });

  it("in base units of one asset: another asset, or the same address on another network, is refused", async () => {
    const onBase = { network: "eip155:8453", asset: USDC_BASE, extra: { name: "USD Coin", version: "2" } };
    const error = await refused(wrapper, asking("1", onBase), { maxAmount: inUsdcSepolia("2000") });
    expect(reasons(error)).toEqual([
      `asset ${USDC_BASE} on eip155:8453 is not the one x402.maxAmount is in (${USDC_BASE_SEPOLIA} on eip155:84532)`,
    ]);
    server.resetHandlers();
    const sameAddress = { network: "eip155:8453", asset: USDC_BASE_SEPOLIA, amount: "2000" };
    await refused(wrapper, asking("2000"), { maxAmount: sameAddress });
  });

  it("in USD: an asset of unknown value is refused, even where the policy allows unknown assets", async () => {
    const unknown = { asset: UNKNOWN_TOKEN, extra: { name: "Mystery", version: "1" } };
    const error = await refused(
      wrapper,
      asking("1", unknown),
      { maxAmount: "$100" },
      { policy: { allowUnknownAssets: true } },
    );
    expect(reasons(error)).toEqual([
      expect.stringMatching(/has no known USD value, so it cannot be held to x402\.maxAmount \(\$100\)/),
    ]);
    server.resetHandlers();
    // In its own base units, it can be held.
    const inMystery = { network: "eip155:84532", asset: UNKNOWN_TOKEN, amount: "5" };
    await paid(wrapper, asking("5", unknown), { maxAmount: inMystery }, { policy: { allowUnknownAssets: true } });
  });

  it("the ceiling adds to the policy, never lifts it: over the policy's cap is refused under a larger ceiling", async () => {
    const error = await refused(
      wrapper,
      asking("20000"),
      { maxAmount: "$5" },
      { policy: { maxAmountPerPayment: "$0.01" } },
    );
    expect(reasons(error)).toEqual([expect.stringMatching(/over policy\.maxAmountPerPayment/)]);
  });

  it('"$0" is a ceiling, not "none": it pays nothing', async () => {
    const error = await refused(wrapper, asking("1"), { maxAmount: "$0" });
    expect(reasons(error)).toEqual(["0.000001 USDC is over x402.maxAmount ($0)"]);
    server.resetHandlers();
    await refused(wrapper, asking("1"), { maxAmount: inUsdcSepolia("0") });
  });

  it.each<[string, unknown]>([
    ["a word", "cheap"],
    ["a negative amount", "-$1"],
    ["a number (dollars or base units?)", 0.002],
    ["base units without a network", { asset: USDC_BASE_SEPOLIA, amount: "2000" }],
    ["base units as dollars", { network: "eip155:84532", asset: USDC_BASE_SEPOLIA, amount: "0.002" }],
    ["an asset cap's shape", { network: "eip155:84532", asset: USDC_BASE_SEPOLIA, maxAmount: "2000" }],
    ["a network that is no CAIP-2 id", { network: "base", asset: USDC_BASE_SEPOLIA, amount: "2000" }],
    ["no asset", { network: "eip155:84532", asset: "", amount: "2000" }],
    ["null", null],
  ])("malformed (%s): INVALID_CONFIG naming x402.maxAmount, before anything is sent", async (_, maxAmount) => {
    const seller = asking("2000");
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const error = await rejection(wrapper.send(client, { url, x402: { maxAmount } as PaymentRequestOptions }));
    expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option: "x402.maxAmount" } });
    expect(error.message).toMatch(/^x402\.maxAmount: /);
    expect(seller.requests).toHaveLength(0);
    expect(signs).toHaveLength(0);
  });

  it("upto: the most the seller may take is what is compared", async () => {
    const upto = {
      scheme: "upto",
      amount: "50000",
      extra: { name: "USDC", version: "2", assetTransferMethod: "permit2", facilitatorAddress: UNKNOWN_TOKEN },
    };
    const { signer, calls } = countingSigner();
    const client = createX402Client({ schemes: [uptoEvm({ signer })] });
    const seller = asking("50000", upto);
    server.use(seller.handler);
    const error = await rejection(wrapper.send(client, { url, x402: { maxAmount: "$0.02" } }));
    expect(reasons(error)).toEqual(["0.05 USDC is over x402.maxAmount ($0.02)"]);
    expect(calls).toHaveLength(0);
    const reply = await wrapper.send(client, { url, x402: { maxAmount: "$0.05" } });
    expect(reply.status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it("a seller whose second 402 asks more than its first: the new price is never signed (a rejection)", async () => {
    // The first 402 asks what the page said; the paid request is answered with a 402 asking ten times as much.
    const dearer = v2Challenge({ accepts: [v2Requirement({ amount: "20000" })] });
    const seller = createSeller({
      challenge: v2Challenge({ accepts: [v2Requirement({ amount: "2000" })] }),
      intercept: (request) => (request.headers.has("payment-signature") ? challengeResponse(dearer) : undefined),
    });
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const error = await rejection(wrapper.send(client, { url, x402: { maxAmount: "$0.002" } }));
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(signs).toHaveLength(1);
    expect(seller.payments.map((p) => p.accepted.amount)).toEqual(["2000"]);
  });
});

describe.each(wrappers)("$name: x402.maxAmount with the quote cache", (wrapper) => {
  function quotingClient() {
    const { calls, signer } = countingSigner();
    const client = createX402Client({ schemes: [exactEvm({ signer })], plugins: [quoteCache()] });
    return { client, signs: calls };
  }
  const carried = (seller: ReturnType<typeof createSeller>) =>
    seller.requests.map((r) => "payment-signature" in r.headers);

  it("a cached quote over the ceiling is not paid before asking: the route is asked, and refused", async () => {
    const seller = asking("20000");
    server.use(seller.handler);
    const { client, signs } = quotingClient();
    await wrapper.send(client, { url });
    expect(signs).toHaveLength(1);

    const error = await rejection(wrapper.send(client, { url, x402: { maxAmount: "$0.002" } }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(reasons(error)).toEqual(["0.02 USDC is over x402.maxAmount ($0.002)"]);
    expect(signs).toHaveLength(1);
    expect(carried(seller)).toEqual([false, true, false]);
  });

  it("a cached quote within the ceiling is paid at once; repriced since, the new terms are refused", async () => {
    server.use(asking("2000").handler);
    const { client, signs } = quotingClient();
    await wrapper.send(client, { url });
    const quoted = await wrapper.send(client, { url, x402: { maxAmount: "$0.002" } });
    expect(quoted.status).toBe(200);
    expect(signs).toHaveLength(2);

    const repriced = asking("20000");
    server.use(repriced.handler);
    const error = await rejection(wrapper.send(client, { url, x402: { maxAmount: "$0.002" } }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(reasons(error)).toEqual(["0.02 USDC is over x402.maxAmount ($0.002)"]);
    // The stale quote's $0.002 went out (refused at no charge); $0.02 was never signed.
    expect(signs).toHaveLength(3);
    expect(repriced.payments.map((p) => p.accepted.amount)).toEqual(["2000"]);
  });
});

describe.each(wrappers)("$name: x402.maxAmount and a batch-settlement channel", (wrapper) => {
  it("the call's price is compared, not the deposit", async () => {
    const seller = createBatchSeller();
    server.use(seller.handler);
    const { signer, calls } = countingSigner();
    const scheme = batchSettlementEvm({ signer, rpc: seller.rpc, deposit: { multiple: 100 } });
    const client = createX402Client({ schemes: [scheme] });
    // PRICE is 1000 base units (0.001 USDC); the deposit, 100 times that.
    const below = await rejection(wrapper.send(client, { url: seller.url, x402: { maxAmount: "$0.0009" } }));
    expect(reasons(below)).toEqual(["0.001 USDC is over x402.maxAmount ($0.0009)"]);
    expect(calls).toHaveLength(0);
    const reply = await wrapper.send(client, { url: seller.url, x402: { maxAmount: "$0.001" } });
    expect(reply.status).toBe(200);
    expect(getPaymentReceipt(reply.raw)).toMatchObject({ amount: String(PRICE), deposit: String(100n * PRICE) });
  });
});

describe.each(wrappers)("$name: pay what was quoted, not more", (wrapper) => {
  const listed = (amount: string) =>
    normalize({
      resource: url,
      type: "http",
      x402Version: 2,
      accepts: [v2Requirement({ amount })],
      lastUpdated: "2026-11-20T10:00:00.000Z",
      metadata: {},
    }) as DiscoveryListing;

  it("quoteListing's maxAmount pays the listed price, and refuses a 402 asking more", async () => {
    const { client, signs } = payingClient();
    const quote = await quoteListing(client, listed("2000"));
    expect(quote.maxAmount).toEqual(inUsdcSepolia("2000"));

    server.use(asking("2000").handler);
    const reply = await wrapper.send(client, { url, x402: { maxAmount: quote.maxAmount } });
    expect(reply.status).toBe(200);
    expect(signs).toHaveLength(1);

    server.use(asking("20000").handler);
    const error = await rejection(wrapper.send(client, { url, x402: { maxAmount: quote.maxAmount } }));
    expect(reasons(error)).toEqual(["0.02 USDC is over x402.maxAmount (0.002 USDC)"]);
    expect(signs).toHaveLength(1);
  });

  it('nothing payable in the quote: its maxAmount is "$0", which pays nothing', async () => {
    const { client } = payingClient({ policy: { maxAmountPerPayment: "$0.001" } });
    const quote = await quoteListing(client, listed("2000"));
    expect(quote.payable).toBeUndefined();
    expect(quote.maxAmount).toBe("$0");
  });

  it("client.quote carries the same ceiling", async () => {
    const { client } = payingClient();
    const challenge = (await quoteListing(client, listed("2000"))).listing.challenge;
    const quote = await client.quote(challenge, { url, method: "GET" });
    expect(quote.maxAmount).toEqual(inUsdcSepolia("2000"));
  });
});

describe("x402.maxAmount and a request's other options", () => {
  it("sits beside paymentId", async () => {
    server.use(
      createSeller({
        challenge: v2Challenge({ accepts: [v2Requirement({ amount: "2000" })] }),
        paid: () => HttpResponse.json({ ok: true }),
      }).handler,
    );
    const { client } = payingClient();
    const reply = await wrappers[0]!.send(client, {
      url,
      x402: { maxAmount: "$0.002", paymentId: "pay_0123456789abcdef" },
    });
    expect(reply.status).toBe(200);
  });
});
