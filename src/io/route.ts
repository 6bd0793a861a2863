/**
 * Which RPC serves which network, for any chain family (EVM reads, Solana): one RPC per network, so
 * an RPC given for a test network never serves a main network. Either a map `{ [network]: URL or
 * RPC }` (with the family's public endpoints for networks it leaves out), or a single RPC that serves
 * only the network it reports (asked once: an EVM RPC's `eth_chainId`, a Solana RPC's genesis hash).
 * Every read through an RPC is bounded by the caller's signal and a timeout (`readRpc`).
 */
import { InvalidConfigError, UnpayableRequirementError, raceAbort } from "../errors";
import { isCaip2 } from "../protocol";
import { readRpc, shownUrl, type RpcName } from "./rpc";

/**
 * A chain family's RPCs: what its RPC objects are, how a URL is called, how an RPC tells its network,
 * and how messages name them.
 */
export interface RpcFamily<Rpc> {
  /** What was given the RPC, named in messages and hints: `permit2Allowance`, `exactSvm`. */
  readonly owner: string;
  /** The family's CAIP-2 namespace, colon included: `eip155:`, `solana:`. */
  readonly namespace: string;
  /** Public endpoints, by network, for networks a map leaves out. */
  readonly defaults?: Readonly<Record<string, string>> | undefined;
  /**
   * The methods of the family's RPC objects: a value with all of them is one (a kit RPC is a Proxy
   * that reports no keys, so they are read, never listed); a plain object with none of them is a map.
   */
  readonly methods: readonly string[];
  /** JSON-RPC over fetch to an http(s) URL, shaped as the family's RPC objects. */
  overHttp(url: string): Rpc;
  /** The method that tells which network an RPC serves, and that network (CAIP-2) read through it. */
  readonly identify: { readonly method: string; read(rpc: Rpc, abortSignal: AbortSignal): Promise<string> };
  /** How messages name things: a URL is `the <label> RPC <url>`. */
  readonly label: string;
  /** An RPC object given for every network (no `network`), or for one network of a map. */
  objectName(network?: string): string;
  /** A map's entry for `network`, as a message names it. */
  entry(network: string): string;
  /** What to pass instead of a value refused (`single`: the whole option, where a map is also taken). */
  pass(single: boolean): string;
  /** What to pass instead of a URL with credentials. */
  readonly credentials: string;
  /** Why `key`, a map key, is not one of the family's networks: "an EVM network id such as eip155:8453". */
  badKey(key: string): string;
}

/** One RPC, as the router gives it for a network. */
export interface RpcEndpoint<Rpc> extends RpcName {
  readonly rpc: Rpc;
  readonly family: RpcFamily<Rpc>;
  /** A single RPC given for every network: it serves only the network it reports. */
  readonly verify: boolean;
  /** The network it serves, asked once (a failure is forgotten, so the next payment asks again)... */
  serving?: Promise<string> | undefined;
  /** ...and once known. */
  served?: string | undefined;
}

export interface RpcReadOptions {
  /** The caller's: its abort stays the caller's (PaymentAbortedError), never an RPC failure. */
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs: number;
  /** What a failure leaves undone, said after it. Default: `nothing was signed`. */
  readonly consequence?: string | undefined;
}

const invalid = (owner: string, problem: string) =>
  new InvalidConfigError(`${owner}: ${problem}.`, { details: { option: "rpc" } });

const hasMethod = (value: unknown, method: string) =>
  typeof (value as Record<string, unknown> | null)?.[method] === "function";

/** An RPC object of the family's library (not a URL, not a map). */
const isRpc = <Rpc>(family: RpcFamily<Rpc>, value: unknown): value is Rpc =>
  family.methods.every((method) => hasMethod(value, method));

/** A map by network: a plain object with none of the methods of an RPC. */
function isMap(family: RpcFamily<unknown>, value: unknown): value is Record<string, unknown> {
  const prototype = value !== null && typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  return (prototype === Object.prototype || prototype === null) && !family.methods.some((m) => hasMethod(value, m));
}

/** `value` as an endpoint (an RPC object, or an http(s) URL), or INVALID_CONFIG naming `where` it was given. */
function toEndpoint<Rpc>(family: RpcFamily<Rpc>, value: unknown, network?: string): RpcEndpoint<Rpc> {
  const { owner } = family;
  const verify = network === undefined;
  if (isRpc(family, value)) return { rpc: value, family, url: undefined, name: family.objectName(network), verify };
  const where = verify ? "rpc" : family.entry(network);
  let url: URL | undefined;
  try {
    url = typeof value === "string" ? new URL(value) : undefined;
  } catch {
    // reported below
  }
  // Not echoed: the password is a secret, and fetch refuses such a URL anyway.
  if (url?.username || url?.password) {
    throw invalid(owner, `${where} is a URL with credentials, which fetch refuses; ${family.credentials}`);
  }
  if (!url || !/^https?:$/.test(url.protocol)) {
    const what = typeof value === "string" ? JSON.stringify(value) : value === null ? "null" : typeof value;
    throw invalid(owner, `${where} is ${what}; ${family.pass(verify)}`);
  }
  // Named without query or fragment, where API keys often are (errors get logged).
  const shown = shownUrl(url);
  const name = `the ${family.label} RPC ${shown}`;
  return { rpc: family.overHttp(value as string), family, url: shown, name, verify };
}

/**
 * The RPC for each network, from `option` (one RPC, or a map by network), checked here, at
 * construction, so a wrong value fails where it is written. `undefined` for a network that has none.
 */
export function routeRpcs<Rpc>(
  family: RpcFamily<Rpc>,
  option: unknown,
): (network: string) => RpcEndpoint<Rpc> | undefined {
  if (!(option === undefined && family.defaults) && !isMap(family, option)) {
    const single = toEndpoint(family, option);
    return () => single;
  }
  const endpoints = new Map<string, RpcEndpoint<Rpc>>();
  for (const [network, value] of Object.entries({ ...family.defaults, ...(option as object) })) {
    if (!network.startsWith(family.namespace) || !isCaip2(network)) {
      throw invalid(family.owner, `rpc key ${JSON.stringify(network)} is not ${family.badKey(network)}`);
    }
    endpoints.set(network, toEndpoint(family, value, network));
  }
  return (network) => endpoints.get(network);
}

/** One read through an endpoint's RPC, bounded by the caller's signal and `timeoutMs` (see `readRpc`). */
export function readVia<Rpc, T>(
  endpoint: RpcEndpoint<Rpc>,
  method: string,
  read: (rpc: Rpc, abortSignal: AbortSignal) => Promise<T>,
  { signal, timeoutMs, consequence }: RpcReadOptions,
): Promise<T> {
  const hint = `Retry, or give ${endpoint.family.owner} another rpc.`;
  const options = { signal, timeoutMs, hint, consequence };
  return readRpc(endpoint, method, (abortSignal) => read(endpoint.rpc, abortSignal), options);
}

/** Why a single RPC cannot serve `network`, once the network it serves is known to differ. */
export function servedMismatch(endpoint: RpcEndpoint<unknown>, network: string): string | undefined {
  const { served, name, family } = endpoint;
  if (!served || served === network) return undefined;
  const fix = `${family.owner}({ rpc: { "${network}": url } })`;
  return `${name} serves ${served}, not ${network}: give one RPC per network, ${fix}`;
}

/**
 * Refuses (UNPAYABLE_REQUIREMENT) a single RPC for a network other than the one it serves. That is
 * asked once per RPC and the promise kept (a failure is forgotten, so the next payment asks again).
 * The read is shared between payments, so it runs under the timeout only (one caller's abort must not
 * fail another's payment); each caller waits for it under its own signal.
 */
export async function checkServed<Rpc>(
  endpoint: RpcEndpoint<Rpc>,
  network: string,
  options: RpcReadOptions,
): Promise<void> {
  const { identify } = endpoint.family;
  endpoint.serving ??= readVia(endpoint, identify.method, identify.read, { timeoutMs: options.timeoutMs }).then(
    (served) => (endpoint.served = served),
    (error) => {
      endpoint.serving = undefined;
      throw error;
    },
  );
  await raceAbort(endpoint.serving, options.signal);
  const mismatch = servedMismatch(endpoint, network);
  if (mismatch) throw new UnpayableRequirementError(`Refused: ${mismatch}.`);
}
