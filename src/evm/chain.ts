/**
 * EVM chain reads for Permit2 approvals: through a viem PublicClient or an EIP-1193 provider (anything
 * with `request({ method, params })`), or an RPC URL. One RPC per network: a map `{ [network]: rpc }`,
 * or a single RPC that serves only the chain its `eth_chainId` reports. Every read is bounded by the
 * caller's signal and a timeout; a failure is an RpcError naming the RPC.
 */
import { InvalidConfigError, raceAbort } from "../errors";
import {
  checkServed,
  jsonRpcPost,
  readVia,
  routeRpcs,
  type RpcEndpoint,
  type RpcFamily,
  type RpcReadOptions,
} from "../io";
import type { Hex } from "./signer";

/** What x402-pay calls on an EVM RPC: viem's PublicClient and WalletClient and EIP-1193 providers all have it. */
export interface EvmRequester {
  request(args: { method: string; params?: readonly unknown[] }): Promise<unknown>;
}

/** One RPC (URL, PublicClient or EIP-1193 provider) for the chain it serves, or one per CAIP-2 network. */
export type EvmRpcOption = EvmRequester | string | Readonly<Record<string, EvmRequester | string>>;

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
  /** A block's number and timestamp (seconds): the latest, or the one numbered. */
  block(which: bigint | "latest"): Promise<{ readonly number: bigint; readonly timestamp: bigint }>;
  /** The hashes of the transactions that logged `topics` (null: any) at `address` in blocks `from` to `to`. */
  logs(filter: { address: Hex; topics: readonly (Hex | null)[]; from: bigint; to: bigint }): Promise<Hex[]>;
  /** The account's next nonce, counting its pending transactions. */
  nonce(address: Hex): Promise<number>;
  /** EIP-1559 fees: the tip the node suggests and a cap above the latest base fee. */
  fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }>;
}

/** EVM RPCs for the router: one given to `owner` (`permit2Allowance`, `evmSettlement`), asked `eth_chainId`. */
function evmFamily(owner: string): RpcFamily<EvmRequester> {
  return {
    owner,
    namespace: "eip155:",
    methods: ["request"],
    overHttp(url) {
      let id = 0;
      return { request: ({ method, params = [] }) => jsonRpcPost(url, { id: ++id, method, params }) };
    },
    identify: {
      method: "eth_chainId",
      async read(requester, abortSignal) {
        const id = quantity(await raceAbort(requester.request({ method: "eth_chainId" }), abortSignal));
        if (id === undefined) throw new TypeError("malformed answer");
        return `eip155:${id}`;
      },
    },
    label: "EVM",
    objectName: (network) => (network === undefined ? `the RPC given to ${owner}` : `the RPC given for ${network}`),
    entry: (network) => network,
    pass: () => "pass an http(s) URL, a viem PublicClient or an EIP-1193 provider",
    credentials: "pass a viem PublicClient",
    badKey: () => "an EVM network id such as eip155:8453",
  };
}

/**
 * The reads for each network from `rpc`, checked at construction; `undefined` for a network without
 * one. `owner` names what was given the RPC, in messages (`permit2Allowance`, `exactEvm`).
 */
export function routeChainReads(
  option: unknown,
  timeoutMs: number,
  owner = "permit2Allowance",
  consequence?: string,
): (network: string, signal?: AbortSignal) => ChainReads | undefined {
  if (option === undefined || option === null) {
    const problem = "rpc is missing; pass an http(s) URL, a viem PublicClient, or a map { [network]: rpc }";
    throw new InvalidConfigError(`${owner}: ${problem}.`, { details: { option: "rpc" } });
  }
  // The most setTimeout takes: a longer delay (or 0, or none) would end every read at once.
  if (!(Number.isInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= 2 ** 31 - 1)) {
    const problem = `rpcTimeoutMs must be a whole number of milliseconds from 1 to 2^31 - 1, not ${timeoutMs}`;
    throw new InvalidConfigError(`${owner}: ${problem}.`, { details: { option: "rpcTimeoutMs" } });
  }
  const route = routeRpcs(evmFamily(owner), option);
  return (network, signal) => {
    const endpoint = route(network);
    return endpoint && chainReads(endpoint, network, { signal, timeoutMs, consequence });
  };
}

type Parse<T> = (result: unknown) => T | undefined;

/** The reads through `endpoint` for `network`: a single RPC is checked to serve it first. */
function chainReads(endpoint: RpcEndpoint<EvmRequester>, network: string, options: RpcReadOptions): ChainReads {
  const read = async <T>(method: string, params: readonly unknown[], parse: Parse<T>, label = method): Promise<T> => {
    if (endpoint.verify) await checkServed(endpoint, network, { signal: options.signal, timeoutMs: options.timeoutMs });
    const ask = async (requester: EvmRequester, abortSignal: AbortSignal) => {
      const parsed = parse(await raceAbort(requester.request({ method, params }), abortSignal));
      if (parsed === undefined) throw new TypeError("malformed answer");
      return parsed;
    };
    return readVia(endpoint, label, ask, options);
  };
  const latest = ["latest", false];
  return {
    call: (to, data, what) => read("eth_call", [{ to, data }, "latest"], hexData, `eth_call (${what})`),
    receipt: (hash) => read("eth_getTransactionReceipt", [hash], (r) => (r === null ? null : parseReceipt(r))),
    time: () => read("eth_getBlockByNumber", latest, blockField("timestamp"), "eth_getBlockByNumber (timestamp)"),
    nonce: (address) => read("eth_getTransactionCount", [address, "pending"], (r) => count(quantity(r))),
    block: (which) =>
      read(
        "eth_getBlockByNumber",
        [which === "latest" ? which : `0x${which.toString(16)}`, false],
        (block) => {
          const [number, timestamp] = [blockField("number")(block), blockField("timestamp")(block)];
          return number === undefined || timestamp === undefined ? undefined : { number, timestamp };
        },
        "eth_getBlockByNumber (number, timestamp)",
      ),
    logs: ({ address, topics, from, to }) =>
      read(
        "eth_getLogs",
        [{ address, topics, fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` }],
        (logs) =>
          Array.isArray(logs) && logs.every((log) => hexData(Object(log).transactionHash)?.length === 66)
            ? logs.map((log) => Object(log).transactionHash as Hex)
            : undefined,
      ),
    async fees() {
      const tip = await read("eth_maxPriorityFeePerGas", [], quantity);
      const base = await read("eth_getBlockByNumber", latest, blockField("baseFeePerGas"));
      // As viem estimates: 20% over the latest base fee, plus the tip.
      return { maxFeePerGas: (base * 12n) / 10n + tip, maxPriorityFeePerGas: tip };
    },
  };
}

/** A JSON-RPC quantity (`0x1a`) as a bigint, else `undefined`. */
const quantity = (value: unknown) =>
  typeof value === "string" && /^0x[0-9a-f]{1,64}$/i.test(value) ? BigInt(value) : undefined;
const count = (value: bigint | undefined) => (value === undefined ? undefined : Number(value));
/** Bytes as hex (`0x`, then whole bytes), else `undefined`. */
const hexData = (value: unknown) =>
  typeof value === "string" && /^0x([0-9a-f]{2})*$/i.test(value) ? (value as Hex) : undefined;
/** A quantity field of a block. */
const blockField = (field: string) => (block: unknown) => quantity((block as Record<string, unknown> | null)?.[field]);

/** A receipt's status and logs, else `undefined` (malformed). */
function parseReceipt(value: unknown): EvmReceipt | undefined {
  const { status, logs } = Object(value) as { status?: unknown; logs?: unknown };
  const isLog = (log: unknown) => {
    const { address, topics, data } = Object(log) as Record<string, unknown>;
    const strings = Array.isArray(topics) && topics.every((t) => typeof t === "string");
    return typeof address === "string" && typeof data === "string" && strings;
  };
  return typeof status === "string" && Array.isArray(logs) && logs.every(isLog) ? { status, logs } : undefined;
}
