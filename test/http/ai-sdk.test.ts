/**
 * x402-pay/ai-sdk with the real AI SDK (`ai` 6): its agent loop (`generateText`, `stopWhen`), its approval step
 * (`needsApproval`, `tool-approval-request` / `-response`) and a scripted model (`MockLanguageModelV3` from `ai/test`,
 * no network, no key) against msw sellers. The chain's side is in test/interop/agents.test.ts.
 */
import { generateText, stepCountIs, type ModelMessage } from "ai";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { budget } from "../../src";
import { paidFetchTool } from "../../src/ai-sdk";
import { PAID_ANSWER, aiSdkRead, raisingSeller, scriptedModel } from "../support/agents";
import { useMswServer } from "../support/msw";
import { PATH, SELLER, createSeller, payingClient } from "../support/seller";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const toolOutput = aiSdkRead;

const messages: ModelMessage[] = [{ role: "user", content: "Get the premium data." }];

describe("x402-pay/ai-sdk: paidFetchTool in generateText", () => {
  it("without an approval rule the tool has no needsApproval (the SDK never stops the run for it)", () => {
    const { client } = payingClient();
    expect("needsApproval" in paidFetchTool(client)).toBe(false);
    expect(typeof paidFetchTool(client, { approval: "$1" }).needsApproval).toBe("function");
  });

  it("the model calls the tool, it pays once, and the model's next turn reads the body and what was paid", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const model = scriptedModel({ url });
    const result = await generateText({
      model,
      tools: { paid_fetch: paidFetchTool(client) },
      messages,
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("done");
    expect(toolOutput(model, 1)).toEqual({ type: "json", value: PAID_ANSWER });
    expect(signs).toHaveLength(1);
    expect(seller.payments).toHaveLength(1);
    // The model was shown the tool's JSON Schema, each field described.
    const [shown] = model.doGenerateCalls[0]!.tools as { name: string; inputSchema: Record<string, any> }[];
    expect(shown!.name).toBe("paid_fetch");
    expect(shown!.inputSchema.required).toEqual(["url"]);
    expect(Object.keys(shown!.inputSchema.properties)).toEqual(["url", "method", "headers", "body", "maxPrice"]);
    expect(shown!.inputSchema.properties.maxPrice.description).toMatch(/USD/);
  });

  it("a budget that refuses: the model reads the refusal, nothing signed", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient({ plugins: [budget({ limit: "$0.005" })] });
    const model = scriptedModel({ url });
    await generateText({ model, tools: { paid_fetch: paidFetchTool(client) }, messages, stopWhen: stepCountIs(3) });
    const output = toolOutput(model, 1) as { value: { error: { code: string; message: string }; paid: string } };
    expect(output.value.paid).toBe("nothing");
    expect(output.value.error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(output.value.error.message).toMatch(/budget/);
    expect(signs).toHaveLength(0);
  });

  it("below the approval threshold it pays without stopping the run", async () => {
    server.use(createSeller().handler);
    const { client, signs } = payingClient();
    const model = scriptedModel({ url });
    const tools = { paid_fetch: paidFetchTool(client, { approval: "$0.05" }) };
    const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(3) });
    expect(result.text).toBe("done");
    expect(result.content.some((p) => p.type === "tool-approval-request")).toBe(false);
    expect(signs).toHaveLength(1);
  });

  /** Runs until the approval request; then answers it (`approved`), and runs on. */
  async function approvalRun(approved: boolean, seller = createSeller()) {
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const tool = paidFetchTool(client, { approval: "$0.005" });
    const model = scriptedModel({ url });
    const tools = { paid_fetch: tool };
    const first = await generateText({ model, tools, messages, stopWhen: stepCountIs(3) });
    const request = first.content.find((p) => p.type === "tool-approval-request");
    expect(request).toBeDefined();
    expect(signs).toHaveLength(0);
    // What the person is shown: the seller's price, from the 402.
    const approval = await tool.approvalOf(request!.toolCall.toolCallId);
    expect(approval).toMatchObject({ price: "0.01 USDC", url, network: "eip155:84532" });
    const answer: ModelMessage = {
      role: "tool",
      content: [{ type: "tool-approval-response", approvalId: request!.approvalId, approved, reason: "as you say" }],
    };
    const second = await generateText({
      model,
      tools,
      messages: [...messages, ...first.response.messages, answer],
      stopWhen: stepCountIs(3),
    });
    return { second, signs, seller, model };
  }

  it("above the threshold the run stops for approval; approved, it pays once", async () => {
    const { second, signs, seller, model } = await approvalRun(true);
    expect(second.text).toBe("done");
    expect(signs).toHaveLength(1);
    expect(seller.payments).toHaveLength(1);
    expect((toolOutput(model, 1) as { value: { paid: string } }).value.paid).toMatch(/^0\.01 USDC/);
  });

  it("denied: nothing is signed, and the model is told", async () => {
    const { signs, seller, model } = await approvalRun(false);
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
    expect(toolOutput(model, 1)).toEqual({ type: "execution-denied", reason: "as you say" });
  });

  it("a seller that raises its price after the yes is refused: nothing signed", async () => {
    const seller = raisingSeller("10000", "20000");
    const { signs, model } = await approvalRun(true, seller);
    expect(signs).toHaveLength(0);
    const output = toolOutput(model, 1) as { value: { error: { code: string }; paid: string } };
    expect(output.value.error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(output.value.paid).toBe("nothing");
  });

  it("a 10 MB body is read bounded: the model reads 4,000 characters and a note", async () => {
    server.use(http.get(url, () => HttpResponse.text("x".repeat(10_000_000))));
    const { client } = payingClient();
    const model = scriptedModel({ url });
    await generateText({ model, tools: { paid_fetch: paidFetchTool(client) }, messages, stopWhen: stepCountIs(3) });
    const { value } = toolOutput(model, 1) as { value: { body: string; bodyNote: string } };
    expect(value.body).toHaveLength(4000);
    expect(value.bodyNote).toMatch(/^cut short/);
  });

  it("the run's abort signal stops the payment before anything is sent", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const controller = new AbortController();
    controller.abort(new Error("user left"));
    const model = scriptedModel({ url });
    await expect(
      generateText({
        model,
        tools: { paid_fetch: paidFetchTool(client) },
        messages,
        stopWhen: stepCountIs(3),
        abortSignal: controller.signal,
      }),
    ).rejects.toThrow();
    expect(seller.requests).toHaveLength(0);
    expect(signs).toHaveLength(0);
  });
});
