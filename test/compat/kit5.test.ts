// Runs with "@solana/kit" aliased to kit 5.5.1 (see vitest.config.ts): x402-pay/svm builds a
// transaction that kit 5 decodes and verifies, signed by a kit 5 key pair signer.
import * as kit from "@solana/kit";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { exactSvm, TOKEN_PROGRAM, uptoSvm } from "../../src/svm";
import vectorFile from "../vectors/upto-svm.json";
import { FEE_PAYER, USDC_DEVNET, fakeRpc } from "../support/svm";
import { engineOf } from "../../src/client";

describe("x402-pay/svm with @solana/kit 5", () => {
  it("is really running against kit 5", () => {
    expect(kit).toHaveProperty("TRANSACTION_SIZE_LIMIT");
    expect(kit).not.toHaveProperty("estimateResourceLimitsFactory");
  });

  it("signs a transfer that kit 5 decodes and verifies", async () => {
    const buyer = await kit.createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(9));
    const rpc = fakeRpc();
    const requirement = {
      scheme: "exact",
      network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
      amount: "1000",
      asset: USDC_DEVNET,
      payTo: "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4",
      maxTimeoutSeconds: 60,
      extra: { feePayer: FEE_PAYER },
    };
    const client = createX402Client({ schemes: [exactSvm({ signer: buyer, rpc })] });
    const challenge = parseChallenge({
      header: encodeBase64Json({ x402Version: 2, resource: { url: "https://a.example/x" }, accepts: [requirement] }),
    });
    const payment = await engineOf(client).createPayment(challenge, { url: "https://a.example/x", method: "GET" });

    const wire = kit.getBase64Encoder().encode((payment.payload.payload as { transaction: string }).transaction);
    const tx = kit.getTransactionDecoder().decode(wire);
    const message = kit.decompileTransactionMessage(kit.getCompiledTransactionMessageDecoder().decode(tx.messageBytes));
    expect(message.feePayer.address).toBe(FEE_PAYER);
    expect(Array.from(message.instructions as readonly { programAddress: string }[], (i) => i.programAddress)).toEqual([
      "ComputeBudget111111111111111111111111111111",
      "ComputeBudget111111111111111111111111111111",
      TOKEN_PROGRAM,
      "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
    ]);
    expect(tx.signatures[FEE_PAYER as kit.Address]).toBeNull();
    expect(await kit.verifySignature(buyer.keyPair.publicKey, tx.signatures[buyer.address]!, tx.messageBytes)).toBe(
      true,
    );
  });

  it("compiles and signs the upto channel open byte for byte as the reference does with kit 8", async () => {
    const signer = await kit.createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(1));
    const upto = uptoSvm({
      signer,
      now: () => vectorFile.nowMs,
      randomBytes: (n) => Uint8Array.from({ length: n }, (_, i) => i + 1),
    });
    for (const vector of vectorFile.vectors) {
      const header = encodeBase64Json({
        x402Version: 2,
        resource: { url: "https://a.example/x" },
        accepts: [vector.requirement],
      });
      const [requirement] = parseChallenge({ header }).requirements;
      expect(upto.check(requirement!)).toBeUndefined();
      expect((await upto.createPayload(requirement!, {} as never)).payload).toEqual(vector.payload);
    }
  });
});
