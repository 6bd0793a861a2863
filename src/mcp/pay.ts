/**
 * Paying a tool call that asked, whoever carries it (the SDK `Client`'s `callTool`, or JSON-RPC through a transport):
 * the handshake over a transport that resends the call with the payment in `_meta`, guarded by the MCP options.
 */
import { ceilingCheck, type X402Client } from "../client";
import type { PaymentSnapshot, X402Request } from "../contracts";
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
import { answerOf, challengeIn, settlementIn, type Answer } from "./answer";
import { MCP_PAYMENT_META_KEY, type McpCallToolParams, type McpPaymentOptions } from "./options";

/** One tool call that asked to be paid: where it went, what it was, its first answer and how to send it again. */
export interface AskedCall {
  /** The server's identity (`identity()`). */
  readonly server: string;
  readonly params: McpCallToolParams;
  readonly first: Answer;
  /** Sends the call again with `params` (the payment in `_meta`); resolves to its result, or throws its error. */
  readonly call: (params: McpCallToolParams) => Promise<object>;
  readonly signal?: AbortSignal | undefined;
}

/** Pays `asked` through `client` as the options allow; the answer after paying (the JSON-RPC error form too). */
export function payToolCall(client: X402Client, options: McpPaymentOptions, asked: AskedCall): Promise<Answer> {
  const { server, params, first, call, signal } = asked;
  const tool = params.name;
  const request: X402Request = {
    url: `${server}#${encodeURIComponent(tool)}`,
    method: "tools/call",
    signal,
    guard: {
      name: "onPaymentRequested",
      check: (requirement, asset) => refusal(options, { server, tool }, requirement, asset),
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
  return handlePaymentRequired(client, toolTransport(params, request, call), first);
}

/** Why the MCP options refuse a requirement (a `policy` rejection), else `undefined`. */
function refusal(
  options: McpPaymentOptions,
  { server, tool }: { readonly server: string; readonly tool: string },
  requirement: PaymentRequirement,
  asset: KnownAsset | undefined,
): string | undefined {
  if (options.servers && !options.servers.some((p) => matchesPattern(p.toLowerCase(), originOf(server), "[^:/]")))
    return `server ${originOf(server)} is not in mcp.servers`;
  if (options.tools && !options.tools.some((p) => matchesPattern(p, tool)))
    return `tool ${JSON.stringify(tool)} is not in mcp.tools`;
  const caps = options.maxAmountPerTool;
  const cap = caps && (Object.hasOwn(caps, tool) ? caps[tool] : caps["*"]);
  return cap === undefined
    ? undefined
    : ceilingCheck(cap, `mcp.maxAmountPerTool for ${JSON.stringify(tool)}`)(requirement, asset);
}

/** A tool call as the handshake's transport: the payment travels in `_meta`, a challenge in the result is a 402. */
function toolTransport(
  params: McpCallToolParams,
  request: X402Request,
  call: (params: McpCallToolParams) => Promise<object>,
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
 * The server's identity: the option, else the streamable HTTP transport's URL, else `mcp://` and the name the server
 * gave at `initialize` (`name`).
 */
export function identity(server: string | URL | undefined, transport: unknown, name: string | undefined): string {
  if (server !== undefined) return String(server).replace(/#.*$/, "");
  const url = (Object(transport) as { _url?: unknown })._url;
  if (url instanceof URL && /^https?:$/.test(url.protocol)) return `${url.origin}${url.pathname}${url.search}`;
  const slug = String(name ?? "server")
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "");
  return `mcp://${slug || "server"}`;
}
