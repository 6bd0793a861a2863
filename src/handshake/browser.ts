/** Facts of a browser's fetch that the adapters must work around: hidden redirects, CORS preflights. */
import { PaymentNotSentError } from "../errors";
/**
 * The page's origin when running in a browser (a page or a worker), whose fetch hides redirect
 * targets and makes cross-origin requests under CORS; `undefined` elsewhere (Node, Deno, Bun).
 */
export function browserOrigin(): string | undefined {
  const scope = globalThis as { document?: unknown; WorkerGlobalScope?: unknown; location?: { origin?: string } };
  const browser = scope.document !== undefined || typeof scope.WorkerGlobalScope === "function";
  return browser ? scope.location?.origin : undefined;
}

/**
 * After a failed cross-origin send from a page: throws `PaymentNotSentError` if the CORS preflight
 * refused these request headers, so the request never left. A HEAD with them fails while a plain HEAD
 * succeeds only then. (The probe with the headers reaches the server only if the preflight allows
 * them, and then with a placeholder value.)
 */
export async function throwIfPreflightRefused(
  fetchFn: typeof fetch,
  url: string,
  names: readonly string[],
  { cause, init = {} }: { readonly cause: unknown; readonly init?: RequestInit },
) {
  const probe = (headers: [string, string][]) =>
    fetchFn(url, { ...init, method: "HEAD", headers, body: null, redirect: "manual" }).then(
      (response) => (void response.body?.cancel().catch(() => {}), true),
      () => false,
    );
  if (!(await probe(names.map((name) => [name, "probe"]))) && (await probe([]))) {
    const message =
      "The browser did not send the request: the server's CORS preflight must list " +
      `${names.join(", ")} in Access-Control-Allow-Headers.`;
    throw new PaymentNotSentError(message, { cause });
  }
}

/** A request the handshake sends again from a page (the paid one, a sign-in), as one HTTP library sends it. */
export interface PageSend<R> {
  readonly url: string;
  /** The headers the handshake added, named if the CORS preflight refused them. */
  readonly guarded: readonly string[];
  readonly signal: AbortSignal | undefined;
  /**
   * Sends it once: with `sameOrigin`, the browser follows same-origin redirects and fails any other
   * before sending to it (`mode: "same-origin"`); otherwise no redirect is followed.
   */
  send(sameOrigin: boolean): Promise<R>;
  /** The fetch the request went through, to probe the CORS preflight after a failure. */
  readonly probe: typeof fetch;
  /** An answer standing for a redirect the browser did not follow and does not show (opaque). */
  hidden(response: R): boolean;
}

/**
 * The browser's path for a request sent again: a browser hides redirect targets from fetch, so it
 * cannot be followed by hand there. On the page's own origin, the browser follows same-origin
 * redirects only; elsewhere none is followed, and a failed send is probed for a CORS preflight that
 * refused the added headers (then the request never left: `PaymentNotSentError`).
 */
// Stryker disable all: browser-only; test/browser (Chromium, Firefox) covers it, which Stryker cannot run.
export async function sendFromPage<R>(page: string, request: PageSend<R>): Promise<R> {
  const sameOrigin = new URL(request.url).origin === page;
  let response: R;
  try {
    response = await request.send(sameOrigin);
  } catch (error) {
    if (!sameOrigin && !request.signal?.aborted) {
      await throwIfPreflightRefused(request.probe, request.url, request.guarded, { cause: error });
    }
    throw error;
  }
  if (request.hidden(response)) {
    throw new TypeError("The paid request was redirected where the browser does not show: not followed.");
  }
  return response;
}
// Stryker restore all
