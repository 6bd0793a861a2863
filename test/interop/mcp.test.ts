// Paid MCP tool calls: x402-pay/mcp around the official SDK's Client, against an MCP server built
// here with the official SDK on x402's MCP transport (localnet/mcp.ts), over streamable HTTP and over
// stdio, settling on the local anvil chain through the reference facilitator. Every paid case checks
// the chain, not just the result.
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { createPublicClient, http, type Address, type Hash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createX402Client,
  getPaymentReceipt,
  memoryLedger,
  type AnyX402Error,
  type X402ClientOptions,
} from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapMcpClientWithPayment, type McpPaymentOptions } from "../../src/mcp";
import {
  PRICE_ATOMIC,
  WEATHER,
  fundedBuyer,
  newBuyer,
  randomAddress,
  startInteropStack,
  type Buyer,
  type InteropStack,
} from "../localnet/index.js";
import { startMcpSeller, type McpSeller } from "../localnet/mcp.js";
import { budget } from "../../src";

const root = fileURLToPath(new URL("../../", import.meta.url));
let stack: InteropStack;
let seller: McpSeller;
const payTo: Address = randomAddress();

beforeAll(async () => {
  stack = await startInteropStack();
  seller = await startMcpSeller({ facilitatorUrl: stack.facilitator.url, payTo });
});
afterAll(async () => {
  await seller?.stop();
  await stack?.stop();
});

/** A connected SDK client over `transport`, closed after the test file. */
const opened: Client[] = [];
afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()));
});
async function connect(over: "http" | "stdio"): Promise<Client> {
  const client = new Client({ name: "x402-pay-tests", version: "1.0.0" });
  const transport =
    over === "http"
      ? new StreamableHTTPClientTransport(new URL(seller.url))
      : new StdioClientTransport({
          command: process.execPath,
          args: ["--import", "tsx", "test/localnet/mcp-stdio.ts"],
          cwd: root,
          env: { ...(process.env as Record<string, string>), FACILITATOR_URL: stack.facilitator.url, PAY_TO: payTo },
          stderr: "pipe",
        });
  await client.connect(transport);
  opened.push(client);
  return client;
}

const records = async (ledger: ReturnType<typeof memoryLedger>) => {
  const all = [];
  for await (const record of ledger.records()) all.push(record);
  return all;
};
const balances = async (buyer: Buyer) => ({
  buyer: await stack.usdc.usdcBalance(buyer.address),
  seller: await stack.usdc.usdcBalance(payTo),
});

async function expectMined(transaction: string | undefined) {
  expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);
  const chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
  expect((await chain.getTransactionReceipt({ hash: transaction as Hash })).status).toBe("success");
}

describe.each(["http", "stdio"] as const)("over %s", (over) => {
  let mcp: Client;
  beforeAll(async () => {
    mcp = await connect(over);
  });

  /** The SDK client wrapped to pay with a fresh funded buyer; `failed` collects what the client reported. */
  async function paying(buyer?: Buyer, client: Partial<X402ClientOptions> = {}, options: McpPaymentOptions = {}) {
    buyer ??= await fundedBuyer(stack.usdc);
    const failed: AnyX402Error[] = [];
    const ledger = memoryLedger();
    const x402 = createX402Client({
      schemes: [exactEvm({ signer: buyer.account })],
      onPaymentFailed: (e) => void failed.push(e),
      ...client,
      plugins: [ledger, ...(client.plugins ?? [])],
    });
    return { buyer, failed, ledger, paid: wrapMcpClientWithPayment(mcp, x402, options) };
  }

  it.each([
    { tool: "weather", form: "v2, structuredContent" },
    { tool: "weather_text", form: "v2, the JSON text fallback" },
    { tool: "weather_rpc", form: "v2, the JSON-RPC 402 error" },
    { tool: "weather_v1", form: "v1, the x402/error text wrapper" },
  ])("a paid tool ($form): paid once on chain, the whole result returned with its receipt", async ({ tool }) => {
    const { buyer, paid, ledger } = await paying();
    const before = await balances(buyer);
    const result = (await paid.callTool({
      name: tool,
      arguments: { city: "Lisbon" },
      _meta: { progressToken: 7 },
    })) as Record<string, any>;

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(WEATHER);
    expect(JSON.parse(result.content[0].text)).toEqual(WEATHER);
    expect(result._meta["localnet/served-by"]).toBe("mcp-seller");
    expect(result._meta["x402/payment-response"]).toMatchObject({ success: true });
    const receipt = getPaymentReceipt(result)!;
    expect(receipt).toMatchObject({ settled: true, payer: buyer.address, amount: String(PRICE_ATOMIC), payTo });
    expect(receipt.transaction).toBe(result._meta["x402/payment-response"].transaction);
    await expectMined(receipt.transaction);
    const after = await balances(buyer);
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.seller - before.seller).toBe(PRICE_ATOMIC);
    const [record] = await records(ledger);
    expect(record).toMatchObject({ outcome: "settled", method: "tools/call", transaction: receipt.transaction });
    expect(record!.url).toMatch(new RegExp(`#${tool}$`));
  });

  it("a free tool: its result untouched, nothing signed", async () => {
    const signer = newBuyer();
    let signed = 0;
    const counting = { address: signer.address, signTypedData: async () => (signed++, "0x" as const) };
    const x402 = createX402Client({ schemes: [exactEvm({ signer: counting })] });
    const result = await wrapMcpClientWithPayment(mcp, x402).callTool({ name: "ping" });
    expect(result).toEqual(await mcp.callTool({ name: "ping" }));
    expect(getPaymentReceipt(result)).toBeUndefined();
    expect(signed).toBe(0);
  });

  it("a tool that fails on its own: an ordinary error result, untouched and unpaid", async () => {
    const { paid, failed, ledger } = await paying();
    const result = (await paid.callTool({ name: "fails" })) as Record<string, any>;
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "this tool always fails" }] });
    expect(failed).toEqual([]);
    expect(await records(ledger)).toEqual([]);
  });

  it("settlement fails after paying: PAYMENT_REJECTED with the server's reason; nothing moved, paid once", async () => {
    const { buyer, paid, failed } = await paying();
    const before = await balances(buyer);
    const error = await paid.callTool({ name: "unsettled" }).catch((e) => e);
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.details.reason).toBe("facilitator_unavailable");
    expect(failed).toEqual([error]);
    expect(await balances(buyer)).toEqual(before);
  });

  it("the server refuses the payment (an unfunded wallet): PAYMENT_REJECTED naming the facilitator's reason", async () => {
    const { paid } = await paying(newBuyer());
    const error = await paid.callTool({ name: "weather" }).catch((e) => e);
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.details.reason).toBe("invalid_exact_evm_insufficient_balance");
  });

  it("the tool errs after the payment was verified: its error result, reported as an outcome to reconcile; nothing moved", async () => {
    const { buyer, paid, failed, ledger } = await paying();
    const before = await balances(buyer);
    const result = (await paid.callTool({ name: "broken" })) as Record<string, any>;
    expect(result).toMatchObject({ isError: true, content: [{ text: "the weather station is down" }] });
    expect(failed.map((e) => e.code)).toEqual(["PAYMENT_OUTCOME_UNKNOWN"]);
    expect((await records(ledger))[0]!.outcome).toBe("unknown");
    expect(await balances(buyer)).toEqual(before);
  });

  it("a tool outside mcp.tools (asking in the JSON-RPC 402 form): NO_PAYABLE_REQUIREMENT, not the SDK's error; nothing signed", async () => {
    const { paid, failed } = await paying(undefined, {}, { tools: ["weather"] });
    const error = await paid.callTool({ name: "weather_rpc" }).catch((e) => e);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0].reason).toBe('tool "weather_rpc" is not in mcp.tools');
    expect(failed).toEqual([error]);
    expect(error).not.toBeInstanceOf(McpError);
  });
});

describe("the tool guard and the policy", () => {
  let mcp: Client;
  beforeAll(async () => {
    mcp = await connect("http");
  });
  const origin = () => new URL(seller.url).origin;

  it("the approval hook sees the server, tool and arguments; a refusal is PAYMENT_REFUSED before signing", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const seen: unknown[] = [];
    const verified = seller.log.verified.length;
    const x402 = createX402Client({ schemes: [exactEvm({ signer: buyer.account })] });
    const paid = wrapMcpClientWithPayment(mcp, x402, {
      onPaymentRequested: ({ server, tool, arguments: args, payment }) => {
        seen.push({ server, tool, args, amount: payment.amount });
        return { abort: true, reason: "not today" };
      },
    });
    const error = await paid.callTool({ name: "weather", arguments: { city: "Porto" } }).catch((e) => e);
    expect(error.code).toBe("PAYMENT_REFUSED");
    expect(error.message).toMatch(/onPaymentRequested refused the payment: not today/);
    expect(seen).toEqual([
      { server: seller.url, tool: "weather", args: { city: "Porto" }, amount: String(PRICE_ATOMIC) },
    ]);
    expect(seller.log.verified).toHaveLength(verified);
  });

  it("a per-tool cap under the price refuses; at or over it pays", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const x402 = createX402Client({ schemes: [exactEvm({ signer: buyer.account })] });
    const capped = wrapMcpClientWithPayment(mcp, x402, { maxAmountPerTool: { weather: "$0.0009", "*": "$0.001" } });
    const error = await capped.callTool({ name: "weather" }).catch((e) => e);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0].reason).toMatch(/over mcp.maxAmountPerTool for "weather"/);
    expect(getPaymentReceipt(await capped.callTool({ name: "weather_text" }))?.settled).toBe(true);
  });

  it("policy.origins governs an MCP server over HTTP by its URL's origin; mcp.servers lists servers", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const pay = (policy: object, options: McpPaymentOptions = {}) =>
      wrapMcpClientWithPayment(
        mcp,
        createX402Client({ schemes: [exactEvm({ signer: buyer.account })], policy }),
        options,
      ).callTool({ name: "weather" });
    expect(getPaymentReceipt(await pay({ origins: [origin()] }))?.settled).toBe(true);
    const elsewhere = await pay({ origins: ["https://tools.example.com"] }).catch((e) => e);
    expect(elsewhere.details.rejected[0].reason).toBe(`origin ${origin()} is not in policy.origins`);
    const unlisted = await pay({}, { servers: ["mcp://weather"] }).catch((e) => e);
    expect(unlisted.details.rejected[0].reason).toBe(`server ${origin()} is not in mcp.servers`);
  });

  it("over stdio the server is mcp://<its name>, which policy.origins and budgets can name", async () => {
    const stdio = await connect("stdio");
    const buyer = await fundedBuyer(stack.usdc);
    const ledger = memoryLedger();
    const x402 = createX402Client({
      schemes: [exactEvm({ signer: buyer.account })],
      policy: { origins: ["mcp://localnet-weather"] },
      plugins: [budget({ limit: "$0.0015", scope: "origin" }), ledger],
    });
    const paid = wrapMcpClientWithPayment(stdio, x402);
    expect(getPaymentReceipt(await paid.callTool({ name: "weather" }))?.settled).toBe(true);
    expect((await records(ledger))[0]!.url).toBe("mcp://localnet-weather#weather");
    const error = await paid.callTool({ name: "weather" }).catch((e) => e);
    expect(error.code).toBe("BUDGET_EXCEEDED");
    expect(error.details).toMatchObject({ spent: "$0.001", amount: "$0.001" });
  });

  it("a call that carries its own payment and is asked again is not paid again", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const paid = wrapMcpClientWithPayment(mcp, createX402Client({ schemes: [exactEvm({ signer: buyer.account })] }));
    const error = await paid
      .callTool({ name: "weather", _meta: { "x402/payment": { x402Version: 2, bogus: true } } })
      .catch((e) => e);
    expect(error.code).toBe("PAYMENT_ALREADY_ATTEMPTED");
  });
});

describe("examples/mcp.ts", () => {
  it("pays a tool with EVM_PRIVATE_KEY, as a user runs it", async () => {
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const buyer = await fundedBuyer(stack.usdc);
    const tsx = `${root}node_modules/tsx/dist/cli.mjs`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [tsx, "examples/mcp.ts", seller.url, "weather", '{"city":"Lisbon"}'],
      {
        cwd: root,
        timeout: 30_000,
        env: { ...process.env, EVM_PRIVATE_KEY: buyer.privateKey },
      },
    );
    expect(stdout).toContain('Paying 0.001 USDC for weather({"city":"Lisbon"})');
    expect(stdout).toContain(JSON.stringify(WEATHER));
    expect(stdout).toMatch(/paid: 0\.001 USDC on eip155:84532 tx 0x[0-9a-f]{64}/);
    expect(stdout).not.toContain(buyer.privateKey.slice(2));
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
  });
});
