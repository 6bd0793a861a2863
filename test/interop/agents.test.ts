// The agent doors against the unmodified reference seller and facilitator on anvil: a scripted model (the
// framework's own test model) calls paidFetchTool in the framework's real loop, and the chain moves exactly the price.
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { generateText, stepCountIs } from "ai";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { paidFetchTool } from "../../src/ai-sdk";
import { exactEvm } from "../../src/evm";
import { paidFetchTool as langchainTool } from "../../src/langchain";
import { scriptedModel } from "../support/agents";
import { PRICE_ATOMIC, fundedBuyer, startInteropStack, type InteropStack } from "../localnet/index.js";

let stack: InteropStack;

beforeAll(async () => {
  stack = await startInteropStack();
});
afterAll(async () => {
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
