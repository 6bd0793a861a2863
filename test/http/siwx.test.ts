/**
 * sign-in-with-x through both wrappers, against a fake seller that checks proofs as the reference
 * server does (test/support/siwx.ts): a first visit pays, the next one signs in and is served
 * without paying, an auth-only route signs in, a still-402 after signing in is paid once, a
 * phishing challenge is refused with nothing signed, and an abort stops everything.
 */
import axios from "axios";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createX402Client, memoryLedger, signInWithX, type AnyX402Error, type PaymentReceipt } from "../../src";
import { exactEvm } from "../../src/evm";
import { paidKey, memoryStore } from "../../src/extensions/sign-in-with-x/store";
import { useMswServer } from "../support/msw";
import { countingSigner } from "../support/seller";
import { SIGN_IN, countingEvmWallet, countingSolanaWallet, createSiwxSeller } from "../support/siwx";
import { buyer } from "../support/svm";
import { account } from "../support/wallets";
import { rejection, wrappers } from "../support/wrappers";

const server = useMswServer();
const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

/**
 * A client paying `exact` on EVM with a counting signer, signing in with `wallets`; what each signed and what the hooks
 * saw.
 */
function buyerWith(wallets: Parameters<typeof signInWithX>[0], sign?: Parameters<typeof countingSigner>[0]) {
  const payments = countingSigner(sign);
  const settled: PaymentReceipt[] = [];
  const failed: AnyX402Error[] = [];
  const client = createX402Client({
    schemes: [exactEvm({ signer: payments.signer })],
    plugins: [signInWithX(wallets)],
    onPaymentSettled: (r) => void settled.push(r),
    onPaymentFailed: (e) => void failed.push(e),
  });
  return { client, typedData: payments.calls, settled, failed };
}

describe.each(wrappers)("$name: sign in instead of paying twice", (wrapper) => {
  it("the first visit pays at once (no sign-in round trip); the second signs in and is served without a payment", async () => {
    const seller = createSiwxSeller();
    server.use(seller.handler);
    const evm = countingEvmWallet();
    const buyer = buyerWith({ evm: evm.wallet });

    const first = await wrapper.send(buyer.client, { url: seller.url });
    expect(first.status).toBe(200);
    expect(seller.requests).toHaveLength(2);
    expect(seller.counts).toEqual({ payments: 1, signIns: 0 });
    expect(evm.messages).toEqual([]);

    const second = await wrapper.send(buyer.client, { url: `${seller.url}?again=1` });
    expect(second.status).toBe(200);
    expect(JSON.parse(second.text)).toMatchObject({ signedIn: account.address });
    expect(seller.requests).toHaveLength(4);
    expect(seller.requests[3]!.headers["payment-signature"]).toBeUndefined();
    expect(seller.counts).toEqual({ payments: 1, signIns: 1 });
    expect(seller.proofs).toEqual([expect.objectContaining({ ok: true })]);
    expect(buyer.typedData).toHaveLength(1);
    expect(evm.messages).toHaveLength(1);
    expect(evm.messages[0]).toMatch(
      /^seller\.example wants you to sign in with your Ethereum account:\n0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266\n\n\nURI: /,
    );
    expect([buyer.settled.length, buyer.failed.length]).toEqual([1, 0]);
  });

  it("the receipts ledger as sign-in's memory: a client started later, on the same ledger, signs in where the first paid", async () => {
    const seller = createSiwxSeller();
    server.use(seller.handler);
    const ledger = memoryLedger();
    const clientOn = (evm: ReturnType<typeof countingEvmWallet>) =>
      createX402Client({
        schemes: [exactEvm({ signer: countingSigner().signer })],
        plugins: [ledger, signInWithX({ evm: evm.wallet, store: ledger })],
      });
    expect((await wrapper.send(clientOn(countingEvmWallet()), { url: seller.url })).status).toBe(200);
    expect(ledger.list.map((r) => r.outcome)).toEqual(["settled"]);

    const later = countingEvmWallet();
    const reply = await wrapper.send(clientOn(later), { url: seller.url });
    expect(JSON.parse(reply.text)).toMatchObject({ signedIn: account.address });
    expect(seller.counts).toEqual({ payments: 1, signIns: 1 });
    expect(later.messages).toHaveLength(1);
  });

  it("an auth-only route (accepts: []) signs in on the first visit; nothing is paid", async () => {
    const seller = createSiwxSeller({ path: "/profile", accepts: [] });
    server.use(seller.handler);
    const evm = countingEvmWallet();
    const buyer = buyerWith({ evm: evm.wallet });

    const reply = await wrapper.send(buyer.client, { url: seller.url });

    expect(reply.status).toBe(200);
    expect(seller.counts).toEqual({ payments: 0, signIns: 1 });
    expect(seller.proofs).toEqual([expect.objectContaining({ ok: true })]);
    expect(buyer.typedData).toEqual([]);
    expect([buyer.settled, buyer.failed]).toEqual([[], []]);
  });

  it("a Solana wallet signs in on an auth-only route (SIWS, Ed25519, base58)", async () => {
    const seller = createSiwxSeller({
      path: "/profile",
      accepts: [],
      declare: (d) => void (d.supportedChains = [{ chainId: SOLANA_DEVNET, type: "ed25519" }]),
    });
    server.use(seller.handler);
    const solana = countingSolanaWallet();
    const reply = await wrapper.send(buyerWith({ solana: solana.wallet }).client, { url: seller.url });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ signedIn: buyer.address });
    expect(solana.messages[0]).toMatch(
      /^seller\.example wants you to sign in with your Solana account:\n\w+\n\nURI: .*\nVersion: 1\nChain ID: EtWTRABZaYq6iMfeYKouRu166VU2xqa1\n/,
    );
  });

  it("a route a Solana wallet paid (remembered in a pluggable store) signs in with it on the chain it paid on", async () => {
    const seller = createSiwxSeller({
      paid: new Set([buyer.address]),
      declare: (d) => void d.supportedChains.push({ chainId: SOLANA_DEVNET, type: "ed25519" }),
    });
    server.use(seller.handler);
    const store = memoryStore();
    await store.set(paidKey(seller.url, buyer.address), SOLANA_DEVNET);
    const evm = countingEvmWallet();
    const solana = countingSolanaWallet();
    const client = buyerWith({ evm: evm.wallet, solana: solana.wallet, store });

    const reply = await wrapper.send(client.client, { url: seller.url });

    expect(reply.status).toBe(200);
    expect(seller.counts).toEqual({ payments: 0, signIns: 1 });
    expect(seller.proofs[0]).toMatchObject({
      ok: true,
      proof: { chainId: SOLANA_DEVNET, type: "ed25519", address: buyer.address },
    });
    expect([evm.messages.length, solana.messages.length, client.typedData.length]).toEqual([0, 1, 0]);
  });

  it("a server that still answers 402 after the sign-in (it forgot the payment) is paid once; one sign-in, one payment", async () => {
    const seller = createSiwxSeller();
    server.use(seller.handler);
    const evm = countingEvmWallet();
    const buyer = buyerWith({ evm: evm.wallet });
    await wrapper.send(buyer.client, { url: seller.url });
    seller.paid.clear();

    const reply = await wrapper.send(buyer.client, { url: seller.url });

    expect(reply.status).toBe(200);
    // This visit: the 402, the sign-in (402 again), the payment.
    expect(seller.requests.slice(2).map((r) => [!!r.headers[SIGN_IN], !!r.headers["payment-signature"]])).toEqual([
      [false, false],
      [true, false],
      [false, true],
    ]);
    expect(seller.counts).toEqual({ payments: 2, signIns: 1 });
    expect(evm.messages).toHaveLength(1);
    expect(buyer.typedData).toHaveLength(2);
    expect(buyer.settled).toHaveLength(2);
  });

  it("a refused sign-in, then a refused payment: one of each, then PAYMENT_REJECTED (never a second signature)", async () => {
    const seller = createSiwxSeller();
    server.use(seller.handler);
    const store = memoryStore();
    await store.set(paidKey(seller.url, account.address), "eip155:84532");
    const evm = countingEvmWallet();
    // The payment is signed by another key than the payer it names: the seller refuses it.
    const buyer = buyerWith({ evm: evm.wallet, store }, (request) =>
      privateKeyToAccount(generatePrivateKey()).signTypedData(request as never),
    );

    const error = await rejection(wrapper.send(buyer.client, { url: seller.url }));

    expect(error).toMatchObject({ code: "PAYMENT_REJECTED" });
    expect(seller.requests).toHaveLength(3);
    expect(seller.counts).toEqual({ payments: 1, signIns: 1 });
    expect([evm.messages.length, buyer.typedData.length]).toEqual([1, 1]);
  });

  it("another wallet's payment does not let this one in: it pays, with no sign-in round trip", async () => {
    const seller = createSiwxSeller({ paid: new Set(["0x70997970c51812dc3a010c7d01b50e0d17dc79c8"]) });
    server.use(seller.handler);
    const evm = countingEvmWallet();
    const buyer = buyerWith({ evm: evm.wallet });
    expect((await wrapper.send(buyer.client, { url: seller.url })).status).toBe(200);
    expect(seller.counts).toEqual({ payments: 1, signIns: 0 });
    expect(evm.messages).toEqual([]);
  });

  it.each([
    ["the host with its port (reference 2.27)", "host"],
    ["the hostname alone (reference 2.10)", "hostname"],
  ])("a domain declared as %s signs in", async (_, domain) => {
    const seller = createSiwxSeller({ origin: "http://seller.example:8402", path: "/profile", accepts: [], domain });
    server.use(seller.handler);
    const reply = await wrapper.send(buyerWith({ evm: account }).client, { url: seller.url });
    expect(reply.status).toBe(200);
    expect(seller.proofs[0]).toMatchObject({
      ok: true,
      proof: { domain: domain === "host" ? "seller.example:8402" : "seller.example" },
    });
  });
});

describe.each(wrappers)("$name: refusals, with nothing signed", (wrapper) => {
  it.each([
    ["another site's domain (phishing)", { domain: "bank.example" }, "domain_mismatch"],
    ["another origin's uri", { uri: "https://bank.example/account" }, "uri_mismatch"],
    ["a stale challenge", { issuedAt: new Date(Date.now() - 3_600_000).toISOString() }, "issued_too_long_ago"],
    ["a short nonce", { nonce: "1234567" }, "weak_nonce"],
  ])("an auth-only route with %s: SIGN_IN_REFUSED, one request, no wallet asked", async (_, info, reason) => {
    const seller = createSiwxSeller({
      path: "/profile",
      accepts: [],
      declare: (d) => void Object.assign(d.info, info),
    });
    server.use(seller.handler);
    const evm = countingEvmWallet();
    const buyer = buyerWith({ evm: evm.wallet });

    const error = await rejection(wrapper.send(buyer.client, { url: seller.url }));

    expect(error).toMatchObject({
      code: "SIGN_IN_REFUSED",
      phase: "challenge",
      details: { reason, url: seller.url, method: "GET" },
    });
    expect(seller.requests).toHaveLength(1);
    expect([evm.messages, buyer.typedData]).toEqual([[], []]);
    expect(buyer.failed.map((e) => e.code)).toEqual(["SIGN_IN_REFUSED"]);
  });

  it("a route paid before whose next challenge names another site is refused: not signed, and not paid again", async () => {
    let phishing = false;
    const seller = createSiwxSeller({ declare: (d) => void (phishing && (d.info.domain = "bank.example")) });
    server.use(seller.handler);
    const evm = countingEvmWallet();
    const buyer = buyerWith({ evm: evm.wallet });
    await wrapper.send(buyer.client, { url: seller.url });
    phishing = true;

    const error = await rejection(wrapper.send(buyer.client, { url: seller.url }));

    expect(error).toMatchObject({ code: "SIGN_IN_REFUSED", details: { reason: "domain_mismatch" } });
    expect(error.message).toMatch(/the challenge is for bank\.example, and this request went to seller\.example/);
    expect(seller.requests).toHaveLength(3);
    expect(seller.counts).toEqual({ payments: 1, signIns: 0 });
    expect(evm.messages).toEqual([]);
    expect(buyer.typedData).toHaveLength(1);
  });

  it("a first visit does not read the declaration at all: it pays as it would without the extension", async () => {
    const seller = createSiwxSeller({ declare: (d) => void (d.info.domain = "bank.example") });
    server.use(seller.handler);
    const evm = countingEvmWallet();
    const buyer = buyerWith({ evm: evm.wallet });
    expect((await wrapper.send(buyer.client, { url: seller.url })).status).toBe(200);
    expect(seller.counts).toEqual({ payments: 1, signIns: 0 });
    expect(evm.messages).toEqual([]);
  });
});

describe.each(wrappers)("$name: cancellation", (wrapper) => {
  it("an abort while the wallet's sign-in prompt is open rejects at once (fetch: ABORTED; axios: its CanceledError), reported as ABORTED; nothing more is sent", async () => {
    const seller = createSiwxSeller({ path: "/profile", accepts: [] });
    server.use(seller.handler);
    const controller = new AbortController();
    const prompt = countingEvmWallet(() => {
      setTimeout(() => controller.abort(), 10);
      return new Promise(() => {}); // the user never answers
    });
    const buyer = buyerWith({ evm: prompt.wallet });

    const error = await rejection(wrapper.send(buyer.client, { url: seller.url, signal: controller.signal }));

    if (wrapper.name === "fetch") expect(error).toMatchObject({ code: "ABORTED", name: "AbortError" });
    else expect(axios.isCancel(error)).toBe(true);
    expect(prompt.messages).toHaveLength(1);
    expect(seller.requests).toHaveLength(1);
    expect(buyer.failed.map((e) => e.code)).toEqual(["ABORTED"]);
  });
});
