// An MCP server that sells tool calls, built here with the official MCP SDK's low-level `Server`, on
// the server side of x402's MCP transport (wire.md §10): a paid tool answers an unpaid call with a
// tool result { isError: true, structuredContent: PaymentRequired, content: [its JSON] }, takes the
// payment from `_meta["x402/payment"]`, verifies it with the facilitator, runs, settles, and reports
// the settlement in `_meta["x402/payment-response"]`, keeping the rest of its result. v2 payments are
// verified and settled with the reference's resource server (@x402/core), v1 with the facilitator's
// HTTP API. Served over streamable HTTP (`startMcpSeller`) or stdio (`mcp-stdio.ts`).
//
// Tools: `ping` (free), `fails` (free, errors), `weather` (v2, structuredContent), `weather_text`
// (v2, the challenge only as text), `weather_rpc` (v2, the JSON-RPC 402 error form), `weather_v1`
// (v1, the `{"x402/error": ...}` text form), `broken` (v2, the tool errors after the payment was
// verified: no settlement), `unsettled` (v2, settlement fails after the tool ran).

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { FACILITATOR_V1_NETWORK } from "./facilitator.js";
import { listenOnLoopback } from "./listen.js";
import { PRICE_ATOMIC, SELLER_NETWORK, WEATHER } from "./seller.js";
import { USDC_BASE_SEPOLIA } from "./token.js";

export interface McpSellerOptions {
  facilitatorUrl: string;
  payTo: Address;
  /**
   * Also sell `weather_batch` by batch-settlement (the reference server scheme, its hooks run by the resource server:
   * vouchers answered without the facilitator, corrective 402s enriched with the channel's state). The facilitator
   * must serve batch-settlement and the contract be installed (localnet/batch.ts). Default false.
   */
  batchSettlement?: boolean;
}

/** What the seller did, per paid tool call: what it verified and settled (for the tests). */
export interface McpSellerLog {
  verified: { tool: string; x402Version: number }[];
  settled: { tool: string; transaction: string }[];
}

const PAYMENT = "x402/payment";
const PAYMENT_RESPONSE = "x402/payment-response";

type Form = "structured" | "text" | "rpc" | "v1";
interface PaidTool {
  form: Form;
  /** Sold by batch-settlement instead of exact. */
  batch?: boolean;
  /** The tool's work once paid; `isError` results are returned unsettled. */
  run(): CallToolResult;
  /** Settlement fails after the tool ran. */
  settlementFails?: boolean;
}

const weather = (): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(WEATHER) }],
  structuredContent: WEATHER as unknown as Record<string, unknown>,
  _meta: { "localnet/served-by": "mcp-seller" },
});

const PAID: Record<string, PaidTool> = {
  weather: { form: "structured", run: weather },
  weather_text: { form: "text", run: weather },
  weather_rpc: { form: "rpc", run: weather },
  weather_v1: { form: "v1", run: weather },
  broken: {
    form: "structured",
    run: () => ({ isError: true, content: [{ type: "text", text: "the weather station is down" }] }),
  },
  unsettled: { form: "structured", run: weather, settlementFails: true },
  weather_batch: { form: "structured", run: weather, batch: true },
};

/** The seller's state shared by every connection: its resource server, requirements and log. */
export async function createMcpSeller({ facilitatorUrl, payTo, batchSettlement = false }: McpSellerOptions) {
  const facilitator = new HTTPFacilitatorClient({ url: facilitatorUrl });
  const resourceServer = new x402ResourceServer(facilitator).register(SELLER_NETWORK, new ExactEvmScheme());
  const batchScheme = batchSettlement
    ? new BatchSettlementEvmScheme(payTo, { receiverAuthorizerSigner: privateKeyToAccount(generatePrivateKey()) })
    : undefined;
  if (batchScheme) resourceServer.register(SELLER_NETWORK, batchScheme);
  await resourceServer.initialize();
  const accepts = await resourceServer.buildPaymentRequirements({
    scheme: "exact",
    network: SELLER_NETWORK as Network,
    payTo,
    price: "$0.001",
  });
  const batchAccepts = batchScheme
    ? await resourceServer.buildPaymentRequirements({
        scheme: "batch-settlement",
        network: SELLER_NETWORK as Network,
        payTo,
        price: "$0.001",
      })
    : [];
  const acceptsOf = (tool: string) => (PAID[tool]?.batch ? batchAccepts : accepts);
  const log: McpSellerLog = { verified: [], settled: [] };

  const v1Requirement = (tool: string) => ({
    scheme: "exact",
    network: FACILITATOR_V1_NETWORK,
    maxAmountRequired: String(PRICE_ATOMIC),
    resource: `mcp://tool/${tool}`,
    description: `Tool: ${tool}`,
    mimeType: "application/json",
    payTo,
    maxTimeoutSeconds: 300,
    asset: USDC_BASE_SEPOLIA,
    extra: { name: "USDC", version: "2" },
  });

  /** The payment-required answer of `tool` in its form, saying `error`; `settlement`: a failed one to report. */
  async function paymentRequired(
    tool: string,
    form: Form,
    error: string,
    settlement?: object,
    payload?: PaymentPayload,
  ): Promise<CallToolResult> {
    const body: Record<string, unknown> =
      form === "v1"
        ? { x402Version: 1, error, accepts: [v1Requirement(tool)] }
        : {
            // With the refused payload: a scheme enriches its own refusals (batch-settlement's corrective 402).
            ...(await resourceServer.createPaymentRequiredResponse(
              acceptsOf(tool),
              { url: `mcp://tool/${tool}`, description: `Tool: ${tool}`, mimeType: "application/json" },
              error,
              undefined,
              undefined,
              payload,
            )),
            ...(settlement && { [PAYMENT_RESPONSE]: settlement }),
          };
    if (form === "rpc") throw new McpError(402, error, body);
    if (form === "v1")
      return {
        isError: true,
        content: [{ type: "text", text: JSON.stringify({ "x402/error": { code: 402, message: error, data: body } }) }],
      };
    return {
      isError: true,
      ...(form === "structured" && { structuredContent: body }),
      content: [{ type: "text", text: JSON.stringify(body) }],
    };
  }

  /** The facilitator's verdict on a v1 payment (its HTTP API, as a v1 seller calls it). */
  async function facilitate(step: "verify" | "settle", paymentPayload: unknown, paymentRequirements: unknown) {
    const response = await fetch(`${facilitatorUrl}/${step}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ x402Version: 1, paymentPayload, paymentRequirements }),
    });
    return (await response.json()) as {
      isValid?: boolean;
      invalidReason?: string;
      success?: boolean;
      errorReason?: string;
      transaction?: string;
      network?: string;
      payer?: string;
    };
  }

  async function call(tool: string, meta: Record<string, unknown> | undefined): Promise<CallToolResult> {
    if (tool === "ping") return { content: [{ type: "text", text: "pong" }] };
    if (tool === "fails") return { isError: true, content: [{ type: "text", text: "this tool always fails" }] };
    const paid = PAID[tool];
    if (!paid) throw new McpError(-32602, `Tool ${tool} not found`);
    const payload = meta?.[PAYMENT] as (PaymentPayload & { x402Version: number }) | undefined;
    if (!payload || typeof payload !== "object")
      return paymentRequired(tool, paid.form, "Payment required to access this tool");

    if (paid.form === "v1") {
      if (payload.x402Version !== 1) return paymentRequired(tool, paid.form, "unsupported x402Version");
      const requirement = v1Requirement(tool);
      const verdict = await facilitate("verify", payload, requirement);
      if (!verdict.isValid) return paymentRequired(tool, paid.form, verdict.invalidReason ?? "invalid_payment");
      log.verified.push({ tool, x402Version: 1 });
      const result = paid.run();
      const settlement = await facilitate("settle", payload, requirement);
      if (!settlement.success)
        return paymentRequired(tool, paid.form, `Payment settlement failed: ${settlement.errorReason}`);
      log.settled.push({ tool, transaction: settlement.transaction! });
      return { ...result, _meta: { ...result._meta, [PAYMENT_RESPONSE]: settlement } };
    }

    if (paid.batch && !batchScheme) throw new McpError(-32602, `Tool ${tool} not found`);
    const offered = await resourceServer.createPaymentRequiredResponse(
      acceptsOf(tool),
      { url: `mcp://tool/${tool}` },
      undefined,
      undefined,
      undefined,
      payload,
    );
    const requirement = resourceServer.findMatchingRequirements(offered.accepts, payload) as
      | PaymentRequirements
      | undefined;
    if (!requirement) return paymentRequired(tool, paid.form, "No matching payment requirements found");
    const verdict = await resourceServer.verifyPayment(payload, requirement);
    if (!verdict.isValid)
      return paymentRequired(tool, paid.form, verdict.invalidReason ?? "invalid_payment", undefined, payload);
    log.verified.push({ tool, x402Version: 2 });
    const result = paid.run();
    // A tool that failed is not charged: its result goes back as it is, unsettled.
    if (result.isError) return result;
    const failed = (reason: string) => ({
      success: false,
      errorReason: reason,
      transaction: "",
      network: requirement.network,
    });
    if (paid.settlementFails)
      return paymentRequired(
        tool,
        paid.form,
        "Payment settlement failed: facilitator_unavailable",
        failed("facilitator_unavailable"),
      );
    let settlement: Awaited<ReturnType<typeof resourceServer.settlePayment>>;
    try {
      settlement = await resourceServer.settlePayment(payload, requirement);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return paymentRequired(tool, paid.form, `Payment settlement failed: ${reason}`, failed(reason));
    }
    if (!settlement.success)
      return paymentRequired(tool, paid.form, `Payment settlement failed: ${settlement.errorReason}`, settlement);
    log.settled.push({ tool, transaction: settlement.transaction });
    // The tool's whole result, with the settlement added to its `_meta`.
    return { ...result, _meta: { ...result._meta, [PAYMENT_RESPONSE]: settlement } };
  }

  /** A fresh MCP `Server` over this seller's tools (one per connection). */
  function server(): Server {
    const mcp = new Server({ name: "localnet-weather", version: "1.0.0" }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: ["ping", "fails", ...Object.keys(PAID).filter((name) => !PAID[name]!.batch || batchScheme)].map(
        (name) => ({
          name,
          description: PAID[name] ? `Paid tool ($0.001): ${name}` : `Free tool: ${name}`,
          inputSchema: { type: "object" as const },
        }),
      ),
    }));
    mcp.setRequestHandler(CallToolRequestSchema, async (request) =>
      call(request.params.name, request.params._meta as Record<string, unknown> | undefined),
    );
    return mcp;
  }

  return { server, log, accepts, batchScheme };
}

export interface McpSeller {
  /** The streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  log: McpSellerLog;
  /** With `batchSettlement`: the reference scheme, whose channel manager claims and settles the vouchers. */
  batchScheme: BatchSettlementEvmScheme | undefined;
  stop(): Promise<void>;
}

/** Serves the MCP seller over streamable HTTP (stateless: a server and transport per request) on loopback. */
export async function startMcpSeller(options: McpSellerOptions): Promise<McpSeller> {
  const seller = await createMcpSeller(options);
  const http = await listenOnLoopback(async (req, res) => {
    if (!req.url?.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    const server = seller.server();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  return { url: `${http.url}/mcp`, log: seller.log, batchScheme: seller.batchScheme, stop: http.stop };
}
