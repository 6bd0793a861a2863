// x402-pay's offerReceipt() against the reference seller's offer-and-receipt extension (an EIP-712
// issuer whose key is the payTo address), its facilitator and anvil: offers signed by payTo are paid
// when the policy asks for them; an offer from another signer, or one tampered with on the way, moves
// nothing; the settlement's signed receipt is checked and attached.
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt } from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { offerReceipt, type OfferReceiptOptions } from "../../src/extensions/offer-receipt";
import {
  PRICE_ATOMIC,
  WEATHER,
  fundedBuyer,
  startExtensionSeller,
  startInteropStack,
  type Buyer,
  type ExtensionSeller,
  type InteropStack,
} from "../localnet/index.js";

let stack: InteropStack;
let seller: ExtensionSeller;
const issuer = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  stack = await startInteropStack();
  seller = await startExtensionSeller({ facilitatorUrl: stack.facilitator.url, offerSigner: issuer });
}, 120_000);
afterAll(async () => {
  await seller?.stop();
  await stack?.stop();
});

const url = () => `${seller.url}/offers/weather`;
const balance = (address: `0x${string}`) => stack.usdc.usdcBalance(address);

function payingFetch(buyer: Buyer, options: OfferReceiptOptions, transport: typeof fetch = fetch) {
  const client = createX402Client({ schemes: [exactEvm({ signer: buyer.account })], plugins: [offerReceipt(options)] });
  return wrapFetchWithPayment(transport, client);
}

/** A network in the middle that rewrites the first offer of every 402 before the buyer reads it. */
const tampering =
  (change: Record<string, unknown>): typeof fetch =>
  async (input, init) => {
    const answer = await fetch(input, init);
    const header = answer.headers.get("payment-required");
    if (answer.status !== 402 || !header) return answer;
    const challenge = JSON.parse(Buffer.from(header, "base64").toString());
    const offer = challenge.extensions["offer-receipt"].info.offers[0];
    offer.payload = { ...offer.payload, ...change };
    const headers = new Headers(answer.headers);
    headers.set("payment-required", Buffer.from(JSON.stringify(challenge)).toString("base64"));
    return new Response(await answer.arrayBuffer(), { status: 402, headers });
  };

describe("offer-and-receipt against the reference seller", () => {
  it("an offer signed by payTo is paid when payTo must sign; the receipt is the issuer's, for this payer", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balance(buyer.address);
    const answer = await payingFetch(buyer, { requireSigner: "payTo" })(url());
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual(WEATHER);
    expect(await balance(buyer.address)).toBe(before - PRICE_ATOMIC);
    const receipt = getPaymentReceipt(answer)!;
    expect(receipt.payTo).toBe(issuer.address);
    expect(receipt.extensions["offer-receipt"]).toMatchObject({
      verified: true,
      receipt: {
        format: "eip712",
        signer: issuer.address,
        payload: { payer: buyer.address, resourceUrl: url(), network: "eip155:84532" },
      },
    });
  });

  it("offers from a signer the caller does not accept: refused before signing, nothing moves", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balance(buyer.address);
    const calls: unknown[] = [];
    const signer = {
      address: buyer.address,
      signTypedData: (request: never) => (calls.push(request), buyer.account.signTypedData(request)),
    };
    const client = createX402Client({
      schemes: [exactEvm({ signer })],
      plugins: [offerReceipt({ requireSigner: [privateKeyToAccount(generatePrivateKey()).address] })],
    });
    const error = await wrapFetchWithPayment(fetch, client)(url()).catch((e) => e);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0]).toMatchObject({
      code: "policy",
      reason: expect.stringContaining(`signed by ${issuer.address}`),
    });
    expect(calls).toHaveLength(0);
    expect(await balance(buyer.address)).toBe(before);
  });

  it.each([
    ["the amount", { amount: "1" }],
    ["the payee", { payTo: privateKeyToAccount(generatePrivateKey()).address }],
    ["the deadline", { validUntil: 9_999_999_999 }],
  ])(
    "with payTo required, an offer whose %s was changed on the way is dropped: nothing signed, nothing moves",
    async (_, change) => {
      const buyer = await fundedBuyer(stack.usdc);
      const before = await balance(buyer.address);
      const error = await payingFetch(buyer, { requireSigner: "payTo" }, tampering(change))(url()).catch((e) => e);
      expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
      // Changed terms match no requirement (invalid); a changed deadline recovers another signer than payTo (policy).
      expect(error.details.rejected[0].reason).toMatch(/other terms|not by its payTo/);
      expect(await balance(buyer.address)).toBe(before);
    },
  );
});
