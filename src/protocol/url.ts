/**
 * A URL's origin as the spend policy, budgets and the ledger name it: `https://api.example.com` as the
 * URL standard gives it, and for a scheme that has none there (an MCP server over stdio,
 * `mcp://weather`) its scheme and host all the same, so two such servers stay two origins, not `"null"`.
 */
export function originOf(url: string): string {
  const parsed = new URL(url);
  // An opaque host keeps its case in the URL standard; a name is compared without it.
  return parsed.origin !== "null" ? parsed.origin : `${parsed.protocol}//${parsed.host.toLowerCase()}`;
}
