// Call a paid MCP tool: the official MCP SDK's Client, wrapped to pay with x402.
//   EVM_PRIVATE_KEY=0x... npx tsx examples/mcp.ts https://tools.example.com/mcp weather '{"city":"Lisbon"}'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { privateKeyToAccount } from "viem/accounts";
import { createX402Client, getPaymentReceipt, isX402Error } from "x402-pay";
import { exactEvm } from "x402-pay/evm";
import { wrapMcpClientWithPayment } from "x402-pay/mcp";

const key = process.env.EVM_PRIVATE_KEY as `0x${string}` | undefined;
const [server, tool, args = "{}"] = process.argv.slice(2);
if (!key || !server || !tool) {
  console.error("Usage: EVM_PRIVATE_KEY=0x... npx tsx examples/mcp.ts <server url> <tool> [arguments as JSON]");
  process.exit(2);
}

const mcp = new Client({ name: "x402-pay-example", version: "1.0.0" });
await mcp.connect(new StreamableHTTPClientTransport(new URL(server)));
const client = createX402Client({ schemes: [exactEvm({ signer: privateKeyToAccount(key) })] });
const tools = wrapMcpClientWithPayment(mcp, client, {
  maxAmountPerTool: { "*": "$0.05" },
  onPaymentRequested: ({ tool, arguments: input, payment }) => {
    console.log(`Paying ${payment.displayAmount ?? payment.amount} for ${tool}(${JSON.stringify(input)})`);
    return true;
  },
});

try {
  const result = await tools.callTool({ name: tool, arguments: JSON.parse(args) });
  console.log(JSON.stringify(result.structuredContent ?? result.content));
  const receipt = getPaymentReceipt(result);
  // displayAmount: "0.001 USDC" for assets of known decimals; base units otherwise.
  const paid = receipt && (receipt.displayAmount ?? `${receipt.amount} base units of ${receipt.asset}`);
  if (receipt) console.log(`paid: ${paid} on ${receipt.network} tx ${receipt.transaction ?? "(none reported)"}`);
} catch (error) {
  if (isX402Error(error)) console.error(`${error.code}: ${error.message}`);
  else throw error;
  process.exitCode = 1;
} finally {
  await mcp.close();
}
