/**
 * Solana RPCs for the router (src/io): one RPC per network, so an RPC given for devnet never serves
 * a mainnet requirement. Either a map `{ [network]: URL or RPC }` (the public endpoint for a network
 * it leaves out), or a single RPC that serves only the cluster its genesis hash names.
 */
import { routeRpcs, type RpcEndpoint, type RpcFamily } from "../io";
import { SVM_V1_NETWORKS } from "./networks";
import { DEFAULT_SOLANA_RPC_URLS, RPC_METHODS, getClusterNetwork, jsonRpc, type SolanaRpcLike } from "./rpc";

/** `rpc` as exactSvm takes it: one RPC (kit RPC or URL) for the cluster it serves, or one per network. */
export type SolanaRpcOption = SolanaRpcLike | string | Readonly<Record<string, SolanaRpcLike | string>>;

export type SolanaEndpoint = RpcEndpoint<SolanaRpcLike>;

/** The Solana RPC family, its messages naming the scheme (`exactSvm`, `uptoSvm`) whose `rpc` option it reads. */
const solana = (owner: string): RpcFamily<SolanaRpcLike> => ({
  owner,
  namespace: "solana:",
  defaults: DEFAULT_SOLANA_RPC_URLS,
  methods: RPC_METHODS,
  overHttp: jsonRpc,
  identify: { method: "getGenesisHash", read: getClusterNetwork },
  label: "Solana",
  objectName: (network) => `the RPC given to ${owner}${network === undefined ? "" : ` for ${network}`}`,
  entry: (network) => `rpc["${network}"]`,
  pass: (single) =>
    `pass an http(s) URL or a @solana/kit RPC (createSolanaRpc(url)), which has ${RPC_METHODS.join(", ")}` +
    (single ? ", or a map { [network]: URL or RPC }" : ""),
  credentials: "pass createSolanaRpc(url, { headers: { authorization } })",
  badKey: (key) =>
    `a Solana network id; use ${SVM_V1_NETWORKS[key] ?? "CAIP-2: solana:<first 32 characters of the genesis hash>"}`,
});

/**
 * The RPC for each network, from a scheme's `rpc` (`owner`, exactSvm by default): checked here, at construction, so
 * a wrong value fails where it is written. `undefined` for a network that has none.
 */
export const routeRpc = (option: unknown, owner = "exactSvm"): ((network: string) => SolanaEndpoint | undefined) =>
  routeRpcs(solana(owner), option);
