// Solana exact, around the edges of checking the signed transaction: what a wallet that rewrites the
// transaction may and may not change in the memo. (The RPC reads: svm-rpc.test.ts.)
import {
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type TransactionSigner,
} from "@solana/kit";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { MEMO_PROGRAM, exactSvm } from "../../src/svm";
import { fakeRpc, svmRequirement } from "../support/svm";
import { rewritingSvmSigner, type WalletInstruction } from "../support/wallets";
import { engineOf } from "../../src/client";

const requirement = svmRequirement;

async function pay(scheme: ReturnType<typeof exactSvm>, extra: Record<string, unknown> = {}) {
  const client = createX402Client({ schemes: [scheme] });
  const challenge = parseChallenge({
    header: encodeBase64Json({
      x402Version: 2,
      resource: { url: "https://api.example/x" },
      accepts: [requirement(extra)],
    }),
  });
  return engineOf(client).createPayment(challenge, { url: "https://api.example/x", method: "GET" });
}

function instructionsOf(payment: { payload: Readonly<Record<string, unknown>> }) {
  const { transaction } = (payment.payload as { payload: { transaction: string } }).payload;
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
  return decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(tx.messageBytes)).instructions;
}

describe("wallets that rewrite the memo", () => {
  const rewriting = (edit: (instructions: WalletInstruction[]) => unknown[]) =>
    rewritingSvmSigner({ instructions: edit });
  const memo = (text: string) => ({ programAddress: MEMO_PROGRAM, data: new TextEncoder().encode(text) });
  const withMemo = (text: string) => (ixs: { programAddress: string }[]) => [
    ...ixs.filter((ix) => ix.programAddress !== MEMO_PROGRAM),
    memo(text),
  ];
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
    await expect(
      pay(scheme(rewriting((ixs) => ixs.filter((ix) => ix.programAddress !== MEMO_PROGRAM))), { memo: "order-42" }),
    ).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/has 0 memos, not 1/),
    });
    await expect(
      pay(scheme(rewriting((ixs) => [...ixs, memo("order-42")])), { memo: "order-42" }),
    ).rejects.toMatchObject({
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
