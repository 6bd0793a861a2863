/**
 * `x402-pay/mcp`: paid MCP tool calls. Wraps an `@modelcontextprotocol/sdk` `Client` so `callTool`
 * pays a tool that answers with x402's payment-required result (wire.md §10), through the same
 * `createX402Client` as HTTP: policy, hooks, budgets, ledger. The tool's whole result comes back
 * (`content`, `structuredContent`, every `_meta` key); `getPaymentReceipt(result)` tells what was paid.
 * For an MCP client that is not the SDK's (the AI SDK's `createMCPClient`), `wrapMcpTransportWithPayment` pays at
 * the transport under it.
 */
export {
  MCP_PAYMENT_META_KEY,
  MCP_PAYMENT_RESPONSE_META_KEY,
  MCP_PAYMENT_REQUIRED_CODE,
  type McpCallToolParams,
  type McpClientLike,
  type McpPaymentRequest,
  type McpPaymentOptions,
} from "./options";
export { wrapMcpClientWithPayment } from "./client";
export { wrapMcpTransportWithPayment, type McpJsonRpcMessage, type McpTransportLike } from "./transport";
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
