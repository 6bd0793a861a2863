/**
 * What the frameworks' doors decide, framework-free, so the Node 20 suite and the mutation run hold it: what a
 * LangGraph resume means, and the OpenAI Agents SDK's `needsApproval` and `execute` (that SDK needs Node 22; its door
 * only hands these to its `tool()`). Internal: no entry exports it.
 */
import type { PaidFetch } from "./tool";

/**
 * Does a LangGraph resume pay? Only `true` or `{ approved: true }`: anything else (`{ approved: "true" }`, a string,
 * none at all) is a no, and nothing is paid.
 */
export function approvedBy(resume: unknown): boolean {
  return (
    resume === true ||
    (typeof resume === "object" && resume !== null && (resume as { approved?: unknown }).approved === true)
  );
}

/** What the Agents SDK hands a function tool's `execute`, as far as this tool reads it. */
export interface AgentsSdkCallDetails {
  readonly toolCall?: { readonly callId?: string | undefined } | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * The Agents SDK's `needsApproval` (with an approval rule) and `execute` for the paid fetch tool, as the SDK calls
 * them. A call the SDK does not name is asked: no price can be kept for it, so its run pays nothing
 * (`APPROVAL_REQUIRED`). Approved, the SDK runs `execute` with the call's id, which pays at most the price kept for
 * it; rejected, the SDK never runs it. The answer is JSON text.
 */
export function agentsSdkTool(paid: PaidFetch, withApproval: boolean) {
  const execute = async (input: unknown, _context?: unknown, details?: AgentsSdkCallDetails) =>
    JSON.stringify(await paid.run(input, { callId: details?.toolCall?.callId, signal: details?.signal }));
  if (!withApproval) return { execute };
  const needsApproval = async (_context: unknown, input: unknown, callId?: string) =>
    callId === undefined ? true : paid.needsApproval(input, { callId });
  return { execute, needsApproval };
}
