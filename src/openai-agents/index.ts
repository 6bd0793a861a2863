/**
 * `x402-pay/openai-agents`: the paid fetch tool for the OpenAI Agents SDK (`@openai/agents`). `paidFetchTool(client)`
 * is a `tool()` a model calls to request a URL and pay its 402 through the client (policy, budgets, ledger, quote
 * cache); with `approval`, the SDK's own `needsApproval` stops the run with an interruption on the seller's quoted
 * price, which `result.state.approve(item)` or `reject(item)` answers before the run goes on.
 */
import {
  type CallToolResult,
  type FunctionTool,
  type JsonObjectSchemaNonStrict,
  type MCPCallToolOptions,
  type MCPServer,
  tool,
} from "@openai/agents";
import type { X402Client } from "../client";
import { fail } from "../contracts";
import { wrapMcpClientWithPayment, type McpCallToolParams, type McpPaymentOptions } from "../mcp";
import { createPaidFetch, inputJsonSchema, type PaidFetchApproval, type PaidFetchToolOptions } from "../agents";
import { agentsSdkTool } from "../agents/doors";

export type * from "../entries/agents";
/** `paidMcpServer`'s options are the MCP wrapper's. */
export type { McpPaymentOptions, McpPaymentRequest } from "../mcp";

/**
 * The tool's parameters as the model reads them: the input's JSON Schema, non-strict (the SDK's strict mode has no
 * optional fields and no header map); the tool checks its input itself, and answers a bad one `INVALID_INPUT`.
 */
export type PaidFetchParameters = JsonObjectSchemaNonStrict<Record<string, Record<string, unknown>>>;

/** The Agents SDK tool (its result is the answer as JSON text), and what its approval interruption is about. */
export type PaidFetchTool = FunctionTool<unknown, PaidFetchParameters, string> & {
  /**
   * What a `tool_approval_item` interruption of this tool asks a person to approve: the seller's price as its 402
   * quoted it (`callId`: the item's `rawItem.callId`). `undefined` once the call ran, or for a call never asked.
   */
  approvalOf(callId: string): Promise<PaidFetchApproval | undefined>;
};

/**
 * A tool for an `Agent` that requests a URL and pays its 402 with `client`. The model reads the answer as JSON text:
 * the status, the body (bounded) and what was paid, or a refusal's code and sentence. With `approval`, a payment the
 * rule asks about interrupts the run (`result.interruptions`); approved, the call pays at most the price asked about;
 * rejected, nothing is sent and the model reads the SDK's rejection message.
 */
export function paidFetchTool(client: X402Client, options?: PaidFetchToolOptions): PaidFetchTool {
  const paid = createPaidFetch(client, options);
  const made = tool({
    name: paid.name,
    description: paid.description,
    parameters: structuredClone(inputJsonSchema),
    strict: false,
    // Its approval and its run, framework-free (src/agents/doors.ts, where the Node 20 suite tests them).
    ...agentsSdkTool(paid, options?.approval !== undefined),
    // The tool answers every refusal itself and throws only when the run was aborted: that ends the run.
    errorFunction: null,
  });
  return Object.assign(made, { approvalOf: (callId: string) => paid.approvalOf(callId) });
}
/**
 * An Agents SDK MCP server (`new MCPServerStreamableHttp({ url, name })`, any `MCPServer` with `callToolResult`) whose
 * tool calls pay a tool that asks, through `client` (policy, budgets, ledger), as `wrapMcpClientWithPayment` does for
 * the MCP SDK's `Client`, with its options. Give it to an agent's `mcpServers`. The server's identity for the policy is
 * `options.server` (its URL), else `mcp://<its name>`.
 */
export function paidMcpServer<S extends MCPServer>(server: S, client: X402Client, options: McpPaymentOptions = {}): S {
  if (!server || typeof server.callToolResult !== "function")
    fail(
      "paidMcpServer",
      "give it an Agents SDK MCP server with callToolResult, such as new MCPServerStreamableHttp()",
    );
  // The server as the MCP wrapper pays through: a tool call's whole result, its payment in `_meta`.
  const caller = {
    callTool: (params: McpCallToolParams, _schema?: never, call?: { signal?: AbortSignal | undefined }) =>
      server.callToolResult!(params.name, params.arguments ?? null, params._meta ?? null, signalOf(call)),
    getServerVersion: () => ({ name: server.name }),
  };
  const paying = wrapMcpClientWithPayment(caller, client, options);
  const callToolResult = (
    name: string,
    args: Record<string, unknown> | null,
    meta?: Record<string, unknown> | null,
    call?: MCPCallToolOptions,
  ) =>
    paying.callTool(
      { name, ...(args && { arguments: args }), ...(meta && { _meta: meta }) },
      undefined,
      call,
    ) as Promise<CallToolResult>;
  return new Proxy(server, {
    get(target, key) {
      if (key === "callToolResult") return callToolResult;
      if (key === "callTool")
        return async (...call: Parameters<typeof callToolResult>) => {
          // The content, with the result's other fields on it, as the SDK's own servers answer `callTool`.
          const { content, _meta, structuredContent, isError } = await callToolResult(...call);
          return Object.assign([...content], { _meta, structuredContent, isError });
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The call's signal as the Agents SDK takes it (no options at all without one). */
const signalOf = (call: { signal?: AbortSignal | undefined } | undefined): MCPCallToolOptions | undefined =>
  call?.signal ? { signal: call.signal } : undefined;

// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
