/**
 * `offerReceipt()` through both wrappers: offers signed with the reference's own issuer functions
 * (@x402/extensions 2.27, as a seller would sign them) decide which requirements may be paid, and the
 * settlement's signed receipt is checked and attached to the payment receipt. A requirement whose
 * offer fails is dropped with the reason, with nothing signed for it.
 */
import { createOfferEIP712, createReceiptEIP712 } from "@x402/extensions/offer-receipt";
import { HttpResponse } from "msw";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt } from "../../src";
import { exactEvm } from "../../src/evm";
import { offerReceipt, type OfferReceiptOptions } from "../../src/extensions/offer-receipt";
import { useMswServer } from "../support/msw";
import {
  OTHER_PAY_TO,
  PATH,
  SELLER,
  TX_HASH,
  USDC_BASE_SEPOLIA,
  createSeller,
  settlementHeader,
  v1Challenge,
  v1Requirement,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { countingSigner } from "../support/wallets";
import { rejection, wrappers } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
// The seller's key: its address receives the payments (payTo) and signs the offers.
const sellerKey = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");
const stranger = privateKeyToAccount("0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6");
const signWith = (account: typeof sellerKey) => (request: unknown) => account.signTypedData(request as never);

const requirement = (over: Record<string, unknown> = {}) => v2Requirement({ payTo: sellerKey.address, ...over });

/** A signed offer for `accepts[index]`, as the reference issuer makes it, with changes applied after signing. */
async function offerFor(
  req: Record<string, unknown>,
  index: number,
  { by = sellerKey, resourceUrl = url, validFor = 60, tamper = {} as Record<string, unknown> } = {},
) {
  const input = {
    acceptIndex: index,
    scheme: req.scheme,
    network: req.network,
    asset: req.asset,
    payTo: req.payTo,
    amount: req.amount,
    offerValiditySeconds: validFor,
  };
  const offer = await createOfferEIP712(resourceUrl, input as never, signWith(by) as never);
  return { ...offer, payload: { ...offer.payload, ...tamper } };
}

/** A seller whose 402 carries `offers` and whose settlement carries a receipt signed by `receiptBy`. */
function offerSeller(accepts: Record<string, unknown>[], offers: unknown[], receiptBy = sellerKey) {
  return createSeller({
    challenge: v2Challenge({ accepts, extensions: { "offer-receipt": { info: { offers } } } }),
    paid: async (verdict) => {
      const receipt = await createReceiptEIP712(
        { resourceUrl: url, payer: verdict.payer, network: "eip155:84532", transaction: TX_HASH },
        signWith(receiptBy) as never,
      );
      return HttpResponse.json(
        { data: "premium" },
        {
          headers: settlementHeader(2, {
            success: true,
            transaction: TX_HASH,
            network: "eip155:84532",
            payer: verdict.payer,
            extensions: { "offer-receipt": { info: { receipt } } },
          }),
        },
      );
    },
  });
}

const client = (options?: OfferReceiptOptions) => {
  const wallet = countingSigner();
  return {
    ...wallet,
    client: createX402Client({ schemes: [exactEvm({ signer: wallet.signer })], plugins: [offerReceipt(options)] }),
  };
};

describe.each(wrappers)("$name: signed offers and receipts", (wrapper) => {
  it("an offer signed by payTo is paid when the policy asks for it; the receipt's signature is checked and attached", async () => {
    const req = requirement();
    const seller = offerSeller([req], [await offerFor(req, 0)]);
    server.use(seller.handler);
    const { client: paying, calls } = client({ requireSigner: "payTo" });
    const reply = await wrapper.send(paying, { url });
    expect(reply.status).toBe(200);
    expect(calls).toHaveLength(1);
    const receipt = getPaymentReceipt(reply.raw)!;
    expect(receipt.extensions["offer-receipt"]).toMatchObject({
      verified: true,
      receipt: { format: "eip712", signer: sellerKey.address, payload: { resourceUrl: url, transaction: TX_HASH } },
    });
  });

  it("offers signed by another key, or none at all, are refused when payTo must sign: nothing signed", async () => {
    const req = requirement();
    for (const offers of [[await offerFor(req, 0, { by: stranger })], []]) {
      const seller = offerSeller([req], offers);
      server.use(seller.handler);
      const { client: paying, calls } = client({ requireSigner: "payTo" });
      const error = await rejection(wrapper.send(paying, { url }));
      expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
      expect(error.details.rejected[0]).toMatchObject({
        code: "policy",
        reason: offers.length
          ? expect.stringContaining(`signed by ${stranger.address}`)
          : expect.stringContaining("no valid signed offer"),
      });
      expect(calls).toHaveLength(0);
    }
  });

  it.each([
    ["a tampered amount", { tamper: { amount: "1" } }, "other terms"],
    ["a tampered payTo", { tamper: { payTo: OTHER_PAY_TO } }, "other terms"],
    ["another resource", { resourceUrl: `${SELLER}/elsewhere` }, "is for"],
    ["an expired offer", { validFor: -120 }, "expired"],
  ])("%s drops its requirement with the reason; the next requirement is paid", async (_, change, reason) => {
    const bad = requirement();
    const good = requirement({ asset: USDC_BASE_SEPOLIA, amount: "20000" });
    const seller = offerSeller([bad, good], [await offerFor(bad, 0, change), await offerFor(good, 1)]);
    server.use(seller.handler);
    const { client: paying, calls } = client();
    const reply = await wrapper.send(paying, { url });
    expect(reply.status).toBe(200);
    expect(calls).toHaveLength(1);
    expect(seller.payments[0].accepted).toMatchObject({ amount: "20000" });
    const seenReasons: string[] = [];
    const { client: only } = client();
    server.use(offerSeller([bad], [await offerFor(bad, 0, change)]).handler);
    const error = await rejection(wrapper.send(only, { url }));
    for (const r of error.details.rejected) seenReasons.push(r.reason);
    expect(error.details.rejected[0].code).toBe("invalid");
    expect(seenReasons.join()).toContain(reason);
  });

  it("a broken signature drops the requirement its acceptIndex names", async () => {
    const req = requirement();
    const offer = await offerFor(req, 0);
    server.use(offerSeller([req], [{ ...offer, signature: `0x${"00".repeat(65)}` }]).handler);
    const { client: paying, calls } = client();
    const error = await rejection(wrapper.send(paying, { url }));
    expect(error.details.rejected[0]).toMatchObject({
      code: "invalid",
      reason: expect.stringContaining("signed offer is refused"),
    });
    expect(calls).toHaveLength(0);
  });

  it("without requireSigner, a requirement with no offer is paid; a receipt signed by another key is attached as such", async () => {
    const req = requirement();
    server.use(offerSeller([req], [], stranger).handler);
    const { client: paying } = client();
    const reply = await wrapper.send(paying, { url });
    expect(reply.status).toBe(200);
    // The receipt verifies, and names its signer: whether that signer may speak for the seller is the caller's call.
    expect(getPaymentReceipt(reply.raw)!.extensions["offer-receipt"]).toMatchObject({
      verified: true,
      receipt: { signer: stranger.address },
    });
  });

  it("a malformed receipt is attached as unverified, and the paid response is returned", async () => {
    const req = requirement();
    const seller = createSeller({
      challenge: v2Challenge({ accepts: [req], extensions: { "offer-receipt": { info: { offers: [] } } } }),
      paid: (verdict) =>
        HttpResponse.json(
          {},
          {
            headers: settlementHeader(2, {
              success: true,
              transaction: TX_HASH,
              network: "eip155:84532",
              payer: verdict.payer,
              extensions: { "offer-receipt": { info: { receipt: { format: "eip712" } } } },
            }),
          },
        ),
    });
    server.use(seller.handler);
    const reply = await wrapper.send(client().client, { url });
    expect(reply.status).toBe(200);
    expect(getPaymentReceipt(reply.raw)!.extensions["offer-receipt"]).toMatchObject({
      verified: false,
      reason: expect.stringContaining("malformed"),
    });
  });
});

describe("how offers are matched and which one counts", () => {
  const wrapper = wrappers[0]!;

  it.each([
    ["network", { network: "eip155:8453" }],
    ["scheme", { scheme: "upto" }],
    ["asset", { asset: OTHER_PAY_TO }],
  ])("an offer for another %s matches no requirement: its entry is dropped", async (_, tamper) => {
    const req = requirement();
    server.use(offerSeller([req], [await offerFor(req, 0, { tamper })]).handler);
    const error = await rejection(wrapper.send(client().client, { url }));
    expect(error.details.rejected[0]).toMatchObject({
      code: "invalid",
      reason: expect.stringContaining("other terms"),
    });
  });

  it("acceptIndex picks among requirements with the same terms: the hinted one carries the offer", async () => {
    // Two entries an offer cannot tell apart (they differ only in maxTimeoutSeconds); the offer names the second.
    const [first, second] = [requirement({ maxTimeoutSeconds: 60 }), requirement({ maxTimeoutSeconds: 90 })];
    const seller = offerSeller([first, second], [await offerFor(second, 1)]);
    server.use(seller.handler);
    const reply = await wrapper.send(client({ requireSigner: "payTo" }).client, { url });
    expect(reply.status).toBe(200);
    expect(seller.payments[0].accepted).toMatchObject({ maxTimeoutSeconds: 90 });
  });

  it("of two valid offers for one entry, the one from an accepted signer counts, whichever comes first", async () => {
    const req = requirement();
    for (const offers of [
      [await offerFor(req, 0), await offerFor(req, 0, { by: stranger })],
      [await offerFor(req, 0, { by: stranger }), await offerFor(req, 0)],
    ]) {
      server.use(offerSeller([req], offers).handler);
      expect((await wrapper.send(client({ requireSigner: "payTo" }).client, { url })).status).toBe(200);
    }
  });

  it("requireSigner as a list: a listed signer (in any case) is paid, another is refused naming 'an accepted signer'", async () => {
    const req = requirement();
    server.use(offerSeller([req], [await offerFor(req, 0, { by: stranger })]).handler);
    expect(
      (await wrapper.send(client({ requireSigner: [stranger.address.toLowerCase()] }).client, { url })).status,
    ).toBe(200);
    const error = await rejection(wrapper.send(client({ requireSigner: [sellerKey.address] }).client, { url }));
    expect(error.details.rejected[0]).toMatchObject({
      code: "policy",
      reason: expect.stringContaining("not by an accepted signer"),
    });
  });

  it("requireSigner: [] accepts no signer: even a valid offer signed by payTo is refused, and nothing is signed", async () => {
    const req = requirement();
    server.use(offerSeller([req], [await offerFor(req, 0)]).handler);
    const { client: paying, calls } = client({ requireSigner: [] });
    const error = await rejection(wrapper.send(paying, { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0]).toMatchObject({
      code: "policy",
      reason: expect.stringContaining("not by an accepted signer"),
    });
    expect(calls).toHaveLength(0);
    // And a requirement with no offer at all.
    server.use(offerSeller([req], []).handler);
    const none = await rejection(wrapper.send(client({ requireSigner: [] }).client, { url }));
    expect(none.details.rejected[0]).toMatchObject({
      code: "policy",
      reason: expect.stringContaining("carries no valid signed offer"),
    });
  });

  it("an offer is good until the second of validUntil, and expired the second after; the reason names the time", async () => {
    const req = requirement();
    const offer = await offerFor(req, 0);
    const until = offer.payload.validUntil * 1000;
    server.use(offerSeller([req], [offer]).handler);
    expect((await wrapper.send(client({ now: () => until + 999 }).client, { url })).status).toBe(200);
    const error = await rejection(wrapper.send(client({ now: () => until + 1000 }).client, { url }));
    expect(error.details.rejected[0].reason).toContain(`expired at ${new Date(until).toISOString()}`);
  });

  it("a v1 challenge (no resource object) matches offers against the request URL", async () => {
    const req = v1Requirement({ payTo: sellerKey.address });
    const offer = await offerFor({ ...req, network: "eip155:84532", amount: req.maxAmountRequired }, 0);
    const seller = createSeller({
      challenge: v1Challenge({ accepts: [req], extensions: { "offer-receipt": { info: { offers: [offer] } } } }),
    });
    server.use(seller.handler);
    expect((await wrapper.send(client({ requireSigner: "payTo" }).client, { url })).status).toBe(200);
  });

  it("a settlement without a signed receipt adds nothing to the receipt", async () => {
    const req = requirement();
    server.use(
      createSeller({
        challenge: v2Challenge({ accepts: [req], extensions: { "offer-receipt": { info: { offers: [] } } } }),
      }).handler,
    );
    const reply = await wrapper.send(client().client, { url });
    expect(getPaymentReceipt(reply.raw)!.extensions).toEqual({});
  });
});
