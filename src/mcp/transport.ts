/**
 * `wrapMcpTransportWithPayment`: paying at the JSON-RPC level, for MCP clients that are not the official SDK's
 * `Client` (the AI SDK's `createMCPClient`) or that x402-pay cannot reach (a framework that holds its own client). A
 * `tools/call` answered with a payment-required result is paid and sent again under the same request id; the client
 * above sees only the paid answer, or a tool error saying why nothing was paid.
 */
import { engineOf, type X402Client } from "../client";
import { fail } from "../contracts";
import { MONEY_MAY_HAVE_MOVED, isX402Error, redactSecrets } from "../errors";
import { getPaymentReceipt } from "../handshake";
import { isObject } from "../protocol";
import { challengeIn, paymentRequiredError, unwrap, type Answer } from "./answer";
import { MCP_PAYMENT_META_KEY, checkMcpOptions, type McpCallToolParams, type McpPaymentOptions } from "./options";
import { identity, payToolCall } from "./pay";

/** A JSON-RPC message as an MCP transport carries it: a request, a notification, or a response. */
export interface McpJsonRpcMessage {
  readonly jsonrpc?: "2.0" | undefined;
  readonly id?: string | number | undefined;
  readonly method?: string | undefined;
  readonly params?: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
}

/**
 * An MCP client transport, as the official SDK's `Transport` and the AI SDK's `MCPTransport` both are. Their message
 * types differ (each its own JSON-RPC schema), so the messages are left untyped here: they are `McpJsonRpcMessage`s.
 */
export interface McpTransportLike {
  start(): Promise<void>;
  send(message: never, options?: never): Promise<void>;
  close(): Promise<void>;
  onmessage?(message: never, extra?: never): void;
  onclose?(): void;
}

/** The transport's send, with the messages it carries named. */
type Send = (message: McpJsonRpcMessage, options?: unknown) => Promise<void>;

/** A `tools/call` on its way: its params, and how its paying is stopped (the client cancelled it, or closed). */
interface Call {
  readonly params: McpCallToolParams;
  readonly controller: AbortController;
  /** Set while the paid call is out: takes its response. */
  waiting?: ((message: McpJsonRpcMessage) => void) | undefined;
}

/** The handlers the client above sets on the transport; the wrapper sets its own on the one below. */
interface Above {
  onmessage?: ((message: McpJsonRpcMessage, extra?: never) => void) | undefined;
  onclose?: (() => void) | undefined;
}

/**
 * Wraps an MCP client transport: every message passes as it is, except a `tools/call` answered with x402's
 * payment-required result (wire.md §10), which is paid through `client` (policy, budgets, ledger; the MCP options as
 * `wrapMcpClientWithPayment` takes them) and sent again with the payment in `_meta["x402/payment"]`, under the same
 * id. The client above gets the paid result; where nothing was paid (a refusal, a rejection), an `isError` tool result
 * whose text says why, and whether money may have moved. A call the client cancels (`notifications/cancelled`) stops.
 */
export function wrapMcpTransportWithPayment<T extends McpTransportLike>(
  transport: T,
  client: X402Client,
  options: McpPaymentOptions = {},
): T {
  engineOf(client);
  if (!transport || typeof transport.send !== "function" || typeof transport.start !== "function")
    fail("wrapMcpTransportWithPayment", "give it an MCP client transport (with start, send and close)");
  checkMcpOptions(options);
  const sendBelow = (transport.send as Send).bind(transport);
  const calls = new Map<string | number, Call>();
  const above: Above = {};
  /** The `initialize` request's id, and the name the server gave in its answer. */
  const server: { initialize?: string | number | undefined; name?: string | undefined } = {};
  const deliver = (message: McpJsonRpcMessage, extra?: never) => above.onmessage?.(message, extra);

  function send(message: McpJsonRpcMessage, sendOptions?: unknown): Promise<void> {
    const { id, method, params } = message;
    if (method === "initialize") server.initialize = id;
    if (method === "tools/call" && id !== undefined && isObject(params) && !paid(params))
      calls.set(id, { params: params as McpCallToolParams, controller: new AbortController() });
    if (method === "notifications/cancelled" && isObject(params))
      calls.get(params.requestId as string | number)?.controller.abort(params.reason);
    return sendBelow(message, sendOptions);
  }

  function receive(message: McpJsonRpcMessage, extra?: never): void {
    const { id } = message;
    const call = id === undefined || message.method !== undefined ? undefined : calls.get(id);
    if (id !== undefined && id === server.initialize && isObject(message.result) && isObject(message.result.serverInfo))
      server.name = String(message.result.serverInfo.name ?? "");
    if (call?.waiting) call.waiting(message);
    else if (call) {
      calls.delete(id!);
      const first = answerOf(message);
      if (first && challengeIn(first)) void pay(id!, call, first, extra);
      else deliver(message, extra);
    } else deliver(message, extra);
  }

  /** Pays the call, sends it again under its id, and gives the client above what came of it. */
  async function pay(id: string | number, call: Call, first: Answer, extra?: never): Promise<void> {
    calls.set(id, call);
    const again = (params: McpCallToolParams) => resend(id, call, params);
    try {
      const answer = await payToolCall(client, options, {
        server: identity(options.server, transport, server.name),
        params: call.params,
        first,
        call: again,
        signal: call.controller.signal,
      });
      // A paid call ends with a result: an error form after paying is thrown by the handshake, and answered below.
      deliver({ jsonrpc: "2.0", id, result: paidResult(unwrap(answer)) }, extra);
    } catch (error) {
      // A call the client cancelled, or a closed connection, has no one to answer.
      if (!call.controller.signal.aborted) deliver({ jsonrpc: "2.0", id, result: refusedResult(error) }, extra);
    } finally {
      calls.delete(id);
    }
  }

  /** The call sent again with `params`; its result, or its JSON-RPC error thrown (as the SDK's `callTool` does). */
  function resend(id: string | number, call: Call, params: McpCallToolParams): Promise<object> {
    const { signal } = call.controller;
    return new Promise<object>((resolve, reject) => {
      const stop = () => reject(signal.reason);
      signal.addEventListener("abort", stop, { once: true });
      call.waiting = (message) => {
        call.waiting = undefined;
        signal.removeEventListener("abort", stop);
        if (message.error === undefined) resolve(isObject(message.result) ? message.result : {});
        else reject(thrown(message.error));
      };
      sendBelow({ jsonrpc: "2.0", id, method: "tools/call", params }).catch((error: unknown) => {
        signal.removeEventListener("abort", stop);
        reject(error);
      });
    });
  }

  transport.onmessage = receive;
  transport.onclose = () => {
    for (const call of calls.values()) call.controller.abort(new Error("the MCP connection closed"));
    calls.clear();
    above.onclose?.();
  };
  // The client above sets its handlers on the wrapper and reads them back (the SDK chains to what it finds).
  return new Proxy(transport, {
    get(target, key) {
      if (key === "send") return send;
      if (key === "onmessage" || key === "onclose") return above[key];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
    set(target, key, value) {
      if (key === "onmessage" || key === "onclose") above[key] = value;
      else Reflect.set(target, key, value, target);
      return true;
    },
  });
}

/** Does a `tools/call` carry a payment already (the app paid it itself)? */
const paid = (params: Record<string, unknown>) =>
  isObject(params._meta) && params._meta[MCP_PAYMENT_META_KEY] !== undefined;

/** A JSON-RPC error object as the SDK's `callTool` throws it: an Error with its `code`, `message` and `data`. */
function thrown(error: unknown): Error {
  const { message } = Object(error) as { message?: unknown };
  return Object.assign(new Error(typeof message === "string" ? message : "MCP error"), Object(error));
}

/** A response as the answer the handshake reads: its result, or its payment-required error; else `undefined`. */
function answerOf(message: McpJsonRpcMessage): Answer | undefined {
  if (message.error !== undefined) return paymentRequiredError(thrown(message.error));
  return isObject(message.result) ? message.result : undefined;
}

/** What the client above is told where money may have moved: it reads the text, not a receipt. */
const MOVED = "The payment may have moved money: do not pay for this again until it is known.";

/**
 * A paid call's result; a tool error after paying without a settlement report (the seller may settle yet) says so
 * after the tool's own words, as the client above cannot read a receipt.
 */
function paidResult(result: object): object {
  const receipt = getPaymentReceipt(result);
  if ((result as { isError?: unknown }).isError !== true || !receipt || receipt.settled) return result;
  const { content } = result as { content?: unknown };
  const text = `x402-pay paid for this call and the tool answered with an error, without saying it settled. ${MOVED}`;
  return { ...result, content: [...(Array.isArray(content) ? content : []), { type: "text", text }] };
}

/**
 * The tool error the client above gets where the call was not paid through: why, and whether money may have moved
 * (then never "did not pay": the payment may have left, and the transaction it names is told).
 */
function refusedResult(error: unknown): object {
  const known = isX402Error(error);
  const said = redactSecrets(error instanceof Error ? error.message : String(error));
  const code = known ? error.code : "FAILED";
  let text: string;
  if (known && !MONEY_MAY_HAVE_MOVED.includes(error.code))
    text = `x402-pay did not pay for this call (${code}): ${said} Nothing was paid.`;
  else {
    // The transaction a pending settlement names: public, and shaped like a key, so `said` hides it.
    const { transaction } = Object(known && error.details) as { transaction?: unknown };
    const named = typeof transaction === "string" && /^(0x)?[0-9A-Za-z]{16,128}$/.test(transaction);
    const told = named ? `The transaction is ${transaction}. ` : "";
    text = `x402-pay may have paid for this call (${code}): ${said} ${told}${MOVED}`;
  }
  return { isError: true, content: [{ type: "text", text }] };
}
