// A LangGraph agent that buys data through LangChain, with a person's approval above $0.0005.
//   EVM_PRIVATE_KEY=0x... npx tsx examples/langchain.ts https://seller.example/weather [yes|no]
// The model is scripted (LangChain's fakeModel: no API key, no network); put your own in its place
// (`new ChatOpenAI(…)`, `new ChatAnthropic(…)`). The second argument answers the approval as a person would.
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { privateKeyToAccount } from "viem/accounts";
import { budget, createX402Client } from "x402-pay";
import { exactEvm } from "x402-pay/evm";
import { paidFetchTool, type PaidFetchInterrupt } from "x402-pay/langchain";

const key = process.env.EVM_PRIVATE_KEY as `0x${string}` | undefined;
const [url, answer = "yes"] = process.argv.slice(2);
if (!key || !url) {
  console.error("Usage: EVM_PRIVATE_KEY=0x... npx tsx examples/langchain.ts <url> [yes|no]");
  process.exit(2);
}

const client = createX402Client({
  schemes: [exactEvm({ signer: privateKeyToAccount(key) })],
  policy: { maxAmountPerPayment: "$0.10" },
  plugins: [budget({ limit: "$1", per: "day" })],
});

// The scripted model: it calls paid_fetch with the URL, then says what the tool answered.
const model = fakeModel()
  .respondWithTools([{ name: "paid_fetch", args: { url }, id: "call-1" }])
  .respond((messages: BaseMessage[]) => new AIMessage(`The tool answered: ${messages.at(-1)?.content}`));

const agent = createAgent({
  model,
  tools: [paidFetchTool(client, { approval: "$0.0005" })],
  checkpointer: new MemorySaver(), // an interrupt needs one
});
const config = { configurable: { thread_id: "example" } };
let result = await agent.invoke({ messages: [{ role: "user", content: `What does ${url} say?` }] }, config);
for (const pending of result.__interrupt__ ?? []) {
  const asked = pending.value as PaidFetchInterrupt;
  console.log(`approval asked: pay ${asked.price} to ${asked.payTo} for ${asked.url}? ${answer}`);
  result = await agent.invoke(new Command({ resume: { approved: answer === "yes" } }), config);
}
console.log(result.messages.at(-1)?.content);
