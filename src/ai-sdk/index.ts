/**
 * `x402-pay/ai-sdk`: the paid fetch tool for the Vercel AI SDK (`ai` 6 and 7). `paidFetchTool(client)` is a `tool()`
 * a model calls to request a URL and pay its 402 through the client (policy, budgets, ledger, quote cache); with
 * `approval`, the SDK's own `needsApproval` stops the run for a person's yes on the seller's quoted price.
 */
import type { Tool } from "ai";
import type { X402Client } from "../client";
import {
  createPaidFetch,
  type PaidFetchAnswer,
  type PaidFetchApproval,
  type PaidFetchInput,
  type PaidFetchToolOptions,
} from "../agents";

export type * from "../entries/agents";

/** The AI SDK tool, and what its approval request is about. */
export type PaidFetchTool = Tool<PaidFetchInput, PaidFetchAnswer> & {
  /**
   * What a `tool-approval-request` for this call asks a person to approve: the seller's price as its 402 quoted it
   * (`toolCallId`: the request's `toolCall.toolCallId`). `undefined` once the call ran, or for a call never asked.
   */
  approvalOf(toolCallId: string): Promise<PaidFetchApproval | undefined>;
};

/**
 * A tool for `generateText` / `streamText` that requests a URL and pays its 402 with `client`. The model reads the
 * status, the body (bounded) and what was paid, or a refusal's code and sentence. With `approval`, a payment the rule
 * asks about stops the run with a `tool-approval-request`; approved, the call pays at most the price asked about.
 */
export function paidFetchTool(client: X402Client, options?: PaidFetchToolOptions): PaidFetchTool {
  const paid = createPaidFetch(client, options);
  return {
    description: paid.description,
    inputSchema: paid.inputSchema,
    ...(options?.approval !== undefined && {
      needsApproval: (input: PaidFetchInput, { toolCallId }: { toolCallId: string }) =>
        paid.needsApproval(input, { callId: toolCallId }),
    }),
    execute: (input: PaidFetchInput, { toolCallId, abortSignal }: { toolCallId: string; abortSignal?: AbortSignal }) =>
      paid.run(input, { callId: toolCallId, signal: abortSignal }),
    approvalOf: (toolCallId: string) => paid.approvalOf(toolCallId),
  };
}
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
