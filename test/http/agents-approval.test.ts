/**
 * Every answer an approval can get: only a yes pays, and an approved call pays at most the price the person saw. What a
 * LangGraph resume means (approvedBy), the OpenAI Agents SDK's `needsApproval` and `execute` through their
 * framework-free core (src/agents/doors.ts; that SDK needs Node 22, its own run loop is in test/runtimes), and the
 * tool's ceiling. The real LangGraph and AI SDK are in agents-approval-frameworks.test.ts. Each case checks what the
 * seller received, not only what the model read.
 */
import { describe, expect, it } from "vitest";
import { HttpResponse, http } from "msw";
import { createPaidFetch, type ApprovalStore } from "../../src/agents";
import { agentsSdkTool, approvedBy } from "../../src/agents/doors";
import { NOT_YES, raisingSeller } from "../support/agents";
import { useMswServer } from "../support/msw";
import { PATH, SELLER, createSeller, payingClient } from "../support/seller";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

describe("what a LangGraph resume means (approvedBy)", () => {
  it.each([
    ["true", true],
    ["{ approved: true }", { approved: true }],
    ["{ approved: true, reason }", { approved: true, reason: "fine" }],
  ])("%s pays", (_, resume) => {
    expect(approvedBy(resume)).toBe(true);
  });

  it.each([...NOT_YES, ["null", null], ["undefined", undefined]])("%s pays nothing", (_, resume) => {
    expect(approvedBy(resume)).toBe(false);
  });
});

describe("x402-pay/openai-agents' core: needsApproval and execute as the Agents SDK calls them", () => {
  const context = {};
  /** The door's parts over a fresh client, with approval above $0.005. */
  function door(seller = createSeller()) {
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const paid = createPaidFetch(client, { approval: "$0.005" });
    const sdk = agentsSdkTool(paid, true) as Required<ReturnType<typeof agentsSdkTool>>;
    return { paid, sdk, signs, seller };
  }
  const read = (text: string) => JSON.parse(text);

  it("approved (asked, asked again on resume, then run with the call's id): pays the quoted price once", async () => {
    const { paid, sdk, signs, seller } = door();
    expect(await sdk.needsApproval(context, { url }, "call-1")).toBe(true);
    expect((await paid.approvalOf("call-1"))?.price).toBe("0.01 USDC");
    expect(await sdk.needsApproval(context, { url }, "call-1")).toBe(true);
    expect(signs).toHaveLength(0);
    const answer = read(await sdk.execute({ url }, context, { toolCall: { callId: "call-1" } }));
    expect(answer.paid).toMatch(/^0\.01 USDC on eip155:84532 \(transaction 0x/);
    expect(signs).toHaveLength(1);
    expect(seller.payments).toHaveLength(1);
  });

  it("rejected (the SDK never runs the tool): the quote's request is the only one, nothing signed", async () => {
    const { sdk, signs, seller } = door();
    expect(await sdk.needsApproval(context, { url }, "call-1")).toBe(true);
    expect(seller.requests).toHaveLength(1);
    expect(signs).toHaveLength(0);
  });

  it("a call the SDK does not name is asked, and its run pays nothing (APPROVAL_REQUIRED); nothing is sent to decide", async () => {
    const { sdk, signs, seller } = door();
    expect(await sdk.needsApproval(context, { url }, undefined)).toBe(true);
    expect(seller.requests).toHaveLength(0);
    const answer = read(await sdk.execute({ url }, context, {}));
    expect(answer).toMatchObject({ ok: false, paid: "nothing", error: { code: "APPROVAL_REQUIRED" } });
    expect(read(await sdk.execute({ url }))).toMatchObject({ error: { code: "APPROVAL_REQUIRED" } });
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
  });

  it("run under another call's id, or with other input than approved: APPROVAL_REQUIRED, nothing paid", async () => {
    const { sdk, signs, seller } = door(createSeller({ path: `${PATH}*` }));
    expect(await sdk.needsApproval(context, { url }, "call-1")).toBe(true);
    const other = read(await sdk.execute({ url }, context, { toolCall: { callId: "call-2" } }));
    expect(other.error.code).toBe("APPROVAL_REQUIRED");
    expect(await sdk.needsApproval(context, { url }, "call-3")).toBe(true);
    const changed = read(await sdk.execute({ url: `${url}?more=1` }, context, { toolCall: { callId: "call-3" } }));
    expect(changed.error.code).toBe("APPROVAL_REQUIRED");
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
  });

  it("an approved call runs once: run again under the same id, it pays nothing more", async () => {
    const { sdk, signs, seller } = door();
    expect(await sdk.needsApproval(context, { url }, "call-1")).toBe(true);
    await sdk.execute({ url }, context, { toolCall: { callId: "call-1" } });
    const again = read(await sdk.execute({ url }, context, { toolCall: { callId: "call-1" } }));
    expect(again).toMatchObject({ paid: "nothing", error: { code: "APPROVAL_REQUIRED" } });
    expect(signs).toHaveLength(1);
    expect(seller.payments).toHaveLength(1);
  });

  it("approved with a looser maxPrice from the model, a seller asking one base unit more is refused: nothing signed", async () => {
    const { sdk, signs, seller } = door(raisingSeller("10000", "10001"));
    const input = { url, maxPrice: "$1" };
    expect(await sdk.needsApproval(context, input, "call-1")).toBe(true);
    const answer = read(await sdk.execute(input, context, { toolCall: { callId: "call-1" } }));
    expect(answer).toMatchObject({ paid: "nothing", error: { code: "NO_PAYABLE_REQUIREMENT" } });
    expect(signs).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
  });

  it("below the rule: not asked, and the run pays", async () => {
    server.use(createSeller().handler);
    const { client, signs } = payingClient();
    const sdk = agentsSdkTool(createPaidFetch(client, { approval: "$0.05" }), true);
    expect(await sdk.needsApproval!(context, { url }, "call-1")).toBe(false);
    expect(read(await sdk.execute({ url }, context, { toolCall: { callId: "call-1" } })).paid).toMatch(/^0\.01 USDC/);
    expect(signs).toHaveLength(1);
  });

  it("without an approval rule the door gives the SDK no needsApproval, and the run pays", async () => {
    server.use(createSeller().handler);
    const { client, signs } = payingClient();
    const sdk = agentsSdkTool(createPaidFetch(client), false);
    expect("needsApproval" in sdk).toBe(false);
    expect(read(await sdk.execute({ url })).paid).toMatch(/^0\.01 USDC/);
    expect(signs).toHaveLength(1);
  });

  it("the run's signal reaches the request: aborted, execute throws and nothing is sent", async () => {
    const { sdk, seller } = door();
    const controller = new AbortController();
    controller.abort(new Error("run cancelled"));
    expect(await sdk.needsApproval(context, { url }, "call-1")).toBe(true);
    await expect(
      sdk.execute({ url }, context, { toolCall: { callId: "call-1" }, signal: controller.signal }),
    ).rejects.toThrow("run cancelled");
    expect(seller.payments).toHaveLength(0);
  });
});

describe("the framework-free tool: an approved call's ceiling is the quote, not the model's maxPrice", () => {
  it.each([
    ["the same price", "10000", 1],
    ["one base unit more", "10001", 0],
  ])(
    "approved at 0.01 USDC with a maxPrice of one dollar, the seller then asking %s: %i payments",
    async (_, then, payments) => {
      const seller = raisingSeller("10000", then);
      server.use(seller.handler);
      const { client, signs } = payingClient();
      const tool = createPaidFetch(client, { approval: "$0.005" });
      expect(await tool.needsApproval({ url, maxPrice: "$1" }, { callId: "c1" })).toBe(true);
      const answer = await tool.run({ url, maxPrice: "$1" }, { callId: "c1" });
      expect(signs).toHaveLength(payments);
      expect(seller.payments).toHaveLength(payments);
      if (payments === 0) expect(answer).toMatchObject({ paid: "nothing", error: { code: "NO_PAYABLE_REQUIREMENT" } });
      else expect(answer.paid).toMatch(/^0\.01 USDC/);
    },
  );

  it("asked inside the run with a looser maxPrice: the yes pays at most the price asked about", async () => {
    const seller = raisingSeller("10000", "10001");
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const tool = createPaidFetch(client, { approval: "$0.005" });
    const interrupt = new Error("interrupted");
    const input = { url, maxPrice: "$1" };
    await expect(tool.run(input, { callId: "c2", ask: () => Promise.reject(interrupt) })).rejects.toBe(interrupt);
    const answer = await tool.run(input, { callId: "c2", ask: () => true });
    expect(answer).toMatchObject({ paid: "nothing", error: { code: "NO_PAYABLE_REQUIREMENT" } });
    expect(signs).toHaveLength(0);
  });
});

describe("the framework-free tool: what a decision keeps, and for how long", () => {
  /** A memory store that records every key it is given. */
  function recordingStore() {
    const kept = new Map<string, unknown>();
    const keys: unknown[] = [];
    const store: ApprovalStore = {
      get: (id) => (keys.push(id), kept.get(id)),
      set: (id, record) => (keys.push(id), kept.set(id, record)),
      delete: (id) => (keys.push(id), kept.delete(id)),
    };
    return { store, kept, keys };
  }

  it("below the rule, a run that can ask does not ask, and pays", async () => {
    server.use(createSeller().handler);
    const { client, signs } = payingClient();
    const asked: unknown[] = [];
    const tool = createPaidFetch(client, { approval: "$0.05" });
    const answer = await tool.run({ url }, { callId: "c1", ask: (approval) => (asked.push(approval), false) });
    expect(answer.paid).toMatch(/^0\.01 USDC/);
    expect(asked).toEqual([]);
    expect(signs).toHaveLength(1);
  });

  it.each([
    [true, /^0\.01 USDC/],
    [false, /^nothing$/],
  ])(
    "asked inside the run and answered %s: the kept quote is let go (asked again, it is asked anew)",
    async (yes, paid) => {
      server.use(createSeller().handler);
      const { client } = payingClient();
      const { store, kept } = recordingStore();
      const tool = createPaidFetch(client, { approval: "$0.005", approvals: store });
      const answer = await tool.run({ url }, { callId: "c1", ask: () => yes });
      expect(answer.paid).toMatch(paid);
      if (!yes) expect(answer.error?.message).toBe("The payment of 0.01 USDC was not approved: nothing was paid.");
      expect(kept.size).toBe(0);
      expect(await tool.approvalOf("c1")).toBeUndefined();
    },
  );

  it("asked inside a run without a call id: the store is not written under no id", async () => {
    server.use(createSeller().handler);
    const { client } = payingClient();
    const { store, keys } = recordingStore();
    const tool = createPaidFetch(client, { approval: "$0.005", approvals: store });
    expect((await tool.run({ url }, { ask: () => false })).error?.code).toBe("APPROVAL_DENIED");
    expect(keys).toEqual([]);
  });

  it("input the tool refuses is never asked about, and nothing is sent to decide", async () => {
    const sent: unknown[] = [];
    const fetch = (input: unknown) => (sent.push(input), Promise.resolve(new Response("free")));
    const tool = createPaidFetch(payingClient().client, { approval: "$0", fetch: fetch as typeof globalThis.fetch });
    expect(await tool.needsApproval({ url: "file:///etc/passwd" }, { callId: "c1" })).toBe(false);
    expect(await tool.needsApproval({ nope: 1 }, { callId: "c2" })).toBe(false);
    expect(sent).toEqual([]);
  });

  it("asked again for a call that needed no yes (below the rule, or free), the answer stays no", async () => {
    server.use(
      createSeller().handler,
      http.get(`${SELLER}/free`, () => HttpResponse.text("free")),
    );
    const tool = createPaidFetch(payingClient().client, { approval: "$0.05" });
    for (const input of [{ url }, { url: `${SELLER}/free` }]) {
      expect(await tool.needsApproval(input, { callId: input.url })).toBe(false);
      expect(await tool.needsApproval(input, { callId: input.url })).toBe(false);
    }
  });
});
