/** `wrapMcpClientWithPayment`: the official SDK `Client`'s `callTool`, paying a tool that asks. */
import { engineOf, type X402Client } from "../client";
import { fail } from "../contracts";
import { answerOf, challengeIn, unwrap } from "./answer";
import { checkMcpOptions, type McpCallToolParams, type McpClientLike, type McpPaymentOptions } from "./options";
import { identity, payToolCall } from "./pay";

/**
 * Wraps an MCP SDK `Client`: `callTool` as before, paying a tool that asks (at most once per call) and
 * calling it again with the payment in `_meta["x402/payment"]`. Every other method is the client's own.
 * A second payment-required answer after paying is a `PAYMENT_REJECTED` with the server's reason.
 */
export function wrapMcpClientWithPayment<C extends McpClientLike>(
  mcp: C,
  client: X402Client,
  options: McpPaymentOptions = {},
): C {
  engineOf(client);
  if (!mcp || typeof mcp.callTool !== "function")
    fail("wrapMcpClientWithPayment", "give it an MCP SDK Client (new Client(...) from @modelcontextprotocol/sdk)");
  checkMcpOptions(options);

  async function callTool(
    params: McpCallToolParams,
    resultSchema?: never,
    callOptions?: { signal?: AbortSignal | undefined },
  ): Promise<object> {
    const call = (with_: McpCallToolParams) => mcp.callTool(with_, resultSchema, callOptions);
    const first = await answerOf(() => call(params));
    if (!challengeIn(first)) return unwrap(first);
    const transport = (Object(mcp) as { transport?: unknown }).transport;
    const server = identity(options.server, transport, mcp.getServerVersion?.()?.name);
    return unwrap(await payToolCall(client, options, { server, params, first, call, signal: callOptions?.signal }));
  }

  // Everything else is the client's own, called on the client itself (its state stays in one place).
  return new Proxy(mcp, {
    get(target, key) {
      if (key === "callTool") return callTool;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
