// A model that buys data through the Vercel AI SDK, with a person's approval above $0.0005.
//   EVM_PRIVATE_KEY=0x... npx tsx examples/ai-sdk.ts https://seller.example/weather [yes|no]
// The model is scripted (the AI SDK's MockLanguageModelV3: no API key, no network); put your own in its place
// (`openai("…")`, `anthropic("…")`). The second argument answers the approval as a person would.
import { generateText, stepCountIs, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { privateKeyToAccount } from "viem/accounts";
import { budget, createX402Client } from "x402-pay";
import { paidFetchTool } from "x402-pay/ai-sdk";
import { exactEvm } from "x402-pay/evm";

const key = process.env.EVM_PRIVATE_KEY as `0x${string}` | undefined;
const [url, answer = "yes"] = process.argv.slice(2);
if (!key || !url) {
  console.error("Usage: EVM_PRIVATE_KEY=0x... npx tsx examples/ai-sdk.ts <url> [yes|no]");
  process.exit(2);
}

const client = createX402Client({
  schemes: [exactEvm({ signer: privateKeyToAccount(key) })],
  policy: { maxAmountPerPayment: "$0.10" },
  plugins: [budget({ limit: "$1", per: "day" })],
});
const paid_fetch = paidFetchTool(client, { approval: "$0.0005" });

// The scripted model: it calls paid_fetch with the URL, then says what it read.
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const result = prompt.flatMap((m) => (m.role === "tool" ? m.content : [])).find((p) => p.type === "tool-result");
    if (!result) {
      const input = JSON.stringify({ url });
      return {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "paid_fetch", input }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    }
    const text = `The tool answered: ${JSON.stringify(result.output)}`;
    return {
      content: [{ type: "text", text }],
      finishReason: { unified: "stop", raw: undefined },
      usage,
      warnings: [],
    };
  },
});

const messages: ModelMessage[] = [{ role: "user", content: `What does ${url} say?` }];
const first = await generateText({ model, tools: { paid_fetch }, messages, stopWhen: stepCountIs(4) });
const answers: ModelMessage[] = [];
for (const part of first.content) {
  if (part.type !== "tool-approval-request") continue;
  const approval = await paid_fetch.approvalOf(part.toolCall.toolCallId);
  const approved = answer === "yes";
  console.log(`approval asked: pay ${approval?.price} to ${approval?.payTo} for ${approval?.url}? ${answer}`);
  answers.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId: part.approvalId, approved }] });
}
const second = answers.length
  ? await generateText({
      model,
      tools: { paid_fetch },
      messages: [...messages, ...first.response.messages, ...answers],
      stopWhen: stepCountIs(4),
    })
  : first;
console.log(second.text);
