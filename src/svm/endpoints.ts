/**
 * Which RPC serves which Solana network, and how a read through it ends. One RPC per network, so an
 * RPC given for devnet never serves a mainnet requirement: either a map `{ [network]: URL or RPC }`
 * (the public endpoint for a network it leaves out), or a single RPC that serves only the cluster its
 * genesis hash names. Every read is bounded by the caller's signal and a timeout.
 */
import { InvalidConfigError, UnpayableRequirementError, raceAbort } from "../errors";
import { readRpc as readShared, shownUrl } from "../rpc";
import { isCaip2 } from "../protocol";
import { SVM_V1_NETWORKS } from "./networks";
import { DEFAULT_SOLANA_RPC_URLS, RPC_METHODS, getClusterNetwork, jsonRpc, type SolanaRpcLike } from "./rpc";

/** `rpc` as exactSvm takes it: one RPC (kit RPC or URL) for the cluster it serves, or one per network. */
export type SolanaRpcOption = SolanaRpcLike | string | Readonly<Record<string, SolanaRpcLike | string>>;

export interface RpcEndpoint {
  readonly rpc: SolanaRpcLike;
  /** The URL without credentials, query or fragment (where API keys often are); `undefined` for a kit RPC object. */
  readonly url: string | undefined;
  /** How messages name it: "the Solana RPC <url>", or "the RPC given to exactSvm" for a kit RPC object. */
  readonly name: string;
  /** A single RPC given for every network: it serves only the cluster it reports. */
  readonly verify: boolean;
  /** The network it serves, asked once (see `checkCluster`). */
  cluster?: Promise<string> | undefined;
  /** The same, once known. */
  served?: string;
}

export interface ReadOptions {
  /** The caller's: its abort stays the caller's (PaymentAbortedError), never an RPC failure. */
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs: number;
}

const invalid = (problem: string) => new InvalidConfigError(`exactSvm: ${problem}.`, { details: { option: "rpc" } });

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

// A kit RPC is a Proxy that answers any property read with a method, and reports no keys: it is
// recognised by reading the methods, never with `in` or `Object.keys`.
const isKitRpc = (value: unknown): value is SolanaRpcLike =>
  RPC_METHODS.every((method) => typeof (value as Record<string, unknown> | null)?.[method] === "function");

function toEndpoint(value: unknown, verify: boolean, where: string, name: string): RpcEndpoint {
  if (isKitRpc(value)) return { rpc: value, url: undefined, name, verify };
  const url = typeof value === "string" ? parseUrl(value) : undefined;
  // Not echoed: the password is a secret, and fetch refuses such a URL anyway.
  if (url?.username || url?.password) {
    throw invalid(`${where} is a URL with credentials, which fetch refuses; pass createSolanaRpc(url, { headers: { authorization } })`);
  }
  if (url && /^https?:$/.test(url.protocol)) {
    // Named without query or fragment, where API keys often are (errors get logged).
    const shown = shownUrl(url);
    return { rpc: jsonRpc(value as string), url: shown, name: `the Solana RPC ${shown}`, verify };
  }
  const what = typeof value === "string" ? JSON.stringify(value) : value === null ? "null" : typeof value;
  const map = where === "rpc" ? ", or a map { [network]: URL or RPC }" : "";
  throw invalid(`${where} is ${what}; pass an http(s) URL or a @solana/kit RPC (createSolanaRpc(url)), which has ${RPC_METHODS.join(", ")}${map}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  const prototype = value !== null && typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  return prototype === Object.prototype || prototype === null;
}

/**
 * The RPC for each network, from exactSvm's `rpc`: checked here, at construction, so a wrong value
 * fails where it is written. `undefined` for a network that has none.
 */
export function routeRpc(option: unknown): (network: string) => RpcEndpoint | undefined {
  const isMap = option === undefined || (isPlainObject(option) && !RPC_METHODS.some((m) => typeof option[m] === "function"));
  if (!isMap) {
    const single = toEndpoint(option, true, "rpc", "the RPC given to exactSvm");
    return () => single;
  }
  const endpoints = new Map<string, RpcEndpoint>();
  for (const [network, value] of Object.entries({ ...DEFAULT_SOLANA_RPC_URLS, ...(option as object) })) {
    if (!network.startsWith("solana:") || !isCaip2(network)) {
      const v2 = SVM_V1_NETWORKS[network];
      throw invalid(`rpc key ${JSON.stringify(network)} is not a Solana network id; use ${v2 ?? "CAIP-2: solana:<first 32 characters of the genesis hash>"}`);
    }
    endpoints.set(network, toEndpoint(value, false, `rpc["${network}"]`, `the RPC given to exactSvm for ${network}`));
  }
  return (network) => endpoints.get(network);
}

/** One read through an endpoint, bounded by the caller's signal and `timeoutMs` (see `readRpc` in src/rpc). */
export function readRpc<T>(
  endpoint: RpcEndpoint,
  method: string,
  read: (rpc: SolanaRpcLike, abortSignal: AbortSignal) => Promise<T>,
  { signal, timeoutMs }: ReadOptions,
  consequence?: string,
): Promise<T> {
  const hint = "Retry, or give exactSvm another rpc.";
  return readShared(endpoint, method, (abortSignal) => read(endpoint.rpc, abortSignal), { signal, timeoutMs, hint, consequence });
}

/** Why a single RPC cannot serve `network`, once the cluster it serves is known to differ. */
export function clusterMismatch(endpoint: RpcEndpoint, network: string): string | undefined {
  return endpoint.served && endpoint.served !== network
    ? `${endpoint.name} serves ${endpoint.served}, not ${network}: give one RPC per network, exactSvm({ rpc: { "${network}": url } })`
    : undefined;
}

/**
 * Refuses, before anything is signed, a single RPC for a network other than the cluster it serves.
 * Its genesis hash is asked once per RPC and the promise kept (a failure is forgotten, so the next
 * payment asks again). That read is shared between payments, so it runs under the timeout only (one
 * caller's abort must not fail another's payment); each payment waits for it under its own signal.
 */
export async function checkCluster(endpoint: RpcEndpoint, network: string, { signal, timeoutMs }: ReadOptions): Promise<void> {
  endpoint.cluster ??= readRpc(endpoint, "getGenesisHash", getClusterNetwork, { timeoutMs }).then(
    (served) => (endpoint.served = served),
    (error) => {
      endpoint.cluster = undefined;
      throw error;
    },
  );
  await raceAbort(endpoint.cluster, signal);
  const mismatch = clusterMismatch(endpoint, network);
  if (mismatch) throw new UnpayableRequirementError(`Refused before signing: ${mismatch}.`);
}
