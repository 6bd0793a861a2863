/**
 * What the agent-tool tests share: a scripted AI SDK model (one paid_fetch call, then "done") and what it read back, a
 * LangChain agent with a scripted model and what it read back, a seller that raises its price after its first 402, and
 * the answer a model reads for the default seller's paid call.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { fakeModel } from "@langchain/core/testing";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { MockLanguageModelV3 } from "ai/test";
import { HttpResponse, http, type HttpHandler } from "msw";
import type { SetupServer } from "msw/node";
import { expect } from "vitest";
import { budget, type X402ClientOptions } from "../../src";
import type { PaidFetchToolOptions } from "../../src/agents";
import {
  OTHER,
  PATH,
  SELLER,
  TX_HASH,
  challengeResponse,
  createSeller,
  encodeHeader,
  payingClient,
  settlementHeader,
  v2Challenge,
  v2Requirement,
} from "./seller";

/** A language model's usage, as the AI SDK's mock reports it. */
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** An AI SDK model that calls paid_fetch with `input`, then answers "done": its prompts show what it read. */
export function scriptedModel(input: Record<string, unknown>) {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "paid_fetch", input: JSON.stringify(input) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      },
      {
        content: [{ type: "text", text: "done" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      },
    ],
  });
}

/** A seller asking `amounts[i]` base units of USDC at its i-th 402 (the last one after that); paid as usual. */
export function raisingSeller(...amounts: string[]) {
  let asked = 0;
  return createSeller({
    intercept: (request) => {
      if (request.headers.has("payment-signature")) return undefined;
      const amount = amounts[Math.min(asked++, amounts.length - 1)]!;
      const challenge = v2Challenge({ accepts: [v2Requirement({ amount })] });
      return HttpResponse.json({}, { status: 402, headers: { "PAYMENT-REQUIRED": encodeHeader(challenge) } });
    },
  });
}

/** What the model reads for the default seller's paid call (0.01 USDC on Base Sepolia). */
export const PAID_ANSWER = {
  ok: true,
  status: 200,
  contentType: "application/json",
  body: { data: "premium" },
  paid: `0.01 USDC on eip155:84532 (transaction ${TX_HASH})`,
};

/** What an AI SDK model read back from the tool on its turn `call` (the tool-result's output). */
export function aiSdkRead(model: MockLanguageModelV3, call: number) {
  const prompt = model.doGenerateCalls[call]!.prompt;
  const message = [...prompt].reverse().find((m) => m.role === "tool")!;
  const part = (
    message.content as { type: string; output?: { type: string; value?: unknown; reason?: string } }[]
  ).find((p) => p.type === "tool-result")!;
  return part.output!;
}

/**
 * A LangChain agent whose model calls paid_fetch with `input`, then says "done"; what the model read is in
 * `model.calls`. LangChain is loaded here, when asked for, so the tests of the framework-free tool do not load it.
 */
export async function langchainAgent(tool: StructuredToolInterface, input: Record<string, unknown>) {
  const [{ AIMessage }, { fakeModel }, { MemorySaver }, { createAgent }] = await Promise.all([
    import("@langchain/core/messages"),
    import("@langchain/core/testing"),
    import("@langchain/langgraph"),
    import("langchain"),
  ]);
  const model = fakeModel()
    .respondWithTools([{ name: "paid_fetch", args: input, id: "call-1" }])
    .respond(new AIMessage("done"));
  const agent = createAgent({ model, tools: [tool], checkpointer: new MemorySaver() });
  return { agent, model };
}

/** The tool's answer as a LangChain model read it on its second turn (the tool message's JSON text), and its status. */
export function langchainRead(model: ReturnType<typeof fakeModel>) {
  const messages = model.calls[1]!.messages as BaseMessage[];
  const message = messages.find((m) => m.getType() === "tool")!;
  const text = String(message.content);
  return { status: (message as unknown as { status?: string }).status, text, answer: JSON.parse(text) };
}

/** Approval answers that are anything but a yes (LangGraph resumes, an ask's result): each must pay nothing. */
export const NOT_YES: [string, unknown][] = [
  ["{ approved: false }", { approved: false }],
  ["{ reason: 'no' }", { reason: "no" }],
  ['{ approved: "false" }', { approved: "false" }],
  ['{ approved: "true" }', { approved: "true" }],
  ["{ approved: 1 }", { approved: 1 }],
  ['"yes"', "yes"],
  ["false", false],
  ["1", 1],
  ["[true]", [true]],
  ["{ approved: [true] }", { approved: [true] }],
  ["{}", {}],
];

// ---------------------------------------------------------------- docs/agents.md's outcomes

const url = `${SELLER}${PATH}`;

/** The settlement a seller reports while its transaction is not yet confirmed (spec v2 §9). */
export const PENDING = {
  success: false,
  errorReason: "settlement_pending",
  network: "eip155:84532",
  transaction: TX_HASH,
};

/** A seller whose answer to the paid request is `answer`; its 402 as usual. */
const answering = (answer: () => Response) =>
  createSeller({ intercept: (request) => (request.headers.has("payment-signature") ? answer() : undefined) });

const MAY_HAVE_MOVED = "unknown: the payment may have moved money; do not pay for this again until it is known";

/**
 * An outcome of docs/agents.md's table ("What the model sees"), as a seller, a client and the tool's input and
 * options, and what the model must read: `ok`, `paid`, `error.code`, and how many payments were signed.
 */
export interface OutcomeRow {
  readonly outcome: string;
  readonly seller?: () => { handler: HttpHandler };
  readonly client?: Partial<X402ClientOptions>;
  readonly options?: PaidFetchToolOptions;
  readonly input?: Record<string, unknown>;
  readonly ok: boolean;
  /** `paid`, exactly (a string) or as a pattern. */
  readonly paid: string | RegExp;
  readonly code?: string;
  /** What `error.message` must say, where the row pins it. */
  readonly message?: RegExp;
  readonly signed: number;
  /** Doors the row does not apply to (said why beside it). */
  readonly skip?: readonly string[];
}

/** Every outcome of the table; each door's test runs them all (test/http/agents-outcomes*.test.ts). */
export const OUTCOMES: OutcomeRow[] = [
  {
    outcome: "paid and answered",
    seller: () => createSeller(),
    ok: true,
    paid: `0.01 USDC on eip155:84532 (transaction ${TX_HASH})`,
    signed: 1,
  },
  {
    outcome: "free (no 402)",
    seller: () => ({ handler: http.get(url, () => HttpResponse.text("free")) }),
    ok: true,
    paid: "nothing",
    signed: 0,
  },
  {
    outcome: "answered with an error status after paying",
    seller: () => createSeller({ paid: () => HttpResponse.text("oops", { status: 500 }) }),
    ok: false,
    paid: "0.01 USDC on eip155:84532, signed; the seller did not say it settled: the payment may have moved money",
    signed: 1,
  },
  {
    outcome: "settlement pending (answered with the content)",
    seller: () =>
      answering(() => HttpResponse.json({ data: "premium" }, { status: 200, headers: settlementHeader(2, PENDING) })),
    ok: true,
    paid: `0.01 USDC on eip155:84532 (transaction ${TX_HASH}), pending: the transaction is not yet confirmed`,
    signed: 1,
  },
  {
    outcome: "settlement pending (answered 402: PAYMENT_PENDING)",
    seller: () => answering(() => HttpResponse.json({}, { status: 402, headers: settlementHeader(2, PENDING) })),
    ok: false,
    paid:
      `unknown: the payment may have moved money (transaction ${TX_HASH}); do not pay for this again until it is ` +
      "known",
    code: "PAYMENT_PENDING",
    signed: 1,
  },
  {
    outcome: "refused by the policy",
    seller: () => createSeller(),
    client: { policy: { maxAmountPerPayment: "$0.001" } },
    ok: false,
    paid: "nothing",
    code: "NO_PAYABLE_REQUIREMENT",
    signed: 0,
  },
  {
    outcome: "refused by a budget",
    seller: () => createSeller(),
    client: { plugins: [budget({ limit: "$0.005", per: "day" })] },
    ok: false,
    paid: "nothing",
    code: "NO_PAYABLE_REQUIREMENT",
    signed: 0,
  },
  {
    outcome: "refused by maxPrice",
    seller: () => createSeller(),
    input: { url, maxPrice: "$0.009" },
    ok: false,
    paid: "nothing",
    code: "NO_PAYABLE_REQUIREMENT",
    signed: 0,
  },
  {
    outcome: "refused by the seller",
    seller: () => answering(() => challengeResponse({ ...v2Challenge(), error: "insufficient_funds" })),
    ok: false,
    paid: "nothing",
    code: "PAYMENT_REJECTED",
    signed: 1,
  },
  {
    outcome: "lost after the payment left",
    seller: () => createSeller({ paid: () => HttpResponse.error() }),
    ok: false,
    paid: MAY_HAVE_MOVED,
    code: "PAYMENT_OUTCOME_UNKNOWN",
    signed: 1,
  },
  {
    outcome: "input the tool refuses",
    seller: () => createSeller(),
    input: { url: "file:///etc/passwd" },
    ok: false,
    paid: "nothing",
    code: "INVALID_INPUT",
    signed: 0,
  },
  {
    outcome: "origin outside policy.origins",
    seller: () => createSeller(),
    client: { policy: { origins: [OTHER] } },
    ok: false,
    paid: "nothing",
    code: "ORIGIN_NOT_ALLOWED",
    message: /^Nothing was requested: the .*origin/,
    signed: 0,
  },
  {
    outcome: "needs approval it does not carry (the quote was not kept)",
    seller: () => createSeller(),
    options: { approval: "$0.005", approvals: { get: () => undefined, set: () => {}, delete: () => {} } },
    ok: false,
    paid: "nothing",
    code: "APPROVAL_REQUIRED",
    message: /^This costs 0\.01 USDC, which needs a person's approval.*nothing was paid\./,
    signed: 0,
    // The AI SDK stops the run for the approval (test/http/agents-approval.test.ts answers it: APPROVAL_REQUIRED);
    // LangChain asks inside the run, so a call there always carries its answer (APPROVAL_DENIED, in the same file).
    skip: ["x402-pay/ai-sdk", "x402-pay/langchain"],
  },
  {
    outcome: "an approval rule that throws",
    seller: () => createSeller(),
    options: {
      approval: () => {
        throw new Error("rule broke");
      },
    },
    ok: false,
    paid: "nothing",
    code: "APPROVAL_RULE_FAILED",
    message: /^The approval rule failed \(rule broke\): nothing was paid\./,
    signed: 0,
  },
  {
    outcome: "the seller is down",
    seller: () => ({ handler: http.get(url, () => HttpResponse.error()) }),
    ok: false,
    paid: "nothing",
    code: "REQUEST_FAILED",
    message: /^The request failed: /,
    signed: 0,
  },
];

/** A door: the tool over `client` with `options`, called once with `input`; what the model read, as an object. */
export interface Door {
  readonly name: string;
  answer(
    client: ReturnType<typeof payingClient>["client"],
    input: Record<string, unknown>,
    options: PaidFetchToolOptions,
  ): Promise<Record<string, any>>;
}

/** Runs `row` through `door` (its seller on `server`) and checks what the model read and what was signed. */
export async function expectOutcome(server: SetupServer, door: Door, row: OutcomeRow) {
  if (row.seller) server.use(row.seller().handler);
  const { client, signs } = payingClient(row.client);
  const answer = await door.answer(client, row.input ?? { url }, row.options ?? {});
  expect(answer.ok).toBe(row.ok);
  if (typeof row.paid === "string") expect(answer.paid).toBe(row.paid);
  else expect(answer.paid).toMatch(row.paid);
  expect(answer.error?.code).toBe(row.code);
  if (row.code) expect(answer.error.message).toMatch(row.message ?? /\w/);
  expect(signs).toHaveLength(row.signed);
  // Signed, the answer never says nothing was paid, unless the seller refused it (nothing was charged).
  if (row.signed > 0 && row.code !== "PAYMENT_REJECTED") expect(answer.paid).not.toBe("nothing");
}
