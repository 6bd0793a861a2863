/**
 * EVM chain reads for Permit2 approvals: through a viem PublicClient or an EIP-1193 provider (anything
 * with `request({ method, params })`), or an RPC URL. One RPC per network: a map `{ [network]: rpc }`,
 * or a single RPC that serves only the chain its `eth_chainId` reports. Every read is bounded by the
 * caller's signal and a timeout; a failure is an RpcError naming the RPC.
 */
import { InvalidConfigError, UnpayableRequirementError, raceAbort } from "../errors";
import { isCaip2 } from "../protocol";
import { jsonRpcPost, readRpc, shownUrl, type RpcName } from "../rpc";
import type { Hex } from "./signer";

/** What x402-pay calls on an EVM RPC: viem's PublicClient and WalletClient and EIP-1193 providers all have it. */
export interface EvmRequester {
  request(args: { method: string; params?: readonly unknown[] }): Promise<unknown>;
}

/** One RPC (URL, PublicClient or EIP-1193 provider) for the chain it serves, or one per CAIP-2 network. */
export type EvmRpcOption = EvmRequester | string | Readonly<Record<string, EvmRequester | string>>;

interface Endpoint extends RpcName {
  readonly requester: EvmRequester;
  /** A single RPC given for every network: it serves only the chain it reports. */
  readonly verify: boolean;
  chain?: Promise<string> | undefined;
}

/** A mined transaction's receipt, as far as the settlement check reads it. */
export interface EvmReceipt {
  /** `0x1` success, `0x0` reverted. */
  readonly status: string;
  readonly logs: readonly { readonly address: string; readonly topics: readonly string[]; readonly data: string }[];
}

export interface ChainReads {
  /** `eth_call` to `to` with `data`, at the latest block; the returned bytes. */
  call(to: Hex, data: Hex, method: string): Promise<Hex>;
  /** The receipt of a transaction, `null` while it is not mined (or unknown to the node). */
  receipt(hash: Hex): Promise<EvmReceipt | null>;
  /** The latest block's timestamp, in seconds: the chain's own clock. */
  time(): Promise<bigint>;
  /** The account's next nonce, counting its pending transactions. */
  nonce(address: Hex): Promise<number>;
  /** EIP-1559 fees: the tip the node suggests and a cap above the latest base fee. */
  fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }>;
}

const invalid = (owner: string, problem: string) => new InvalidConfigError(`${owner}: ${problem}.`, { details: { option: "rpc" } });
const isRequester = (value: unknown): value is EvmRequester => typeof (value as EvmRequester | null)?.request === "function";

function toEndpoint(value: unknown, verify: boolean, where: string, owner: string): Endpoint {
  if (isRequester(value)) return { requester: value, url: undefined, name: verify ? `the RPC given to ${owner}` : `the RPC given for ${where}`, verify };
  let url: URL | undefined;
  try {
    url = typeof value === "string" ? new URL(value) : undefined;
  } catch {
    // reported below
  }
  if (url?.username || url?.password) throw invalid(owner, `${where} is a URL with credentials, which fetch refuses; pass a viem PublicClient`);
  if (!url || !/^https?:$/.test(url.protocol)) {
    throw invalid(owner, `${where} is ${typeof value === "string" ? JSON.stringify(value) : typeof value}; pass an http(s) URL, a viem PublicClient or an EIP-1193 provider`);
  }
  let id = 0;
  const shown = shownUrl(url);
  const target = value as string;
  return { requester: { request: ({ method, params = [] }) => jsonRpcPost(target, ++id, method, params) }, url: shown, name: `the EVM RPC ${shown}`, verify };
}

/**
 * The reads for each network from `rpc`, checked at construction; `undefined` for a network without one.
 * `owner` names what was given the RPC, in messages (`permit2Allowance`, `exactEvm`).
 */
export function routeChainReads(
  option: unknown,
  timeoutMs: number,
  owner = "permit2Allowance",
  consequence?: string,
): (network: string, signal?: AbortSignal) => ChainReads | undefined {
  const route = new Map<string, Endpoint>();
  let single: Endpoint | undefined;
  if (option === undefined || option === null) throw invalid(owner, "rpc is missing; pass an http(s) URL, a viem PublicClient, or a map { [network]: rpc }");
  if (typeof option !== "object" || isRequester(option)) single = toEndpoint(option, true, "rpc", owner);
  else {
    for (const [network, value] of Object.entries(option)) {
      if (!network.startsWith("eip155:") || !isCaip2(network)) throw invalid(owner, `rpc key ${JSON.stringify(network)} is not an EVM network id such as eip155:8453`);
      route.set(network, toEndpoint(value, false, network, owner));
    }
  }

  return (network, signal) => {
    const endpoint = single ?? route.get(network);
    if (!endpoint) return undefined;
    const hint = `Retry, or give ${owner} another rpc.`;
    const read = async <T>(method: string, params: readonly unknown[], parse: (result: unknown) => T | undefined, label = method): Promise<T> => {
      if (endpoint.verify) await servedChain(endpoint, network, timeoutMs, signal, owner);
      return readRpc(endpoint, label, async (abortSignal) => {
        const result = await raceAbort(endpoint.requester.request({ method, params }), abortSignal);
        const parsed = parse(result);
        if (parsed === undefined) throw new TypeError("malformed answer");
        return parsed;
      }, { signal, timeoutMs, hint, consequence });
    };
    return {
      call: (to, data, what) => read("eth_call", [{ to, data }, "latest"], (r) => (typeof r === "string" && /^0x([0-9a-f]{2})*$/i.test(r) ? (r as Hex) : undefined), `eth_call (${what})`),
      receipt: (hash) => read("eth_getTransactionReceipt", [hash], (r) => (r === null ? null : parseReceipt(r))),
      time: () => read("eth_getBlockByNumber", ["latest", false], (r) => quantity((r as { timestamp?: unknown } | null)?.timestamp), "eth_getBlockByNumber (timestamp)"),
      nonce: (address) => read("eth_getTransactionCount", [address, "pending"], (r) => (quantity(r) === undefined ? undefined : Number(quantity(r)))),
      async fees() {
        const tip = await read("eth_maxPriorityFeePerGas", [], quantity);
        const block = await read("eth_getBlockByNumber", ["latest", false], (r) => quantity((r as { baseFeePerGas?: unknown } | null)?.baseFeePerGas));
        // As viem estimates: 20% over the latest base fee, plus the tip.
        return { maxFeePerGas: (block * 12n) / 10n + tip, maxPriorityFeePerGas: tip };
      },
    };
  };
}

/** A JSON-RPC quantity (`0x1a`) as a bigint, else `undefined`. */
const quantity = (value: unknown) => (typeof value === "string" && /^0x[0-9a-f]{1,64}$/i.test(value) ? BigInt(value) : undefined);

/** A receipt's status and logs, else `undefined` (malformed). */
function parseReceipt(value: unknown): EvmReceipt | undefined {
  const { status, logs } = Object(value) as { status?: unknown; logs?: unknown };
  const isLog = (log: unknown) => {
    const { address, topics, data } = Object(log) as Record<string, unknown>;
    return typeof address === "string" && typeof data === "string" && Array.isArray(topics) && topics.every((t) => typeof t === "string");
  };
  return typeof status === "string" && Array.isArray(logs) && logs.every(isLog) ? { status, logs } : undefined;
}

/** Refuses a single RPC for a network other than the chain it serves (asked once per RPC; a failure is asked again). */
async function servedChain(endpoint: Endpoint, network: string, timeoutMs: number, signal: AbortSignal | undefined, owner: string) {
  endpoint.chain ??= readRpc(
    endpoint,
    "eth_chainId",
    async (abortSignal) => {
      const id = quantity(await raceAbort(endpoint.requester.request({ method: "eth_chainId" }), abortSignal));
      if (id === undefined) throw new TypeError("malformed answer");
      return `eip155:${id}`;
    },
    { timeoutMs, hint: `Retry, or give ${owner} another rpc.` },
  ).catch((error) => {
    endpoint.chain = undefined;
    throw error;
  });
  const served = await raceAbort(endpoint.chain, signal);
  if (served !== network) {
    throw new UnpayableRequirementError(
      `Refused: ${endpoint.name} serves ${served}, not ${network}: give one RPC per network, ${owner}({ rpc: { "${network}": url } }).`,
    );
  }
}
