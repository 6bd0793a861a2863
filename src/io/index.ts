/**
 * x402-pay's I/O, shared by every part that reads from the network: the one bounded reader (402
 * bodies, RPC answers, discovery pages, the CLI's files), JSON-RPC over fetch, one bounded RPC read,
 * and the router that gives each network its RPC (EVM and Solana alike).
 */
export { ReadError, bodySource, readBounded, readBytes, readResponse, type ReadFailure, type ReadLimits } from "./read";
export {
  MAX_RPC_ANSWER_BYTES,
  jsonRpcPost,
  readRpc,
  shownUrl,
  type JsonRpcCall,
  type ReadOptions,
  type RpcName,
} from "./rpc";
export {
  checkServed,
  readVia,
  routeRpcs,
  servedMismatch,
  type RpcEndpoint,
  type RpcFamily,
  type RpcReadOptions,
} from "./route";
