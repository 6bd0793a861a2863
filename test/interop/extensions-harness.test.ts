// The extension seller (localnet/extensions.ts) against the reference client: proof that the
// fixture behaves as the reference server does before x402-pay is tested against it. Chain state
// is asserted on anvil: a sign-in or a cached answer moves no money; a payment moves exactly one.
import { x402Client, x402HTTPClient } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import {
  verifyOfferSignatureEIP712,
  verifyReceiptSignatureEIP712,
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
} from "@x402/extensions/offer-receipt";
import { PAYMENT_IDENTIFIER, appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
import {
  SIGN_IN_WITH_X,
  createSIWxClientHook,
  createSIWxMessage,
  encodeSIWxHeader,
  signEVMMessage,
} from "@x402/extensions/sign-in-with-x";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fundedBuyer,
  startExtensionSeller,
  startFaultProxy,
  startInteropStack,
  type Buyer,
  type ExtensionSeller,
  type FaultProxy,
  type InteropStack,
} from "../localnet/index.js";

const PRICE_ATOMIC = 1000n;
const decode = (value: string | null): any =>
  value ? JSON.parse(Buffer.from(value, "base64").toString("utf8")) : undefined;
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

let stack: InteropStack;
let seller: ExtensionSeller;
let proxy: FaultProxy;
const offerSigner = privateKeyToAccount(generatePrivateKey());
let offerSeller: ExtensionSeller;

beforeAll(async () => {
  stack = await startInteropStack();
  [seller, offerSeller] = await Promise.all([
    startExtensionSeller({ facilitatorUrl: stack.facilitator.url, payTo: stack.seller.payTo }),
    startExtensionSeller({ facilitatorUrl: stack.facilitator.url, offerSigner }),
  ]);
  proxy = await startFaultProxy(seller.url);
}, 120_000);

afterAll(async () => {
  await proxy?.stop();
  await Promise.all([seller?.stop(), offerSeller?.stop()]);
  await stack?.stop();
});

/** The reference buyer: exact on EVM, with its sign-in-with-x hook. */
function referenceFetch(buyer: Buyer) {
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account));
  return wrapFetchWithPayment(fetch, new x402HTTPClient(client).onPaymentRequired(createSIWxClientHook(buyer.account)));
}

const balance = (address: `0x${string}`) => stack.usdc.usdcBalance(address);

/** A sign-in proof for `info` made with the reference's own message builder and signer, without its origin check. */
async function proof(info: Record<string, unknown>, buyer: Buyer) {
  const complete = { ...info, chainId: "eip155:84532", type: "eip191" } as Parameters<typeof createSIWxMessage>[0];
  const signature = await signEVMMessage(createSIWxMessage(complete, buyer.address), buyer.account);
  return encodeSIWxHeader({ ...complete, address: buyer.address, signature } as never);
}

/** A signed payment for `url`'s 402, built by the reference client, with the given payment id. */
async function signedPayment(buyer: Buyer, url: string, id: string) {
  const challenge = decode((await fetch(url)).headers.get("payment-required"));
  appendPaymentIdentifierToExtensions(challenge.extensions, id);
  const payload = await new x402Client()
    .register("eip155:*", new ExactEvmScheme(buyer.account))
    .createPaymentPayload(challenge);
  return encode(payload);
}

describe("sign-in-with-x routes, reference client", () => {
  it("a first visit pays; the same wallet's second visit signs in and moves no money", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const pay = referenceFetch(buyer);
    const url = `${seller.url}/siwx/weather`;
    const before = await balance(buyer.address);

    const first = await pay(url);
    expect(first.status).toBe(200);
    expect(first.headers.get("payment-response")).toBeTruthy();
    expect(await balance(buyer.address)).toBe(before - PRICE_ATOMIC);

    const second = await pay(url);
    expect(second.status).toBe(200);
    expect(second.headers.get("payment-response")).toBeNull();
    expect(await balance(buyer.address)).toBe(before - PRICE_ATOMIC);
    expect(seller.signIns).toContainEqual({ path: "/siwx/weather", address: buyer.address });
  });

  it("the 402 declares domain with the port and the URI of the route", async () => {
    const declaration = decode((await fetch(`${seller.url}/siwx/weather`)).headers.get("payment-required")).extensions[
      SIGN_IN_WITH_X
    ];
    expect(declaration.info.domain).toBe(new URL(seller.url).host);
    expect(declaration.info.uri).toBe(`${seller.url}/siwx/weather`);
    expect(declaration.supportedChains).toEqual([{ chainId: "eip155:84532", type: "eip191" }]);
  });

  it("a wallet that never paid is not let in by a sign-in: it pays", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await balance(buyer.address);
    expect((await referenceFetch(buyer)(`${seller.url}/siwx/weather`)).status).toBe(200);
    expect(await balance(buyer.address)).toBe(before - PRICE_ATOMIC);
    expect(seller.signIns.some((s) => s.address === buyer.address)).toBe(false);
  });

  it("the auth-only route answers a sign-in and takes no payment", async () => {
    const buyer = await fundedBuyer(stack.usdc, { amount: 0n });
    const unpaid = await fetch(`${seller.url}/siwx/profile`);
    expect(unpaid.status).toBe(402);
    expect(decode(unpaid.headers.get("payment-required")).accepts).toEqual([]);
    const answer = await referenceFetch(buyer)(`${seller.url}/siwx/profile`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ address: buyer.address });
  });

  it("the 2.10-style route declares the hostname and grants a sign-in with it to a wallet that paid", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const url = `${seller.url}/siwx/hostname`;
    expect((await referenceFetch(buyer)(url)).status).toBe(200);
    const info = decode((await fetch(url)).headers.get("payment-required")).extensions[SIGN_IN_WITH_X].info;
    expect(info.domain).toBe("127.0.0.1");
    const before = await balance(buyer.address);
    const answer = await fetch(url, { headers: { [SIGN_IN_WITH_X]: await proof(info, buyer) } });
    expect(answer.status).toBe(200);
    expect(await balance(buyer.address)).toBe(before);
    // The port-bound form is refused there, as a 2.10 server refused it.
    const withPort = await proof({ ...info, domain: new URL(seller.url).host }, buyer);
    expect((await fetch(url, { headers: { [SIGN_IN_WITH_X]: withPort } })).status).toBe(402);
  });
});

describe("payment-identifier route: the seller's idempotency cache", () => {
  it("the identical signed header is answered from the cache; another payload under the id is 409; one transfer", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const url = `${seller.url}/idempotent/weather`;
    const declared = decode((await fetch(url)).headers.get("payment-required")).extensions[PAYMENT_IDENTIFIER];
    expect(declared.info).toEqual({ required: false });
    const before = await balance(buyer.address);
    const id = `pay_${crypto.randomUUID().replaceAll("-", "")}`;
    const header = await signedPayment(buyer, url, id);

    const first = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ cached: false });
    const settled = decode(first.headers.get("payment-response"));

    const again = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ cached: true });
    expect(decode(again.headers.get("payment-response"))).toEqual(settled);

    const other = await signedPayment(buyer, url, id);
    expect(other).not.toBe(header);
    expect((await fetch(url, { headers: { "PAYMENT-SIGNATURE": other } })).status).toBe(409);
    expect(await balance(buyer.address)).toBe(before - PRICE_ATOMIC);
  });

  it("the fault proxy cuts the answer after the seller settled; resending the same header through it is served", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const url = `${proxy.url}/idempotent/weather`;
    const before = await balance(buyer.address);
    const header = await signedPayment(buyer, url, `pay_${crypto.randomUUID().replaceAll("-", "")}`);
    proxy.cutPaidResponses(1);
    await expect(fetch(url, { headers: { "PAYMENT-SIGNATURE": header } })).rejects.toThrow();
    expect(await balance(buyer.address)).toBe(before - PRICE_ATOMIC);
    const resent = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(resent.status).toBe(200);
    expect(await resent.json()).toMatchObject({ cached: true });
    expect(await balance(buyer.address)).toBe(before - PRICE_ATOMIC);
    expect(proxy.paidRequests.slice(-2).map((r) => r.cut)).toEqual([true, false]);
  });
});

describe("offer-and-receipt route", () => {
  it("offers in the 402 and the receipt in PAYMENT-RESPONSE are signed by payTo's key", async () => {
    const url = `${offerSeller.url}/offers/weather`;
    const challenge = decode((await fetch(url)).headers.get("payment-required"));
    const offers = challenge.extensions["offer-receipt"].info.offers as EIP712SignedOffer[];
    expect(offers).toHaveLength(1);
    const verified = await verifyOfferSignatureEIP712(offers[0]!);
    expect(verified.signer.toLowerCase()).toBe(offerSigner.address.toLowerCase());
    expect(verified.payload).toMatchObject({
      payTo: offerSigner.address,
      amount: String(PRICE_ATOMIC),
      network: "eip155:84532",
    });

    const buyer = await fundedBuyer(stack.usdc);
    const paid = await referenceFetch(buyer)(url);
    expect(paid.status).toBe(200);
    const receipt = decode(paid.headers.get("payment-response")).extensions["offer-receipt"].info
      .receipt as EIP712SignedReceipt;
    const checked = await verifyReceiptSignatureEIP712(receipt);
    expect(checked.signer.toLowerCase()).toBe(offerSigner.address.toLowerCase());
    expect(checked.payload.payer.toLowerCase()).toBe(buyer.address.toLowerCase());
  });
});
