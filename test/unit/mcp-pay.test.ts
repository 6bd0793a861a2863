/**
 * Paying one tool call that asked (src/mcp/pay.ts), whoever carries it: what the MCP options let through, what is
 * sent again and how, how the answer after paying is read, and the server's identity. The call is a script here (the
 * doors around it are test/http/mcp*.test.ts); the client, policy and signing are real.
 */
import { describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, memoryLedger, type AnyX402Error } from "../../src";
import { exactEvm } from "../../src/evm";
import type { McpCallToolParams, McpPaymentOptions } from "../../src/mcp";
import { identity, payToolCall } from "../../src/mcp/pay";
import { TX_HASH, account, countingSigner, v2Challenge } from "../support/seller";
import { rejection } from "../support/throws";

const challenge = v2Challenge({ resource: { url: "mcp://tool/t" } });
const asked = { isError: true, structuredContent: challenge, content: [] };
const settled = { success: true, transaction: TX_HASH, network: "eip155:84532", payer: account.address };
const PAID = { content: [{ type: "text", text: "ok" }], _meta: { "x402/payment-response": settled } };

/** Pays a call of `params` on `server` that asked with `first`; the script answers what was sent again. */
async function payOnce({
  server = "mcp://scripted",
  params = { name: "t" } as McpCallToolParams,
  options = {} as McpPaymentOptions,
  first = asked as object,
  answer = (_sent: McpCallToolParams): object | Promise<object> => PAID,
  signal = undefined as AbortSignal | undefined,
} = {}) {
  const { calls: signs, signer } = countingSigner();
  const failed: AnyX402Error[] = [];
  const ledger = memoryLedger();
  const client = createX402Client({
    schemes: [exactEvm({ signer })],
    plugins: [ledger],
    onPaymentFailed: (e) => void failed.push(e),
  });
  const sent: McpCallToolParams[] = [];
  const call = async (again: McpCallToolParams) => (sent.push(again), answer(again));
  const result = payToolCall(client, options, { server, params, first, call, signal });
  return { result, sent, signs, failed, ledger };
}

describe("what the MCP options let through (checked before anything is signed)", () => {
  it.each<{ name: string; server?: string; tool?: string; options: McpPaymentOptions; reason?: string }>([
    {
      name: "a wildcard server pattern",
      server: "https://a.example.com/mcp",
      options: { servers: ["https://*.example.com"] },
    },
    {
      name: "a server pattern's wildcard never spans a port",
      server: "https://a.example.com:8443/mcp",
      options: { servers: ["https://*.example.com"] },
      reason: "server https://a.example.com:8443 is not in mcp.servers",
    },
    {
      name: "a server pattern's lone wildcard is a host, never a host and port",
      server: "https://a.example.com:8443/mcp",
      options: { servers: ["https://*"] },
      reason: "server https://a.example.com:8443 is not in mcp.servers",
    },
    {
      name: "a server pattern's port",
      server: "https://a.example.com:8443/mcp",
      options: { servers: ["https://*:8443"] },
    },
    {
      name: "a server pattern's wildcard never spans a path",
      server: "https://evil.test/x.example.com",
      options: { servers: ["https://*x.example.com"] },
      reason: "server https://evil.test is not in mcp.servers",
    },
    {
      name: "the bare domain is not a subdomain",
      server: "https://example.com/mcp",
      options: { servers: ["https://*.example.com"] },
      reason: "server https://example.com is not in mcp.servers",
    },
    {
      name: "a server pattern in capitals",
      server: "https://Tools.Example.com/mcp",
      options: { servers: ["HTTPS://TOOLS.example.COM"] },
    },
    { name: "a tool pattern's wildcard", tool: "weather_today", options: { tools: ["weather_*"] } },
    // A list allows what any one of its patterns allows.
    { name: "a tool in a list of two", tool: "t", options: { tools: ["other", "t"] } },
    { name: "a server in a list of two", options: { servers: ["mcp://other", "mcp://scripted"] } },
    {
      name: "a tool pattern is the whole name",
      tool: "my_weather_today",
      options: { tools: ["weather_*"] },
      reason: 'tool "my_weather_today" is not in mcp.tools',
    },
    {
      name: "a tool name is compared with its case",
      tool: "Search",
      options: { tools: ["search"] },
      reason: 'tool "Search" is not in mcp.tools',
    },
    // A tool named like an Object.prototype member is no key of the caps: "*" holds it.
    {
      name: "a tool named toString is held to *",
      tool: "toString",
      options: { maxAmountPerTool: { "*": "$0.001" } },
      reason: '0.01 USDC is over mcp.maxAmountPerTool for "toString" ($0.001)',
    },
    {
      name: "a tool named __proto__ is held to *",
      tool: "__proto__",
      options: { maxAmountPerTool: { "*": "$0.001" } },
      reason: '0.01 USDC is over mcp.maxAmountPerTool for "__proto__" ($0.001)',
    },
    { name: "a tool's own cap over *", tool: "t", options: { maxAmountPerTool: { t: "$0.01", "*": "$0" } } },
  ])("$name", async ({ server, tool = "t", options, reason }) => {
    const { result, signs, sent } = await payOnce({ server, params: { name: tool }, options });
    if (!reason) {
      expect(getPaymentReceipt(await result)?.settled).toBe(true);
      return;
    }
    const error = await rejection(result);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected.map((r: { reason: string }) => r.reason)).toEqual([reason]);
    expect(signs).toHaveLength(0);
    expect(sent).toHaveLength(0);
  });
});

describe("onPaymentRequested: the last word before signing", () => {
  it("is asked with the server, the tool, a frozen copy of its arguments and the payment; true pays", async () => {
    const seen: unknown[] = [];
    const args = { q: "x" };
    const { result, signs } = await payOnce({
      params: { name: "search", arguments: args },
      options: {
        onPaymentRequested: (request) => {
          seen.push({ ...request, frozen: Object.isFrozen(request.arguments), copy: request.arguments !== args });
          return true;
        },
      },
    });
    expect(getPaymentReceipt(await result)?.settled).toBe(true);
    expect(signs).toHaveLength(1);
    expect(seen).toMatchObject([
      {
        server: "mcp://scripted",
        tool: "search",
        arguments: { q: "x" },
        frozen: true,
        copy: true,
        payment: { amount: "10000", network: "eip155:84532" },
      },
    ]);
  });

  it.each<{ name: string; verdict: false | { abort: true; reason: string }; reason: string }>([
    { name: "false", verdict: false, reason: "onPaymentRequested refused the payment." },
    {
      name: "an abort with a reason",
      verdict: { abort: true, reason: "no" },
      reason: "onPaymentRequested refused the payment: no.",
    },
  ])("$name refuses: PAYMENT_REFUSED, nothing signed or sent", async ({ verdict, reason }) => {
    const { result, signs, sent } = await payOnce({ options: { onPaymentRequested: () => verdict } });
    const error = await rejection(result);
    expect(error.code).toBe("PAYMENT_REFUSED");
    expect(error.message).toBe(reason);
    expect(signs).toHaveLength(0);
    expect(sent).toHaveLength(0);
  });

  it("a call without arguments is asked with none", async () => {
    let given: unknown;
    const { result } = await payOnce({ options: { onPaymentRequested: (r) => ((given = r.arguments), true) } });
    await result;
    expect(given).toEqual({});
  });
});

describe("the call sent again", () => {
  it("carries the signed payload itself in _meta, beside the caller's keys; name and arguments as they were", async () => {
    const params = { name: "search", arguments: { q: "x" }, _meta: { progressToken: 7 }, task: { ttl: 1 } };
    const { result, sent } = await payOnce({ params });
    await result;
    expect(sent).toHaveLength(1);
    const { _meta, ...rest } = sent[0]!;
    expect(rest).toEqual({ name: "search", arguments: { q: "x" }, task: { ttl: 1 } });
    expect(_meta).toMatchObject({
      progressToken: 7,
      "x402/payment": { x402Version: 2, accepted: (challenge.accepts as unknown[])[0] },
    });
    expect(typeof (_meta as Record<string, unknown>)["x402/payment"]).toBe("object");
    // The caller's params are not changed.
    expect(params._meta).toEqual({ progressToken: 7 });
  });

  it("is the request <server>#<tool, encoded> with method tools/call", async () => {
    const { result, ledger } = await payOnce({ server: "https://tools.example.com/mcp", params: { name: "a b#c" } });
    await result;
    expect(ledger.list.map((r) => [r.url, r.method])).toEqual([
      ["https://tools.example.com/mcp#a%20b%23c", "tools/call"],
    ]);
  });

  it("a call whose _meta names x402/payment as undefined carries no payment: it is paid", async () => {
    const { result, signs } = await payOnce({ params: { name: "t", _meta: { "x402/payment": undefined } } });
    expect(getPaymentReceipt(await result)?.settled).toBe(true);
    expect(signs).toHaveLength(1);
  });

  it("a call that carries a payment of its own is never paid again", async () => {
    const { result, signs, sent } = await payOnce({ params: { name: "t", _meta: { "x402/payment": {} } } });
    expect((await rejection(result)).code).toBe("PAYMENT_ALREADY_ATTEMPTED");
    expect(signs).toHaveLength(0);
    expect(sent).toHaveLength(0);
  });

  it("an aborted call signs nothing and sends nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    const { result, signs, sent } = await payOnce({ signal: controller.signal });
    expect((await rejection(result)).code).toBe("ABORTED");
    expect(signs).toHaveLength(0);
    expect(sent).toHaveLength(0);
  });
});

describe("the answer after paying", () => {
  it.each<{ name: string; answer?: object; throws?: Error; settled?: boolean; code?: string; failed?: string[] }>([
    { name: "a result with a settlement: settled", answer: PAID, settled: true, failed: [] },
    {
      name: "a result with isError other than true: a 200 without a report",
      answer: { isError: "yes", content: [] },
      settled: false,
      failed: [],
    },
    {
      name: "an error result without a report: unknown (500)",
      answer: { isError: true, content: [] },
      settled: false,
      failed: ["PAYMENT_OUTCOME_UNKNOWN"],
    },
    {
      name: "an error result reporting the settlement: settled",
      answer: { isError: true, content: [], _meta: { "x402/payment-response": settled } },
      settled: true,
      failed: [],
    },
    {
      name: "the challenge again: rejected",
      answer: { ...asked, structuredContent: { ...challenge, error: "nope" } },
      code: "PAYMENT_REJECTED",
    },
    {
      name: "a JSON-RPC 402 again: rejected",
      throws: Object.assign(new Error("pay"), { code: 402, data: { ...challenge, error: "again" } }),
      code: "PAYMENT_REJECTED",
    },
    {
      name: "another JSON-RPC error: unknown",
      throws: Object.assign(new Error("lost"), { code: -32603 }),
      code: "PAYMENT_OUTCOME_UNKNOWN",
    },
  ])("$name", async ({ answer, throws, settled: isSettled, code, failed }) => {
    const run = await payOnce({ answer: () => (throws ? Promise.reject(throws) : answer!) });
    if (code) {
      expect((await rejection(run.result)).code).toBe(code);
      return;
    }
    const result = await run.result;
    expect(result).toBe(answer);
    expect(getPaymentReceipt(result)?.settled).toBe(isSettled);
    expect(run.failed.map((e) => e.code)).toEqual(failed);
  });

  it("the settlement a result reports is the receipt's, read from _meta", async () => {
    const { result } = await payOnce();
    expect(getPaymentReceipt(await result)).toMatchObject({
      settled: true,
      transaction: TX_HASH,
      payer: account.address,
    });
  });
});

describe("identity: the server's name for the policy, budgets and the ledger", () => {
  it.each<{ name: string; server?: string | URL; url?: unknown; given?: string; is: string }>([
    {
      name: "the option, without its fragment",
      server: "https://tools.example.com/mcp?v=1#x",
      is: "https://tools.example.com/mcp?v=1",
    },
    {
      name: "the option as a URL",
      server: new URL("mcp://weather"),
      url: new URL("https://other.example"),
      is: "mcp://weather",
    },
    {
      name: "the HTTP transport's URL, no fragment",
      url: new URL("https://t.example/mcp?k=1#f"),
      is: "https://t.example/mcp?k=1",
    },
    { name: "an http URL", url: new URL("http://localhost:3000/mcp"), is: "http://localhost:3000/mcp" },
    { name: "a URL that is not HTTP: the name", url: new URL("ws://t.example/mcp"), given: "ws", is: "mcp://ws" },
    { name: "a URL as a string is none", url: "https://t.example/mcp", given: "W", is: "mcp://w" },
    { name: "a name made host-safe", given: "Weather Tools!", is: "mcp://weather-tools" },
    { name: "its edges trimmed", given: "-.Weather.-", is: "mcp://weather" },
    { name: "dots and dashes inside kept", given: "a.b-c", is: "mcp://a.b-c" },
    { name: "runs of others as one dash", given: "a  /  b", is: "mcp://a-b" },
    { name: "no name", is: "mcp://server" },
    { name: "a name with nothing host-safe", given: "!!!", is: "mcp://server" },
  ])("$name: $is", ({ server, url, given, is }) => {
    expect(identity(server, url === undefined ? undefined : { _url: url }, given)).toBe(is);
  });
});
