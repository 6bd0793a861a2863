/**
 * x402-pay's I/O, shared by every part that reads from the network: the one bounded reader (402
 * bodies, RPC answers, discovery pages, the CLI's files and input), JSON-RPC over fetch, and the
 * router that gives each network its RPC (EVM reads and Solana alike), every read through it bounded.
 */
export { ReadError, bodySource, drain, readBounded, readBytes, readResponse, readUpTo, type ReadLimits } from "./read";
export { jsonRpcPost, type RpcName } from "./rpc";
export {
  checkServed,
  readVia,
  routeRpcs,
  servedMismatch,
  type RpcEndpoint,
  type RpcFamily,
  type RpcReadOptions,
} from "./route";
