/**
 * x402-pay/mcp against scripted MCP servers: the official SDK's Client and low-level Server joined by
 * its in-memory transport (no network; the chain cases are in test/interop/mcp.test.ts). Each server
 * answers tool calls as the test says, so every form of answer, hostile ones included, can be met.
 */
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
import {
  createX402Client,
  getPaymentReceipt,
  memoryLedger,
  recordOutcomes,
  unreconciled,
  type AnyX402Error,
} from "../../src";
import { exactEvm } from "../../src/evm";
import { MCP_PAYMENT_META_KEY, wrapMcpClientWithPayment, type McpPaymentOptions } from "../../src/mcp";
import { TX_HASH, USDC_BASE_SEPOLIA, account, v1Challenge, v2Challenge } from "../support/seller";

type Answer = (call: {
  name: string;
  meta: Record<string, any> | undefined;
  count: number;
}) => CallToolResult | Promise<CallToolResult>;

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

/** An SDK client connected to a server that answers every tool call with `answer`; `calls` records what arrived. */
async function serve(answer: Answer, name = "scripted", outputSchema?: object) {
  const calls: { name: string; meta: Record<string, any> | undefined; arguments: unknown }[] = [];
  const server = new Server({ name, version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: "t", inputSchema: { type: "object" as const }, ...(outputSchema && { outputSchema }) }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const meta = request.params._meta as Record<string, any> | undefined;
    calls.push({ name: request.params.name, meta, arguments: request.params.arguments });
    return answer({ name: request.params.name, meta, count: calls.length });
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const mcp = new Client({ name: "test", version: "1.0.0" });
  await Promise.all([server.connect(serverSide), mcp.connect(clientSide)]);
  closing.push(
    () => mcp.close(),
    () => server.close(),
  );
  return { mcp, calls };
}

/** A v2 challenge as an MCP server sends it: the resource is the tool. */
const toolChallenge = (over: Record<string, unknown> = {}) =>
  v2Challenge({ resource: { url: "mcp://tool/t" }, ...over });
const settled = { success: true, transaction: TX_HASH, network: "eip155:84532", payer: account.address };
const asked = (challenge: Record<string, unknown>): CallToolResult => ({
  isError: true,
  structuredContent: challenge,
  content: [{ type: "text", text: JSON.stringify(challenge) }],
});
/** Asks for payment until one arrives, then answers `paid`. */
const sells =
  (
    paid: CallToolResult = { content: [{ type: "text", text: "ok" }], _meta: { "x402/payment-response": settled } },
    challenge = toolChallenge(),
  ): Answer =>
  ({ meta }) =>
    meta?.[MCP_PAYMENT_META_KEY] ? paid : asked(challenge);

function pay(mcp: Client, options: McpPaymentOptions = {}) {
  const failed: AnyX402Error[] = [];
  const client = createX402Client({
    schemes: [exactEvm({ signer: account })],
    onPaymentFailed: (e) => void failed.push(e),
  });
  return { paid: wrapMcpClientWithPayment(mcp, client, options), failed };
}

describe("what counts as a payment request", () => {
  it.each([
    {
      name: "a challenge without isError",
      result: { structuredContent: v2Challenge(), content: [{ type: "text", text: "{}" }] },
    },
    {
      name: "an error whose text is not JSON",
      result: { isError: true, content: [{ type: "text", text: "{not json" }] },
    },
    { name: "an auth-only challenge (accepts: [])", result: asked(v2Challenge({ accepts: [] })) },
    { name: "an unknown x402Version", result: asked(v2Challenge({ x402Version: 3 })) },
    { name: "an error with no content", result: { isError: true, content: [] } },
  ])("$name: an ordinary result, returned untouched and unpaid", async ({ result }) => {
    const { mcp, calls } = await serve(() => result as CallToolResult);
    const { paid, failed } = pay(mcp);
    expect(await paid.callTool({ name: "t" })).toEqual(await mcp.callTool({ name: "t" }));
    expect(calls.every((c) => c.meta?.[MCP_PAYMENT_META_KEY] === undefined)).toBe(true);
    expect(failed).toEqual([]);
  });

  it("v1's text wrapper { x402/error: { data } } is a payment request, paid with a v1 payload", async () => {
    const challenge = v1Challenge();
    const { mcp, calls } = await serve(({ meta }) =>
      meta?.[MCP_PAYMENT_META_KEY]
        ? {
            content: [{ type: "text", text: "ok" }],
            _meta: { "x402/payment-response": { ...settled, network: "base-sepolia" } },
          }
        : {
            isError: true,
            content: [
              { type: "text", text: JSON.stringify({ "x402/error": { code: 402, message: "pay", data: challenge } }) },
            ],
          },
    );
    const result = await pay(mcp).paid.callTool({ name: "t" });
    expect(getPaymentReceipt(result)).toMatchObject({ settled: true, x402Version: 1, network: "base-sepolia" });
    expect(calls[1]!.meta![MCP_PAYMENT_META_KEY]).toMatchObject({
      x402Version: 1,
      scheme: "exact",
      network: "base-sepolia",
    });
  });

  it("a JSON-RPC error other than 402 is thrown as the SDK threw it", async () => {
    const { mcp } = await serve(() => {
      throw new McpError(-32602, "bad arguments", v2Challenge());
    });
    const error = await pay(mcp)
      .paid.callTool({ name: "t" })
      .catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error.code).toBe(-32602);
  });

  it("a JSON-RPC 402 whose data is no challenge is thrown as the SDK threw it", async () => {
    const { mcp } = await serve(() => {
      throw new McpError(402, "pay somehow", { hint: "no accepts here" });
    });
    const error = await pay(mcp)
      .paid.callTool({ name: "t" })
      .catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
  });
});

describe("paying", () => {
  it("the payment goes in _meta beside the caller's own keys; the arguments and name are unchanged", async () => {
    const { mcp, calls } = await serve(sells());
    await pay(mcp).paid.callTool({ name: "search", arguments: { q: "x" }, _meta: { progressToken: 3 } });
    expect(calls).toHaveLength(2);
    expect(calls[1]).toMatchObject({ name: "search", arguments: { q: "x" }, meta: { progressToken: 3 } });
    expect(calls[1]!.meta![MCP_PAYMENT_META_KEY]).toMatchObject({
      x402Version: 2,
      accepted: (toolChallenge().accepts as unknown[])[0],
    });
  });

  it("asked again after paying: PAYMENT_REJECTED with the server's reason, and paid once", async () => {
    const { mcp, calls } = await serve(({ meta }) =>
      asked(toolChallenge(meta?.[MCP_PAYMENT_META_KEY] ? { error: "invalid_exact_evm_payload_signature" } : {})),
    );
    const { paid, failed } = pay(mcp);
    const error = await paid.callTool({ name: "t" }).catch((e) => e);
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.details.reason).toBe("invalid_exact_evm_payload_signature");
    expect(calls.filter((c) => c.meta?.[MCP_PAYMENT_META_KEY])).toHaveLength(1);
    expect(failed).toEqual([error]);
  });

  it("a result reporting a failed settlement (not an error result) is PAYMENT_REJECTED, nothing charged", async () => {
    const failedSettlement = {
      success: false,
      errorReason: "insufficient_funds",
      transaction: "",
      network: "eip155:84532",
    };
    const { mcp } = await serve(
      sells({ content: [{ type: "text", text: "ok" }], _meta: { "x402/payment-response": failedSettlement } }),
    );
    const error = await pay(mcp)
      .paid.callTool({ name: "t" })
      .catch((e) => e);
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.details.reason).toBe("insufficient_funds");
  });

  it("a paid result without a settlement report: returned with a receipt that is not settled, and no error (as a 200 without PAYMENT-RESPONSE)", async () => {
    const { mcp } = await serve(sells({ content: [{ type: "text", text: "ok" }] }));
    const { paid, failed } = pay(mcp);
    const result = await paid.callTool({ name: "t" });
    expect(getPaymentReceipt(result)).toMatchObject({ settled: false });
    expect(failed.map((e) => e.code)).toEqual([]);
  });

  it.each<{ answer: string; paid: CallToolResult; code: string | undefined }>([
    {
      answer: "a result without a settlement report",
      paid: { content: [{ type: "text", text: "ok" }] },
      code: undefined,
    },
    {
      answer: "an error result without a settlement report",
      paid: { isError: true, content: [{ type: "text", text: "tool failed" }] },
      code: "PAYMENT_OUTCOME_UNKNOWN",
    },
  ])("$answer: returned, and recorded in the ledger as unknown ($code), to reconcile", async ({ paid, code }) => {
    const { mcp } = await serve(sells(paid));
    const ledger = memoryLedger();
    const client = createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [ledger] });
    const result = await wrapMcpClientWithPayment(mcp, client).callTool({ name: "t" });
    expect(result).toMatchObject(paid);
    expect(getPaymentReceipt(result)).toMatchObject({ settled: false, transaction: undefined });
    expect(ledger.list).toMatchObject([
      { outcome: "unknown", code, url: "mcp://scripted#t", amount: "10000", settledAmount: undefined },
    ]);
    expect(await unreconciled(ledger)).toHaveLength(1);
  });

  it("the paid call failing in transit is PAYMENT_OUTCOME_UNKNOWN with the payload to reconcile", async () => {
    const { mcp } = await serve(({ meta }) => {
      if (meta?.[MCP_PAYMENT_META_KEY]) throw new McpError(-32603, "connection lost");
      return asked(toolChallenge());
    });
    const error = await pay(mcp)
      .paid.callTool({ name: "t" })
      .catch((e) => e);
    expect(error.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(error.details.payload).toMatchObject({ x402Version: 2 });
  });

  it("an abort before paying: ABORTED, nothing sent after the request for payment", async () => {
    const controller = new AbortController();
    const { mcp, calls } = await serve(sells());
    const client = createX402Client({
      schemes: [exactEvm({ signer: account })],
      onBeforePayment: () => (controller.abort(), true),
    });
    const error = await wrapMcpClientWithPayment(mcp, client)
      .callTool({ name: "t" }, undefined, { signal: controller.signal })
      .catch((e) => e);
    expect(error.code).toBe("ABORTED");
    expect(calls).toHaveLength(1);
  });
});

describe("the wrapper", () => {
  it("meets the SDK's outputSchema check on a payment request only after listTools (the README's caveat)", async () => {
    const outputSchema = { type: "object", properties: { forecast: { type: "string" } }, required: ["forecast"] };
    const { mcp } = await serve(
      sells({
        content: [{ type: "text", text: "ok" }],
        structuredContent: { forecast: "sun" },
        _meta: { "x402/payment-response": settled },
      }),
      "typed",
      outputSchema,
    );
    const { paid } = pay(mcp);
    expect(getPaymentReceipt(await paid.callTool({ name: "t" }))?.settled).toBe(true);
    await mcp.listTools();
    const error = await paid.callTool({ name: "t" }).catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error.message).toMatch(/output schema/);
  });

  it("passes every other method to the client itself", async () => {
    const { mcp } = await serve(sells(), "weather-tools");
    const { paid } = pay(mcp);
    expect(paid.getServerVersion()).toEqual({ name: "weather-tools", version: "1.0.0" });
    expect(paid.getServerVersion).not.toBe(mcp.getServerVersion);
    expect(await paid.ping()).toEqual({});
  });

  it("names a server it has no URL for mcp://<its name>, in the ledger-facing request URL", async () => {
    const { mcp } = await serve(sells(), "Weather Tools!");
    const urls: string[] = [];
    const client = createX402Client({
      schemes: [exactEvm({ signer: account })],
      onPaymentSettled: (r) => void urls.push(r.url),
    });
    await wrapMcpClientWithPayment(mcp, client).callTool({ name: "get forecast" });
    await wrapMcpClientWithPayment(mcp, client, { server: "https://tools.example.com/mcp" }).callTool({ name: "t" });
    expect(urls).toEqual(["mcp://weather-tools#get%20forecast", "https://tools.example.com/mcp#t"]);
  });

  it.each([
    { options: { server: "not a url" }, problem: /mcp.server/ },
    { options: { servers: "mcp://x" }, problem: /mcp.servers/ },
    { options: { tools: [""] }, problem: /mcp.tools/ },
    { options: { maxAmountPerTool: { t: "5 dollars" } }, problem: /mcp.maxAmountPerTool/ },
    { options: { onPaymentRequested: true }, problem: /mcp.onPaymentRequested/ },
    { options: { tool: ["t"] }, problem: /mcp.tool: is not an option/ },
  ])("refuses bad options at once: $problem", async ({ options, problem }) => {
    const { mcp } = await serve(sells());
    const client = createX402Client({ schemes: [exactEvm({ signer: account })] });
    expect(() => wrapMcpClientWithPayment(mcp, client, options as never)).toThrow(problem);
  });

  it("refuses what is not an MCP client, and a client that is not x402-pay's", async () => {
    const client = createX402Client({ schemes: [exactEvm({ signer: account })] });
    expect(() => wrapMcpClientWithPayment({} as never, client)).toThrow(/INVALID_CONFIG|MCP SDK Client/);
    const { mcp } = await serve(sells());
    expect(() => wrapMcpClientWithPayment(mcp, {} as never)).toThrow();
  });
});

describe("the tool guard and the request (the mutation run's cases)", () => {
  const price = "$0.01"; // v2Requirement's 10000 base units of USDC

  it.each([
    // An allow-list's [] allows none.
    { options: { tools: [] }, reason: 'tool "t" is not in mcp.tools' },
    { options: { servers: [] }, reason: "server mcp://scripted is not in mcp.servers" },
    { options: { servers: [], tools: ["t"] }, reason: "server mcp://scripted is not in mcp.servers" },
    { options: { servers: ["mcp://scripted"], tools: [] }, reason: 'tool "t" is not in mcp.tools' },
    { options: { tools: ["other"] }, reason: 'tool "t" is not in mcp.tools' },
    { options: { tools: ["o*"] }, reason: 'tool "t" is not in mcp.tools' },
    { options: { servers: ["mcp://other"] }, reason: "server mcp://scripted is not in mcp.servers" },
    {
      options: { maxAmountPerTool: { t: "$0.009" } },
      reason: '0.01 USDC is over mcp.maxAmountPerTool for "t" ($0.009)',
    },
    // A cap of $0 is no payment at all, never "no cap".
    { options: { maxAmountPerTool: { t: "$0" } }, reason: '0.01 USDC is over mcp.maxAmountPerTool for "t" ($0)' },
    {
      options: { maxAmountPerTool: { "*": "$0.009", other: price } },
      reason: '0.01 USDC is over mcp.maxAmountPerTool for "t" ($0.009)',
    },
    // In base units of one asset (a quote's maxAmount): one unit less than asked, or another asset.
    {
      options: { maxAmountPerTool: { t: { network: "eip155:84532", asset: USDC_BASE_SEPOLIA, amount: "9999" } } },
      reason: '0.01 USDC is over mcp.maxAmountPerTool for "t" (0.009999 USDC)',
    },
    {
      options: { maxAmountPerTool: { t: { network: "eip155:8453", asset: USDC_BASE_SEPOLIA, amount: "10000" } } },
      reason:
        `asset ${USDC_BASE_SEPOLIA} on eip155:84532 is not the one mcp.maxAmountPerTool for "t" is in ` +
        `(${USDC_BASE_SEPOLIA} on eip155:8453)`,
    },
  ])("refuses with the reason: $reason", async ({ options, reason }) => {
    const { mcp, calls } = await serve(sells());
    const error = await pay(mcp, options as McpPaymentOptions)
      .paid.callTool({ name: "t" })
      .catch((e) => e);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected.map((r: { reason: string }) => r.reason)).toEqual([reason]);
    expect(calls).toHaveLength(1);
  });

  it.each([
    { tools: ["t"] },
    { tools: ["*"] },
    { servers: ["MCP://Scripted"] },
    { servers: ["mcp://scripted"], tools: ["t"] },
    // No caps at all.
    { maxAmountPerTool: {} },
    { maxAmountPerTool: { t: price } },
    { maxAmountPerTool: { t: price, "*": "$0.001" } },
    { maxAmountPerTool: { other: "$0.001" } },
    { maxAmountPerTool: { t: { network: "eip155:84532", asset: USDC_BASE_SEPOLIA, amount: "10000" } } },
  ])("pays within %j", async (options) => {
    const { mcp } = await serve(sells());
    expect(getPaymentReceipt(await pay(mcp, options as McpPaymentOptions).paid.callTool({ name: "t" }))?.settled).toBe(
      true,
    );
  });

  it("a cap refuses an asset it cannot value", async () => {
    const { mcp } = await serve(
      sells(
        undefined,
        toolChallenge({
          accepts: [
            { ...(toolChallenge().accepts as object[])[0], asset: "0x00000000000000000000000000000000000000aa" },
          ],
        }),
      ),
    );
    const client = createX402Client({ schemes: [exactEvm({ signer: account })], policy: { allowUnknownAssets: true } });
    const error = await wrapMcpClientWithPayment(mcp, client, { maxAmountPerTool: { "*": "$1" } })
      .callTool({ name: "t" })
      .catch((e) => e);
    expect(error.details.rejected[0].reason).toBe(
      "asset 0x00000000000000000000000000000000000000aa on eip155:84532 has no known USD value, so it cannot be held " +
        'to mcp.maxAmountPerTool for "t" ($1)',
    );
  });

  it("onPaymentRequested sees the server, the tool, a copy of its arguments and the payment; true pays; the ledger names <server>#<tool> and tools/call", async () => {
    const { mcp } = await serve(sells());
    const seen: unknown[] = [];
    const args = { q: "x" };
    const records: { url: string; method: string }[] = [];
    const client = createX402Client({
      schemes: [exactEvm({ signer: account })],
      plugins: [
        recordOutcomes({
          append: async (r: { url: string; method: string }) => void records.push(r),
          records: async function* () {},
        }),
      ],
    });
    const result = await wrapMcpClientWithPayment(mcp, client, {
      onPaymentRequested: (request) => {
        seen.push({
          ...request,
          arguments: request.arguments,
          frozen: Object.isFrozen(request.arguments),
          same: request.arguments === args,
          amount: request.payment.amount,
        });
        return true;
      },
    }).callTool({ name: "t", arguments: args });
    expect(getPaymentReceipt(result)?.settled).toBe(true);
    expect(seen).toMatchObject([
      { server: "mcp://scripted", tool: "t", arguments: { q: "x" }, frozen: true, same: false, amount: "10000" },
    ]);
    expect(records.map((r) => [r.url, r.method])).toEqual([["mcp://scripted#t", "tools/call"]]);
  });

  it("the JSON-RPC 402 form: paid, and asked again in that form after paying, PAYMENT_REJECTED with its reason", async () => {
    const { mcp, calls } = await serve(({ meta }) => {
      if (!meta?.[MCP_PAYMENT_META_KEY]) throw new McpError(402, "pay", toolChallenge());
      if (calls.length === 2)
        return { content: [{ type: "text", text: "ok" }], _meta: { "x402/payment-response": settled } };
      throw new McpError(
        402,
        "again",
        toolChallenge({ error: "invalid_exact_evm_payload_authorization_valid_before" }),
      );
    });
    const { paid } = pay(mcp);
    expect(getPaymentReceipt(await paid.callTool({ name: "t" }))?.settled).toBe(true);
    const error = await paid.callTool({ name: "t" }).catch((e) => e);
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.details.reason).toBe("invalid_exact_evm_payload_authorization_valid_before");
  });

  it("a tool error after paying is returned, reported as an outcome to reconcile", async () => {
    const { mcp } = await serve(sells({ isError: true, content: [{ type: "text", text: "down" }] }));
    const { paid, failed } = pay(mcp);
    expect(await paid.callTool({ name: "t" })).toMatchObject({ isError: true, content: [{ text: "down" }] });
    expect(failed.map((e) => e.code)).toEqual(["PAYMENT_OUTCOME_UNKNOWN"]);
    expect(failed[0]!.details).toMatchObject({ status: 500 });
  });

  it("a call carrying its own x402/payment that is asked again: PAYMENT_ALREADY_ATTEMPTED, nothing signed", async () => {
    const { mcp, calls } = await serve(({ meta }) => asked(toolChallenge(meta ? { error: "spent" } : {})));
    const error = await pay(mcp)
      .paid.callTool({ name: "t", _meta: { [MCP_PAYMENT_META_KEY]: { x402Version: 2 } } })
      .catch((e) => e);
    expect(error.code).toBe("PAYMENT_ALREADY_ATTEMPTED");
    expect(calls).toHaveLength(1);
  });

  it("the server's identity: the HTTP transport's URL (without its fragment), a server option's fragment dropped, a name made host-safe", async () => {
    const urls: string[] = [];
    const client = createX402Client({
      schemes: [exactEvm({ signer: account })],
      onPaymentSettled: (r) => void urls.push(r.url),
    });
    const { mcp } = await serve(sells(), "--Odd..Name--");
    await wrapMcpClientWithPayment(mcp, client).callTool({ name: "t" });
    await wrapMcpClientWithPayment(mcp, client, { server: new URL("https://tools.example.com/mcp#x") }).callTool({
      name: "t",
    });
    (mcp.transport as unknown as { _url: URL })._url = new URL("https://tools.example.com/v1/mcp?k=1#frag");
    await wrapMcpClientWithPayment(mcp, client).callTool({ name: "t" });
    (mcp.transport as unknown as { _url: URL })._url = new URL("ws://tools.example.com/mcp");
    await wrapMcpClientWithPayment(mcp, client).callTool({ name: "t" });
    expect(urls).toEqual([
      "mcp://odd..name#t",
      "https://tools.example.com/mcp#t",
      "https://tools.example.com/v1/mcp?k=1#t",
      "mcp://odd..name#t",
    ]);
  });

  it("passes properties as they are, and functions bound to the client", async () => {
    const { mcp } = await serve(sells());
    const paid = pay(mcp).paid;
    expect(paid.transport).toBe(mcp.transport);
    const { listTools } = paid;
    // Detached from the proxy, it still runs on the client (unbound, `this` would be undefined).
    expect((await listTools()).tools.map((t) => t.name)).toEqual(["t"]);
  });

  it.each([
    {
      options: { servers: [5] },
      message: "mcp.servers: 5 is not an origin pattern such as https://*.example.com or mcp://weather.",
    },
    {
      options: { server: 5 },
      message: "mcp.server: 5 is not a URL such as https://tools.example.com/mcp or mcp://weather.",
    },
    { options: { tools: [5] }, message: "mcp.tools: 5 is not a pattern." },
    {
      options: { maxAmountPerTool: { a: "$1", b: 2 } },
      message:
        'mcp.maxAmountPerTool: {"a":"$1","b":2} is not tool names to USD amounts such as { "*": "$0.01" }, or to ' +
        "{ network, asset, amount } in base units.",
    },
    { options: { maxAmountPerTool: [] }, message: "is not tool names to USD amounts" },
    { options: { onPaymentRequested: "yes" }, message: 'mcp.onPaymentRequested: "yes" is not a function.' },
  ])("option sentence: $message", async ({ options, message }) => {
    const { mcp } = await serve(sells());
    expect(() =>
      wrapMcpClientWithPayment(mcp, createX402Client({ schemes: [exactEvm({ signer: account })] }), options as never),
    ).toThrow(message);
  });

  it("what is not an MCP client is INVALID_CONFIG, with the sentence", () => {
    const client = createX402Client({ schemes: [exactEvm({ signer: account })] });
    expect(() => wrapMcpClientWithPayment({ callTool: 5 } as never, client)).toThrow(
      "wrapMcpClientWithPayment: give it an MCP SDK Client (new Client(...) from @modelcontextprotocol/sdk).",
    );
  });
});
