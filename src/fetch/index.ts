/**
 * `wrapFetchWithPayment`: a fetch with the same signature that pays 402 answers once. This module only
 * translates fetch's request and answer for the handshake (src/handshake), which owns the redirect loop
 * and the browser's path.
 */
import { ceilingGuard, engineOf, type X402Client } from "../client";
import type { RequestGuard } from "../contracts";
import {
  BODY_LIMITS,
  browserOrigin,
  followRedirects,
  handlePaymentRequired,
  planRequest,
  readPaymentOptions,
  redirectHop,
  sendFromPage,
  type Hops,
  type PageSend,
  type PaymentRequestOptions,
  type RedirectRules,
  type Transport,
} from "../handshake";
import { throwIfAborted } from "../errors";
import { drain } from "../io";
import { PAYMENT_HEADERS } from "../protocol";

/** A fetch that pays: `fetch`'s call signature, with x402-pay's options for this request in `init.x402`. */
export type PaidFetch = (
  input: RequestInfo | URL,
  init?: RequestInit & { x402?: PaymentRequestOptions | undefined },
) => Promise<Response>;

/** The request as sent to one URL: what a redirect may change. */
interface Sent {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: Uint8Array<ArrayBuffer> | undefined;
}
type Send = (to: Sent, options?: RequestInit) => Promise<Response>;

/** One call of the wrapped fetch: the request as fetch normalised it, and how to send it somewhere. */
interface Call {
  readonly request: Request;
  readonly send: Send;
  readonly paymentId: string | undefined;
  /** A request a scheme's state builds (a refund): it answers the 402 instead of a payment. */
  readonly session: PaymentRequestOptions["session"];
  /** `x402.maxAmount`, as the rule every payment of this request is checked against. */
  readonly guard: RequestGuard | undefined;
}

/**
 * Wraps `fetch` so a 402 is paid with `client` and the request retried once, exactly as it was when
 * the 402 came (method, URL, headers, body bytes; streams too, `duplex: "half"` is set for you).
 * `init.x402`, checked before anything is sent: `{ paymentId, maxAmount }`, or `resendPayment(error)`.
 */
export function wrapFetchWithPayment(fetchFn: typeof globalThis.fetch, client: X402Client): PaidFetch {
  engineOf(client);
  return async function fetchWithPayment(input, init) {
    const { paymentId, resend, maxAmount, session } = readPaymentOptions(init?.x402);
    const streaming = init?.body instanceof ReadableStream && !("duplex" in init);
    const request = new Request(input, streaming ? ({ ...init, duplex: "half" } as RequestInit) : init);
    // With a quote cache: a route quoted before is paid at once (or waits for another request's probe).
    const carriesPayment = PAYMENT_HEADERS.some((name) => request.headers.has(name));
    const planning = resend || session ? undefined : planRequest(client, request, carriesPayment);
    const plan = planning && (await planning);
    // x402-pay's options stay here: the fetch below (perhaps another wrapper) never sees them.
    const base = { ...init, x402: undefined, ...requestOptions(request, input, init) } as RequestInit;
    const send: Send = (to, options) =>
      fetchFn(to.url, { ...base, method: to.method, headers: to.headers, body: to.body, ...options });
    try {
      const guard = ceilingGuard(maxAmount);
      return await paying(client, { request, send, paymentId, guard, session }, resend ?? plan?.prepaid);
    } finally {
      plan?.done();
    }
  };
}

/** One request through the handshake: `resend` (the caller's, or a cached quote's) goes out paid at once. */
async function paying(client: X402Client, call: Call, resend: PaymentRequestOptions["resend"]) {
  const { request } = call;
  const sent: Sent = {
    url: request.url,
    method: request.method,
    headers: copyHeaders(request.headers),
    body: await bytesOf(request),
  };
  // A resend goes out only with its signed header (below).
  if (resend) return resend(transportOf(call, { sent }), client);
  const first = await sendFirst(call, sent);
  if (first.response.status !== 402) return first.response;
  return handlePaymentRequired(client, transportOf(call, first), first.response);
}

/**
 * The body's bytes, or none (an empty body is none: the same on the wire). Read whatever `request.body` says:
 * Firefox has no `Request.body` (always undefined there), and trusting it sent POSTs without their body.
 */
async function bytesOf(request: Request): Promise<Uint8Array<ArrayBuffer> | undefined> {
  // `null` (not Firefox's undefined) says there is none: nothing to read.
  if (request.body === null) return undefined;
  const bytes = new Uint8Array(await request.arrayBuffer());
  return bytes.length > 0 ? bytes : undefined;
}

/** Where the request stands when the 402 came: as sent there, and why it cannot be sent again if it cannot. */
interface Standing {
  readonly sent: Sent;
  readonly notReplayable?: string | undefined;
}

/**
 * The request sent unpaid. Outside a browser, redirects are followed here, hop by hop, so the request
 * is known as it was when a 402 came; a browser follows them itself, and hides how.
 */
async function sendFirst(call: Call, sent: Sent): Promise<Standing & { response: Response }> {
  if (browserOrigin() === undefined) {
    const followed = await follow(call.send, sent, { mode: call.request.redirect, guarded: [] });
    return { response: followed.response, sent: followed.sent };
  }
  // Stryker disable all: browser-only; test/browser (Chromium, Firefox) covers it, which Stryker cannot run.
  const response = await call.send(sent);
  if (response.status !== 402 || !response.redirected || !response.url) return { response, sent };
  // The browser followed redirects it does not describe: a GET stays a GET, other methods are unknowable.
  const hop = redirectHop(sent, 307, response.url);
  const moved = { ...sent, url: hop.url, headers: copyHeaders(sent.headers, hop.dropHeaders) };
  if (sent.method === "GET" || sent.method === "HEAD") return { response, sent: moved };
  const notReplayable =
    `The ${sent.method} request was redirected before the 402 and the browser hides how ` +
    "(a 303 makes it a GET): it cannot be resent exactly.";
  return { response, sent: moved, notReplayable };
  // Stryker restore all
}

/** The handshake's view of the request (as it stood when the 402 came) and of fetch's answers. */
function transportOf(call: Call, { sent, notReplayable }: Standing): Transport<Response> {
  const { request, send, paymentId, guard, session } = call;
  const page = browserOrigin();
  // Settlement headers reported by redirect hops (which the caller never sees), by the answer they led to.
  const settledOnTheWay = new WeakMap<Response, Record<string, string>>();
  return {
    request: { url: sent.url, method: sent.method, signal: request.signal, paymentId, guard, session },
    notReplayable,
    requestHeader: (name) => request.headers.get(name),
    async resend(extra) {
      await connectionFreed();
      // Aborted while waiting: the request never left (the handshake says so, not "outcome unknown").
      throwIfAborted(request.signal);
      const headers = copyHeaders(sent.headers);
      for (const [name, value] of Object.entries(extra)) headers.set(name, value);
      const to = { ...sent, headers };
      const guarded = Object.keys(extra);
      if (page !== undefined) return sendFromPage(page, fromPage(send, to, request, guarded));
      const { response, settled } = await follow(send, to, { mode: request.redirect, guarded });
      settledOnTheWay.set(response, settled);
      return response;
    },
    status: statusOf,
    redirected: (response) => response.redirected,
    header: (response, name) => response.headers.get(name) ?? settledOnTheWay.get(response)?.[name] ?? null,
    body: (response) => response.body,
    discard,
  };
}

/** A fetch answer's status. */
const statusOf = (response: Response) => response.status;

/** fetch's sends, for the handshake's redirect loop: `redirect: "manual"`, each hop as the rules say. */
const hopsOf = (send: Send): Hops<Response, Sent> => ({ ...HOPS, send: (sent) => send(sent, { redirect: "manual" }) });
/** The loop's steps that are the same for every request (made once). */
const HOPS: Omit<Hops<Response, Sent>, "send"> = {
  status: statusOf,
  header: (response, name) => response.headers.get(name),
  discard,
  next: (sent, hop) => ({
    url: hop.url,
    method: hop.method,
    headers: copyHeaders(sent.headers, hop.dropHeaders),
    body: hop.dropBody ? undefined : sent.body,
  }),
  beforeHop: connectionFreed,
};

/** fetch's `redirect` mode as the loop's rules: `manual` follows none, `error` fails on one, else 20 at most. */
function rulesOf(mode: RequestRedirect, guarded: readonly string[]): RedirectRules {
  const tooMany = `fetch failed: redirect ${mode === "error" ? "not allowed" : "limit reached"}`;
  return { follow: mode !== "manual", limit: mode === "error" ? 0 : 20, tooMany, guarded };
}

/** Redirects followed by the handshake's loop; an answer after redirects says so, as fetch's own does. */
async function follow(send: Send, sent: Sent, { mode, guarded }: { mode: RequestRedirect; guarded: string[] }) {
  const followed = await followRedirects(hopsOf(send), sent, rulesOf(mode, guarded));
  if (followed.redirected) Object.defineProperty(followed.response, "redirected", { value: true });
  return followed;
}

/** A request sent again from a page, as fetch sends it: the handshake's `sendFromPage` decides how. */
// Stryker disable all: browser-only; test/browser (Chromium, Firefox) covers it, which Stryker cannot run.
function fromPage(send: Send, to: Sent, request: Request, guarded: readonly string[]): PageSend<Response> {
  const follows = request.redirect === "follow";
  return {
    url: to.url,
    guarded,
    signal: request.signal,
    send: (sameOrigin) => send(to, follows ? (sameOrigin ? { mode: "same-origin" } : { redirect: "manual" }) : {}),
    probe: (url, init) => send({ ...to, url: String(url) }, init),
    hidden: (response) => follows && response.type === "opaqueredirect",
  };
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
  const limits = { maxBytes: BODY_LIMITS.drainBytes, timeoutMs: BODY_LIMITS.drainMs, unref: true };
  drain(body, limits).catch(() => {});
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

/** fetch's own defaults for what a `Request` normalises: a value equal to its default is left to fetch. */
const DEFAULTS = {
  credentials: "same-origin",
  cache: "default",
  redirect: "follow",
  integrity: "",
  keepalive: false,
  referrerPolicy: "",
  mode: "cors",
} as const;

/** The options a `Request` normalises besides those in DEFAULTS. */
const NORMALISED = [...(Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]), "referrer"] as const;

/**
 * What a `Request` normalised from `(input, init)` that differs from fetch's defaults, as init options for
 * `fetch(url, init)` (each option given costs Node's fetch a conversion per send). Its signal only when the caller
 * gave one (in `init` or a `Request`): a fetch handed a signal follows it, which costs each send a listener, and the
 * `Request`'s own signal never aborts by itself. A URL whose `init` gives none of those options has them all at their
 * defaults: nothing to read back.
 */
function requestOptions(request: Request, input: RequestInfo | URL, init: RequestInit | undefined): RequestInit {
  const options: Record<string, unknown> = {};
  const url = typeof input === "string" || input instanceof URL;
  if (init?.signal != null || !url) options.signal = request.signal;
  if (url && !NORMALISED.some((key) => init?.[key] !== undefined)) return options;
  // The method is left out: every send gives its own; a navigation's mode too (fetch refuses it).
  for (const key of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
    const value = request[key];
    if (value !== DEFAULTS[key] && value !== "navigate") options[key] = value;
  }
  // "" is no referrer; "about:client" (the default) is left to fetch.
  if (request.referrer !== "about:client") options.referrer = request.referrer;
  return options;
}
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
