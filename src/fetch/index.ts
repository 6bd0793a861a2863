/** `wrapFetchWithPayment`: a fetch with the same signature that pays 402 answers once. */
import { engineOf, type X402Client } from "../client";
import { BODY_LIMITS, REDIRECT_STATUSES, browserOrigin, handlePaymentRequired, planRequest, readPaymentOptions, redirectHop, throwIfPreflightRefused, type PaymentRequestOptions, type Transport } from "../handshake";
import { throwIfAborted } from "../errors";
import { PAYMENT_HEADERS, SETTLEMENT_HEADERS } from "../protocol";

type Fetch = typeof globalThis.fetch;
/** A fetch that pays: `fetch`'s call signature, with x402-pay's options for this request in `init.x402`. */
export type PaidFetch = (input: RequestInfo | URL, init?: RequestInit & { x402?: PaymentRequestOptions | undefined }) => Promise<Response>;

/** The request as sent to one URL: what a redirect may change. */
interface Sent {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: Uint8Array<ArrayBuffer> | undefined;
}
type Send = (to: Sent, options?: RequestInit) => Promise<Response>;

/**
 * Wraps `fetch` so a 402 is paid with `client` and the request retried once, exactly as it was when
 * the 402 came (method, URL, headers, body bytes; streams too, `duplex: "half"` is set for you).
 * `init.x402`, checked before anything is sent: `{ paymentId }`, or `resendPayment(error)`.
 */
export function wrapFetchWithPayment(fetchFn: Fetch, client: X402Client): PaidFetch {
  engineOf(client);
  return async function fetchWithPayment(input, init) {
    const options = readPaymentOptions(init?.x402);
    const streaming = init?.body instanceof ReadableStream && !("duplex" in init);
    const request = new Request(input, streaming ? ({ ...init, duplex: "half" } as RequestInit) : init);
    // With a quote cache: a route quoted before is paid at once (or waits for another request's probe).
    const planning = options.resend ? undefined : planRequest(client, request, PAYMENT_HEADERS.some((name) => request.headers.has(name)));
    const plan = planning && (await planning);
    try {
      return await paying(client, fetchFn, input, request, init, options.paymentId, options.resend ?? plan?.prepaid);
    } finally {
      plan?.done();
    }
  };
}

/** One request through the handshake: `resend` (the caller's, or a cached quote's) goes out paid at once. */
async function paying(client: X402Client, fetchFn: Fetch, input: RequestInfo | URL, request: Request, init: RequestInit | undefined, paymentId: string | undefined, resend: PaymentRequestOptions["resend"]) {
  const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
  // x402-pay's options stay here: the fetch below (perhaps another wrapper) never sees them.
  const base: RequestInit = { ...init, x402: undefined, ...requestOptions(request, init?.signal != null || input instanceof Request) } as RequestInit;
  const send: Send = ({ url, ...sent }, options) => fetchFn(url, { ...base, ...sent, ...options });
  const page = browserOrigin();
  let state: Sent = { url: request.url, method: request.method, headers: copyHeaders(request.headers), body };
  let notReplayable: string | undefined;
  let first: Response | undefined;
  // A resend goes out only with its signed header (below).
  if (!resend && page === undefined) {
    // Redirects are followed here, hop by hop, so the request is known as it was when a 402 came.
    ({ response: first, sent: state } = await follow(send, state, request.redirect, [], {}));
  } else if (!resend) {
    // Stryker disable all: browser-only; test/browser (Chromium) covers it, which Stryker cannot run.
    first = await send(state);
    if (first.status === 402 && first.redirected && first.url) {
      // The browser followed redirects it does not describe: a GET stays a GET, other methods are unknowable.
      const hop = redirectHop(state, 307, first.url, [], false);
      if (state.method !== "GET" && state.method !== "HEAD") {
        notReplayable = `The ${state.method} request was redirected before the 402 and the browser hides how (a 303 makes it a GET): it cannot be resent exactly.`;
      }
      state = { ...state, url: hop.url, headers: copyHeaders(state.headers, hop.dropHeaders) };
    }
    // Stryker restore all
  }
  if (first && first.status !== 402) return first;

  // Settlement headers reported by redirect hops (which the caller never sees), by the answer they led to.
  const settledOnTheWay = new WeakMap<Response, Record<string, string>>();
  const transport: Transport<Response> = {
    request: { url: state.url, method: state.method, signal: request.signal, paymentId },
    notReplayable,
    requestHeader: (name) => request.headers.get(name),
    async resend(extra) {
      await connectionFreed();
      // Aborted while waiting: the request never left (the handshake says so, not "outcome unknown").
      throwIfAborted(request.signal);
      const headers = copyHeaders(state.headers);
      for (const [name, value] of Object.entries(extra)) headers.set(name, value);
      const to = { ...state, headers };
      const hops: Record<string, string> = {};
      const answer =
        page === undefined
          ? (await follow(send, to, request.redirect, Object.keys(extra), hops)).response
          : await sendFromPage(send, to, page, request, Object.keys(extra));
      settledOnTheWay.set(answer, hops);
      return answer;
    },
    status: (response) => response.status,
    redirected: (response) => response.redirected,
    header: (response, name) => response.headers.get(name) ?? settledOnTheWay.get(response)?.[name] ?? null,
    body: (response) => response.body,
    discard,
  };
  return first ? handlePaymentRequired(client, transport, first) : resend!(transport);
}

/**
 * Follows redirects by hand with the shared rules: `guarded` headers (the payment) stay on their
 * origin and stop after a hop that reported a settlement (kept in `hops` for the receipt).
 */
async function follow(send: Send, sent: Sent, mode: RequestRedirect, guarded: string[], hops: Record<string, string>) {
  for (let count = 0; ; count++) {
    if (count > 0) await connectionFreed();
    const response = await send(sent, { redirect: "manual" });
    const location = response.headers.get("location");
    if (mode === "manual" || !location || !REDIRECT_STATUSES.includes(response.status)) {
      if (count > 0) Object.defineProperty(response, "redirected", { value: true });
      return { response, sent };
    }
    discard(response);
    if (mode === "error" || count >= 20) throw new TypeError(`fetch failed: redirect ${mode === "error" ? "not allowed" : "limit reached"}`);
    const settled = SETTLEMENT_HEADERS.filter((name) => response.headers.has(name));
    for (const name of settled) hops[name] = response.headers.get(name)!;
    const hop = redirectHop(sent, response.status, location, guarded, settled.length > 0);
    sent = { url: hop.url, method: hop.method, headers: copyHeaders(sent.headers, hop.dropHeaders), body: hop.dropBody ? undefined : sent.body };
  }
}

/**
 * A browser hides redirect targets from fetch, so a paid request cannot be followed by hand there.
 * On the page's own origin, `mode: "same-origin"` lets the browser follow same-origin redirects and
 * fail any other before sending to it; elsewhere the redirect is not followed at all.
 */
// Stryker disable all: browser-only; test/browser (Chromium) covers it, which Stryker cannot run.
async function sendFromPage(send: Send, to: Sent, page: string, request: Request, guarded: string[]): Promise<Response> {
  const sameOrigin = new URL(to.url).origin === page;
  const follows = request.redirect === "follow";
  let response: Response;
  try {
    response = await send(to, follows ? (sameOrigin ? { mode: "same-origin" } : { redirect: "manual" }) : {});
  } catch (error) {
    const probe: typeof fetch = (url, init) => send({ ...to, url: String(url) }, init);
    if (!sameOrigin && !request.signal.aborted) await throwIfPreflightRefused(probe, to.url, guarded, error);
    throw error;
  }
  if (response.type === "opaqueredirect" && follows) {
    throw new TypeError("The paid request was redirected where the browser does not show: not followed.");
  }
  return response;
}
// Stryker restore all

/**
 * Releases the connection of a response the caller never sees (Node keeps it busy until the body is
 * read). A small body (a 402's JSON) is read to its end, which costs less than cancelling it (undici
 * aborts with a DOMException and may drop the connection); one that stalls is cancelled after
 * `BODY_LIMITS.drainMs`. Any other body is cancelled at once.
 */
function discard(response: Response): void {
  const { body } = response;
  if (!body || response.bodyUsed || body.locked) return;
  const length = response.headers.get("content-length");
  if (length === null || !(Number(length) <= BODY_LIMITS.drainBytes)) return void body.cancel().catch(() => {});
  const reader = body.getReader();
  const timer = setTimeout(() => reader.cancel().catch(() => {}), BODY_LIMITS.drainMs);
  (timer as { unref?: () => void }).unref?.();
  const drain = (): Promise<void> => reader.read().then(({ done }) => (done ? undefined : drain()));
  drain()
    .catch(() => {})
    .finally(() => clearTimeout(timer));
}

/**
 * Node's fetch (undici) hands a keep-alive connection back to its pool one event-loop turn after the
 * answer on it ended (`setImmediate`). A request sent sooner, as the paid one is (signing takes
 * microtasks, not turns), opens another connection: a second TCP and TLS handshake for the first paid
 * call to an origin, and a socket per call in a burst. Waiting that turn before each request after
 * the first (the paid one, a redirect hop) lets it go on the connection the answer before it came on.
 * Where there is no `setImmediate` (browsers, whose fetch pools connections its own way) nothing waits.
 */
function connectionFreed(): Promise<void> | undefined {
  return nextTurn && new Promise((resolve) => nextTurn(resolve));
}
/** Taken as the module loads, so fake timers installed later (a test's) never hold a paid request back. */
const nextTurn = typeof setImmediate === "function" ? setImmediate : undefined;

/**
 * Copies headers entry by entry, leaving out `names`. `new Headers(headers)` is not enough where
 * `Headers` is patched: msw's interceptor rebuilds a copy from raw headers it recorded, which for a
 * `Request` with a body hold only the Content-Type, silently dropping every other header.
 */
function copyHeaders(headers: Headers, names: readonly string[] = []): Headers {
  const copy = new Headers([...headers]);
  for (const name of names) copy.delete(name);
  return copy;
}

/**
 * Everything a `Request` normalised from `(input, init)`, as init options for `fetch(url, init)`. Its
 * signal only when the caller gave one (in `init` or a `Request`): a fetch handed a signal follows it,
 * which costs each send a listener, and the `Request`'s own signal never aborts by itself.
 */
function requestOptions(request: Request, signalled: boolean): RequestInit {
  const options: Record<string, unknown> = {};
  if (signalled) options.signal = request.signal;
  // The method is left out: every send gives its own.
  for (const key of ["credentials", "cache", "redirect", "integrity", "keepalive", "referrerPolicy"] as const) options[key] = request[key];
  if (request.mode && request.mode !== "navigate") options.mode = request.mode;
  // "" is no referrer; "about:client" (the default) is left to fetch.
  if (request.referrer !== "about:client") options.referrer = request.referrer;
  return options;
}
