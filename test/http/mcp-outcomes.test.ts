/**
 * What the caller of a paid MCP tool call is told, for every outcome, through both doors: the SDK Client wrapper
 * (a result with its receipt, or a typed error: LangChain's adapter shows the model `String(error)`) and the
 * transport wrapper (the client above, and so the model, reads one tool result). Money that may have moved is never
 * told as nothing paid; what nothing paid for says so. Scripted servers on the SDK's in-memory transport.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  budget,
  createX402Client,
  getPaymentReceipt,
  memoryBudgetStore,
  memoryLedger,
  unreconciled,
  type AnyX402Error,
  type X402ClientOptions,
} from "../../src";
import { exactEvm } from "../../src/evm";
import {
  MCP_PAYMENT_META_KEY,
  wrapMcpClientWithPayment,
  wrapMcpTransportWithPayment,
  type McpPaymentOptions,
} from "../../src/mcp";
import { TX_HASH, account, countingSigner, v2Challenge } from "../support/seller";

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

type Answer = (call: { meta: Record<string, any> | undefined; count: number }) => CallToolResult;

const challenge = (over: Record<string, unknown> = {}) => v2Challenge({ resource: { url: "mcp://tool/t" }, ...over });
const asked = (c: Record<string, unknown> = challenge()): CallToolResult => ({
  isError: true,
  structuredContent: c,
  content: [{ type: "text", text: JSON.stringify(c) }],
});
const settled = { success: true, transaction: TX_HASH, network: "eip155:84532", payer: account.address };
const pendingSettlement = {
  success: false,
  errorReason: "settlement_pending",
  transaction: TX_HASH,
  network: "eip155:84532",
};
const PAID: CallToolResult = {
  content: [{ type: "text", text: "sunny" }],
  _meta: { "x402/payment-response": settled },
};
/** Asks for payment until one arrives, then answers `paid` (or throws what it throws). */
const sells =
  (paid: () => CallToolResult): Answer =>
  ({ meta }) =>
    meta?.[MCP_PAYMENT_META_KEY] ? paid() : asked();

/** What the caller got: the result, or the error thrown; `read` is the text a model is shown of it. */
interface Told {
  result?: CallToolResult;
  error?: AnyX402Error;
  read: string;
}

/** A door: how a tool call on `answer`'s server is made, paying through `client`. */
interface Door {
  name: string;
  connect(answer: Answer, client: ReturnType<typeof createX402Client>, options: McpPaymentOptions): Promise<Client>;
}

function scripted(answer: Answer) {
  const calls: { meta: Record<string, any> | undefined }[] = [];
  const server = new Server({ name: "scripted", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const meta = request.params._meta as Record<string, any> | undefined;
    calls.push({ meta });
    return answer({ meta, count: calls.length });
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  closing.push(() => server.close());
  return { calls, clientSide, connected: server.connect(serverSide) };
}

const doors: Door[] = [
  {
    name: "wrapMcpClientWithPayment",
    async connect(answer, client, options) {
      const { clientSide, connected } = scripted(answer);
      const mcp = new Client({ name: "test", version: "1.0.0" });
      await Promise.all([connected, mcp.connect(clientSide)]);
      closing.push(() => mcp.close());
      return wrapMcpClientWithPayment(mcp, client, options);
    },
  },
  {
    name: "wrapMcpTransportWithPayment",
    async connect(answer, client, options) {
      const { clientSide, connected } = scripted(answer);
      const mcp = new Client({ name: "test", version: "1.0.0" });
      await Promise.all([connected, mcp.connect(wrapMcpTransportWithPayment(clientSide, client, options))]);
      closing.push(() => mcp.close());
      return mcp;
    },
  },
];

const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === "text" ? (c as { text: string }).text : "")).join("\n");

/** Calls tool "t" through `door` and says what its caller was told; `signs` counts the wallet's signatures. */
async function call(
  door: Door,
  answer: Answer,
  { options = {}, client = {} }: { options?: McpPaymentOptions; client?: Partial<X402ClientOptions> } = {},
) {
  const { calls: signs, signer } = countingSigner();
  const failed: AnyX402Error[] = [];
  const ledger = memoryLedger();
  const x402 = createX402Client({
    schemes: [exactEvm({ signer })],
    ...client,
    plugins: [ledger, ...(client.plugins ?? [])],
    onPaymentFailed: (e) => void failed.push(e),
  });
  const mcp = await door.connect(answer, x402, options);
  const told: Told = await mcp.callTool({ name: "t", arguments: { city: "Lisbon" } }).then(
    (result) => ({ result: result as CallToolResult, read: textOf(result as CallToolResult) }),
    (error: AnyX402Error) => ({ error, read: String(error) }),
  );
  return { told, signs, failed, ledger };
}

const NOTHING_PAID = /Nothing was paid\.$/;
const MAY_HAVE_MOVED = /may have moved money: do not pay for this again until it is known\.$/;

describe.each(doors)("$name: what the caller is told", (door) => {
  const transport = door.name === "wrapMcpTransportWithPayment";

  it("paid and answered: the tool's result, settled, one signature; the ledger says settled", async () => {
    const { told, signs, ledger } = await call(
      door,
      sells(() => PAID),
    );
    expect(told.result).toEqual(PAID);
    expect(told.read).toBe("sunny");
    expect(signs).toHaveLength(1);
    if (!transport) expect(getPaymentReceipt(told.result!)).toMatchObject({ settled: true, transaction: TX_HASH });
    expect(ledger.list.map((r) => r.outcome)).toEqual(["settled"]);
  });

  it("free: the tool's result untouched, nothing signed, nothing recorded", async () => {
    const free: CallToolResult = { content: [{ type: "text", text: "free" }] };
    const { told, signs, ledger } = await call(door, () => free);
    expect(told.result).toEqual(free);
    expect(signs).toHaveLength(0);
    expect(ledger.list).toEqual([]);
  });

  it("rejected (asked again after paying): PAYMENT_REJECTED with the server's reason, told nothing was paid", async () => {
    const { told, signs, ledger } = await call(door, ({ meta }) =>
      asked(challenge(meta?.[MCP_PAYMENT_META_KEY] ? { error: "insufficient_funds" } : {})),
    );
    expect(signs).toHaveLength(1);
    expect(told.read).toContain("insufficient_funds");
    if (transport) {
      expect(told.result!.isError).toBe(true);
      expect(told.read).toMatch(/^x402-pay did not pay for this call \(PAYMENT_REJECTED\): /);
      expect(told.read).toMatch(NOTHING_PAID);
    } else expect(told.error!.code).toBe("PAYMENT_REJECTED");
    expect(ledger.list.map((r) => r.outcome)).toEqual(["rejected"]);
  });

  it("a settlement reported failed: PAYMENT_REJECTED, told nothing was paid", async () => {
    const failure = { success: false, errorReason: "insufficient_funds", transaction: "", network: "eip155:84532" };
    const { told } = await call(
      door,
      sells(() => ({ content: [{ type: "text", text: "ok" }], _meta: { "x402/payment-response": failure } })),
    );
    if (transport) expect(told.read).toMatch(/\(PAYMENT_REJECTED\).*insufficient_funds.*Nothing was paid\.$/);
    else expect(told.error!.code).toBe("PAYMENT_REJECTED");
  });

  it("settlement pending on a tool result: the result as answered, never an error or nothing paid; recorded to reconcile", async () => {
    const answered = {
      content: [{ type: "text" as const, text: "sunny" }],
      _meta: { "x402/payment-response": pendingSettlement },
    };
    const { told, failed, ledger } = await call(
      door,
      sells(() => answered),
    );
    expect(told.result).toEqual(answered);
    expect(told.read).not.toMatch(/nothing was paid|did not pay/i);
    if (!transport) expect(getPaymentReceipt(told.result!)).toMatchObject({ settled: false, pending: true });
    expect(failed.map((e) => e.code)).toEqual(["PAYMENT_PENDING"]);
    expect(await unreconciled(ledger)).toHaveLength(1);
  });

  it.each([
    {
      form: "an error result",
      answer: (): CallToolResult => ({
        isError: true,
        content: [{ type: "text", text: "down" }],
        _meta: { "x402/payment-response": pendingSettlement },
      }),
    },
    {
      form: "the challenge asked again",
      answer: (): CallToolResult => asked(challenge({ "x402/payment-response": pendingSettlement })),
    },
  ])(
    "settlement pending on $form: PAYMENT_PENDING, told the money may have moved, never that nothing was paid",
    async ({ answer }) => {
      const { told, ledger } = await call(door, sells(answer));
      expect(told.read).toContain(TX_HASH);
      expect(told.read).not.toMatch(/nothing was paid|did not pay/i);
      if (transport) {
        expect(told.result!.isError).toBe(true);
        expect(told.read).toMatch(/\(PAYMENT_PENDING\)/);
        expect(told.read).toMatch(MAY_HAVE_MOVED);
      } else expect(told.error!.code).toBe("PAYMENT_PENDING");
      expect(ledger.list.map((r) => r.outcome)).toEqual(["pending"]);
    },
  );

  it("lost after the payment left (the paid call fails in transit): PAYMENT_OUTCOME_UNKNOWN, told the money may have moved", async () => {
    const { told, signs, ledger } = await call(door, ({ meta }) => {
      if (meta?.[MCP_PAYMENT_META_KEY]) throw new McpError(-32603, "connection lost");
      return asked();
    });
    expect(signs).toHaveLength(1);
    expect(told.read).not.toMatch(/nothing was paid|did not pay/i);
    if (transport) {
      expect(told.read).toMatch(/\(PAYMENT_OUTCOME_UNKNOWN\)/);
      expect(told.read).toMatch(MAY_HAVE_MOVED);
    } else {
      expect(told.error!.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
      expect(told.read).toMatch(/may have settled/);
    }
    expect(ledger.list.map((r) => r.outcome)).toEqual(["unknown"]);
  });

  it("the tool errs after being paid (no settlement report): its error, told the payment may have moved; recorded unknown", async () => {
    const { told, failed, ledger } = await call(
      door,
      sells(() => ({ isError: true, content: [{ type: "text", text: "the tool is down" }] })),
    );
    expect(told.result!.isError).toBe(true);
    expect(told.read).toMatch(/^the tool is down/);
    expect(told.read).not.toMatch(/nothing was paid|did not pay/i);
    // The SDK client's caller has the receipt; a model above the transport has only the text.
    if (transport) expect(told.read).toMatch(MAY_HAVE_MOVED);
    else expect(getPaymentReceipt(told.result!)).toMatchObject({ settled: false, pending: false });
    expect(failed.map((e) => e.code)).toEqual(["PAYMENT_OUTCOME_UNKNOWN"]);
    expect(ledger.list.map((r) => r.outcome)).toEqual(["unknown"]);
  });

  it.each<{
    by: string;
    code: string;
    why: RegExp;
    options?: McpPaymentOptions;
    client?: Partial<X402ClientOptions>;
  }>([
    {
      by: "the spend policy",
      code: "NO_PAYABLE_REQUIREMENT",
      why: /maxAmountPerPayment/,
      client: { policy: { maxAmountPerPayment: "$0.001" } },
    },
    {
      by: "a budget",
      code: "NO_PAYABLE_REQUIREMENT",
      why: /budget client\/life allows/,
      client: { plugins: [budget({ limit: "$0.001", store: memoryBudgetStore() })] },
    },
    {
      by: "mcp.maxAmountPerTool",
      code: "NO_PAYABLE_REQUIREMENT",
      why: /over mcp\.maxAmountPerTool/,
      options: { maxAmountPerTool: { t: "$0.001" } },
    },
    { by: "mcp.tools", code: "NO_PAYABLE_REQUIREMENT", why: /not in mcp\.tools/, options: { tools: ["other"] } },
    {
      by: "onPaymentRequested",
      code: "PAYMENT_REFUSED",
      why: /onPaymentRequested refused the payment: over the user's limit/,
      options: { onPaymentRequested: () => ({ abort: true, reason: "over the user's limit" }) },
    },
    {
      by: "onBeforePayment",
      code: "PAYMENT_REFUSED",
      why: /onBeforePayment refused/,
      client: { onBeforePayment: () => false },
    },
    {
      by: "the wallet's user",
      code: "USER_REJECTED",
      why: /declined to sign/,
      client: {
        schemes: [
          exactEvm({
            signer: {
              address: account.address,
              signTypedData: () =>
                Promise.reject(Object.assign(new Error("User rejected the request."), { code: 4001 })),
            },
          }),
        ],
      },
    },
  ])(
    "refused by $by: $code, told why and that nothing was paid; nothing sent",
    async ({ code, why, options, client }) => {
      let paidCalls = 0;
      const { told, ledger } = await call(
        door,
        ({ meta }) => (meta?.[MCP_PAYMENT_META_KEY] ? (paidCalls++, PAID) : asked()),
        { options, client },
      );
      expect(paidCalls).toBe(0);
      expect(told.read).toMatch(why);
      if (transport) {
        expect(told.result!.isError).toBe(true);
        expect(told.read).toMatch(new RegExp(`^x402-pay did not pay for this call \\(${code}\\): `));
        expect(told.read).toMatch(NOTHING_PAID);
      } else expect(told.error!.code).toBe(code);
      expect(told.read).not.toMatch(/may have moved/);
      expect(ledger.list.map((r) => r.outcome)).toEqual(["refused"]);
    },
  );
});
