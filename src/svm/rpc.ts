/**
 * The two reads the Solana scheme needs (a mint account, a recent blockhash), through a kit RPC
 * the caller gives, or through a tiny JSON-RPC client over `fetch` for a URL (no RPC library in
 * the bundle).
 */
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

export interface SolanaReader {
  getMint(address: string): Promise<MintAccount | null>;
  getLatestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: bigint }>;
}

/** Public endpoints used when no RPC is given. */
export const DEFAULT_SOLANA_RPC_URLS: Readonly<Record<string, string>> = {
  [SOLANA_MAINNET]: "https://api.mainnet-beta.solana.com",
  [SOLANA_DEVNET]: "https://api.devnet.solana.com",
  [SOLANA_TESTNET]: "https://api.testnet.solana.com",
};

export function toSolanaReader(rpc: SolanaRpcLike | string): SolanaReader {
  if (typeof rpc === "string") return jsonRpcReader(rpc);
  return {
    async getMint(address) {
      const { value } = await rpc.getAccountInfo(address, { encoding: "base64", commitment: "confirmed" }).send();
      return value ? { owner: String(value.owner), data: fromBase64(String(value.data[0])) } : null;
    },
    async getLatestBlockhash() {
      const { value } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
      return { blockhash: value.blockhash, lastValidBlockHeight: BigInt(value.lastValidBlockHeight) };
    },
  };
}

function jsonRpcReader(url: string): SolanaReader {
  let id = 0;
  async function call<T>(method: string, params: unknown[]): Promise<T> {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
    });
    if (!response.ok) throw new Error(`Solana RPC ${method} answered HTTP ${response.status}`);
    const body = (await response.json()) as { result?: T; error?: { code: number; message: string } };
    if (body.error) throw new Error(`Solana RPC ${method} failed: ${body.error.message} (${body.error.code})`);
    return body.result as T;
  }
  return {
    async getMint(address) {
      const { value } = await call<{ value: { owner: string; data: [string, string] } | null }>("getAccountInfo", [
        address,
        { encoding: "base64", commitment: "confirmed" },
      ]);
      return value ? { owner: value.owner, data: fromBase64(value.data[0]) } : null;
    },
    async getLatestBlockhash() {
      const { value } = await call<{ value: { blockhash: string; lastValidBlockHeight: number } }>("getLatestBlockhash", [
        { commitment: "confirmed" },
      ]);
      return { blockhash: value.blockhash, lastValidBlockHeight: BigInt(value.lastValidBlockHeight) };
    },
  };
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
