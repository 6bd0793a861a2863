/**
 * Did a Solana payment move money? The transaction the server named: its signature status, and, when
 * the signed payment is known, that the landed transaction carries the payer's own signature (a server
 * cannot pass off another transaction). Without a landed transaction, the signed transaction's
 * blockhash: once it has expired, the payment can no longer land.
 */
import type { SettlementQuery, SettlementStatus } from "../contracts";
import { base58ToBytes, base64ToBytes, bytesToBase58 } from "../protocol";
import { readVia } from "../io";
import type { SolanaEndpoint } from "./endpoints";

/** What the check reads beyond the payment's reads: every kit RPC has them; the built-in client too. */
interface SettlementReads {
  getSignatureStatuses(
    signatures: readonly string[],
    config: { searchTransactionHistory: boolean },
  ): { send(options: { abortSignal: AbortSignal }): Promise<{ value: readonly (SignatureStatus | null)[] }> };
  getTransaction(
    signature: string,
    config: { encoding: "json"; maxSupportedTransactionVersion: 0; commitment: "confirmed" },
  ): {
    send(options: { abortSignal: AbortSignal }): Promise<{ transaction: { signatures: readonly string[] } } | null>;
  };
  isBlockhashValid(
    blockhash: string,
    config: { commitment: "confirmed" },
  ): { send(options: { abortSignal: AbortSignal }): Promise<{ value: boolean }> };
}

interface SignatureStatus {
  readonly err: unknown;
  readonly confirmationStatus?: string | null;
}

/** A 64-byte signature in base58. */
const isSignature = (value: unknown): value is string =>
  typeof value === "string" && base58ToBytes(value)?.length === 64;

/**
 * Looks Solana payments up through the scheme's own RPC: given to it as `exactSvm({ signer, settlement: svmSettlement()
 * })`.
 */
export interface SvmSettlement {
  check(
    endpoint: SolanaEndpoint,
    query: SettlementQuery,
    options: { signal?: AbortSignal | undefined; timeoutMs: number },
  ): Promise<SettlementStatus>;
}

/**
 * What `exactSvm` needs to answer `checkSettlement(client, …)` through its RPC. Kept apart from the scheme,
 * so a bundle without it carries none of it.
 */
export const svmSettlement = (): SvmSettlement => ({ check: checkSvmSettlement });

async function checkSvmSettlement(
  endpoint: SolanaEndpoint,
  query: SettlementQuery,
  options: { signal?: AbortSignal | undefined; timeoutMs: number },
): Promise<SettlementStatus> {
  const read = <T>(method: string, run: (rpc: SettlementReads, abortSignal: AbortSignal) => Promise<T>) =>
    readVia(endpoint, method, (rpc, abortSignal) => run(rpc as unknown as SettlementReads, abortSignal), {
      ...options,
      consequence: "whether the payment settled is still unknown",
    });
  const signature = isSignature(query.transaction) ? query.transaction : undefined;
  const signed = signedTransaction(query.payload, query.payer);
  let seen = "no transaction was named";
  if (signature) {
    const { value } = await read("getSignatureStatuses", (rpc, abortSignal) =>
      rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send({ abortSignal }),
    );
    const status = value?.[0];
    if (status && status.err !== null && status.err !== undefined) {
      return {
        state: "failed",
        transaction: signature,
        reason: `transaction ${signature} failed on chain (${JSON.stringify(status.err)})`,
      };
    }
    const landed = status && (status.confirmationStatus === "confirmed" || status.confirmationStatus === "finalized");
    seen = !status
      ? `transaction ${signature} has not landed`
      : landed
        ? `transaction ${signature} landed`
        : `transaction ${signature} is processed, not yet confirmed`;
    if (landed) {
      const ours =
        !signed ||
        (await read("getTransaction", async (rpc, abortSignal) => {
          const found = await rpc
            .getTransaction(signature, { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" })
            .send({ abortSignal });
          return !!found?.transaction?.signatures?.includes(signed.signature);
        }));
      if (ours) return { state: "settled", transaction: signature, amount: query.amount, reason: seen };
      seen = `transaction ${signature} landed but is not this payment (it lacks the payer's signature)`;
    }
  }
  if (signed) {
    const { value: valid } = await read("isBlockhashValid", (rpc, abortSignal) =>
      rpc.isBlockhashValid(signed.blockhash, { commitment: "confirmed" }).send({ abortSignal }),
    );
    // Expired: the signed transaction can no longer land; if it had, the server would have named it.
    if (!valid && signature)
      return {
        state: "failed",
        transaction: signature,
        reason: `${seen}, and its blockhash has expired: it can no longer land`,
      };
    if (!valid)
      return {
        state: "pending",
        transaction: undefined,
        reason:
          `${seen}; its blockhash has expired, so it landed already or never will: ask the server for the ` +
          `transaction`,
      };
    return {
      state: "pending",
      transaction: signature,
      reason: `${seen}; it can still land until its blockhash expires`,
    };
  }
  return { state: "pending", transaction: signature, reason: seen };
}

/**
 * The payer's signature and the blockhash of the transaction a payload carries (base64 wire bytes), else `undefined`.
 */
function signedTransaction(payload: Readonly<Record<string, unknown>> | undefined, payer: string) {
  const wire = Object(Object(payload).payload).transaction;
  if (typeof wire !== "string") return undefined;
  try {
    const bytes = base64ToBytes(wire);
    let at = 0;
    const shortVec = () => {
      let value = 0;
      for (let shift = 0; ; shift += 7) {
        const byte = bytes[at++]!;
        value |= (byte & 0x7f) << shift;
        if (!(byte & 0x80)) return value;
      }
    };
    const signatures = shortVec();
    const signatureAt = at;
    at += signatures * 64;
    if (bytes[at]! & 0x80) at++; // a versioned message's prefix
    at += 3; // the header
    const keys = shortVec();
    let index = -1;
    for (let i = 0; i < keys; i++)
      if (bytesToBase58(bytes.subarray(at + i * 32, at + i * 32 + 32)) === payer) index = i;
    at += keys * 32;
    if (index < 0 || index >= signatures || at + 32 > bytes.length) return undefined;
    const signature = bytesToBase58(bytes.subarray(signatureAt + index * 64, signatureAt + index * 64 + 64));
    return { signature, blockhash: bytesToBase58(bytes.subarray(at, at + 32)) };
  } catch {
    return undefined;
  }
}
