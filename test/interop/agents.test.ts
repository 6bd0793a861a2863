// The agent doors against the unmodified reference seller and facilitator on anvil: a scripted model (the
// framework's own test model) calls paidFetchTool in the framework's real loop, and the chain moves exactly the price.
// Paid MCP tools through each framework's own MCP client, against the MCP seller of test/localnet on the same chain.
import { createMCPClient } from "@ai-sdk/mcp";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { loadMcpTools } from "@langchain/mcp-adapters";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { MockLanguageModelV3 } from "ai/test";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { generateText, stepCountIs } from "ai";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { paidFetchTool } from "../../src/ai-sdk";
import { exactEvm } from "../../src/evm";
import { paidFetchTool as langchainTool } from "../../src/langchain";
import { wrapMcpClientWithPayment, wrapMcpTransportWithPayment } from "../../src/mcp";
import { scriptedModel } from "../support/agents";
import {
  PRICE_ATOMIC,
  WEATHER,
  fundedBuyer,
  randomAddress,
  startInteropStack,
  type InteropStack,
} from "../localnet/index.js";
import { startMcpSeller, type McpSeller } from "../localnet/mcp.js";

let stack: InteropStack;
let mcpSeller: McpSeller;
const mcpPayTo = randomAddress();

beforeAll(async () => {
  stack = await startInteropStack();
  mcpSeller = await startMcpSeller({ facilitatorUrl: stack.facilitator.url, payTo: mcpPayTo });
});
afterAll(async () => {
  await mcpSeller?.stop();
  await stack?.stop();
});

describe("x402-pay/ai-sdk with the reference seller on anvil", () => {
  it("a model's paid_fetch call pays once: the chain moves exactly the price, and the model reads the transaction", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await stack.usdc.usdcBalance(stack.seller.payTo);
    const client = createX402Client({ schemes: [exactEvm({ signer: buyer.account })] });
    const url = `${stack.seller.url}/weather`;
    const model = scriptedModel({ url });
    const result = await generateText({
      model,
      tools: { paid_fetch: paidFetchTool(client) },
      prompt: "What is the weather?",
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("done");
    const read = result.steps[0]!.toolResults[0]!.output as { ok: boolean; paid: string; body: unknown };
    expect(read.ok).toBe(true);
    expect(read.paid).toMatch(/^0\.001 USDC on eip155:\d+ \(transaction 0x[0-9a-f]{64}\)$/);
    expect(await stack.usdc.usdcBalance(stack.seller.payTo)).toBe(before + PRICE_ATOMIC);
  });
});

describe("x402-pay/langchain with the reference seller on anvil", () => {
  it("a LangGraph agent's paid_fetch call, approved at the interrupt, pays once: the chain moves exactly the price", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await stack.usdc.usdcBalance(stack.seller.payTo);
    const client = createX402Client({ schemes: [exactEvm({ signer: buyer.account })] });
    const url = `${stack.seller.url}/weather`;
    const model = fakeModel()
      .respondWithTools([{ name: "paid_fetch", args: { url }, id: "c1" }])
      .respond(new AIMessage("done"));
    const agent = createAgent({
      model,
      tools: [langchainTool(client, { approval: "$0.0005" })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "interop" } };
    const first = await agent.invoke({ messages: [{ role: "user", content: "What is the weather?" }] }, config);
    expect(first.__interrupt__?.[0]?.value).toMatchObject({ price: "0.001 USDC" });
    expect(await stack.usdc.usdcBalance(stack.seller.payTo)).toBe(before);
    const { Command } = await import("@langchain/langgraph");
    const second = await agent.invoke(new Command({ resume: { approved: true } }), config);
    expect(second.messages.at(-1)!.content).toBe("done");
    expect(await stack.usdc.usdcBalance(stack.seller.payTo)).toBe(before + PRICE_ATOMIC);
  });
});

describe("paid MCP tools through each framework's own MCP client", () => {
  it("AI SDK: createMCPClient over the wrapped transport; the model's call of a paid tool pays once and reads the result", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const client = createX402Client({ schemes: [exactEvm({ signer: buyer.account })] });
    const transport = wrapMcpTransportWithPayment(new StreamableHTTPClientTransport(new URL(mcpSeller.url)), client);
    const mcp = await createMCPClient({ transport });
    try {
      const usage = {
        inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 1, text: 1, reasoning: undefined },
      };
      const call = { type: "tool-call" as const, toolCallId: "c1", toolName: "weather", input: '{"city":"Lisbon"}' };
      const model = new MockLanguageModelV3({
        doGenerate: [
          { content: [call], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
          {
            content: [{ type: "text", text: "done" }],
            finishReason: { unified: "stop", raw: undefined },
            usage,
            warnings: [],
          },
        ],
      });
      const result = await generateText({
        model,
        tools: await mcp.tools(),
        prompt: "Weather?",
        stopWhen: stepCountIs(3),
      });
      expect(result.text).toBe("done");
      // What the model read on its next turn: the tool's content, the weather.
      const read = JSON.stringify(model.doGenerateCalls[1]!.prompt.at(-1));
      expect(read).toContain(JSON.stringify(JSON.stringify(WEATHER)).slice(1, -1));
      expect(mcpSeller.log.settled).toEqual(expect.arrayContaining([expect.objectContaining({ tool: "weather" })]));
      expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    } finally {
      await mcp.close();
    }
  });

  it("LangChain: loadMcpTools over the wrapped SDK Client; an agent's call of a paid tool pays once and reads the result", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const client = createX402Client({ schemes: [exactEvm({ signer: buyer.account })] });
    const sdk = new Client({ name: "langchain-agent", version: "1.0.0" });
    await sdk.connect(new StreamableHTTPClientTransport(new URL(mcpSeller.url)));
    try {
      const tools = await loadMcpTools("paid", wrapMcpClientWithPayment(sdk, client));
      const model = fakeModel()
        .respondWithTools([{ name: "weather", args: { city: "Lisbon" }, id: "c1" }])
        .respond(new AIMessage("done"));
      const agent = createAgent({ model, tools: tools.filter((tool) => tool.name === "weather") });
      const result = await agent.invoke({ messages: [{ role: "user", content: "Weather?" }] });
      const answer = result.messages.find((m: unknown): m is ToolMessage => ToolMessage.isInstance(m));
      expect(answer?.status).toBe("success");
      expect(JSON.stringify(answer?.content)).toContain("sunny");
      expect(result.messages.at(-1)!.content).toBe("done");
      expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    } finally {
      await sdk.close();
    }
  });
});
