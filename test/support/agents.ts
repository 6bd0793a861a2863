/**
 * What the agent-tool tests share: a scripted AI SDK model (one paid_fetch call, then "done"), a seller that raises
 * its price after its first 402, and the answer a model reads for the default seller's paid call.
 */
import { MockLanguageModelV3 } from "ai/test";
import { HttpResponse } from "msw";
import { TX_HASH, createSeller, encodeHeader, v2Challenge, v2Requirement } from "./seller";

/** A language model's usage, as the AI SDK's mock reports it. */
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** An AI SDK model that calls paid_fetch with `input`, then answers "done": its prompts show what it read. */
export function scriptedModel(input: Record<string, unknown>) {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "paid_fetch", input: JSON.stringify(input) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      },
      {
        content: [{ type: "text", text: "done" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      },
    ],
  });
}

/** A seller asking `amounts[i]` base units of USDC at its i-th 402 (the last one after that); paid as usual. */
export function raisingSeller(...amounts: string[]) {
  let asked = 0;
  return createSeller({
    intercept: (request) => {
      if (request.headers.has("payment-signature")) return undefined;
      const amount = amounts[Math.min(asked++, amounts.length - 1)]!;
      const challenge = v2Challenge({ accepts: [v2Requirement({ amount })] });
      return HttpResponse.json({}, { status: 402, headers: { "PAYMENT-REQUIRED": encodeHeader(challenge) } });
    },
  });
}

/** What the model reads for the default seller's paid call (0.01 USDC on Base Sepolia). */
export const PAID_ANSWER = {
  ok: true,
  status: 200,
  contentType: "application/json",
  body: { data: "premium" },
  paid: `0.01 USDC on eip155:84532 (transaction ${TX_HASH})`,
};
