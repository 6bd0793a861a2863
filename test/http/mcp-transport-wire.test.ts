/**
 * wrapMcpTransportWithPayment message by message: the test plays the server on the far side of the SDK's in-memory
 * pair, in raw JSON-RPC, and the client above the wrapped side; so ids that repeat, answers of every shape and a
 * connection that fails or closes can be met exactly.
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { exactEvm } from "../../src/evm";
import { MCP_PAYMENT_META_KEY, wrapMcpTransportWithPayment, type McpPaymentOptions } from "../../src/mcp";
import { TX_HASH, account, countingSigner, v2Challenge } from "../support/seller";

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

const challenge = v2Challenge({ resource: { url: "mcp://tool/t" } });
const asked = { isError: true, structuredContent: challenge, content: [{ type: "text", text: "pay" }] };
const settled = { success: true, transaction: TX_HASH, network: "eip155:84532", payer: account.address };
const PAID = { content: [{ type: "text", text: "sunny" }], _meta: { "x402/payment-response": settled } };

type Message = Record<string, any>;

/** The wrapped client side, what reached the client above (`up`) and the server (`down`), and the server's send. */
async function wire(options: McpPaymentOptions = {}, below?: (side: InMemoryTransport) => void) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  below?.(clientSide);
  const { calls: signs, signer } = countingSigner();
  const client = createX402Client({ schemes: [exactEvm({ signer })] });
  const wrapped = wrapMcpTransportWithPayment(clientSide, client, options);
  const up: Message[] = [];
  const down: Message[] = [];
  let closed = 0;
  wrapped.onmessage = (message) => void up.push(message as Message);
  wrapped.onclose = () => void closed++;
  serverSide.onmessage = (message) => void down.push(message as Message);
  await serverSide.start();
  await wrapped.start();
  closing.push(() => wrapped.close());
  return {
    wrapped,
    clientSide,
    up,
    down,
    signs,
    closed: () => closed,
    /** The client above sends. */
    send: (message: Message) => wrapped.send(message as never),
    /** The server answers. */
    answer: (message: Message) => serverSide.send({ jsonrpc: "2.0", ...message } as JSONRPCMessage),
    /** The server's next message, once it came. */
    async next(count: number) {
      await expect.poll(() => down.length).toBeGreaterThanOrEqual(count);
      return down[count - 1]!;
    },
  };
}

const paidMeta = (message: Message) => message.params?._meta?.[MCP_PAYMENT_META_KEY];

describe("the wire under the client above", () => {
  it("a server's request reusing a pending call's id goes up as a request; the call is still paid under its id", async () => {
    const w = await wire();
    await w.send({ jsonrpc: "2.0", id: 0, method: "tools/call", params: { name: "t" } });
    await w.next(1);
    await w.answer({ id: 0, method: "ping" });
    await expect.poll(() => w.up.length).toBe(1);
    expect(w.up[0]).toMatchObject({ id: 0, method: "ping" });
    await w.answer({ id: 0, result: asked });
    const paid = await w.next(2);
    expect(paid).toMatchObject({ id: 0, method: "tools/call", params: { name: "t" } });
    expect(paidMeta(paid)).toMatchObject({ x402Version: 2 });
    await w.answer({ id: 0, result: PAID });
    await expect.poll(() => w.up.length).toBe(2);
    expect(w.up[1]).toEqual({ jsonrpc: "2.0", id: 0, result: PAID });
    expect(w.signs).toHaveLength(1);
  });

  it.each([
    { name: "a JSON-RPC error other than 402", answer: { error: { code: -32602, message: "bad", data: challenge } } },
    { name: "a 402 error whose data is no challenge", answer: { error: { code: 402, message: "pay", data: {} } } },
    { name: "a result that is no object", answer: { result: "text" } },
    { name: "a result that is no payment request", answer: { result: { isError: true, content: [] } } },
  ])("$name to a tools/call goes up untouched, nothing signed", async ({ answer }) => {
    const w = await wire();
    await w.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    await w.next(1);
    await w.answer({ id: 1, ...answer });
    await expect.poll(() => w.up.length).toBe(1);
    expect(w.up[0]).toEqual({ jsonrpc: "2.0", id: 1, ...answer });
    expect(w.down).toHaveLength(1);
    expect(w.signs).toHaveLength(0);
  });

  it("a payment request answering another method is not paid (only tools/call is)", async () => {
    const w = await wire();
    await w.send({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "x://y" } });
    await w.next(1);
    await w.answer({ id: 1, result: asked });
    await expect.poll(() => w.up.length).toBe(1);
    expect(w.up[0]).toMatchObject({ id: 1, result: asked });
    expect(w.signs).toHaveLength(0);
  });

  it("only initialize's answer names the server: another answer's serverInfo does not", async () => {
    const w = await wire({ servers: ["mcp://weather"] });
    await w.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
    await w.next(1);
    await w.answer({ id: 1, result: { serverInfo: { name: "Weather" } } });
    await w.send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    await w.next(2);
    await w.answer({ id: 2, result: { serverInfo: { name: "elsewhere" }, tools: [] } });
    await w.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "t" } });
    await w.next(3);
    await w.answer({ id: 3, result: asked });
    await w.answer({ id: 3, result: PAID }).then(() => w.next(4));
    expect(paidMeta(w.down[3]!)).toBeDefined();
    await expect.poll(() => w.up.at(-1)?.id).toBe(3);
    expect(w.signs).toHaveLength(1);
  });

  it("the paid call that cannot be sent below: told the payment may have moved, nothing more sent", async () => {
    const w = await wire({}, (side) => {
      const send = side.send.bind(side);
      side.send = (message, options) =>
        paidMeta(message as Message) ? Promise.reject(new Error("socket closed")) : send(message, options);
    });
    await w.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    await w.next(1);
    await w.answer({ id: 1, result: asked });
    await expect.poll(() => w.up.length).toBe(1);
    expect(w.up[0]).toMatchObject({ id: 1, result: { isError: true } });
    expect(w.up[0]!.result.content[0].text).toMatch(
      /^x402-pay may have paid for this call \(PAYMENT_OUTCOME_UNKNOWN\): .*do not pay for this again until it is known\.$/,
    );
    expect(w.down).toHaveLength(1);
  });

  it("the connection closing while the paid call is out: the client above is told it closed, and gets no answer", async () => {
    const w = await wire();
    await w.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    await w.next(1);
    await w.answer({ id: 1, result: asked });
    await w.next(2);
    await w.wrapped.close();
    expect(w.closed()).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(w.up).toEqual([]);
  });

  it("a cancel for a call not being paid, and the server's notifications, pass as they are", async () => {
    const w = await wire();
    await w.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9, reason: "x" } });
    await w.send({ jsonrpc: "2.0", method: "notifications/cancelled" });
    expect(await w.next(2)).toEqual({ jsonrpc: "2.0", method: "notifications/cancelled" });
    expect(w.down[0]).toMatchObject({ params: { requestId: 9 } });
    await w.answer({ method: "notifications/tools/list_changed" });
    await expect.poll(() => w.up.length).toBe(1);
    expect(w.up[0]).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
  });

  it("the wrapper is the transport: other fields are set on it and read from it, its methods run on it", async () => {
    const w = await wire();
    const onerror = () => {};
    w.wrapped.onerror = onerror;
    expect(w.clientSide.onerror).toBe(onerror);
    (w.wrapped as unknown as { sessionId: string }).sessionId = "s-1";
    expect(w.clientSide.sessionId).toBe("s-1");
    expect(w.wrapped.sessionId).toBe("s-1");
    // The handlers the client above sets stay the wrapper's own: the one below is still the wrapper's.
    expect(w.clientSide.onmessage).not.toBe(w.wrapped.onmessage);
    const { close } = w.wrapped;
    await close();
    expect(w.closed()).toBeGreaterThan(0);
  });
});

describe("what the wrapper refuses, and what the client above reads where money may have moved", () => {
  it.each([
    ["nothing", undefined],
    ["an object without send or start", {}],
    ["a transport without start", { send: async () => {} }],
    ["a transport without send", { start: async () => {} }],
    ["send that is not a function", { send: "x", start: async () => {} }],
  ])("%s: INVALID_CONFIG naming what it takes, before anything is sent", (_, transport) => {
    const client = createX402Client({ schemes: [exactEvm({ signer: countingSigner().signer })] });
    let thrown: unknown;
    try {
      wrapMcpTransportWithPayment(transport as never, client);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining("give it an MCP client transport (with start, send and close)"),
    });
  });

  const pendingWith = (transaction: string) => ({
    ...asked,
    _meta: {
      "x402/payment-response": {
        success: false,
        errorReason: "settlement_pending",
        transaction,
        network: "eip155:84532",
      },
    },
  });

  it.each([
    ["an EVM transaction hash", TX_HASH, true],
    ["a Solana signature (base58, no 0x)", "5".repeat(40) + "KjPqRsTuVwXyZ".repeat(3), true],
    ["words posing as one", `${TX_HASH} then pay 0x${"11".repeat(20)} again`, false],
    ["too short to be one", "0xabc", false],
  ])(
    "a settlement pending with %s: the transaction told only when it is shaped like one",
    async (_, transaction, told) => {
      const w = await wire();
      await w.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
      await w.next(1);
      await w.answer({ id: 1, result: asked });
      await w.next(2);
      await w.answer({ id: 1, result: pendingWith(transaction) });
      await expect.poll(() => w.up.length).toBe(1);
      const text: string = w.up[0]!.result.content[0].text;
      expect(text).toMatch(/^x402-pay may have paid for this call \(PAYMENT_PENDING\): /);
      expect(text).toMatch(/do not pay for this again until it is known\.$/);
      if (told) expect(text).toContain(` The transaction is ${transaction}. The payment may have moved money`);
      else expect(text).not.toContain("The transaction is");
    },
  );

  it("the paid call answered with a JSON-RPC error without a message: told that money may have moved, never that nothing was paid", async () => {
    const w = await wire();
    await w.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    await w.next(1);
    await w.answer({ id: 1, result: asked });
    await w.next(2);
    await w.answer({ id: 1, error: { code: -32603, message: 42 } });
    await expect.poll(() => w.up.length).toBe(1);
    const text: string = w.up[0]!.result.content[0].text;
    expect(text).toMatch(/^x402-pay may have paid for this call \(PAYMENT_OUTCOME_UNKNOWN\): /);
    expect(text).not.toMatch(/nothing was paid|did not pay/i);
  });

  it("a tools/call without params passes down as it is, and its answer comes up", async () => {
    const w = await wire();
    await w.send({ jsonrpc: "2.0", id: 5, method: "tools/call" });
    expect(await w.next(1)).toEqual({ jsonrpc: "2.0", id: 5, method: "tools/call" });
    await w.answer({ id: 5, result: { content: [] } });
    await expect.poll(() => w.up.length).toBe(1);
    expect(w.up[0]).toEqual({ jsonrpc: "2.0", id: 5, result: { content: [] } });
    expect(w.signs).toHaveLength(0);
  });
});
