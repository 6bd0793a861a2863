/**
 * Every answer an approval can get, in the real frameworks: LangGraph's resume values (only `true` and
 * `{ approved: true }` pay) and the AI SDK's `tool-approval-response` shapes (its prompt check refuses a non-boolean
 * `approved`); an approved call pays at most the price the person saw, whatever maxPrice the model gave. Each case
 * checks what the seller received, not only what the model read. The Agents SDK's core is in agents-approval.test.ts.
 */
import { Command } from "@langchain/langgraph";
import { generateText, stepCountIs, type ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import type { ApprovalStore } from "../../src/agents";
import { paidFetchTool as aiSdkTool } from "../../src/ai-sdk";
import { paidFetchTool as langchainTool, type PaidFetchInterrupt } from "../../src/langchain";
import { NOT_YES, aiSdkRead, langchainAgent, langchainRead, raisingSeller, scriptedModel } from "../support/agents";
import { useMswServer } from "../support/msw";
import { PATH, SELLER, createSeller, payingClient } from "../support/seller";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

describe("x402-pay/langchain: every resume of the interrupt", () => {
  /** Runs the agent to its interrupt (the seller's price), then resumes with `resume`. */
  async function resumed(
    resume: unknown,
    id: string,
    seller = createSeller(),
    input: Record<string, unknown> = { url },
  ) {
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const { agent, model } = await langchainAgent(langchainTool(client, { approval: "$0.005" }), input);
    const config = { configurable: { thread_id: id } };
    const first = await agent.invoke({ messages: [{ role: "user", content: "Buy it." }] }, config);
    const asked = first.__interrupt__?.[0]?.value as PaidFetchInterrupt;
    expect(asked).toMatchObject({ type: "x402-payment-approval", price: "0.01 USDC", amount: "10000" });
    expect(signs).toHaveLength(0);
    const second = agent.invoke(new Command({ resume }), config);
    return { second, signs, seller, model };
  }

  it.each(NOT_YES)(
    "resumed with %s: the seller got no payment, and the model reads APPROVAL_DENIED",
    async (_, resume) => {
      const { second, signs, seller, model } = await resumed(resume, `no-${JSON.stringify(resume)}`);
      await second;
      expect(signs).toHaveLength(0);
      expect(seller.payments).toHaveLength(0);
      expect(langchainRead(model).answer).toMatchObject({
        ok: false,
        paid: "nothing",
        error: { code: "APPROVAL_DENIED" },
      });
    },
  );

  it.each([
    ["null", null],
    ["undefined", undefined],
  ])("resumed with %s: LangGraph refuses the empty resume, and no payment is made", async (_, resume) => {
    const { second, signs, seller } = await resumed(resume, `empty-${String(resume)}`);
    await expect(second).rejects.toThrow(/empty Command input/);
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
  });

  it("resumed with true: it pays the price asked about, once", async () => {
    const { second, signs, seller, model } = await resumed(true, "yes-true");
    await second;
    expect(signs).toHaveLength(1);
    expect(seller.payments).toHaveLength(1);
    expect(seller.payments[0].accepted.amount).toBe("10000");
    expect(langchainRead(model).answer.paid).toMatch(/^0\.01 USDC on eip155:84532 \(transaction 0x/);
  });

  it("approved with a looser maxPrice from the model, a seller asking one base unit more is refused: nothing signed", async () => {
    const seller = raisingSeller("10000", "10001");
    const { second, signs, model } = await resumed({ approved: true }, "looser", seller, { url, maxPrice: "$1" });
    await second;
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
    expect(langchainRead(model).answer).toMatchObject({ paid: "nothing", error: { code: "NO_PAYABLE_REQUIREMENT" } });
  });
});

describe("x402-pay/ai-sdk: every tool-approval-response", () => {
  const messages: ModelMessage[] = [{ role: "user", content: "Buy it." }];

  /** Runs to the approval request, then answers it with `response` (merged into a tool-approval-response part). */
  async function answered(
    response: Record<string, unknown>,
    seller = createSeller(),
    input: Record<string, unknown> = { url },
    approvals?: ApprovalStore,
  ) {
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const tools = { paid_fetch: aiSdkTool(client, { approval: "$0.005", approvals }) };
    const model = scriptedModel(input);
    const first = await generateText({ model, tools, messages, stopWhen: stepCountIs(3) });
    const request = first.content.find((p) => p.type === "tool-approval-request")!;
    expect(request).toBeDefined();
    expect(signs).toHaveLength(0);
    const part = { type: "tool-approval-response", approvalId: request.approvalId, ...response };
    const next = [...messages, ...first.response.messages, { role: "tool", content: [part] } as ModelMessage];
    const second = generateText({ model, tools, messages: next, stopWhen: stepCountIs(3) });
    return { second, signs, seller, model };
  }

  it("approved: true pays the price asked about, once", async () => {
    const { second, signs, seller, model } = await answered({ approved: true });
    await second;
    expect(signs).toHaveLength(1);
    expect(seller.payments).toHaveLength(1);
    expect((aiSdkRead(model, 1) as { value: { paid: string } }).value.paid).toMatch(/^0\.01 USDC on eip155:84532/);
  });

  it("approved: false pays nothing; the model reads execution-denied", async () => {
    const { second, signs, seller, model } = await answered({ approved: false });
    await second;
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
    expect(aiSdkRead(model, 1)).toMatchObject({ type: "execution-denied" });
  });

  it.each([
    ["missing", {}],
    ['"true"', { approved: "true" }],
    ['"false"', { approved: "false" }],
    ["1", { approved: 1 }],
    ["null", { approved: null }],
    ["{ approved: true } nested", { approved: { approved: true } }],
  ])("approved %s: the SDK refuses the prompt, and the seller got no payment", async (_, response) => {
    const { second, signs, seller } = await answered(response);
    await expect(second).rejects.toThrow(/prompt|approved|invalid/i);
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
  });

  it("approved with a looser maxPrice from the model, a seller asking one base unit more is refused: nothing signed", async () => {
    const seller = raisingSeller("10000", "10001");
    const { second, signs, model } = await answered({ approved: true }, seller, { url, maxPrice: "$1" });
    await second;
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
    const { value } = aiSdkRead(model, 1) as { value: { paid: string; error: { code: string } } };
    expect(value).toMatchObject({ paid: "nothing", error: { code: "NO_PAYABLE_REQUIREMENT" } });
  });

  it("approved, but the quote was not kept (a store that forgets): APPROVAL_REQUIRED, nothing paid", async () => {
    const forgets: ApprovalStore = { get: () => undefined, set: () => {}, delete: () => {} };
    const { second, signs, seller, model } = await answered({ approved: true }, createSeller(), { url }, forgets);
    await second;
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
    const { value } = aiSdkRead(model, 1) as { value: { paid: string; error: { code: string } } };
    expect(value).toMatchObject({ paid: "nothing", error: { code: "APPROVAL_REQUIRED" } });
  });
});
