// x402-pay/ai-sdk in the AI SDK 7's own generateText loop (`ai` 7 needs Node 22), against the package installed from
// its tarball and the reference seller on anvil; `ai` 6 is tested in npm test's own projects. The model is the SDK's
// MockLanguageModelV4 scripting the turns; approvals go through the tool's `needsApproval` and the approval response
// messages, as an app sends them. runtimes.test.ts runs it and checks what it prints against the chain. Input from the
// environment: X402_URL and BUYER_KEYS (as agents-common.mjs reads them). Prints one JSON line.
import process from "node:process";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { budget } from "x402-pay";
import { paidFetchTool } from "x402-pay/ai-sdk";
import { buyer, printResults, raisingFetch } from "./agents-common.mjs";

const url = process.env.X402_URL;
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
/** A model that calls paid_fetch with `input`, then says "done"; `onTurn` sees each turn's number as it starts. */
function scripted(input, onTurn = () => {}) {
  const call = { type: "tool-call", toolCallId: "call-1", toolName: "paid_fetch", input: JSON.stringify(input) };
  const turns = [
    { content: [call], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] },
    { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] },
  ];
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      onTurn(model.doGenerateCalls.length);
      return turns[Math.min(model.doGenerateCalls.length - 1, 1)];
    },
  });
  return model;
}
/** What the model read for call-1: the tool-result part of its last prompt. */
const readBack = (model) => {
  const prompt = model.doGenerateCalls.at(-1)?.prompt ?? [];
  const part = prompt.flatMap((m) => (m.role === "tool" ? m.content : [])).find((p) => p.type === "tool-result");
  return part?.output;
};

/** One generateText run; a stop for approval is answered with `decide` (true, or a denial's reason) and resumed. */
async function agentRun(tool, { decide, abortSignal, onTurn } = {}) {
  const model = scripted({ url }, onTurn);
  const tools = { paid_fetch: tool };
  const messages = [{ role: "user", content: "What is the weather?" }];
  let result = await generateText({ model, tools, messages, stopWhen: stepCountIs(4), abortSignal });
  const requests = result.content.filter((p) => p.type === "tool-approval-request");
  const approvals = [];
  if (decide && requests.length > 0) {
    const responses = [];
    for (const request of requests) {
      approvals.push(await tool.approvalOf(request.toolCall.toolCallId));
      const verdict = decide(request);
      responses.push({
        type: "tool-approval-response",
        approvalId: request.approvalId,
        approved: verdict === true,
        ...(verdict !== true && { reason: verdict }),
      });
    }
    const resumed = [...messages, ...result.responseMessages, { role: "tool", content: responses }];
    result = await generateText({ model, tools, messages: resumed, stopWhen: stepCountIs(4), abortSignal });
  }
  return {
    text: result.text,
    read: readBack(model),
    asked: requests.length,
    approvals,
    turns: model.doGenerateCalls.length,
  };
}

await printResults({
  async paid() {
    const b = buyer(8);
    const out = await agentRun(paidFetchTool(b.client, { fetch: b.fetch }));
    return { address: b.address, ...b.seen, ...out };
  },
  async budget() {
    const b = buyer(9, { plugins: [budget({ limit: "$0.0005", per: "day" })] });
    const out = await agentRun(paidFetchTool(b.client, { fetch: b.fetch }));
    return { address: b.address, ...b.seen, ...out };
  },
  async approved() {
    const b = buyer(10);
    const out = await agentRun(paidFetchTool(b.client, { fetch: b.fetch, approval: "$0.0005" }), {
      decide: () => true,
    });
    return { address: b.address, ...b.seen, ...out };
  },
  async denied() {
    const b = buyer(11);
    const tool = paidFetchTool(b.client, { fetch: b.fetch, approval: "$0.0005" });
    const out = await agentRun(tool, { decide: () => "The user said no." });
    return { address: b.address, ...b.seen, ...out };
  },
  async raised() {
    const b = buyer(12, { fetch: raisingFetch() });
    const out = await agentRun(paidFetchTool(b.client, { fetch: b.fetch, approval: "$0.0005" }), {
      decide: () => true,
    });
    return { address: b.address, ...b.seen, ...out };
  },
  async aborted() {
    const b = buyer(13);
    // The run is aborted while the model's turn that calls the tool is being produced.
    const controller = new AbortController();
    const onTurn = (n) => n === 1 && controller.abort(new Error("the user stopped the run"));
    try {
      await agentRun(paidFetchTool(b.client, { fetch: b.fetch }), { abortSignal: controller.signal, onTurn });
      return { address: b.address, ...b.seen, threw: false };
    } catch (error) {
      return { address: b.address, ...b.seen, threw: true, error: String(error?.message ?? error) };
    }
  },
});
