/** `wrapFetchWithPayment`: a fetch with the same signature that pays 402 answers once. */
import type { X402Client } from "../client";
import { PaymentOutcomeUnknownError } from "../errors";
import { handlePaymentRequired, type Transport } from "../handshake";
import { SETTLEMENT_HEADERS } from "../protocol";

type Fetch = typeof globalThis.fetch;

/**
 * Wraps `fetch` so a 402 is paid with `client` and the request retried once. The body is read once
 * into bytes so the retry sends exactly the same bytes (streams too; `duplex: "half"` is set for you).
 */
export function wrapFetchWithPayment(fetchFn: Fetch, client: X402Client): Fetch {
  return async function fetchWithPayment(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const streaming = init?.body instanceof ReadableStream && !("duplex" in init);
    const request = new Request(input, streaming ? ({ ...init, duplex: "half" } as RequestInit) : init);
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
    const base: RequestInit = { ...init, ...requestOptions(request), body };
    const send = (url: string, options: RequestInit) => fetchFn(url, { ...base, ...options });

    const first = await send(request.url, { headers: copyHeaders(request.headers) });
    if (first.status !== 402) return first;

    // The 402 came from where the request ended up: after a followed redirect, pay and retry there.
    const url = first.redirected && first.url ? first.url : request.url;
    let paid: Response | undefined;
    // Settlement headers of a redirect answer to the paid request, which the caller never sees.
    const hops: Record<string, string> = {};
    const transport: Transport<Response> = {
      request: { url, method: request.method },
      requestHeader: (name) => request.headers.get(name),
      resend: async (extra) => (paid = await resendFollowingRedirects(send, request, url, base, extra, hops)),
      status: (response) => response.status,
      header: (response, name) => response.headers.get(name) ?? (response === paid ? hops[name] : null),
      body: (response) => response.clone().text(),
    };
    try {
      return await handlePaymentRequired(client, transport, first);
    } catch (error) {
      discard(paid);
      throw error;
    } finally {
      discard(first);
    }
  };
}

/** Releases the connection of a response the caller never sees (Node keeps it busy until the body is read). */
function discard(response: Response | undefined): void {
  if (response?.body && !response.bodyUsed) response.body.cancel().catch(() => {});
}

/**
 * Copies headers entry by entry. `new Headers(headers)` is not enough where `Headers` is patched:
 * msw's interceptor rebuilds a copy from raw headers it recorded, which for a `Request` with a body
 * hold only the Content-Type, silently dropping every other header.
 */
function copyHeaders(headers: Headers): Headers {
  return new Headers([...headers]);
}

/** Everything a `Request` normalised from `(input, init)`, as init options for `fetch(url, init)`. */
function requestOptions(request: Request): RequestInit {
  const options: RequestInit = {
    method: request.method,
    signal: request.signal,
    credentials: request.credentials,
    cache: request.cache,
    redirect: request.redirect,
    integrity: request.integrity,
    keepalive: request.keepalive,
    referrerPolicy: request.referrerPolicy,
  };
  if (request.mode && request.mode !== "navigate") options.mode = request.mode;
  if (request.referrer && request.referrer !== "about:client") options.referrer = request.referrer;
  return options;
}

/**
 * The paid retry, with redirects followed by hand: the payment headers go only to the same origin,
 * and never again once a hop reported a settlement (kept in `hops` for the receipt).
 */
async function resendFollowingRedirects(
  send: (url: string, options: RequestInit) => Promise<Response>,
  request: Request,
  target: string,
  base: RequestInit,
  extra: Record<string, string>,
  hops: Record<string, string>,
): Promise<Response> {
  const headers = copyHeaders(request.headers);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  let url = target;
  let method = request.method;
  let body = base.body;
  for (let hop = 0; ; hop++) {
    const response = await send(url, { method, headers, body, redirect: "manual" });
    if (response.type === "opaqueredirect") {
      throw new PaymentOutcomeUnknownError("The paid request was redirected, and the browser hides where to.");
    }
    const location = response.headers.get("location");
    if (request.redirect === "manual" || !location || ![301, 302, 303, 307, 308].includes(response.status)) return response;
    discard(response);
    if (request.redirect === "error" || hop >= 20) throw new TypeError(`fetch failed: redirect ${request.redirect === "error" ? "not allowed" : "limit reached"}`);
    const next = new URL(location, url);
    const crossOrigin = next.origin !== new URL(url).origin;
    const settled = SETTLEMENT_HEADERS.filter((name) => response.headers.has(name));
    for (const name of settled) hops[name] = response.headers.get(name)!;
    if (crossOrigin || settled.length) {
      for (const name of Object.keys(extra)) headers.delete(name);
    }
    if (crossOrigin) headers.delete("authorization");
    if ((response.status === 303 && method !== "HEAD") || ((response.status === 301 || response.status === 302) && method === "POST")) {
      method = "GET";
      body = undefined;
      for (const name of ["content-type", "content-length", "content-encoding", "content-language", "content-location"]) headers.delete(name);
    }
    url = next.href;
  }
}
