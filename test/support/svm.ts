/** Fixtures for the Solana unit tests: fixed addresses, a fixed buyer, a requirement, a stand-in RPC. */
import {
  createKeyPairSignerFromPrivateKeyBytes,
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
} from "@solana/kit";
import { TOKEN_PROGRAM } from "../../src/svm";

export const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
export const USDC_DEVNET = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
export const FEE_PAYER = "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd";
export const PAY_TO = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
export const BLOCKHASH = "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N";

/** A key pair signer from a fixed private key (Ed25519 signatures are deterministic). */
export const buyer = await createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(7));

/** A v2 `exact` requirement for 1000 units of devnet USDC, with the facilitator's fee payer. */
export const svmRequirement = (extra: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}) => ({
  scheme: "exact",
  network: DEVNET,
  amount: "1000",
  asset: USDC_DEVNET,
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { feePayer: FEE_PAYER, ...extra },
  ...overrides,
});

/** A stand-in for a kit RPC: a mint account (owner, 82 bytes, decimals at 44) and a blockhash. */
export function fakeRpc(owner = TOKEN_PROGRAM, decimals = 6, exists = true) {
  const calls: string[] = [];
  const data = new Uint8Array(82);
  data[44] = decimals;
  data[45] = 1;
  return {
    calls,
    getAccountInfo: (addr: string) => ({
      send: async () => {
        calls.push(`getAccountInfo ${addr}`);
        return { value: exists ? { owner, data: [btoa(String.fromCharCode(...data)), "base64"] as const } : null };
      },
    }),
    getLatestBlockhash: () => ({
      send: async () => {
        calls.push("getLatestBlockhash");
        return { value: { blockhash: BLOCKHASH, lastValidBlockHeight: 100n } };
      },
    }),
  };
}

/** Decodes a base64 wire transaction with kit: the transaction, its compiled and its decompiled message. */
export function decodeTransaction(transaction: string) {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
  const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  return { tx, compiled, message: decompileTransactionMessage(compiled) };
}
