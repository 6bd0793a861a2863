/**
 * Chain reads shared by the schemes: JSON-RPC 2.0 over `fetch` with a bounded answer, and one read
 * bounded by the caller's signal and a timeout, whose failure is an `RpcError` naming the RPC.
 */
import { RpcError, raceAbort, redactSecrets, throwIfAborted } from "../errors";
import { readResponse, type ReadError } from "./read";

/** Largest JSON-RPC answer read (bytes): the reads x402-pay makes are small, so this only stops a flood. */
export const MAX_RPC_ANSWER_BYTES = 1024 * 1024;

/** One JSON-RPC call: resolves to `result`; an error status, a JSON-RPC error or a malformed answer throws. */
export async function jsonRpcPost(url: string, call: JsonRpcCall, signal?: AbortSignal): Promise<unknown> {
  const { id, method, params } = call;
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    signal,
  });
  if (!response.ok) {
    void response.body?.cancel().catch(() => {});
    throw new Error(`HTTP ${response.status}`);
  }
  // Refused past MAX_RPC_ANSWER_BYTES: a hostile RPC cannot grow memory without bound.
  const text = await readResponse(response, { maxBytes: MAX_RPC_ANSWER_BYTES, signal }).catch((error: ReadError) => {
    throw error.reason === "size" ? new Error(`answer larger than ${MAX_RPC_ANSWER_BYTES / 1024} KiB`) : error.cause;
  });
  const body = JSON.parse(text) as { result?: unknown; error?: { code: number; message: string } } | null;
  if (body?.error) throw new Error(`JSON-RPC error ${body.error.code}: ${body.error.message}`);
  if (!body || !("result" in body)) throw new TypeError("malformed answer");
  return body.result;
}

/** A JSON-RPC 2.0 request: its id (numbered per URL), method and positional params. */
export interface JsonRpcCall {
  readonly id: number;
  readonly method: string;
  readonly params: readonly unknown[];
}

/**
 * How an RPC is named in messages, and its URL without credentials, query or fragment (`undefined`
 * for an object).
 */
export interface RpcName {
  readonly name: string;
  readonly url: string | undefined;
}

export interface ReadOptions {
  /** The caller's: its abort stays the caller's (PaymentAbortedError), never an RPC failure. */
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs: number;
  /** What to do about a failure, appended to the message. */
  readonly hint: string;
  /** What the failure left undone, said after it. Default: `nothing was signed`. */
  readonly consequence?: string | undefined;
}

/**
 * One read through an RPC, bounded by the caller's signal and `timeoutMs`. The caller's abort
 * surfaces as theirs; any other failure (an error status, a JSON-RPC error, the network, a malformed
 * answer, the timeout) is an RpcError naming the RPC and the method, with the original as `cause`.
 */
export async function readRpc<T>(
  rpc: RpcName,
  method: string,
  read: (abortSignal: AbortSignal) => Promise<T>,
  options: ReadOptions,
): Promise<T> {
  const { signal, timeoutMs, hint, consequence = "nothing was signed" } = options;
  throwIfAborted(signal);
  const controller = new AbortController();
  const timeout = new DOMException(`No answer within ${timeoutMs} ms.`, "TimeoutError");
  const timer = setTimeout(() => controller.abort(timeout), timeoutMs);
  const forward = () => controller.abort(signal!.reason);
  signal?.addEventListener("abort", forward, { once: true });
  try {
    // Raced too: an RPC object of someone else's making may not honour the signal.
    return await raceAbort(read(controller.signal), controller.signal);
  } catch (error) {
    throwIfAborted(signal);
    const timedOut = controller.signal.reason === timeout;
    const cause = timedOut ? timeout : error;
    const what = timedOut ? `did not answer ${method} within ${timeoutMs} ms` : `failed on ${method} (${brief(cause)})`;
    throw new RpcError(`${rpc.name[0]!.toUpperCase()}${rpc.name.slice(1)} ${what}: ${consequence}.`, {
      cause,
      details: { rpcUrl: rpc.url, rpcMethod: method },
      hint,
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", forward);
  }
}

/** An error's message, short and without key-shaped text, for our own message. */
const brief = (error: unknown) => redactSecrets(String((error as Error | undefined)?.message ?? error)).slice(0, 160);

/**
 * An http(s) URL as messages show it: origin and path, never credentials, query or fragment (where
 * API keys often are).
 */
export function shownUrl(url: URL): string {
  return url.origin + (url.pathname === "/" ? "" : url.pathname);
}
