/**
 * x402-pay/langchain with the real LangChain (`langchain`'s createAgent over LangGraph, a MemorySaver checkpointer,
 * `interrupt()` and `Command({ resume })`) and a scripted model (`fakeModel()` from `@langchain/core/testing`: no network,
 * no key) against msw sellers. The chain's side is in test/interop/agents.test.ts.
 */
import { Command } from "@langchain/langgraph";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { budget } from "../../src";
import { paidFetchTool, type PaidFetchInterrupt } from "../../src/langchain";
import { PAID_ANSWER, langchainAgent, langchainRead, raisingSeller } from "../support/agents";
import { useMswServer } from "../support/msw";
import { PATH, SELLER, createSeller, payingClient } from "../support/seller";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

const agentWith = langchainAgent;
const toolRead = langchainRead;

const ask = { messages: [{ role: "user", content: "Get the premium data." }] };
const thread = (id: string) => ({ configurable: { thread_id: id } });

describe("x402-pay/langchain: paidFetchTool in createAgent", () => {
  it("invoked directly (no model's tool call: no id; or its function given no config at all), it pays once", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const paid = paidFetchTool(client);
    expect(JSON.parse(await paid.invoke({ url }))).toEqual(PAID_ANSWER);
    const bare = paid.func as unknown as (input: { url: string }) => Promise<string>;
    expect(JSON.parse(await bare({ url }))).toEqual(PAID_ANSWER);
    expect(signs).toHaveLength(2);
    expect(seller.payments).toHaveLength(2);
  });

  it("the model calls the tool, it pays once, and the model's next turn reads the body and what was paid", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const { agent, model } = await agentWith(paidFetchTool(client), { url });
    const result = await agent.invoke(ask, thread("t1"));
    expect(result.messages.at(-1)!.content).toBe("done");
    expect(toolRead(model).answer).toEqual(PAID_ANSWER);
    expect(signs).toHaveLength(1);
    expect(seller.payments).toHaveLength(1);
  });

  it("a budget that refuses: the model reads the refusal, nothing signed", async () => {
    server.use(createSeller().handler);
    const { client, signs } = payingClient({ plugins: [budget({ limit: "$0.005" })] });
    const { agent, model } = await agentWith(paidFetchTool(client), { url });
    await agent.invoke(ask, thread("t2"));
    const { answer } = toolRead(model);
    expect(answer.error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(answer.paid).toBe("nothing");
    expect(signs).toHaveLength(0);
  });

  it("below the approval threshold it pays without interrupting", async () => {
    server.use(createSeller().handler);
    const { client, signs } = payingClient();
    const { agent } = await agentWith(paidFetchTool(client, { approval: "$0.05" }), { url });
    const result = await agent.invoke(ask, thread("t3"));
    expect(result.__interrupt__).toBeUndefined();
    expect(signs).toHaveLength(1);
  });

  /** Runs to the interrupt, then resumes with `resume`. */
  async function approvalRun(resume: unknown, id: string, seller = createSeller()) {
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const { agent, model } = await agentWith(paidFetchTool(client, { approval: "$0.005" }), { url });
    const first = await agent.invoke(ask, thread(id));
    const asked = first.__interrupt__?.[0]?.value as PaidFetchInterrupt;
    expect(asked).toMatchObject({ type: "x402-payment-approval", price: "0.01 USDC", url, network: "eip155:84532" });
    expect(signs).toHaveLength(0);
    const second = await agent.invoke(new Command({ resume }), thread(id));
    return { second, signs, seller, model };
  }

  it("above the threshold the graph interrupts with the seller's price; approved, it pays once", async () => {
    const { second, signs, seller, model } = await approvalRun({ approved: true }, "t4");
    expect(second.messages.at(-1)!.content).toBe("done");
    expect(signs).toHaveLength(1);
    expect(seller.payments).toHaveLength(1);
    expect(toolRead(model).answer.paid).toMatch(/^0\.01 USDC/);
  });

  it("denied: nothing is signed, and the model is told", async () => {
    const { signs, seller, model } = await approvalRun({ approved: false }, "t5");
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
    expect(toolRead(model).answer.error.code).toBe("APPROVAL_DENIED");
  });

  it("a seller that raises its price while the graph waits is refused: nothing signed", async () => {
    const seller = raisingSeller("10000", "20000");
    const { signs, model } = await approvalRun(true, "t6", seller);
    expect(signs).toHaveLength(0);
    expect(toolRead(model).answer.error.code).toBe("NO_PAYABLE_REQUIREMENT");
  });

  it("a 10 MB body is read bounded", async () => {
    server.use(http.get(url, () => HttpResponse.text("x".repeat(10_000_000))));
    const { client } = payingClient();
    const { agent, model } = await agentWith(paidFetchTool(client), { url });
    await agent.invoke(ask, thread("t7"));
    const { answer } = toolRead(model);
    expect(answer.body).toHaveLength(4000);
    expect(answer.bodyNote).toMatch(/^cut short/);
  });

  it("the run's abort signal stops the payment before anything is sent", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const { agent } = await agentWith(paidFetchTool(client), { url });
    const controller = new AbortController();
    controller.abort(new Error("user left"));
    await expect(agent.invoke(ask, { ...thread("t8"), signal: controller.signal })).rejects.toThrow();
    expect(seller.requests).toHaveLength(0);
    expect(signs).toHaveLength(0);
  });
});
