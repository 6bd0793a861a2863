/**
 * The MCP wrappers' options, checked when a wrapper is made (src/mcp/options.ts): what is taken, and what is refused
 * as INVALID_CONFIG naming the option, before any call could pay on a mistyped guard.
 */
import { describe, expect, it } from "vitest";
import { MCP_PAYMENT_META_KEY, MCP_PAYMENT_REQUIRED_CODE, MCP_PAYMENT_RESPONSE_META_KEY } from "../../src/mcp";
import { checkMcpOptions } from "../../src/mcp/options";
import { USDC_BASE_SEPOLIA } from "../support/seller";
import { thrownBy } from "../support/throws";

describe("checkMcpOptions", () => {
  it.each<[string, object]>([
    ["no options", {}],
    ["a server URL", { server: "https://tools.example.com/mcp" }],
    ["a server as a URL", { server: new URL("mcp://weather") }],
    ["server patterns with wildcards", { servers: ["https://*.example.com", "mcp://weather"] }],
    ["no servers", { servers: [] }],
    ["tool patterns", { tools: ["search", "weather_*", "*"] }],
    ["caps in USD", { maxAmountPerTool: { search: "$0.05", "*": "$0.01" } }],
    ["no caps", { maxAmountPerTool: {} }],
    [
      "a cap in base units",
      { maxAmountPerTool: { t: { network: "eip155:84532", asset: USDC_BASE_SEPOLIA, amount: "10000" } } },
    ],
    ["an approval", { onPaymentRequested: () => true }],
    ["undefined for each", { server: undefined, servers: undefined, tools: undefined, maxAmountPerTool: undefined }],
  ])("takes %s", (_, options) => {
    expect(() => checkMcpOptions(options)).not.toThrow();
  });

  it.each<[string, object, string]>([
    ["a server that is no URL", { server: "tools.example.com" }, "mcp.server"],
    ["a server that is a number", { server: 5 }, "mcp.server"],
    ["a server pattern that is only a wildcard", { servers: ["*"] }, "mcp.servers"],
    ["a server pattern that is no URL", { servers: ["example.com"] }, "mcp.servers"],
    ["servers that are one string", { servers: "mcp://weather" }, "mcp.servers"],
    ["a tool pattern that is empty", { tools: [""] }, "mcp.tools"],
    ["a tool pattern that is a number", { tools: [1] }, "mcp.tools"],
    ["tools that are one string", { tools: "search" }, "mcp.tools"],
    ["a cap that is no amount", { maxAmountPerTool: { t: "five" } }, "mcp.maxAmountPerTool"],
    [
      "a cap in base units without an amount",
      { maxAmountPerTool: { t: { network: "eip155:84532" } } },
      "mcp.maxAmountPerTool",
    ],
    ["caps that are a list", { maxAmountPerTool: ["$1"] }, "mcp.maxAmountPerTool"],
    ["caps that are one amount", { maxAmountPerTool: "$1" }, "mcp.maxAmountPerTool"],
    ["caps that are null", { maxAmountPerTool: null }, "mcp.maxAmountPerTool"],
    ["an approval that is no function", { onPaymentRequested: {} }, "mcp.onPaymentRequested"],
    ["an option it does not have", { maxAmount: "$1" }, "mcp.maxAmount"],
  ])("refuses %s, naming it", (_, options, option) => {
    const error = thrownBy(() => checkMcpOptions(options as never));
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.message).toContain(option);
  });

  it("the wire's names (wire.md §10)", () => {
    expect([MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY, MCP_PAYMENT_REQUIRED_CODE]).toEqual([
      "x402/payment",
      "x402/payment-response",
      402,
    ]);
  });
});
