/**
 * wrapMcpClientWithPayment over any client with the SDK Client's `callTool` shape (src/mcp/client.ts): what reaches the
 * client's own callTool on each call, what comes back, and the server's name when the client has no URL.
 */
import { describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, memoryLedger } from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapMcpClientWithPayment, type McpCallToolParams } from "../../src/mcp";
import { TX_HASH, account, v2Challenge } from "../support/seller";
import { rejection } from "../support/throws";

const challenge = v2Challenge({ resource: { url: "mcp://tool/t" } });
const asked = { isError: true, structuredContent: challenge, content: [] };
const settled = { success: true, transaction: TX_HASH, network: "eip155:84532", payer: account.address };
const PAID = { content: [{ type: "text", text: "ok" }], _meta: { "x402/payment-response": settled } };

/** A client whose callTool answers `answer`, recording what each call was given. */
function scriptedClient(answer: (params: McpCallToolParams) => object | Promise<object>, name?: string) {
  const calls: { params: McpCallToolParams; schema: unknown; options: unknown }[] = [];
  return {
    calls,
    mcp: {
      version: 3,
      callTool(params: McpCallToolParams, schema?: never, options?: { signal?: AbortSignal }) {
        calls.push({ params, schema, options });
        return Promise.resolve().then(() => answer(params));
      },
      ...(name !== undefined && { getServerVersion: () => (name ? { name } : undefined) }),
      self() {
        return this;
      },
    },
  };
}

const paying = (ledger = memoryLedger()) =>
  createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [ledger] });
const sells = (params: McpCallToolParams) => (params._meta?.["x402/payment"] ? PAID : asked);

describe("wrapMcpClientWithPayment over a client's callTool", () => {
  it("every call, the paid one too, gets the caller's result schema and options", async () => {
    const { mcp, calls } = scriptedClient(sells);
    const signal = new AbortController().signal;
    const schema = { parse: (v: unknown) => v } as never;
    const result = await wrapMcpClientWithPayment(mcp, paying()).callTool({ name: "t" }, schema, { signal });
    expect(getPaymentReceipt(result)?.settled).toBe(true);
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.schema).toBe(schema);
      expect(call.options).toEqual({ signal });
    }
  });

  it("a free result is returned as the same object; a thrown error as it was thrown", async () => {
    const free = { content: [] };
    const { mcp } = scriptedClient(() => free);
    expect(await wrapMcpClientWithPayment(mcp, paying()).callTool({ name: "t" })).toBe(free);
    const thrown = Object.assign(new Error("gone"), { code: -32000 });
    const failing = scriptedClient(() => Promise.reject(thrown));
    expect(await rejection(wrapMcpClientWithPayment(failing.mcp, paying()).callTool({ name: "t" }))).toBe(thrown);
  });

  it.each([
    { name: "no getServerVersion", given: undefined, is: "mcp://server#t" },
    { name: "getServerVersion answering nothing", given: "", is: "mcp://server#t" },
    { name: "the name it gave", given: "Weather", is: "mcp://weather#t" },
  ])("a client with $name is $is", async ({ given, is }) => {
    const { mcp } = scriptedClient(sells, given);
    const ledger = memoryLedger();
    await wrapMcpClientWithPayment(mcp, paying(ledger)).callTool({ name: "t" });
    expect(ledger.list.map((r) => r.url)).toEqual([is]);
  });

  it("other members are the client's: fields as they are, methods run on the client", () => {
    const { mcp } = scriptedClient(sells);
    const wrapped = wrapMcpClientWithPayment(mcp, paying());
    expect(wrapped.version).toBe(3);
    const { self } = wrapped;
    expect(self()).toBe(mcp);
    expect(wrapped.callTool).not.toBe(mcp.callTool);
  });
});
