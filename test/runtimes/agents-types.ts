// A user's TypeScript against the real frameworks (the runtime matrix installs them; the repository type-checks
// x402-pay/openai-agents against a stand-in, types/openai-agents.d.ts): the doors' tools go where each SDK takes tools.
import { Agent, MCPServerStreamableHttp } from "@openai/agents";
import { generateText, stepCountIs } from "ai";
import type { X402Client } from "x402-pay";
import { paidFetchTool as aiSdkTool } from "x402-pay/ai-sdk";
import { type PaidFetchApproval, paidFetchTool, paidMcpServer } from "x402-pay/openai-agents";

declare const client: X402Client;
const tool = paidFetchTool(client, { approval: { above: "$0.10" }, maxChars: 2_000 });
const weather = paidMcpServer(new MCPServerStreamableHttp({ url: "https://tools.example.com/mcp" }), client, {
  maxAmountPerTool: { "*": "$0.01" },
});
export const agent = new Agent({
  name: "buyer",
  instructions: "Buy what you are asked to.",
  tools: [tool],
  mcpServers: [weather],
});
export const approval: Promise<PaidFetchApproval | undefined> = tool.approvalOf("call-1");
export const answer = (model: Parameters<typeof generateText>[0]["model"]) =>
  generateText({ model, tools: { paid_fetch: aiSdkTool(client) }, prompt: "Buy it.", stopWhen: stepCountIs(3) });
