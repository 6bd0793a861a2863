// Solana exact, around the edges of building and checking the transaction: the JSON-RPC client used
// for an RPC URL, and what a wallet that rewrites the transaction may and may not change in the memo.
import {
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type TransactionSigner,
} from "@solana/kit";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createX402Client, encodeBase64Json, parseChallenge } from "../../src";
import { MEMO_PROGRAM, TOKEN_PROGRAM, exactSvm } from "../../src/svm";
import { BLOCKHASH, USDC_DEVNET, buyer, svmRequirement } from "../support/svm";
import { rewritingSvmSigner, type WalletInstruction } from "../support/wallets";

const RPC_URL = "https://rpc.example/solana";

const requirement = svmRequirement;
const mintBase64 = () => {
  const data = new Uint8Array(82);
  data[44] = 6;
  return btoa(String.fromCharCode(...data));
};
const kitRpc = {
  getAccountInfo: () => ({ send: async () => ({ value: { owner: TOKEN_PROGRAM, data: [mintBase64(), "base64"] as const } }) }),
  getLatestBlockhash: () => ({ send: async () => ({ value: { blockhash: BLOCKHASH, lastValidBlockHeight: 100n } }) }),
};

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
  afterEach(() => vi.unstubAllGlobals());

  function stubRpc(answer: (body: { id: number; method: string; params: unknown[] }) => Response) {
    const bodies: { jsonrpc: string; id: number; method: string; params: unknown[] }[] = [];
    vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
      expect(url).toBe(RPC_URL);
      expect(init.method).toBe("POST");
      expect(new Headers(init.headers).get("content-type")).toBe("application/json");
      const body = JSON.parse(String(init.body));
      bodies.push(body);
      return answer(body);
    });
    return bodies;
  }
  const result = (body: { id: number; method: string }) =>
    Response.json({
      jsonrpc: "2.0",
      id: body.id,
      result:
        body.method === "getAccountInfo"
          ? { context: { slot: 1 }, value: { owner: TOKEN_PROGRAM, data: [mintBase64(), "base64"], lamports: 1 } }
          : { context: { slot: 1 }, value: { blockhash: BLOCKHASH, lastValidBlockHeight: 100 } },
    });

  it("sends JSON-RPC 2.0 requests, numbered per URL across payments", async () => {
    const bodies = stubRpc(result);
    const scheme = exactSvm({ signer: buyer, rpc: RPC_URL });
    await pay(scheme);
    await pay(scheme);
    expect(bodies).toEqual([
      { jsonrpc: "2.0", id: 1, method: "getAccountInfo", params: [USDC_DEVNET, { encoding: "base64", commitment: "confirmed" }] },
      { jsonrpc: "2.0", id: 2, method: "getLatestBlockhash", params: [{ commitment: "confirmed" }] },
      { jsonrpc: "2.0", id: 3, method: "getAccountInfo", params: [USDC_DEVNET, { encoding: "base64", commitment: "confirmed" }] },
      { jsonrpc: "2.0", id: 4, method: "getLatestBlockhash", params: [{ commitment: "confirmed" }] },
    ]);
  });

  it("reports an RPC error or an HTTP failure as a signing failure, nothing signed", async () => {
    stubRpc((body) => Response.json({ jsonrpc: "2.0", id: body.id, error: { code: -32602, message: "bad params" } }));
    await expect(pay(exactSvm({ signer: buyer, rpc: RPC_URL }))).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      cause: { message: expect.stringMatching(/Solana RPC \w+ failed: bad params \(-32602\)/) },
    });
    vi.unstubAllGlobals();
    stubRpc(() => new Response("busy", { status: 503 }));
    await expect(pay(exactSvm({ signer: buyer, rpc: RPC_URL }))).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      cause: { message: expect.stringMatching(/Solana RPC \w+ answered HTTP 503/) },
    });
  });
});

describe("wallets that rewrite the memo", () => {
  const rewriting = (edit: (instructions: WalletInstruction[]) => unknown[]) => rewritingSvmSigner({ instructions: edit });
  const memo = (text: string) => ({ programAddress: MEMO_PROGRAM, data: new TextEncoder().encode(text) });
  const withMemo = (text: string) => (ixs: { programAddress: string }[]) => [...ixs.filter((ix) => ix.programAddress !== MEMO_PROGRAM), memo(text)];
  const scheme = (signer: TransactionSigner) => exactSvm({ signer, rpc: kitRpc as never });

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
    const garbling = rewritingSvmSigner({ signed: (t) => ({ ...t, messageBytes: t.messageBytes.slice(0, 40) }) });
    await expect(pay(scheme(garbling))).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/the transaction message cannot be read/),
    });
  });
});
