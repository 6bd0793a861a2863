/**
 * `x402-pay/mcp`: paid MCP tool calls. Wraps an `@modelcontextprotocol/sdk` `Client` so `callTool`
 * pays a tool that answers with x402's payment-required result (wire.md §10), through the same
 * `createX402Client` as HTTP: policy, hooks, budgets, ledger. The tool's whole result comes back
 * (`content`, `structuredContent`, every `_meta` key); `getPaymentReceipt(result)` tells what was paid.
 */
import {
  ceilingCheck,
  checkCeiling,
  engineOf,
  type BeforePaymentResult,
  type PaymentCeiling,
  type X402Client,
} from "../client";
import {
  checkOptions,
  every,
  fail,
  is,
  nonEmpty,
  type MaybePromise,
  type PaymentSnapshot,
  type X402Request,
} from "../contracts";
import { handlePaymentRequired, type Transport } from "../handshake";
import {
  PAYMENT_HEADERS,
  decodeBase64Json,
  encodeBase64Json,
  isObject,
  matchesPattern,
  originOf,
  type KnownAsset,
  type PaymentRequirement,
} from "../protocol";

// The types the signatures below use, so a user can name them from this entry.

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
function checkMcpOptions(options: McpPaymentOptions): void {
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

/** A tool call as the handshake's transport: the payment travels in `_meta`, a challenge in the result is a 402. */
function toolTransport(
  params: McpCallToolParams,
  request: X402Request,
  call: (params: McpCallToolParams) => ReturnType<McpClientLike["callTool"]>,
): Transport<Answer> {
  return {
    request,
    paymentOnly: true,
    requestHeader: (name) =>
      PAYMENT_HEADERS.includes(name.toUpperCase() as never) &&
      isObject(params._meta) &&
      params._meta[MCP_PAYMENT_META_KEY] !== undefined
        ? "present"
        : null,
    async resend(headers) {
      const signed = Object.entries(headers).find(([name]) => PAYMENT_HEADERS.includes(name.toUpperCase() as never));
      const payload = signed && decodeBase64Json(signed[1]);
      // Merged, not replaced: the caller's own `_meta` (a progress token...) travels with the payment.
      const _meta = { ...params._meta, ...(payload?.ok && { [MCP_PAYMENT_META_KEY]: payload.value }) };
      return answerOf(() => call({ ...params, _meta }));
    },
    status: (answer) => (challengeIn(answer) ? 402 : (answer as { isError?: unknown }).isError === true ? 500 : 200),
    header(answer, name) {
      if (!/^(x-)?payment-response$/i.test(name)) return null;
      const settlement = settlementIn(answer);
      return settlement === undefined ? null : encodeBase64Json(settlement);
    },
    redirected: () => false,
    body: (answer) => challengeIn(answer),
    discard: () => {},
  };
}

/**
 * Wraps an MCP SDK `Client`: `callTool` as before, paying a tool that asks (at most once per call) and
 * calling it again with the payment in `_meta["x402/payment"]`. Every other method is the client's own.
 * A second payment-required answer after paying is a `PAYMENT_REJECTED` with the server's reason.
 */
export function wrapMcpClientWithPayment<C extends McpClientLike>(
  mcp: C,
  client: X402Client,
  options: McpPaymentOptions = {},
): C {
  engineOf(client);
  if (!mcp || typeof mcp.callTool !== "function")
    fail("wrapMcpClientWithPayment", "give it an MCP SDK Client (new Client(...) from @modelcontextprotocol/sdk)");
  checkMcpOptions(options);
  const caps = new Map(Object.entries(options.maxAmountPerTool ?? {}));

  async function callTool(
    params: McpCallToolParams,
    resultSchema?: never,
    callOptions?: { signal?: AbortSignal | undefined },
  ): Promise<object> {
    const call = (with_: McpCallToolParams) => mcp.callTool(with_, resultSchema, callOptions);
    const first = await answerOf(() => call(params));
    if (!challengeIn(first)) return unwrap(first);
    const server = identity(mcp, options.server);
    const tool = params.name;
    const request: X402Request = {
      url: `${server}#${encodeURIComponent(tool)}`,
      method: "tools/call",
      signal: callOptions?.signal,
      guard: {
        name: "onPaymentRequested",
        check: (requirement, asset) => refusal(server, tool, requirement, asset),
        approve:
          options.onPaymentRequested &&
          ((payment) =>
            options.onPaymentRequested!({
              server,
              tool,
              arguments: Object.freeze({ ...params.arguments }),
              payment: payment as PaymentSnapshot,
            })),
      },
    };
    const transport = toolTransport(params, request, call);
    return unwrap(await handlePaymentRequired(client, transport, first));
  }

  /** Why the tool guard refuses a requirement (a `policy` rejection), else `undefined`. */
  function refusal(
    server: string,
    tool: string,
    requirement: PaymentRequirement,
    asset: KnownAsset | undefined,
  ): string | undefined {
    if (options.servers && !options.servers.some((p) => matchesPattern(p.toLowerCase(), originOf(server), "[^:/]")))
      return `server ${originOf(server)} is not in mcp.servers`;
    if (options.tools && !options.tools.some((p) => matchesPattern(p, tool)))
      return `tool ${JSON.stringify(tool)} is not in mcp.tools`;
    const cap = caps.get(tool) ?? caps.get("*");
    return cap === undefined
      ? undefined
      : ceilingCheck(cap, `mcp.maxAmountPerTool for ${JSON.stringify(tool)}`)(requirement, asset);
  }

  // Everything else is the client's own, called on the client itself (its state stays in one place).
  return new Proxy(mcp, {
    get(target, key) {
      if (key === "callTool") return callTool;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** What a tool call came back with: its result, or the JSON-RPC payment-required error (other errors are thrown). */
type Answer = object;
const jsonRpcError = Symbol("x402-pay.mcp.error");

async function answerOf(call: () => Promise<object>): Promise<Answer> {
  try {
    return await call();
  } catch (error) {
    const { code, data } = Object(error) as { code?: unknown; data?: unknown };
    if (code === MCP_PAYMENT_REQUIRED_CODE && isChallenge(data)) return { [jsonRpcError]: error, data };
    throw error;
  }
}

/** The result as the caller gets it; the JSON-RPC error form is thrown as it came. */
function unwrap(answer: Answer): object {
  if (jsonRpcError in answer) throw (answer as Record<symbol, unknown>)[jsonRpcError];
  return answer;
}

const challenges = new WeakMap<object, Record<string, unknown> | null>();

/**
 * The payment-required challenge an answer carries, or `undefined`: a tool result with `isError: true`
 * whose `structuredContent`, or else the JSON of its first text content (also as v1's
 * `{ "x402/error": { data } }`), is a PaymentRequired with payment options; or the JSON-RPC 402 error's data.
 */
function challengeIn(answer: Answer): Record<string, unknown> | undefined {
  let found = challenges.get(answer);
  if (found === undefined) {
    found = null;
    const r = answer as Record<PropertyKey, unknown>;
    if (jsonRpcError in r) found = r.data as Record<string, unknown>;
    else if (r.isError === true) {
      const first = Array.isArray(r.content)
        ? (r.content[0] as { type?: unknown; text?: unknown } | undefined)
        : undefined;
      const text =
        first?.type === "text" && typeof first.text === "string" && first.text.length <= 1024 * 1024
          ? parseJson(first.text)
          : undefined;
      const wrapped = isObject(text) && isObject(text["x402/error"]) ? text["x402/error"].data : undefined;
      found = [r.structuredContent, text, wrapped].find(isChallenge) ?? null;
    }
    challenges.set(answer, found);
  }
  return found ?? undefined;
}

const isChallenge = (value: unknown): value is Record<string, unknown> =>
  isObject(value) &&
  (value.x402Version === 1 || value.x402Version === 2) &&
  Array.isArray(value.accepts) &&
  value.accepts.length > 0;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The settlement an answer reports: `_meta["x402/payment-response"]`, else the one a failed settlement's challenge
 * carries.
 */
function settlementIn(answer: Answer): unknown {
  const meta = (answer as { _meta?: unknown })._meta;
  if (isObject(meta) && meta[MCP_PAYMENT_RESPONSE_META_KEY] !== undefined) return meta[MCP_PAYMENT_RESPONSE_META_KEY];
  return challengeIn(answer)?.[MCP_PAYMENT_RESPONSE_META_KEY];
}

/** The server's identity: the option, else the streamable HTTP transport's URL, else `mcp://<server name>`. */
function identity(mcp: McpClientLike, server: string | URL | undefined): string {
  if (server !== undefined) return String(server).replace(/#.*$/, "");
  const url = (Object(mcp) as { transport?: { _url?: unknown } }).transport?._url;
  if (url instanceof URL && /^https?:$/.test(url.protocol)) return `${url.origin}${url.pathname}${url.search}`;
  const name = String(mcp.getServerVersion?.()?.name ?? "server")
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "");
  return `mcp://${name || "server"}`;
}
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
