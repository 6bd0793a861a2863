// originOf: the origin the policy, budgets and the ledger name a URL by, MCP servers over stdio included.
import { describe, expect, it } from "vitest";
import { originOf } from "../../src/protocol";

describe("originOf", () => {
  it.each([
    ["https://API.example.com:443/x?y#z", "https://api.example.com"],
    ["http://127.0.0.1:4021/mcp#tool", "http://127.0.0.1:4021"],
    ["mcp://weather#search", "mcp://weather"],
    ["mcp://Weather/tools", "mcp://weather"],
    ["mcp://weather:7/x", "mcp://weather:7"],
  ])("%s → %s", (url, origin) => {
    expect(originOf(url)).toBe(origin);
  });
});
