/**
 * The RPC a read goes through, and how a read ends: bounded by the caller's signal and a timeout,
 * any failure but the caller's abort an RpcError naming the RPC and the method.
 */
import { RpcError, raceAbort, redactSecrets, throwIfAborted } from "../errors";
import { jsonRpc, type SolanaRpcLike } from "./rpc";

export interface RpcEndpoint {
  readonly rpc: SolanaRpcLike;
  /** The URL without credentials, query or fragment (where API keys often are); `undefined` for a kit RPC object. */
  readonly url: string | undefined;
  /** How messages name it. */
  readonly name: string;
}

export interface ReadOptions {
  /** The caller's: its abort stays the caller's (PaymentAbortedError), never an RPC failure. */
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs: number;
}

/** A kit RPC, or a JSON-RPC client for a URL. */
export function toEndpoint(value: SolanaRpcLike | string): RpcEndpoint {
  if (typeof value !== "string") return { rpc: value, url: undefined, name: "the RPC given to exactSvm" };
  let shown = value;
  try {
    // Named without credentials, query or fragment, where API keys often are (errors get logged).
    const url = new URL(value);
    shown = url.origin + (url.pathname === "/" ? "" : url.pathname);
  } catch {
    // not a URL: fetch will say so
  }
  return { rpc: jsonRpc(value), url: shown, name: shown };
}

/**
 * One read through an endpoint, bounded by the caller's signal and `timeoutMs`. The caller's abort
 * surfaces as theirs; any other failure (an error status, a JSON-RPC error, the network, a malformed
 * answer, the timeout) is an RpcError naming the RPC and the method, with the original as `cause`.
 */
export async function readRpc<T>(
  endpoint: RpcEndpoint,
  method: string,
  read: (rpc: SolanaRpcLike, abortSignal: AbortSignal) => Promise<T>,
  { signal, timeoutMs }: ReadOptions,
): Promise<T> {
  throwIfAborted(signal);
  const controller = new AbortController();
  const timeout = new DOMException(`No answer within ${timeoutMs} ms.`, "TimeoutError");
  const timer = setTimeout(() => controller.abort(timeout), timeoutMs);
  const forward = () => controller.abort(signal!.reason);
  signal?.addEventListener("abort", forward, { once: true });
  try {
    // Raced too: a kit RPC of someone else's making may not honour `abortSignal`.
    return await raceAbort(read(endpoint.rpc, controller.signal), controller.signal);
  } catch (error) {
    throwIfAborted(signal);
    const timedOut = controller.signal.reason === timeout;
    const cause = timedOut ? timeout : error;
    const what = timedOut ? `did not answer ${method} within ${timeoutMs} ms` : `failed on ${method} (${brief(cause)})`;
    throw new RpcError(`The Solana RPC ${endpoint.name} ${what}: nothing was signed.`, {
      cause,
      details: { rpcUrl: endpoint.url, rpcMethod: method },
      hint: "Retry, or give exactSvm another rpc.",
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", forward);
  }
}

/** An error's message, short and without key-shaped text, for our own message. */
const brief = (error: unknown) => redactSecrets(String((error as Error | undefined)?.message ?? error)).slice(0, 160);
