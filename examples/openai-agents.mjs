// An OpenAI Agents SDK agent that buys data, with a person's approval above $0.0005. Node 22 or later (the SDK's
// `openai` dependency needs it), in a project with x402-pay, @openai/agents and viem installed:
//   EVM_PRIVATE_KEY=0x... node examples/openai-agents.mjs https://seller.example/weather [yes|no]
// The model is scripted (an SDK `Model` written here: no API key, no network); leave `model` out of the Agent to use
// OpenAI's. The second argument answers the approval as a person would.
import { Agent, RunState, Usage, run, setTracingDisabled } from "@openai/agents";
import { privateKeyToAccount } from "viem/accounts";
import { budget, createX402Client } from "x402-pay";
import { exactEvm } from "x402-pay/evm";
import { paidFetchTool } from "x402-pay/openai-agents";

const key = process.env.EVM_PRIVATE_KEY;
const [url, answer = "yes"] = process.argv.slice(2);
if (!key || !url) {
  console.error("Usage: EVM_PRIVATE_KEY=0x... node examples/openai-agents.mjs <url> [yes|no]");
  process.exit(2);
}
setTracingDisabled(true);

const client = createX402Client({
  schemes: [exactEvm({ signer: privateKeyToAccount(key) })],
  policy: { maxAmountPerPayment: "$0.10" },
  plugins: [budget({ limit: "$1", per: "day" })],
});
const paid_fetch = paidFetchTool(client, { approval: "$0.0005" });

// The scripted model: it calls paid_fetch with the URL, then says what the tool answered.
const model = {
  async getResponse({ input }) {
    const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
    const result = Array.isArray(input) && input.find((item) => item.type === "function_call_result");
    if (!result) {
      const call = { type: "function_call", callId: "call-1", name: "paid_fetch", arguments: JSON.stringify({ url }) };
      return { usage, output: [{ ...call, status: "completed" }] };
    }
    const said = typeof result.output === "string" ? result.output : result.output.text;
    const text = `The tool answered: ${said}`;
    return {
      usage,
      output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] }],
    };
  },
  // biome-ignore lint/correctness/useYield: this model never streams.
  async *getStreamedResponse() {
    throw new Error("the scripted model does not stream");
  },
};

const agent = new Agent({ name: "buyer", instructions: "Buy what you are asked to.", model, tools: [paid_fetch] });
let result = await run(agent, `What does ${url} say?`);
while (result.interruptions.length > 0) {
  const state = await RunState.fromString(agent, result.state.toString());
  for (const item of result.interruptions) {
    if (item.rawItem.type !== "function_call") continue;
    const approval = await paid_fetch.approvalOf(item.rawItem.callId);
    console.log(`approval asked: pay ${approval?.price} to ${approval?.payTo} for ${approval?.url}? ${answer}`);
    if (answer === "yes") state.approve(item);
    else state.reject(item, { message: "The person did not approve this payment: nothing was paid." });
  }
  result = await run(agent, state);
}
console.log(result.finalOutput);
