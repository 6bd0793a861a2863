// signInWithX against the reference seller's sign-in-with-x server extension (@x402/extensions
// 2.27), its facilitator, anvil and LiteSVM: a wallet pays a route once and signs in on later
// visits with no second settlement, on EVM and on Solana; an auth-only route signs in; a sign-in the
// server refuses is followed by one payment; both forms of `domain` work; another origin's challenge
// is refused with nothing signed. Balances are read on chain.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, signInWithX, type SignInStore } from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { exactSvm } from "../../src/svm";
import {
  PRICE_ATOMIC,
  WEATHER,
  fundedBuyer,
  startExtensionSeller,
  type Buyer,
  type ExtensionSeller,
} from "../localnet/index.js";
import { startSolanaStack, type SolanaBuyer, type SolanaStack } from "../localnet/svm/index.js";

let stack: SolanaStack;
let seller: ExtensionSeller;

beforeAll(async () => {
  stack = await startSolanaStack();
  seller = await startExtensionSeller({
    facilitatorUrl: stack.facilitator.url,
    payTo: stack.seller.evmPayTo!,
    svmPayTo: stack.seller.payTo,
  });
}, 120_000);
afterAll(async () => {
  await seller?.stop();
  await stack?.stop();
});

const evmBalance = (buyer: Buyer) => stack.usdc!.usdcBalance(buyer.address);
const svmBalance = (buyer: SolanaBuyer) => stack.tokens.balance(stack.tokens.usdc, buyer.address);

/** An EVM buyer's wallet that counts what it is asked to sign. */
function countedEvm(buyer: Buyer) {
  const signed: string[] = [];
  const wallet = {
    address: buyer.address,
    signTypedData: (request: never) => (signed.push("typed data"), buyer.account.signTypedData(request)),
    signMessage: (request: { message: string }) => (signed.push("message"), buyer.account.signMessage(request)),
  };
  return { wallet, signed };
}

function evmFetch(buyer: Buyer, { store, transport = fetch }: { store?: SignInStore; transport?: typeof fetch } = {}) {
  const { wallet, signed } = countedEvm(buyer);
  const client = createX402Client({
    schemes: [exactEvm({ signer: wallet })],
    plugins: [signInWithX({ evm: wallet, ...(store && { store }) })],
  });
  return { pay: wrapFetchWithPayment(transport, client), signed };
}

describe("sign-in-with-x against the reference seller (EVM)", () => {
  it.each([
    ["domain with the port (2.27)", "/siwx/weather"],
    ["domain without the port (2.10)", "/siwx/hostname"],
  ])("%s: the first visit pays once; the second signs in and moves no money", async (_, path) => {
    const buyer = await fundedBuyer(stack.usdc!);
    const { pay, signed } = evmFetch(buyer);
    const before = await evmBalance(buyer);
    const settledBefore = seller.settlements.length;

    const first = await pay(`${seller.url}${path}`);
    expect(first.status).toBe(200);
    expect(getPaymentReceipt(first)?.settled).toBe(true);
    expect(signed).toEqual(["typed data"]); // no sign-in round trip on a first visit
    expect(await evmBalance(buyer)).toBe(before - PRICE_ATOMIC);

    const second = await pay(`${seller.url}${path}`);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(WEATHER);
    expect(getPaymentReceipt(second)).toBeUndefined();
    expect(signed).toEqual(["typed data", "message"]);
    expect(await evmBalance(buyer)).toBe(before - PRICE_ATOMIC);
    expect(seller.settlements.length).toBe(settledBefore + 1);
    expect(seller.signIns).toContainEqual({ path, address: buyer.address });
  });

  it("the auth-only route signs in, with nothing paid", async () => {
    const buyer = await fundedBuyer(stack.usdc!, { amount: 0n });
    const { pay, signed } = evmFetch(buyer);
    const answer = await pay(`${seller.url}/siwx/profile`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ address: buyer.address });
    expect(signed).toEqual(["message"]);
  });

  it("a wallet whose store says it paid, but which never did: the server refuses the sign-in, and it pays once", async () => {
    const buyer = await fundedBuyer(stack.usdc!);
    const lying: SignInStore = { get: () => "paid", set: () => undefined };
    const { pay, signed } = evmFetch(buyer, { store: lying });
    const before = await evmBalance(buyer);
    const answer = await pay(`${seller.url}/siwx/weather`);
    expect(answer.status).toBe(200);
    expect(signed).toEqual(["message", "typed data"]);
    expect(await evmBalance(buyer)).toBe(before - PRICE_ATOMIC);
    expect(seller.signIns.some((s) => s.address === buyer.address)).toBe(false);
  });

  it("a challenge bound to another origin is refused before anything is signed", async () => {
    const buyer = await fundedBuyer(stack.usdc!);
    // A network in the middle rewrites the declaration to ask for a proof for another site.
    const phishing: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      const header = answer.headers.get("payment-required");
      if (answer.status !== 402 || !header) return answer;
      const challenge = JSON.parse(Buffer.from(header, "base64").toString());
      challenge.extensions["sign-in-with-x"].info.domain = "wallet.example";
      const headers = new Headers(answer.headers);
      headers.set("payment-required", Buffer.from(JSON.stringify(challenge)).toString("base64"));
      return new Response(await answer.arrayBuffer(), { status: 402, headers });
    };
    const { pay, signed } = evmFetch(buyer, { transport: phishing });
    const error = await pay(`${seller.url}/siwx/profile`).catch((e) => e);
    expect(error.code).toBe("SIGN_IN_REFUSED");
    expect(signed).toEqual([]);
  });
});

describe("sign-in-with-x against the reference seller (Solana)", () => {
  it("a Solana wallet pays once, then signs in (SIWS) and moves no money", async () => {
    const buyer = await stack.fundedBuyer();
    const client = createX402Client({
      schemes: [exactSvm({ signer: buyer.signer, rpc: `${stack.rpc.url}/buyer` })],
      plugins: [signInWithX({ solana: buyer.signer })],
    });
    const pay = wrapFetchWithPayment(fetch, client);
    const before = await svmBalance(buyer);
    const first = await pay(`${seller.url}/siwx/weather`);
    expect(first.status).toBe(200);
    expect(getPaymentReceipt(first)?.network).toBe("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
    expect(await svmBalance(buyer)).toBe(before - PRICE_ATOMIC);

    const second = await pay(`${seller.url}/siwx/weather`);
    expect(second.status).toBe(200);
    expect(getPaymentReceipt(second)).toBeUndefined();
    expect(await svmBalance(buyer)).toBe(before - PRICE_ATOMIC);
    expect(seller.signIns).toContainEqual({ path: "/siwx/weather", address: buyer.address });
  });

  it("the auth-only route signs in with a Solana wallet", async () => {
    const buyer = await stack.fundedBuyer({ amount: 0n });
    const client = createX402Client({
      schemes: [exactSvm({ signer: buyer.signer, rpc: `${stack.rpc.url}/buyer` })],
      plugins: [signInWithX({ solana: buyer.signer })],
    });
    const answer = await wrapFetchWithPayment(fetch, client)(`${seller.url}/siwx/profile`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ address: buyer.address });
  });
});
