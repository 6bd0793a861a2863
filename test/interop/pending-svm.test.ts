// Pending Solana settlements against the unmodified reference facilitator and seller, settling in
// LiteSVM. The local RPC lands a transaction as soon as it is sent, so the seller's pending answer is
// made in front of it: a proxy transport that rewrites the paid answer's settlement to
// `settlement_pending`, or that never forwards the payment at all and names a transaction. x402-pay
// reports PAYMENT_PENDING, and `client.checkSettlement` asks the chain: settled when the named
// transaction landed and carries the payer's signature, pending while the signed transaction can still
// land, failed once its blockhash has expired.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSettlement, createX402Client, memoryLedger, reconcileOnChain } from "../../src";
import { wrapFetchWithPayment } from "../../src/fetch";
import { exactSvm, svmSettlement } from "../../src/svm";
import { PRICE_ATOMIC } from "../localnet/index.js";
import { startSolanaStack, type SolanaBuyer, type SolanaStack } from "../localnet/svm/index.js";
import { bytesToBase58 } from "../../src/protocol";

let stack: SolanaStack;
beforeAll(async () => {
  stack = await startSolanaStack();
});
afterAll(async () => {
  await stack?.stop();
});

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");
const decode = (value: string) => JSON.parse(Buffer.from(value, "base64").toString());
const balance = (buyer: SolanaBuyer) => stack.tokens.balance(stack.tokens.usdc, buyer.address);

function buyerClient(buyer: SolanaBuyer, transport: typeof fetch) {
  const ledger = memoryLedger();
  const client = createX402Client({
    schemes: [exactSvm({ signer: buyer.signer, rpc: `${stack.rpc.url}/buyer`, settlement: svmSettlement() })],
    plugins: [ledger],
  });
  return { client, ledger, pay: wrapFetchWithPayment(transport, client) };
}

/**
 * The seller's paid answer, its settlement rewritten to pending (status 402, no content): what landed, said to be on
 * its way.
 */
const pendingAfterSettling: typeof fetch = async (input, init) => {
  const answer = await fetch(input, init);
  const settlement = answer.headers.get("payment-response");
  if (!settlement) return answer;
  const headers = new Headers(answer.headers);
  headers.set("payment-response", encode({ ...decode(settlement), success: false, errorReason: "settlement_pending" }));
  return new Response(null, { status: 402, headers });
};

/** A seller that takes the payment and never settles it: it names `transaction` as pending. */
const pendingWithoutSending =
  (transaction: string): typeof fetch =>
  async (input, init) => {
    if (!new Headers(init?.headers).has("payment-signature")) return fetch(input, init);
    const pending = {
      success: false,
      errorReason: "settlement_pending",
      transaction,
      network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    };
    return new Response(null, { status: 402, headers: { "payment-response": encode(pending) } });
  };

describe("Solana: a pending settlement, looked up on the chain", () => {
  it("the transaction landed: settled, from the error and from the ledger record", async () => {
    const buyer = await stack.fundedBuyer();
    const before = await balance(buyer);
    const { client, ledger, pay } = buyerClient(buyer, pendingAfterSettling);
    const error = await pay(`${stack.seller.url}/weather`).catch((e) => e);
    expect(error.code).toBe("PAYMENT_PENDING");
    const signature = error.details.transaction;
    expect(stack.rpc.getTransaction(signature)?.err).toBeNull();
    expect(await balance(buyer)).toBe(before - PRICE_ATOMIC);

    expect(await checkSettlement(client, error)).toMatchObject({
      state: "settled",
      transaction: signature,
      amount: String(PRICE_ATOMIC),
    });
    const [reconciled] = await reconcileOnChain(ledger, client);
    expect(reconciled).toMatchObject({ state: "settled", reconciled: { outcome: "settled", transaction: signature } });
  });

  it("a transaction that never landed: pending while the blockhash is valid, failed once it has expired; nothing moved", async () => {
    const buyer = await stack.fundedBuyer();
    const before = await balance(buyer);
    const never = bytesToBase58(new Uint8Array(64).fill(7));
    const { client, pay } = buyerClient(buyer, pendingWithoutSending(never));
    const error = await pay(`${stack.seller.url}/weather`).catch((e) => e);
    expect(error.code).toBe("PAYMENT_PENDING");
    expect(error.details.transaction).toBe(never);

    const waiting = await checkSettlement(client, error);
    expect(waiting).toMatchObject({ state: "pending", transaction: never });
    expect(waiting.reason).toContain("has not landed; it can still land until its blockhash expires");
    stack.rpc.expireBlockhashes();
    const expired = await checkSettlement(client, error);
    expect(expired).toMatchObject({ state: "failed", transaction: never });
    expect(expired.reason).toContain("blockhash has expired");
    expect(await balance(buyer)).toBe(before);
  });

  it("a seller that names another landed transaction is not believed: it lacks the payer's signature", async () => {
    const other = await stack.fundedBuyer();
    const landed = await buyerClient(other, fetch).pay(`${stack.seller.url}/weather`);
    const otherSignature = decode(landed.headers.get("payment-response")!).transaction;
    expect(stack.rpc.getTransaction(otherSignature)?.err).toBeNull();

    const buyer = await stack.fundedBuyer();
    const { client, pay } = buyerClient(buyer, pendingWithoutSending(otherSignature));
    const error = await pay(`${stack.seller.url}/weather`).catch((e) => e);
    const status = await checkSettlement(client, error);
    expect(status.state).toBe("pending");
    expect(status.reason).toContain("landed but is not this payment");
  });
});
