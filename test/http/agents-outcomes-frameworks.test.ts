/**
 * What the model is told, for every outcome of docs/agents.md's table ("What the model sees"), through the real
 * frameworks: the AI SDK (`generateText` with a scripted model) and LangChain (`createAgent` with a scripted model). The
 * same rows as agents-outcomes.test.ts (the framework-free tool and the Agents SDK's core), from test/support/agents.ts.
 */
import { generateText, stepCountIs } from "ai";
import { describe, expect, it } from "vitest";
import { paidFetchTool as aiSdkTool } from "../../src/ai-sdk";
import { paidFetchTool as langchainTool } from "../../src/langchain";
import {
  type Door,
  OUTCOMES,
  aiSdkRead,
  expectOutcome,
  langchainAgent,
  langchainRead,
  scriptedModel,
} from "../support/agents";
import { useMswServer } from "../support/msw";

const server = useMswServer();

const doors: Door[] = [
  {
    name: "x402-pay/ai-sdk",
    async answer(client, input, options) {
      const model = scriptedModel(input);
      const tools = { paid_fetch: aiSdkTool(client, options) };
      await generateText({ model, tools, prompt: "Buy it.", stopWhen: stepCountIs(3) });
      const output = aiSdkRead(model, 1);
      expect(output.type).toBe("json");
      return output.value as Record<string, any>;
    },
  },
  {
    name: "x402-pay/langchain",
    async answer(client, input, options) {
      const { agent, model } = await langchainAgent(langchainTool(client, options), input);
      await agent.invoke({ messages: [{ role: "user", content: "Buy it." }] }, { configurable: { thread_id: "t" } });
      return langchainRead(model).answer;
    },
  },
];

describe.each(doors)("$name: what the model reads for each outcome", (door) => {
  it.each(OUTCOMES.filter((row) => !row.skip?.includes(door.name)))("$outcome", (row) =>
    expectOutcome(server, door, row),
  );
});
