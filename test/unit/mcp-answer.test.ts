/**
 * Reading a tool call's answer for paying (src/mcp/answer.ts): which answers are payment requests (and so may cost
 * money), which are the tool's own, and which settlement a paid answer reports.
 */
import { describe, expect, it } from "vitest";
import { answerOf, challengeIn, paymentRequiredError, settlementIn, unwrap } from "../../src/mcp/answer";
import { TX_HASH, v1Challenge, v2Challenge } from "../support/seller";

const challenge = v2Challenge();
const text = (value: unknown) => [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value) }];

describe("challengeIn: a payment request, and nothing else", () => {
  it.each<{ name: string; answer: object; found: unknown }>([
    {
      name: "a challenge in structuredContent",
      answer: { isError: true, structuredContent: challenge, content: [] },
      found: challenge,
    },
    {
      name: "a challenge as the first text's JSON",
      answer: { isError: true, content: text(challenge) },
      found: challenge,
    },
    {
      name: "v1's x402/error wrapper in the text",
      answer: { isError: true, content: text({ "x402/error": { code: 402, data: challenge } }) },
      found: challenge,
    },
    { name: "a v1 challenge", answer: { isError: true, content: text(v1Challenge()) }, found: v1Challenge() },
    // Not an error result: the tool's own answer, whatever it carries.
    {
      name: "not an error result",
      answer: { structuredContent: challenge, content: text(challenge) },
      found: undefined,
    },
    { name: "isError as a string", answer: { isError: "true", content: text(challenge) }, found: undefined },
    { name: "isError as a number", answer: { isError: 1, structuredContent: challenge }, found: undefined },
    // The first content only, and only as text.
    {
      name: "a challenge in the second content, not the first",
      answer: { isError: true, content: [{ type: "text", text: "busy" }, ...text(challenge)] },
      found: undefined,
    },
    {
      name: "a content that is not text",
      answer: { isError: true, content: [{ type: "resource", text: JSON.stringify(challenge) }] },
      found: undefined,
    },
    {
      name: "a text that is not a string",
      answer: { isError: true, content: [{ type: "text", text: challenge }] },
      found: undefined,
    },
    {
      name: "content that is not an array",
      answer: { isError: true, content: { 0: text(challenge)[0] } },
      found: undefined,
    },
    { name: "no content", answer: { isError: true, content: [] }, found: undefined },
    { name: "nothing at all", answer: { isError: true }, found: undefined },
    // The wrapper's data must be a challenge itself.
    {
      name: "a wrapper whose data is not a challenge",
      answer: { isError: true, content: text({ "x402/error": challenge }) },
      found: undefined,
    },
    {
      name: "a wrapper that is no object",
      answer: { isError: true, content: text({ "x402/error": "pay" }) },
      found: undefined,
    },
    // Not x402's PaymentRequired: a version it does not speak, no options (a sign-in only), no list.
    {
      name: "an unknown version",
      answer: { isError: true, structuredContent: { ...challenge, x402Version: 3 } },
      found: undefined,
    },
    {
      name: "the version as a string",
      answer: { isError: true, structuredContent: { ...challenge, x402Version: "2" } },
      found: undefined,
    },
    {
      name: "no options (accepts: [])",
      answer: { isError: true, structuredContent: { ...challenge, accepts: [] } },
      found: undefined,
    },
    {
      name: "accepts that is no list",
      answer: { isError: true, structuredContent: { ...challenge, accepts: { 0: {} } } },
      found: undefined,
    },
    { name: "no accepts", answer: { isError: true, structuredContent: { x402Version: 2 } }, found: undefined },
  ])("$name", ({ answer, found }) => {
    expect(challengeIn(answer)).toEqual(found);
  });

  it("structuredContent first, then the text, then v1's wrapper in it", () => {
    const other = v2Challenge({ error: "text" });
    expect(challengeIn({ isError: true, structuredContent: challenge, content: text(other) })).toBe(challenge);
    expect(challengeIn({ isError: true, structuredContent: { no: 1 }, content: text(other) })).toEqual(other);
  });

  it("reads a text of up to 1 MiB, not one byte more", () => {
    const exactly = JSON.stringify(challenge).padEnd(1024 * 1024, " ");
    expect(challengeIn({ isError: true, content: text(exactly) })).toEqual(challenge);
    expect(challengeIn({ isError: true, content: text(`${exactly} `) })).toBeUndefined();
  });

  it("answers the same for the same answer, read once", () => {
    let reads = 0;
    const answer = {
      isError: true,
      get content() {
        reads++;
        return text(challenge);
      },
    };
    expect(challengeIn(answer)).toEqual(challenge);
    const once = reads;
    expect(challengeIn(answer)).toBe(challengeIn(answer));
    expect(reads).toBe(once);
    const plain = {
      isError: true,
      get content() {
        reads++;
        return text("no");
      },
    };
    expect(challengeIn(plain)).toBeUndefined();
    const twice = reads;
    expect(challengeIn(plain)).toBeUndefined();
    expect(reads).toBe(twice);
  });
});

describe("the JSON-RPC error form (code 402, the challenge in data)", () => {
  const error = Object.assign(new Error("Payment required"), { code: 402, data: challenge });

  it("is an answer whose challenge is its data; unwrapped, it is thrown as it came", () => {
    const answer = paymentRequiredError(error)!;
    expect(challengeIn(answer)).toBe(challenge);
    expect(() => unwrap(answer)).toThrow(error);
  });

  it.each([
    { name: "another code", error: { code: -32603, data: challenge } },
    { name: "the code as a string", error: { code: "402", data: challenge } },
    { name: "data that is no challenge", error: { code: 402, data: { accepts: [] } } },
    { name: "no data", error: { code: 402 } },
    { name: "not an object", error: "402" },
    { name: "nothing", error: undefined },
  ])("$name: not a payment request", ({ error }) => {
    expect(paymentRequiredError(error)).toBeUndefined();
  });

  it("answerOf: a result as it is; the 402 form as an answer; any other error thrown as it came", async () => {
    const result = { content: text("ok") };
    expect(await answerOf(async () => result)).toBe(result);
    expect(challengeIn(await answerOf(() => Promise.reject(error)))).toBe(challenge);
    const other = Object.assign(new Error("bad arguments"), { code: -32602, data: challenge });
    await expect(answerOf(() => Promise.reject(other))).rejects.toBe(other);
    expect(unwrap(result)).toBe(result);
  });
});

describe("settlementIn: what a paid answer reports", () => {
  const settlement = { success: true, transaction: TX_HASH, network: "eip155:84532" };
  const failure = { success: false, errorReason: "insufficient_funds", network: "eip155:84532" };

  it.each<{ name: string; answer: object; found: unknown }>([
    {
      name: "_meta's x402/payment-response",
      answer: { _meta: { "x402/payment-response": settlement } },
      found: settlement,
    },
    {
      name: "_meta's before a challenge's",
      answer: {
        isError: true,
        structuredContent: { ...challenge, "x402/payment-response": failure },
        _meta: { "x402/payment-response": settlement },
      },
      found: settlement,
    },
    {
      name: "a challenge's, asked again after paying",
      answer: { isError: true, structuredContent: { ...challenge, "x402/payment-response": failure } },
      found: failure,
    },
    {
      name: "a challenge's where _meta has other keys",
      answer: {
        isError: true,
        structuredContent: { ...challenge, "x402/payment-response": failure },
        _meta: { progressToken: 1, "x402/payment-response": undefined },
      },
      found: failure,
    },
    { name: "none", answer: { content: text("ok"), _meta: { progressToken: 1 } }, found: undefined },
    { name: "a _meta that is no object", answer: { _meta: "x402/payment-response" }, found: undefined },
    {
      name: "none in a result that is not an error",
      answer: { structuredContent: { ...challenge, "x402/payment-response": failure } },
      found: undefined,
    },
  ])("$name", ({ answer, found }) => {
    expect(settlementIn(answer)).toEqual(found);
  });
});
