/**
 * `x402-pay/langchain`: the paid fetch tool for LangChain.js and LangGraph. `paidFetchTool(client)` is a LangChain
 * `tool()` a model calls to request a URL and pay its 402 through the client (policy, budgets, ledger, quote cache);
 * with `approval`, a payment the rule asks about stops the graph with LangGraph's `interrupt()` on the seller's quoted
 * price, and `new Command({ resume: { approved } })` answers it.
 */
import { type DynamicStructuredTool, tool } from "@langchain/core/tools";
import type { X402Client } from "../client";
import { createPaidFetch, type PaidFetchApproval, type PaidFetchInput, type PaidFetchToolOptions } from "../agents";
import { approvedBy } from "../agents/doors";

export type * from "../entries/agents";

/** What `interrupt()` carries to the person: the seller's price for this call. */
export interface PaidFetchInterrupt extends PaidFetchApproval {
  readonly type: "x402-payment-approval";
}

/** How the person answers, as `new Command({ resume })`: `{ approved: true }` (or `true`) pays; else nothing does. */
export type PaidFetchResume = boolean | { readonly approved: boolean; readonly reason?: string | undefined };

/** The LangChain tool: its input is a `PaidFetchInput`, its result the answer as JSON text. */
export type PaidFetchTool = DynamicStructuredTool<
  DynamicStructuredTool["schema"],
  PaidFetchInput,
  PaidFetchInput,
  string
>;

/** What LangChain hands a tool's function, as far as this tool reads it. */
interface ToolConfig {
  readonly signal?: AbortSignal | undefined;
  readonly toolCall?: { readonly id?: string | undefined } | undefined;
}

/**
 * A LangChain tool that requests a URL and pays its 402 with `client`; its result is the answer as JSON text (the
 * status, the body, bounded, and what was paid, or a refusal's code and sentence). With `approval`, the graph needs a
 * checkpointer: the tool interrupts with a `PaidFetchInterrupt`, and runs again from the top when resumed, paying at
 * most the price it interrupted on.
 */
export function paidFetchTool(client: X402Client, options?: PaidFetchToolOptions): PaidFetchTool {
  const paid = createPaidFetch(client, options);
  const ask = async (approval: PaidFetchApproval) => {
    const { interrupt } = await import("@langchain/langgraph");
    const resume = interrupt<PaidFetchInterrupt, PaidFetchResume>({ type: "x402-payment-approval", ...approval });
    return approvedBy(resume);
  };
  return tool(
    async (input: PaidFetchInput, config: ToolConfig = {}) => {
      // `ask` is asked only where an approval rule says to ask.
      const answer = await paid.run(input, { callId: config.toolCall?.id, signal: config.signal, ask });
      return JSON.stringify(answer);
    },
    { name: paid.name, description: paid.description, schema: paid.inputSchema },
  );
}
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
