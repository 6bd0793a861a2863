/**
 * x402-pay/mcp's transport wrapper against scripted MCP servers: the official SDK's low-level Server, and above the
 * wrapped in-memory transport an MCP client that is not x402-pay's to wrap (the SDK's Client, and the AI SDK's
 * createMCPClient). Each server answers tool calls as the test says; the chain cases are in test/interop.
 */
import { createMCPClient } from "@ai-sdk/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { createX402Client, memoryLedger, type AnyX402Error } from "../../src";
import { exactEvm } from "../../src/evm";
import { MCP_PAYMENT_META_KEY, wrapMcpTransportWithPayment, type McpPaymentOptions } from "../../src/mcp";
import { TX_HASH, account, v2Challenge } from "../support/seller";

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

type Seen = { name: string; meta: Record<string, any> | undefined; requestId: string | number };
type Answer = (call: Seen & { count: number }) => CallToolResult | Promise<CallToolResult>;

const settled = { success: true, transaction: TX_HASH, network: "eip155:84532", payer: account.address };
const challenge = () => v2Challenge({ resource: { url: "mcp://tool/t" } });
const asked = (c: Record<string, unknown> = challenge()): CallToolResult => ({
  isError: true,
  structuredContent: c,
  content: [{ type: "text", text: JSON.stringify(c) }],
});
const PAID: CallToolResult = {
  content: [{ type: "text", text: "sunny" }],
  _meta: { "x402/payment-response": settled },
};
/** Asks for payment until one arrives, then answers `paid`. */
const sells =
  (paid: CallToolResult = PAID): Answer =>
  ({ meta }) =>
    meta?.[MCP_PAYMENT_META_KEY] ? paid : asked();

/** A server answering tool calls with `answer`, and the client side of its in-memory pair, wrapped to pay. */
function serve(answer: Answer, options: McpPaymentOptions = {}, name = "scripted") {
  const calls: Seen[] = [];
  const server = new Server({ name, version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: "t", description: "a tool", inputSchema: { type: "object" as const } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const seen = { name: request.params.name, meta: request.params._meta, requestId: extra.requestId };
    calls.push(seen);
    return answer({ ...seen, count: calls.length });
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const failed: AnyX402Error[] = [];
  const signs: unknown[] = [];
  const ledger = memoryLedger();
  const signer = {
    ...account,
    signTypedData: (request: never) => (signs.push(request), account.signTypedData(request)),
  };
  const client = createX402Client({
    schemes: [exactEvm({ signer })],
    plugins: [ledger],
    onPaymentFailed: (e) => void failed.push(e),
  });
  const transport = wrapMcpTransportWithPayment(clientSide, client, options);
  closing.push(() => server.close());
  return { server: server.connect(serverSide), sdkServer: server, transport, calls, failed, signs, ledger };
}

/** The SDK's Client over the wrapped transport. */
async function sdkClient(answer: Answer, options?: McpPaymentOptions, name?: string) {
  const served = serve(answer, options, name);
  const mcp = new Client({ name: "test", version: "1.0.0" });
  await Promise.all([served.server, mcp.connect(served.transport)]);
  closing.push(() => mcp.close());
  return { mcp, ...served };
}

/** An approval that waits: `asked` once the payment is asked about; `approve()` says yes (and lets it go on). */
function waitingApproval() {
  let release!: (value: boolean) => void;
  let asking!: () => void;
  const asked = new Promise<void>((resolve) => (asking = resolve));
  const answer = new Promise<boolean>((resolve) => (release = resolve));
  return {
    asked,
    ask: () => {
      asking();
      return answer;
    },
    async approve() {
      release(true);
      await new Promise((resolve) => setTimeout(resolve, 50));
    },
  };
}

const textOf = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;
/** An AI SDK MCP tool's execute, as generateText calls it. */
type Execute = (input: object, options: { toolCallId: string; messages: [] }) => Promise<unknown>;
const executeOf = (tool: unknown) => (tool as { execute: Execute }).execute;

describe("a client above the wrapped transport", () => {
  it("gets the paid result of a tool that asked: one payment, sent again under the same request id", async () => {
    const { mcp, calls, signs, ledger } = await sdkClient(sells());
    const result = await mcp.callTool({ name: "t", arguments: { city: "Lisbon" }, _meta: { progressToken: 3 } });
    expect(result).toEqual(PAID);
    expect(signs).toHaveLength(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.requestId).toBe(calls[0]!.requestId);
    // The caller's own _meta travels with the payment.
    expect(calls[1]!.meta).toMatchObject({ progressToken: 3, [MCP_PAYMENT_META_KEY]: { x402Version: 2 } });
    const records = [];
    for await (const record of ledger.records()) records.push(record);
    expect(records).toEqual([
      expect.objectContaining({ outcome: "settled", method: "tools/call", url: "mcp://scripted#t" }),
    ]);
  });

  it("a free tool, tools/list and an app's own paid call pass untouched, nothing signed", async () => {
    const { mcp, calls, signs } = await sdkClient(({ meta }) =>
      meta?.[MCP_PAYMENT_META_KEY] ? PAID : { content: [{ type: "text", text: "free" }] },
    );
    expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(["t"]);
    expect(textOf(await mcp.callTool({ name: "t" }))).toBe("free");
    const own = await mcp.callTool({ name: "t", _meta: { [MCP_PAYMENT_META_KEY]: { x402Version: 2 } } });
    expect(own).toEqual(PAID);
    expect(signs).toHaveLength(0);
    expect(calls).toHaveLength(2);
  });

  it("an app's own paid call asked again passes untouched: x402-pay signs nothing for it", async () => {
    const { mcp, calls, signs } = await sdkClient(() => asked());
    const own = (await mcp.callTool({
      name: "t",
      _meta: { [MCP_PAYMENT_META_KEY]: { x402Version: 2 } },
    })) as CallToolResult;
    expect(own.isError).toBe(true);
    expect(own.structuredContent).toMatchObject({ x402Version: 2, accepts: [expect.any(Object)] });
    expect(signs).toHaveLength(0);
    expect(calls).toHaveLength(1);
  });

  it("below the client: the server's own requests and notifications pass; a cancelled call is answered by no one", async () => {
    const served = serve(sells(), {
      onPaymentRequested: async () => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return true;
      },
    });
    const got: any[] = [];
    served.transport.onmessage = (message) => void got.push(message);
    await served.transport.start();
    await served.server;
    const send = (message: object) => served.transport.send(message as never);
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    await expect.poll(() => got.length).toBe(1);
    expect(got[0]).toMatchObject({ id: 1, result: { serverInfo: { name: "scripted" } } });
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // A ping from below (a request with an id and a method) goes up as it is, and its answer goes down.
    const pinged = served.sdkServer.ping();
    await expect.poll(() => got.find((m) => m.method === "ping")).toBeDefined();
    const ping = got.pop();
    await send({ jsonrpc: "2.0", id: ping.id, result: {} });
    await pinged;
    await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "t" } });
    await send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "stop" } });
    await send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "t" } });
    await expect.poll(() => got.some((m) => m.id === 3)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(got.map((m) => m.id)).toEqual([1, 3]);
    expect(got[1]).toEqual({ jsonrpc: "2.0", id: 3, result: PAID });
    expect(served.signs).toHaveLength(1);
    await served.transport.close();
  });

  it("the payment-required error form (JSON-RPC 402) is paid too", async () => {
    const { mcp, signs } = await sdkClient(({ meta }) => {
      if (meta?.[MCP_PAYMENT_META_KEY]) return PAID;
      throw new McpError(402, "Payment required", challenge());
    });
    expect(await mcp.callTool({ name: "t" })).toEqual(PAID);
    expect(signs).toHaveLength(1);
  });

  it("a refusal by the options: a tool error saying why and that nothing was paid; nothing signed or resent", async () => {
    const { mcp, calls, signs } = await sdkClient(sells(), { maxAmountPerTool: { "*": "$0.001" } });
    const result = (await mcp.callTool({ name: "t" })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^x402-pay did not pay for this call \(NO_PAYABLE_REQUIREMENT\): .*maxAmountPerTool/,
    );
    expect(textOf(result)).toMatch(/Nothing was paid\.$/);
    expect(signs).toHaveLength(0);
    expect(calls).toHaveLength(1);
  });

  // The edges of the list options ([] allows none) and of a cap ($0 pays nothing): nothing signed, the reason said.
  it.each([
    { options: { servers: [] }, reason: "server mcp://scripted is not in mcp.servers" },
    { options: { tools: [] }, reason: 'tool "t" is not in mcp.tools' },
    { options: { maxAmountPerTool: { t: "$0" } }, reason: '0.01 USDC is over mcp.maxAmountPerTool for "t" ($0)' },
  ])("$options: the tool error names the refusal ($reason), nothing signed", async ({ options, reason }) => {
    const { mcp, signs } = await sdkClient(sells(), options);
    const text = textOf(await mcp.callTool({ name: "t" }));
    expect(text).toContain(reason);
    expect(text).toMatch(/Nothing was paid\.$/);
    expect(signs).toHaveLength(0);
  });

  it("servers: the name the server gave at initialize is its identity (mcp://<name>)", async () => {
    const allowed = await sdkClient(sells(), { servers: ["mcp://weather"] }, "Weather");
    expect(await allowed.mcp.callTool({ name: "t" })).toEqual(PAID);
    const other = await sdkClient(sells(), { servers: ["mcp://weather"] }, "elsewhere");
    expect(textOf(await other.mcp.callTool({ name: "t" }))).toMatch(/mcp:\/\/elsewhere is not in mcp\.servers/);
    expect(other.signs).toHaveLength(0);
  });

  it("asked again after paying: PAYMENT_REJECTED with the server's reason, as a tool error; paid once", async () => {
    const { mcp, signs, calls } = await sdkClient(() => asked(v2Challenge({ error: "insufficient_funds" })));
    const result = (await mcp.callTool({ name: "t" })) as CallToolResult;
    expect(textOf(result)).toMatch(/^x402-pay did not pay for this call \(PAYMENT_REJECTED\): .*insufficient_funds/);
    expect(signs).toHaveLength(1);
    expect(calls).toHaveLength(2);
  });

  it("a JSON-RPC error after paying: the money may have moved, and the tool error says so", async () => {
    const { mcp, signs } = await sdkClient(({ meta }) => {
      if (meta?.[MCP_PAYMENT_META_KEY]) throw new McpError(-32603, "the seller crashed");
      return asked();
    });
    const text = textOf(await mcp.callTool({ name: "t" }));
    expect(text).toMatch(/\(PAYMENT_OUTCOME_UNKNOWN\)/);
    expect(text).toMatch(/The payment may have moved money: do not pay for this again until it is known\.$/);
    expect(signs).toHaveLength(1);
  });

  it("a call the client cancels while the payment waits for approval: nothing signed, nothing sent again", async () => {
    const approval = waitingApproval();
    const { mcp, calls, signs } = await sdkClient(sells(), { onPaymentRequested: approval.ask });
    const controller = new AbortController();
    const call = mcp.callTool({ name: "t" }, undefined, { signal: controller.signal });
    await approval.asked;
    controller.abort(new Error("the user stopped"));
    await expect(call).rejects.toThrow(/the user stopped/);
    await approval.approve();
    expect(signs).toHaveLength(0);
    expect(calls).toHaveLength(1);
  });

  it("the connection closed while paying: the call stops, nothing is signed after", async () => {
    const approval = waitingApproval();
    const { mcp, calls, signs } = await sdkClient(sells(), { onPaymentRequested: approval.ask });
    const call = mcp.callTool({ name: "t" });
    await approval.asked;
    await mcp.close();
    await expect(call).rejects.toThrow(/closed/i);
    await approval.approve();
    expect(signs).toHaveLength(0);
    expect(calls).toHaveLength(1);
  });

  it("bad input: a transport without send, or bad options, is INVALID_CONFIG naming what is wrong", () => {
    const client = createX402Client({ schemes: [exactEvm({ signer: account })] });
    expect(() => wrapMcpTransportWithPayment({} as never, client)).toThrow(/wrapMcpTransportWithPayment/);
    const [side] = InMemoryTransport.createLinkedPair();
    expect(() => wrapMcpTransportWithPayment(side, client, { tools: [""] })).toThrow(/mcp\.tools/);
  });
});

describe("the AI SDK's MCP client above the wrapped transport", () => {
  it("its tool's execute gets the paid result, paid once; a refusal comes back as the tool's error result", async () => {
    const served = serve(sells());
    const mcp = await createMCPClient({ transport: served.transport });
    await served.server;
    closing.push(() => mcp.close());
    const tools = await mcp.tools();
    const run = executeOf(tools.t);
    const result = await run({}, { toolCallId: "call-1", messages: [] });
    expect(result).toMatchObject({ content: [{ type: "text", text: "sunny" }], isError: false });
    expect(served.signs).toHaveLength(1);

    const refusing = serve(sells(), { tools: ["other"] });
    const refused = await createMCPClient({ transport: refusing.transport });
    await refusing.server;
    closing.push(() => refused.close());
    const refusedTools = await refused.tools();
    const call = executeOf(refusedTools.t);
    const answer = (await call({}, { toolCallId: "call-2", messages: [] })) as CallToolResult;
    expect(answer.isError).toBe(true);
    expect(textOf(answer)).toMatch(/\(NO_PAYABLE_REQUIREMENT\).*not in mcp\.tools.*Nothing was paid\./);
    expect(refusing.signs).toHaveLength(0);
  });
});
