// Solana exact, around the edges of building and checking the transaction: the JSON-RPC client used
// for an RPC URL, and what a wallet that rewrites the transaction may and may not change in the memo.
import {
  compileTransaction,
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Transaction,
  type TransactionModifyingSigner,
  type TransactionSigner,
} from "@solana/kit";
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { createX402Client, encodeBase64Json, parseChallenge } from "../../src";
import { MEMO_PROGRAM, exactSvm } from "../../src/svm";
import { useMswServer } from "../support/msw";
import { USDC_DEVNET, buyer, fakeRpc, rpcHandler, svmRequirement } from "../support/svm";

const RPC_URL = "https://rpc.example/solana";

const requirement = svmRequirement;
const server = useMswServer();

async function pay(scheme: ReturnType<typeof exactSvm>, extra: Record<string, unknown> = {}) {
  const client = createX402Client({ schemes: [scheme] });
  const challenge = parseChallenge({ header: encodeBase64Json({ x402Version: 2, resource: { url: "https://api.example/x" }, accepts: [requirement(extra)] }) });
  return client.createPayment(challenge, { url: "https://api.example/x", method: "GET" });
}

function instructionsOf(payment: { payload: Readonly<Record<string, unknown>> }) {
  const { transaction } = (payment.payload as { payload: { transaction: string } }).payload;
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
  return decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(tx.messageBytes)).instructions;
}

describe("the JSON-RPC client for an RPC URL", () => {
  it("sends JSON-RPC 2.0 requests, numbered per URL across payments", async () => {
    const rpc = rpcHandler(RPC_URL);
    server.use(rpc.handler);
    const scheme = exactSvm({ signer: buyer, rpc: RPC_URL });
    await pay(scheme);
    await pay(scheme);
    expect(rpc.requests).toEqual([
      { jsonrpc: "2.0", id: 1, method: "getAccountInfo", params: [USDC_DEVNET, { encoding: "base64", commitment: "confirmed" }] },
      { jsonrpc: "2.0", id: 2, method: "getLatestBlockhash", params: [{ commitment: "confirmed" }] },
      { jsonrpc: "2.0", id: 3, method: "getAccountInfo", params: [USDC_DEVNET, { encoding: "base64", commitment: "confirmed" }] },
      { jsonrpc: "2.0", id: 4, method: "getLatestBlockhash", params: [{ commitment: "confirmed" }] },
    ]);
  });

  it("reports an RPC error or an HTTP failure as a signing failure, nothing signed", async () => {
    server.use(rpcHandler(RPC_URL, { respond: (body) => HttpResponse.json({ jsonrpc: "2.0", id: body.id, error: { code: -32602, message: "bad params" } }) }).handler);
    await expect(pay(exactSvm({ signer: buyer, rpc: RPC_URL }))).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      cause: { message: expect.stringMatching(/Solana RPC \w+ failed: bad params \(-32602\)/) },
    });
    server.use(rpcHandler(RPC_URL, { respond: () => new HttpResponse("busy", { status: 503 }) }).handler);
    await expect(pay(exactSvm({ signer: buyer, rpc: RPC_URL }))).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      cause: { message: expect.stringMatching(/Solana RPC \w+ answered HTTP 503/) },
    });
  });
});

describe("wallets that rewrite the memo", () => {
  function rewriting(edit: (instructions: { programAddress: string; data?: Uint8Array }[]) => unknown[]): TransactionModifyingSigner {
    return {
      address: buyer.address,
      async modifyAndSignTransactions(transactions) {
        return Promise.all(
          transactions.map(async (transaction) => {
            const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(transaction.messageBytes));
            const edited = compileTransaction({ ...message, instructions: edit([...message.instructions] as never) } as never) as Transaction;
            const [signed] = await buyer.signTransactions([edited as never]);
            return { ...edited, signatures: { ...edited.signatures, ...signed } } as never;
          }),
        );
      },
    };
  }
  const memo = (text: string) => ({ programAddress: MEMO_PROGRAM, data: new TextEncoder().encode(text) });
  const withMemo = (text: string) => (ixs: { programAddress: string }[]) => [...ixs.filter((ix) => ix.programAddress !== MEMO_PROGRAM), memo(text)];
  const scheme = (signer: TransactionSigner) => exactSvm({ signer, rpc: fakeRpc() });

  it("may replace the random memo (the facilitator does not check it)", async () => {
    const payment = await pay(scheme(rewriting(withMemo("wallet nonce"))));
    const written = instructionsOf(payment).find((ix) => ix.programAddress === MEMO_PROGRAM);
    expect(new TextDecoder().decode(written!.data)).toBe("wallet nonce");
  });

  it("must keep the server's memo", async () => {
    await expect(pay(scheme(rewriting(withMemo("order-43"))), { memo: "order-42" })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/the memo differs from extra\.memo/),
    });
    await expect(pay(scheme(rewriting((ixs) => ixs.filter((ix) => ix.programAddress !== MEMO_PROGRAM))), { memo: "order-42" })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/has 0 memos, not 1/),
    });
    await expect(pay(scheme(rewriting((ixs) => [...ixs, memo("order-42")])), { memo: "order-42" })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/has 2 memos, not 1/),
    });
  });

  it("a wallet that returns an unreadable message is refused before anything is sent", async () => {
    const garbling: TransactionModifyingSigner = {
      address: buyer.address,
      modifyAndSignTransactions: async (transactions) => transactions.map((t) => ({ ...t, messageBytes: t.messageBytes.slice(0, 40) })) as never,
    };
    await expect(pay(scheme(garbling))).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/the transaction message cannot be read/),
    });
  });
});
