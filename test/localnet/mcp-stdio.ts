// The MCP seller of mcp.ts over stdio, as an MCP host starts a local server: run it with
// `node --import tsx localnet/mcp-stdio.ts`, FACILITATOR_URL and PAY_TO in its environment.
// Each settlement is reported on stderr as one JSON line (stdout carries the protocol).

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Address } from "viem";
import { createMcpSeller } from "./mcp.js";

const { FACILITATOR_URL, PAY_TO } = process.env;
if (!FACILITATOR_URL || !PAY_TO) throw new Error("mcp-stdio needs FACILITATOR_URL and PAY_TO");
const seller = await createMcpSeller({ facilitatorUrl: FACILITATOR_URL, payTo: PAY_TO as Address });
const settled = seller.log.settled;
const push = settled.push.bind(settled);
settled.push = (...entries) => {
  for (const entry of entries) process.stderr.write(`${JSON.stringify({ settled: entry })}\n`);
  return push(...entries);
};
await seller.server().connect(new StdioServerTransport());
