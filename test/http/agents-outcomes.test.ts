/**
 * What the model is told, for every outcome of docs/agents.md's table ("What the model sees"), through the
 * framework-free tool and the OpenAI Agents SDK's core (src/agents/doors.ts, what its door hands the SDK; the SDK needs
 * Node 22). The AI SDK and LangChain run the same rows in agents-outcomes-frameworks.test.ts. Each row pins `ok`,
 * `paid` and `error.code` as the table says, and how many payments were signed: a payment that may have moved money is
 * never answered `paid: "nothing"` (the model could pay again).
 */
import { describe, it } from "vitest";
import { createPaidFetch } from "../../src/agents";
import { agentsSdkTool } from "../../src/agents/doors";
import { type Door, OUTCOMES, expectOutcome } from "../support/agents";
import { useMswServer } from "../support/msw";

const server = useMswServer();

const doors: Door[] = [
  {
    name: "the framework-free tool",
    answer: async (client, input, options) =>
      (await createPaidFetch(client, options).run(input, { callId: "call-1" })) as Record<string, any>,
  },
  {
    name: "x402-pay/openai-agents (its core)",
    async answer(client, input, options) {
      const sdk = agentsSdkTool(createPaidFetch(client, options), options.approval !== undefined);
      if (sdk.needsApproval) await sdk.needsApproval({}, input, "call-1");
      return JSON.parse(await sdk.execute(input, {}, { toolCall: { callId: "call-1" } }));
    },
  },
];

describe.each(doors)("$name: what the model reads for each outcome", (door) => {
  it.each(OUTCOMES.filter((row) => !row.skip?.includes(door.name)))("$outcome", (row) =>
    expectOutcome(server, door, row),
  );
});
