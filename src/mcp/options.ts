/** The MCP wire's names (wire.md §10), what paying a tool call needs of a client, and the wrappers' options. */
import { checkCeiling, type BeforePaymentResult, type PaymentCeiling } from "../client";
import { checkOptions, every, is, nonEmpty, type MaybePromise, type PaymentSnapshot } from "../contracts";
import { isObject } from "../protocol";

/** `_meta` key of the payment a tool call carries (a PaymentPayload object, not base64). */
export const MCP_PAYMENT_META_KEY = "x402/payment";
/** `_meta` key of the settlement a paid tool result reports. */
export const MCP_PAYMENT_RESPONSE_META_KEY = "x402/payment-response";
/** JSON-RPC error code of the payment-required error form. */
export const MCP_PAYMENT_REQUIRED_CODE = 402;

/** What the SDK's `Client.callTool` takes and gives, as far as paying needs it. */
export interface McpCallToolParams {
  name: string;
  arguments?: Record<string, unknown> | undefined;
  _meta?: Record<string, unknown> | undefined;
  [key: string]: unknown;
}
export interface McpClientLike {
  callTool(
    params: McpCallToolParams,
    resultSchema?: never,
    options?: { signal?: AbortSignal | undefined },
  ): Promise<object>;
  getServerVersion?(): { name?: string } | undefined;
}

/** What `onPaymentRequested` sees: the tool, its arguments and the payment about to be signed (frozen). */
export interface McpPaymentRequest {
  /** The server's identity (its URL, or `mcp://<name>`). */
  readonly server: string;
  readonly tool: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly payment: PaymentSnapshot;
}

export interface McpPaymentOptions {
  /**
   * The server's identity for the policy's origins, budgets and the ledger: its URL over streamable
   * HTTP (`https://tools.example.com/mcp`), or `mcp://<name>` for one over stdio. Default: the HTTP
   * transport's URL when the client has one, else `mcp://` and the name the server gave at `initialize`.
   */
  server?: string | URL | undefined;
  /** Allow-list of servers, as origin patterns (`https://*.example.com`, `mcp://weather`). `[]` allows none. */
  servers?: readonly string[] | undefined;
  /** Allow-list of tool names (`*` matches any run of characters). `[]` allows none. */
  tools?: readonly string[] | undefined;
  /**
   * Largest payment per tool call, by tool name (`"*"`: every other tool): in USD, `{ "search": "$0.05", "*": "$0.01"
   * }`, or in base units of one asset, as a quote's `maxAmount` (`{ search: quote.maxAmount }`: what was quoted).
   */
  maxAmountPerTool?: Readonly<Record<string, PaymentCeiling>> | undefined;
  /**
   * Last word before signing, with the tool's name and arguments; `false` or `{ abort: true }` refuses. Fails closed.
   */
  onPaymentRequested?: ((request: McpPaymentRequest) => MaybePromise<BeforePaymentResult>) | undefined;
}

/** The wrapper's options, checked at construction (INVALID_CONFIG naming the option). */
export function checkMcpOptions(options: McpPaymentOptions): void {
  const patterns = every(is(nonEmpty, "a pattern"));
  checkOptions("mcp.", options, {
    server: is(
      (s) => (typeof s === "string" || s instanceof URL) && URL.canParse(String(s)),
      "a URL such as https://tools.example.com/mcp or mcp://weather",
    ),
    servers: every(
      is(
        (s) => typeof s === "string" && URL.canParse(s.replace(/\*/g, "x")),
        "an origin pattern such as https://*.example.com or mcp://weather",
      ),
    ),
    tools: patterns,
    maxAmountPerTool: is(
      (caps) => isObject(caps) && Object.values(caps).every((cap) => checkCeiling(cap) === undefined),
      'tool names to USD amounts such as { "*": "$0.01" }, or to { network, asset, amount } in base units',
    ),
    onPaymentRequested: is((f) => typeof f === "function", "a function"),
  });
}
