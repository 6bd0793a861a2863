// x402-pay/openai-agents in the OpenAI Agents SDK's own run loop, on Node 22 (the SDK's `openai` dependency needs it),
// against the package installed from its tarball and the reference seller on anvil. No network model and no API key:
// a model written here scripts the turns (the SDK's `Model` interface); the agent loop, its approvals and the tool
// are the real ones. runtimes.test.ts runs it and checks what it prints against the chain. Input from the environment:
// X402_URL (the seller's paid route) and BUYER_KEYS (funded buyers, comma-separated, one per case).
// Prints one JSON line: per case, what the model read, what was signed and sent, and the run's interruptions.
import process from "node:process";
import { Agent, MCPServerStreamableHttp, RunState, Usage, run, setTracingDisabled } from "@openai/agents";
import { budget } from "x402-pay";
import { paidFetchTool, paidMcpServer } from "x402-pay/openai-agents";
import { baitFetch, buyer, printResults, raisingFetch } from "./agents-common.mjs";

setTracingDisabled(true);
const url = process.env.X402_URL;
const mcpUrl = process.env.X402_MCP_URL;

/** A model that plays `turns` in order (each a list of output items) and keeps what it was sent. */
class ScriptedModel {
  constructor(turns, onTurn = () => {}) {
    this.turns = turns;
    this.onTurn = onTurn;
    this.requests = [];
  }
  async getResponse(request) {
    this.requests.push(request);
    this.onTurn(this.requests.length);
    const output = this.turns[this.requests.length - 1] ?? [message("done")];
    const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
    return { usage, output, responseId: `response-${this.requests.length}` };
  }
  // biome-ignore lint/correctness/useYield: a run here never streams.
  async *getStreamedResponse() {
    throw new Error("the scripted model does not stream");
  }
}
const call = (input, callId = "call-1") => ({
  type: "function_call",
  callId,
  name: "paid_fetch",
  arguments: JSON.stringify(input),
  status: "completed",
});
const message = (text) => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});
/** What the model read for call-1 on its later turn: the tool's answer (JSON) or the SDK's text. */
function readBack(model) {
  const items = model.requests.at(-1)?.input ?? [];
  const result = Array.isArray(items) ? items.find((i) => i.type === "function_call_result") : undefined;
  // A function tool's output is text; an MCP tool's, a list of content parts.
  const output = result?.output;
  const text =
    typeof output === "string" ? output : Array.isArray(output) ? output.map((p) => p.text).join("") : output?.text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One agent with the tool, run on `input` from the first turn; the approvals `decide` returns are applied. */
async function agentRun(tool, turns, { decide, signal, onTurn } = {}) {
  const model = new ScriptedModel(turns, onTurn);
  const agent = new Agent({ name: "buyer", instructions: "Buy what the user asks for.", model, tools: [tool] });
  let result = await run(agent, "What is the weather?", { signal });
  const interruptions = result.interruptions.map((item) => ({ name: item.name, callId: item.rawItem.callId }));
  const approvals = [];
  if (decide && result.interruptions.length > 0) {
    for (const item of result.interruptions) {
      approvals.push(await tool.approvalOf(item.rawItem.callId));
      const verdict = decide(item);
      if (verdict === true) result.state.approve(item);
      else result.state.reject(item, { message: verdict });
    }
    // As a server that answers the approval later does: the run's state as a string, and back.
    const state = await RunState.fromString(agent, result.state.toString());
    result = await run(agent, state, { signal });
  }
  return {
    finalOutput: result.finalOutput,
    read: readBack(model),
    interruptions,
    approvals,
    turns: model.requests.length,
  };
}

/** A paid MCP tool called through a server whose options refuse it: what was signed, and what the run said. */
async function mcpRefused(index, options) {
  const b = buyer(index);
  const server = paidMcpServer(new MCPServerStreamableHttp({ url: mcpUrl, name: "weather" }), b.client, options);
  await server.connect();
  try {
    const model = new ScriptedModel([[{ ...call({ city: "Lisbon" }), name: "weather" }], [message("done")]]);
    const agent = new Agent({ name: "buyer", instructions: "Buy what you are asked to.", model, mcpServers: [server] });
    const result = await run(agent, "What is the weather?");
    return { address: b.address, ...b.seen, finalOutput: result.finalOutput, read: readBack(model) };
  } finally {
    await server.close();
  }
}

const cases = {
  async paid() {
    const b = buyer(0);
    const out = await agentRun(paidFetchTool(b.client, { fetch: b.fetch }), [[call({ url })]]);
    return { address: b.address, ...b.seen, ...out };
  },
  async budget() {
    const b = buyer(1, { plugins: [budget({ limit: "$0.0005", per: "day" })] });
    const out = await agentRun(paidFetchTool(b.client, { fetch: b.fetch }), [[call({ url })]]);
    return { address: b.address, ...b.seen, ...out };
  },
  async below() {
    const b = buyer(2);
    const tool = paidFetchTool(b.client, { fetch: b.fetch, approval: "$0.01" });
    const out = await agentRun(tool, [[call({ url })]]);
    return { address: b.address, ...b.seen, ...out };
  },
  async approved() {
    const b = buyer(3);
    const tool = paidFetchTool(b.client, { fetch: b.fetch, approval: "$0.0005" });
    const out = await agentRun(tool, [[call({ url })]], { decide: () => true });
    return { address: b.address, ...b.seen, ...out };
  },
  async rejected() {
    const b = buyer(4);
    const tool = paidFetchTool(b.client, { fetch: b.fetch, approval: "$0.0005" });
    const out = await agentRun(tool, [[call({ url })]], { decide: () => "The user said no." });
    return { address: b.address, ...b.seen, ...out };
  },
  async raised() {
    const b = buyer(5, { fetch: raisingFetch() });
    const tool = paidFetchTool(b.client, { fetch: b.fetch, approval: "$0.0005" });
    const out = await agentRun(tool, [[call({ url })]], { decide: () => true });
    return { address: b.address, ...b.seen, ...out };
  },
  async hostile() {
    const b = buyer(6, { fetch: baitFetch });
    const out = await agentRun(paidFetchTool(b.client, { fetch: b.fetch }), [[call({ url })]]);
    return { address: b.address, ...b.seen, ...out, bodyLength: out.read?.body?.length };
  },
  async mcp() {
    // A paid MCP tool through the SDK's own MCP client (MCPServerStreamableHttp), wrapped to pay.
    const b = buyer(8);
    const server = paidMcpServer(new MCPServerStreamableHttp({ url: mcpUrl, name: "weather" }), b.client);
    await server.connect();
    try {
      const model = new ScriptedModel([[{ ...call({ city: "Lisbon" }), name: "weather" }], [message("done")]]);
      const agent = new Agent({
        name: "buyer",
        instructions: "Buy what you are asked to.",
        model,
        mcpServers: [server],
      });
      const result = await run(agent, "What is the weather?");
      return { address: b.address, ...b.seen, finalOutput: result.finalOutput, read: readBack(model) };
    } finally {
      await server.close();
    }
  },
  // The edges of the MCP options' lists: [] allows none, so nothing is signed (the SDK tells the model of an error).
  async mcpToolsNone() {
    return mcpRefused(9, { tools: [] });
  },
  async mcpServersNone() {
    return mcpRefused(10, { servers: [] });
  },
  async mcpCapZero() {
    return mcpRefused(11, { maxAmountPerTool: { weather: "$0" } });
  },
  async aborted() {
    // The run is aborted while the model's turn that calls the tool is being produced.
    const controller = new AbortController();
    const b = buyer(7);
    const tool = paidFetchTool(b.client, { fetch: b.fetch });
    const onTurn = (n) => n === 1 && controller.abort(new Error("the user stopped the run"));
    try {
      await agentRun(tool, [[call({ url })]], { signal: controller.signal, onTurn });
      return { address: b.address, ...b.seen, threw: false };
    } catch (error) {
      return { address: b.address, ...b.seen, threw: true, error: String(error?.message ?? error) };
    }
  },
};

await printResults(cases);
