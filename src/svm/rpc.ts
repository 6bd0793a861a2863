/**
 * The two reads the Solana scheme needs (a mint account, a recent blockhash), through a kit RPC
 * the caller gives, or through a tiny JSON-RPC client over `fetch` for a URL (no RPC library in
 * the bundle). The tiny client has the kit RPC's shape, so both go through the same reads.
 */
import { base64ToBytes } from "../protocol";
import { SOLANA_DEVNET, SOLANA_MAINNET, SOLANA_TESTNET } from "./networks";

/** The subset of a `@solana/kit` RPC (`createSolanaRpc(url)`) that x402-pay calls. */
export interface SolanaRpcLike {
  getAccountInfo(
    address: string,
    config: { encoding: "base64"; commitment?: "confirmed" },
  ): { send(): Promise<{ value: { owner: string; data: readonly [string, string] | readonly string[] } | null }> };
  getLatestBlockhash(config?: { commitment?: "confirmed" }): {
    send(): Promise<{ value: { blockhash: string; lastValidBlockHeight: bigint | number } }>;
  };
}

export interface MintAccount {
  owner: string;
  data: Uint8Array;
}

/** Public endpoints used when no RPC is given. */
export const DEFAULT_SOLANA_RPC_URLS: Readonly<Record<string, string>> = {
  [SOLANA_MAINNET]: "https://api.mainnet-beta.solana.com",
  [SOLANA_DEVNET]: "https://api.devnet.solana.com",
  [SOLANA_TESTNET]: "https://api.testnet.solana.com",
};

/** The owner and data of a mint account, or `null` when there is no account. */
export async function getMint(rpc: SolanaRpcLike, address: string): Promise<MintAccount | null> {
  const { value } = await rpc.getAccountInfo(address, { encoding: "base64", commitment: "confirmed" }).send();
  return value ? { owner: String(value.owner), data: base64ToBytes(String(value.data[0])) } : null;
}

/** A recent blockhash and the last block height at which a transaction using it is valid. */
export async function getLatestBlockhash(rpc: SolanaRpcLike): Promise<{ blockhash: string; lastValidBlockHeight: bigint }> {
  const { value } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  return { blockhash: value.blockhash, lastValidBlockHeight: BigInt(value.lastValidBlockHeight) };
}

/** JSON-RPC 2.0 over `fetch`, shaped like a kit RPC: `rpc.method(...params).send()` resolves to `result`. */
export function jsonRpc(url: string): SolanaRpcLike {
  let id = 0;
  const method =
    (name: string) =>
    (...params: unknown[]) => ({
      async send() {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: name, params }),
        });
        if (!response.ok) throw new Error(`Solana RPC ${name} answered HTTP ${response.status}`);
        const body = (await response.json()) as { result?: never; error?: { code: number; message: string } };
        if (body.error) throw new Error(`Solana RPC ${name} failed: ${body.error.message} (${body.error.code})`);
        return body.result!;
      },
    });
  return { getAccountInfo: method("getAccountInfo"), getLatestBlockhash: method("getLatestBlockhash") };
}
