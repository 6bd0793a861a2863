// Paid MCP tool calls on a batch-settlement channel: x402-pay/mcp around the official SDK's Client, against the MCP
// seller of localnet/mcp.ts selling `weather_batch` with the reference batch-settlement server scheme (its hooks run by
// the reference resource server), settling on anvil through the reference facilitator. The channel's state moves
// with every answer (the response hook upstream's MCP client once skipped), and a lost state recovers from the
// seller's corrective 402 over MCP.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt } from "../../src";
import { batchSettlementEvm, memoryChannelStore } from "../../src/evm";
import { wrapMcpClientWithPayment } from "../../src/mcp";
import {
  PRICE_ATOMIC,
  USDC_BASE_SEPOLIA,
  WEATHER,
  fundedBuyer,
  randomAddress,
  startInteropStack,
  type Buyer,
  type InteropStack,
} from "../localnet/index.js";
import { startMcpSeller, type McpSeller } from "../localnet/mcp.js";

let stack: InteropStack;
let seller: McpSeller;
let mcp: Client;
const payTo: Address = randomAddress();

beforeAll(async () => {
  stack = await startInteropStack({ batchSettlement: true });
  seller = await startMcpSeller({ facilitatorUrl: stack.facilitator.url, payTo, batchSettlement: true });
  mcp = new Client({ name: "x402-pay-tests", version: "1.0.0" });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(seller.url)));
});
afterAll(async () => {
  await mcp?.close();
  await seller?.stop();
  await stack?.stop();
});

/** Our client on a fresh memory store, paying as `buyer`. */
function paying(buyer: Buyer) {
  const scheme = batchSettlementEvm({
    signer: buyer.account,
    rpc: stack.anvil.rpcUrl,
    deposit: { multiple: 20 },
    storage: memoryChannelStore(),
  });
  return wrapMcpClientWithPayment(mcp, createX402Client({ schemes: [scheme] }));
}

async function call(paid: ReturnType<typeof paying>) {
  const result = (await paid.callTool({ name: "weather_batch" })) as Record<string, any>;
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual(WEATHER);
  return getPaymentReceipt(result)!;
}

describe("batch-settlement over MCP", () => {
  it("one deposit, then a voucher per tool call; a lost state recovers from the corrective 402; the claim moves the sum", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const start = await stack.usdc.usdcBalance(buyer.address);
    const paid = paying(buyer);
    const receipts = [];
    for (let i = 0; i < 5; i++) receipts.push(await call(paid));
    expect(receipts.map((r) => r.kind)).toEqual(["deposit", "voucher", "voucher", "voucher", "voucher"]);
    expect(receipts.map((r) => r.channel?.charged)).toEqual([1n, 2n, 3n, 4n, 5n].map((n) => String(n * PRICE_ATOMIC)));
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(start - 20n * PRICE_ATOMIC);

    // A restart: the chain says nothing was claimed, the seller holds our voucher for 5 calls.
    const receipt = await call(paying(buyer));
    expect(receipt).toMatchObject({ kind: "voucher", channel: { charged: String(6n * PRICE_ATOMIC) } });

    const manager = seller.batchScheme!.createChannelManager(
      // The manager settles through the same facilitator the seller verifies with.
      new (await import("@x402/core/server")).HTTPFacilitatorClient({ url: stack.facilitator.url }),
      "eip155:84532",
      USDC_BASE_SEPOLIA,
    );
    await manager.claimAndSettle();
    expect(await stack.usdc.usdcBalance(payTo)).toBe(6n * PRICE_ATOMIC);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(start - 20n * PRICE_ATOMIC);
  });
});
