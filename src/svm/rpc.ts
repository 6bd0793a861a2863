/**
 * The three reads the Solana scheme needs (a mint account, a recent blockhash, the cluster's genesis
 * hash), through a kit RPC the caller gives, or through a tiny JSON-RPC client over `fetch` for a
 * URL (no RPC library in the bundle). The tiny client has the kit RPC's shape, `send({ abortSignal })`
 * included, so both go through the same reads. Answers are checked here: a malformed one throws.
 */
import { base64ToBytes } from "../protocol";
import { jsonRpcPost } from "../io";
import { isSolanaAddress } from "./address";
import { SOLANA_DEVNET, SOLANA_MAINNET, SOLANA_TESTNET } from "./networks";

/** A kit `PendingRpcRequest`: nothing is sent until `send`, which takes kit's abort option. */
export interface PendingRpcRequest<T> {
  send(options?: { abortSignal?: AbortSignal }): Promise<T>;
}

/** The subset of a `@solana/kit` RPC (`createSolanaRpc(url)`) that x402-pay calls. */
export interface SolanaRpcLike {
  getAccountInfo(
    address: string,
    config: { encoding: "base64"; commitment?: "confirmed" },
  ): PendingRpcRequest<{ value: { owner: string; data: readonly [string, string] | readonly string[] } | null }>;
  getLatestBlockhash(config?: { commitment?: "confirmed" }): PendingRpcRequest<{
    value: { blockhash: string; lastValidBlockHeight: bigint | number };
  }>;
  getGenesisHash(): PendingRpcRequest<string>;
}

/** The methods a value needs to be taken for a kit RPC. */
export const RPC_METHODS = ["getAccountInfo", "getLatestBlockhash", "getGenesisHash"] as const;

export interface MintAccount {
  owner: string;
  data: Uint8Array;
}

/** Public endpoints used for a network the caller gives no RPC for. */
export const DEFAULT_SOLANA_RPC_URLS: Readonly<Record<string, string>> = {
  [SOLANA_MAINNET]: "https://api.mainnet-beta.solana.com",
  [SOLANA_DEVNET]: "https://api.devnet.solana.com",
  [SOLANA_TESTNET]: "https://api.testnet.solana.com",
};

/**
 * Runs `read` on an answer. `undefined`, or anything thrown (a missing field), means the answer is
 * not what the method returns.
 */
function parseAnswer<T>(read: () => T | undefined): T {
  let parsed: T | undefined;
  try {
    parsed = read();
  } catch {
    // reported below
  }
  if (parsed === undefined) throw new TypeError("malformed answer");
  return parsed;
}

/** The owner and data of a mint account, or `null` when there is no account. */
export async function getMint(
  rpc: SolanaRpcLike,
  address: string,
  abortSignal: AbortSignal,
): Promise<MintAccount | null> {
  const answer = await rpc
    .getAccountInfo(address, { encoding: "base64", commitment: "confirmed" })
    .send({ abortSignal });
  return parseAnswer(() => {
    const { value } = answer;
    if (value === null) return null;
    const { owner, data } = value;
    return typeof owner === "string" && typeof data[0] === "string" && data[1] === "base64"
      ? { owner, data: base64ToBytes(data[0]) }
      : undefined;
  });
}

/** A recent blockhash and the last block height at which a transaction using it is valid. */
export async function getLatestBlockhash(
  rpc: SolanaRpcLike,
  abortSignal: AbortSignal,
): Promise<{ blockhash: string; lastValidBlockHeight: bigint }> {
  const answer = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal });
  return parseAnswer(() => {
    const { blockhash, lastValidBlockHeight } = answer.value;
    // A blockhash is 32 bytes in base58, like an address; the height a u64 (a number, or kit's bigint).
    const valid = isSolanaAddress(blockhash) && /^\d+$/.test(String(lastValidBlockHeight));
    return valid ? { blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) } : undefined;
  });
}

/** The cluster's latest finalized slot, through `getSlot` (a kit RPC has it; `SolanaRpcLike` does not require it). */
export async function getFinalizedSlot(rpc: SolanaRpcLike, abortSignal: AbortSignal): Promise<bigint> {
  const { getSlot } = rpc as { getSlot?: (config: { commitment: "finalized" }) => PendingRpcRequest<unknown> };
  if (typeof getSlot !== "function") throw new TypeError("the RPC has no getSlot method");
  const answer = await getSlot.call(rpc, { commitment: "finalized" }).send({ abortSignal });
  return parseAnswer(() => {
    const slot = /^\d{1,20}$/.test(String(answer)) ? BigInt(String(answer)) : undefined;
    return slot !== undefined && slot < 1n << 64n ? slot : undefined;
  });
}

/** The CAIP-2 id of the cluster an RPC serves: `solana:` and the first 32 characters of its genesis hash. */
export async function getClusterNetwork(rpc: SolanaRpcLike, abortSignal: AbortSignal): Promise<string> {
  const hash = await rpc.getGenesisHash().send({ abortSignal });
  return parseAnswer(() => (isSolanaAddress(hash) ? `solana:${hash.slice(0, 32)}` : undefined));
}

/**
 * JSON-RPC 2.0 over `fetch`, shaped like a kit RPC: `rpc.method(...params).send({ abortSignal })` resolves to `result`.
 */
export function jsonRpc(url: string): SolanaRpcLike {
  let id = 0;
  const method =
    (name: string) =>
    (...params: unknown[]) => ({
      send: ({ abortSignal }: { abortSignal?: AbortSignal } = {}) =>
        jsonRpcPost(url, { id: ++id, method: name, params }, abortSignal) as Promise<never>,
    });
  const names = [...RPC_METHODS, "getSlot", "getSignatureStatuses", "getTransaction", "isBlockhashValid"];
  return Object.fromEntries(names.map((name) => [name, method(name)])) as unknown as SolanaRpcLike;
}
