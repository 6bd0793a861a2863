/** Facts of a browser's fetch that the adapters must work around: hidden redirects, CORS preflights. */
import { PaymentNotSentError } from "../errors";
/**
 * The page's origin when running in a browser (a page or a worker), whose fetch hides redirect
 * targets and makes cross-origin requests under CORS; `undefined` elsewhere (Node, Deno, Bun).
 */
export function browserOrigin(): string | undefined {
  const scope = globalThis as { document?: unknown; WorkerGlobalScope?: unknown; location?: { origin?: string } };
  return scope.document !== undefined || typeof scope.WorkerGlobalScope === "function" ? scope.location?.origin : undefined;
}

/**
 * After a failed cross-origin send from a page: throws `PaymentNotSentError` if the CORS preflight
 * refused these request headers, so the request never left. A HEAD with them fails while a plain HEAD
 * succeeds only then. (The probe with the headers reaches the server only if the preflight allows
 * them, and then with a placeholder value.)
 */
export async function throwIfPreflightRefused(fetchFn: typeof fetch, url: string, names: readonly string[], cause: unknown, init: RequestInit = {}) {
  const probe = (headers: [string, string][]) =>
    fetchFn(url, { ...init, method: "HEAD", headers, body: null, redirect: "manual" }).then(
      (response) => (void response.body?.cancel().catch(() => {}), true),
      () => false,
    );
  if (!(await probe(names.map((name) => [name, "probe"]))) && (await probe([]))) {
    throw new PaymentNotSentError(`The browser did not send the request: the server's CORS preflight must list ${names.join(", ")} in Access-Control-Allow-Headers.`, { cause });
  }
}
