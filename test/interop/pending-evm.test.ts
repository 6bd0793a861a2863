// A settlement still on its way, for real: anvil stops mining, the unmodified reference facilitator
// broadcasts the settlement and gives up waiting for its receipt, and the reference seller answers the
// paid request `settlement_pending` with the transaction's hash. x402-pay reports PAYMENT_PENDING (not a
// rejection), and `client.checkSettlement` asks the chain: pending while the transaction waits, settled
// once it is mined, failed once the authorization can no longer move money; `reconcileOnChain` records
// the answers in the ledger. A seller that names a transaction which is not the payment is not believed.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  checkSettlement,
  createX402Client,
  getPaymentReceipt,
  memoryLedger,
  reconcileOnChain,
  spendBy,
  unreconciled,
} from "../../src";
import { evmSettlement, exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { PRICE_ATOMIC, fundedBuyer, rpc, startInteropStack, type Buyer, type InteropStack } from "../localnet/index.js";

let stack: InteropStack;

beforeAll(async () => {
  // The facilitator waits 1 s for a receipt (twice: the reference seller retries a pending settlement once).
  stack = await startInteropStack({ receiptTimeoutMs: 1_000 });
});
afterEach(async () => {
  await rpc(stack.anvil.rpcUrl, "evm_setAutomine", [true]);
});
afterAll(async () => {
  await stack?.stop();
});

function buyerClient(buyer: Buyer, transport: typeof fetch = fetch) {
  const ledger = memoryLedger();
  const client = createX402Client({
    schemes: [exactEvm({ signer: buyer.account, settlement: evmSettlement({ rpc: stack.anvil.rpcUrl }) })],
    plugins: [ledger],
  });
  return { client, ledger, pay: wrapFetchWithPayment(transport, client) };
}

const balances = async (buyer: Buyer) => ({
  buyer: await stack.usdc.usdcBalance(buyer.address),
  payee: await stack.usdc.usdcBalance(stack.seller.payTo),
});

describe("a settlement the chain has not mined", () => {
  it("is PAYMENT_PENDING with the broadcast hash; the chain says pending, then settled once mined; the ledger reconciles it", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const { client, ledger, pay } = buyerClient(buyer);
    const before = await balances(buyer);
    await rpc(stack.anvil.rpcUrl, "evm_setAutomine", [false]);

    const error = await pay(`${stack.seller.url}/weather`).catch((e) => e);

    expect(error.code).toBe("PAYMENT_PENDING");
    expect(error.details.reason).toBe("settlement_pending");
    expect(error.details.network).toBe("eip155:84532");
    const hash = error.details.transaction;
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await rpc(stack.anvil.rpcUrl, "eth_getTransactionByHash", [hash])).toMatchObject({
      hash,
      blockNumber: null,
    });
    expect(await balances(buyer)).toEqual(before);
    expect(ledger.list.map((r) => [r.outcome, r.transaction])).toEqual([["pending", hash]]);

    const waiting = await checkSettlement(client, error);
    expect(waiting).toMatchObject({ state: "pending", transaction: hash });
    expect(waiting.reason).toContain("not mined yet");
    expect((await checkSettlement(client, ledger.list[0]!)).state).toBe("pending");
    expect((await reconcileOnChain(ledger, client)).map((r) => r.state)).toEqual(["pending"]);
    expect(await unreconciled(ledger)).toHaveLength(1);

    await rpc(stack.anvil.rpcUrl, "evm_mine", []);

    expect(await checkSettlement(client, error)).toMatchObject({
      state: "settled",
      transaction: hash,
      amount: String(PRICE_ATOMIC),
    });
    const after = await balances(buyer);
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.payee - before.payee).toBe(PRICE_ATOMIC);
    // From the ledger record alone (no signed payload): the receipt's Transfer from the payer to the payee.
    const [reconciled] = await reconcileOnChain(ledger, client);
    expect(reconciled).toMatchObject({
      state: "settled",
      reconciled: { outcome: "settled", transaction: hash, settledAmount: String(PRICE_ATOMIC) },
    });
    expect(await unreconciled(ledger)).toEqual([]);
    expect((await spendBy(ledger, "asset")).map((row) => row.amount)).toEqual([String(PRICE_ATOMIC)]);
  });

  it("a seller that names another transaction is not believed: the signed authorization's own state on chain decides", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const other = await fundedBuyer(stack.usdc); // its funding transaction moved tokens, but not this payment
    const transaction = (
      await rpc<{ transactions: string[] }>(stack.anvil.rpcUrl, "eth_getBlockByNumber", ["latest", false])
    ).transactions[0]!;
    expect(other.address).not.toBe(buyer.address);
    // The paid answer's settlement, rewritten: the payment settled, but the seller says pending and names another
    // transaction.
    const lying: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      if (!answer.headers.has("payment-response")) return answer;
      const headers = new Headers(answer.headers);
      const pending = { success: false, errorReason: "settlement_pending", transaction, network: "eip155:84532" };
      headers.set("payment-response", Buffer.from(JSON.stringify(pending)).toString("base64"));
      return new Response(null, { status: 402, headers });
    };
    const { client, pay } = buyerClient(buyer, lying);
    const error = await pay(`${stack.seller.url}/weather`).catch((e) => e);
    expect(error.code).toBe("PAYMENT_PENDING");
    expect(error.details.transaction).toBe(transaction);

    const status = await checkSettlement(client, error);
    expect(status).toMatchObject({ state: "settled", transaction: undefined, amount: String(PRICE_ATOMIC) });
    expect(status.reason).toContain(
      `transaction ${transaction} moved none of this payment, but the signed authorization was used on chain`,
    );
  });

  it("a paid answer that is served with a pending settlement is returned, and its receipt says pending", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const served: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      const settlement = answer.headers.get("payment-response");
      if (!settlement) return answer;
      const headers = new Headers(answer.headers);
      const decoded = JSON.parse(Buffer.from(settlement, "base64").toString());
      headers.set(
        "payment-response",
        Buffer.from(JSON.stringify({ ...decoded, success: false, errorReason: "settlement_pending" })).toString(
          "base64",
        ),
      );
      return new Response(await answer.arrayBuffer(), { status: 200, headers });
    };
    const { client, pay } = buyerClient(buyer, served);
    const response = await pay(`${stack.seller.url}/weather`);
    expect(response.status).toBe(200);
    const receipt = getPaymentReceipt(response)!;
    expect(receipt).toMatchObject({ settled: false, pending: true });
    // A receipt says what was paid: it is looked up as it is.
    expect(await checkSettlement(client, receipt)).toMatchObject({
      state: "settled",
      transaction: receipt.transaction,
    });
  });

  // Last: dropping a transaction from anvil's pool leaves the facilitator's nonce count ahead of the chain.
  it("a broadcast transaction that never lands: pending until the authorization's deadline passes on chain, then failed, and nothing moved", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const { client, ledger, pay } = buyerClient(buyer);
    const before = await balances(buyer);
    await rpc(stack.anvil.rpcUrl, "evm_setAutomine", [false]);
    const error = await pay(`${stack.seller.url}/weather`).catch((e) => e);
    expect(error.code).toBe("PAYMENT_PENDING");
    await rpc(stack.anvil.rpcUrl, "anvil_dropTransaction", [error.details.transaction]);
    await rpc(stack.anvil.rpcUrl, "evm_mine", []);
    const stillValid = await checkSettlement(client, error);
    expect(stillValid.state).toBe("pending");
    expect(stillValid.reason).toContain("can still move money until");

    await rpc(stack.anvil.rpcUrl, "evm_increaseTime", [error.details.requirement.maxTimeoutSeconds + 60]);
    await rpc(stack.anvil.rpcUrl, "evm_mine", []);
    const expired = await checkSettlement(client, error);
    expect(expired.state).toBe("failed");
    expect(expired.reason).toContain("expired unused");
    expect(await balances(buyer)).toEqual(before);
    // The ledger record alone cannot read the authorization: not mined is all it can say.
    expect((await checkSettlement(client, ledger.list[0]!)).state).toBe("pending");
  });
});
