/**
 * `wrapAxiosWithPayment`: pays a 402 beneath the instance's interceptors, around its adapter. The
 * request interceptors and `transformRequest` run once, the paid retry carries exactly the bytes of
 * the first request, and the response interceptors and `transformResponse` see the final response
 * once, whatever their order or kind. This module only translates axios's config and answers for the
 * handshake (src/handshake), which owns the redirect loop and the browser's path.
 */
import axios, {
  AxiosError,
  AxiosHeaders,
  getAdapter,
  type AxiosAdapter,
  type AxiosInstance,
  type AxiosResponse,
  type InternalAxiosRequestConfig,
} from "axios";
import { ceilingGuard, engineOf, type X402Client } from "../client";
import {
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
  type Transport,
} from "../handshake";
import { bodySource } from "../io";
import { PAYMENT_HEADERS } from "../protocol";

declare module "axios" {
  // No type parameters: axios 1.7 declares one, later versions two, and a merge without any fits both.
  interface AxiosRequestConfig {
    /**
     * x402-pay's options for this request, read by `wrapAxiosWithPayment`: `{ paymentId, maxAmount }`, or
     * `resendPayment(error)`.
     */
    x402?: PaymentRequestOptions | undefined;
  }
}

const PAYING = Symbol.for("x402-pay.axios");
type Config = InternalAxiosRequestConfig;

/** Makes the instance pay 402 answers with `client`, and returns it. Works with any `validateStatus`. */
export function wrapAxiosWithPayment<T extends AxiosInstance>(instance: T, client: X402Client): T {
  engineOf(client);
  instance.interceptors.request.use(
    (config) => {
      const adapter = config.adapter ?? instance.defaults.adapter;
      if (!(adapter as { [PAYING]?: true } | undefined)?.[PAYING]) config.adapter = paying(instance, client, adapter);
      return config;
    },
    undefined,
    { synchronous: true },
  );
  return instance;
}

/** One request axios dispatched, as the wrapper pays it: where to send it, and how. */
interface Call {
  readonly instance: AxiosInstance;
  readonly client: X402Client;
  /** The adapter that sends (axios's own, or the caller's). */
  readonly send: AxiosAdapter;
  /** The config that sends the paid request. */
  readonly config: Config;
  /** The config axios dispatched, whose signal axios checks again when the adapter settles. */
  readonly dispatched: Config;
}

function paying(instance: AxiosInstance, client: X402Client, original: Config["adapter"]): AxiosAdapter {
  const adapter = async (dispatched: Config): Promise<AxiosResponse> => {
    const options = readPaymentOptions(dispatched.x402);
    let config = dispatched;
    // With none on the instance, axios falls back to its global defaults' adapter.
    let send = getAdapter(original ?? axios.defaults.adapter, config);
    if (isFetchAdapter(send, config)) {
      // axios's fetch adapter keeps where redirects led to itself: a tracking fetch records it.
      config = withTracking(config);
      send = getAdapter("fetch", config);
    }
    // A resend goes out only with its signed header (in pay).
    // With a quote cache: a route quoted before is paid at once (or waits for another request's probe).
    // Awaited only when there is a plan to wait for: without one, the request goes out in this turn
    // (synchronous interceptors).
    const planning =
      options.resend || options.session
        ? undefined
        : planRequest(client, planned(instance, config), carriesPayment(config));
    const plan = planning && (await planning);
    const resend = options.resend ?? plan?.prepaid;
    try {
      let first: AxiosResponse | undefined;
      try {
        first = resend ? undefined : await send(config);
      } catch (error) {
        if ((error as AxiosError)?.response?.status !== 402) throw error;
        first = (error as AxiosError).response!;
      }
      if (first && first.status !== 402) return first;
      return await pay({ instance, client, send, config, dispatched }, first, { ...options, resend });
    } finally {
      plan?.done();
    }
  };
  return Object.assign(adapter, { [PAYING]: true as const });
}

/** The request as the quote cache knows routes: its full URL and method, with the caller's signal. */
const planned = (instance: AxiosInstance, config: Config) => ({
  url: new URL(instance.getUri(config), browserOrigin()).href,
  method: config.method!.toUpperCase(),
  signal: config.signal as AbortSignal | undefined,
});
const carriesPayment = (config: Config) => PAYMENT_HEADERS.some((name) => headerOf(config.headers, name));

/** Is `send` axios's own fetch adapter (for this config's env)? */
function isFetchAdapter(send: AxiosAdapter, config: Config): boolean {
  try {
    return send === getAdapter("fetch", config);
  } catch {
    return false; // no fetch here
  }
}

/** `first` is the 402, none for a resend. */
async function pay(call: Call, first: AxiosResponse | undefined, options: PaymentRequestOptions) {
  const { client, config, dispatched } = call;
  const { transport, paymentLeft } = transportOf(call, first, options);
  let paid: AxiosResponse;
  try {
    paid = first ? await handlePaymentRequired(client, transport, first) : await options.resend!(transport, client);
  } finally {
    // Once the payment may have left, axios must not turn the outcome into a cancellation.
    if (paymentLeft()) dispatched.signal = dispatched.cancelToken = undefined;
  }
  if (config.validateStatus && !config.validateStatus(paid.status)) {
    const code = paid.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST;
    throw new AxiosError(`Request failed with status code ${paid.status}`, code, config, paid.request, paid);
  }
  return paid;
}

/** The request as sent to one URL: axios's config with its URL and method known. */
type Sent = Config & { url: string; method: string };

/**
 * Where the 402 came from, and how the request is sent there again: after redirects (followed by
 * axios itself), the last URL and, in Node, its method, with the shared rules for what goes with it.
 */
function standing({ instance, config }: Call, first: AxiosResponse | undefined) {
  const requested = new URL(instance.getUri(config), browserOrigin()).href;
  type Last = { res?: { responseUrl?: string }; responseURL?: string; method?: string; getHeader?: unknown };
  const last = first?.request as Last | undefined;
  const url = last?.res?.responseUrl || last?.responseURL || (last && finalUrls.get(last)) || requested;
  // axios sets the method (lower case) before any adapter runs.
  const asked = config.method!.toUpperCase();
  // Node's http adapter followed the redirects itself: its request is the last hop's, with its method.
  const node = typeof last?.getHeader === "function";
  const method = (node && last!.method) || asked;
  // Turned into a GET on the way (a 303) or not (307): the shared rules say what goes with it.
  const hop = redirectHop({ url: requested, method: asked }, method !== asked ? 303 : 307, url);
  const headers = new AxiosHeaders(config.headers);
  for (const name of hop.dropHeaders) headers.delete(name);
  const data = hop.dropBody ? undefined : config.data;
  const unset = { baseURL: undefined, params: undefined };
  const base: Sent = { ...config, ...unset, url, method, headers, data, validateStatus: () => true };
  const moved = url !== requested && !["GET", "HEAD"].includes(method) && !node;
  const notReplayable = isStream(config.data)
    ? "The request body is a stream, which axios cannot send twice, so the 402 cannot be paid: send it as a " +
      "string, Buffer, ArrayBuffer or FormData."
    : moved
      ? "The request was redirected before the 402 and axios does not say how (a 303 makes it a GET): it " +
        "cannot be resent exactly."
      : undefined;
  // The 402 came after redirects the adapter followed itself (Node's http adapter) when it came from elsewhere.
  return { base, notReplayable, elsewhere: url !== requested };
}

/** The handshake's view of the request (as it stood when the 402 came) and of axios's answers. */
function transportOf(
  call: Call,
  first: AxiosResponse | undefined,
  { paymentId, maxAmount, session }: PaymentRequestOptions,
) {
  const { send, config } = call;
  const { base, notReplayable, elsewhere } = standing(call, first);
  const page = browserOrigin();
  let paymentLeft = false;
  const transport: Transport<AxiosResponse> = {
    request: {
      url: base.url,
      method: base.method,
      signal: config.signal as AbortSignal | undefined,
      paymentId,
      session,
      guard: ceilingGuard(maxAmount),
    },
    notReplayable,
    requestHeader: (name) => headerOf(config.headers, name),
    async resend(extra) {
      paymentLeft ||= Object.keys(extra).some((name) => (PAYMENT_HEADERS as readonly string[]).includes(name));
      const next = { ...base, headers: new AxiosHeaders(base.headers).set(extra) };
      const guarded = Object.keys(extra);
      return page === undefined ? follow(send, next, guarded) : sendFromPage(page, fromPage(send, next, guarded));
    },
    status: (r) => r.status,
    redirected: (r) =>
      redirectedAnswers.has(r) || redirectedAnswers.has(r.request as object) || (r === first && elsewhere),
    header: (r, name) => headerOf(r.headers, name) ?? hopSettlements.get(r)?.[name],
    body: (r) => bodySource(r.data),
    discard: destroy,
  };
  return { transport, paymentLeft: () => paymentLeft };
}

const destroy = (response: AxiosResponse) => (response.data as { destroy?: () => void } | undefined)?.destroy?.();

/** axios's sends, for the handshake's redirect loop: `maxRedirects: 0`, each hop as the rules say. */
const hopsOf = (send: AxiosAdapter): Hops<AxiosResponse, Sent> => ({
  send: (sent) => send({ ...sent, maxRedirects: 0 }),
  status: (response) => response.status,
  header: (response, name) => headerOf(response.headers, name),
  discard: destroy,
  next(sent, hop) {
    const headers = new AxiosHeaders(sent.headers);
    for (const name of hop.dropHeaders) headers.delete(name);
    return { ...sent, url: hop.url, method: hop.method, headers, data: hop.dropBody ? undefined : sent.data };
  },
});

/** Outside a browser: redirects followed by the handshake's loop, as far as `maxRedirects` (default 21) allows. */
async function follow(send: AxiosAdapter, config: Sent, guarded: readonly string[]): Promise<AxiosResponse> {
  const { maxRedirects } = config;
  const tooMany = "Maximum number of redirects exceeded";
  const rules = { follow: maxRedirects !== 0, limit: maxRedirects ?? 21, tooMany, guarded };
  const { response, redirected, settled } = await followRedirects(hopsOf(send), config, rules);
  if (redirected) redirectedAnswers.add(response), hopSettlements.set(response, settled);
  return response;
}

/**
 * In a browser XHR follows redirects anywhere with every header. The paid request goes through
 * axios's fetch adapter instead, as the handshake's `sendFromPage` says.
 */
// Stryker disable all: browser-only; test/browser (Chromium, Firefox) covers it, which Stryker cannot run.
function fromPage(send: AxiosAdapter, config: Sent, guarded: readonly string[]): PageSend<AxiosResponse> {
  // A custom adapter is the caller's; axios's own go through its fetch adapter.
  const builtIn = (send as { adapterName?: string }).adapterName === "xhr" || isFetchAdapter(send, config);
  // axios's fetch adapter adds `User-Agent: axios/<version>` unless one is set. Chromium drops it; Firefox sends
  // it, and its CORS preflight then asks the seller for User-Agent, which a seller allowing PAYMENT-SIGNATURE need
  // not allow: the paid request would fail there. `false` keeps axios from adding it; one the caller set stays.
  const headers = new AxiosHeaders(config.headers as AxiosHeaders);
  if (builtIn && !headers.has("user-agent")) headers.set("User-Agent", false as unknown as string);
  return {
    url: config.url,
    guarded,
    signal: config.signal as AbortSignal | undefined,
    send(sameOrigin) {
      const fetchOptions = { ...config.fetchOptions, mode: "same-origin" as const };
      const base = { ...config, headers };
      const options = withTracking(sameOrigin ? { ...base, fetchOptions } : { ...base, maxRedirects: 0 });
      return (builtIn ? getAdapter("fetch", options) : send)(options);
    },
    probe: (url, init) => (withTracking(config).env!.fetch as Fetch)(url, init),
    hidden: (response) => response.status === 0,
  };
}
// Stryker restore all

/** Answers (or the fetch Requests behind them) that came after redirects, and where those redirects led. */
const redirectedAnswers = new WeakSet<object>();
const finalUrls = new WeakMap<object, string>();
/** Settlement headers of the redirect answers that came before an answer `follow` returned, by that answer. */
const hopSettlements = new WeakMap<object, Record<string, string>>();
type Fetch = typeof globalThis.fetch;
// One tracking fetch per fetch: axios caches its fetch adapter per function, so a new one per request
// would grow its cache.
const trackers = new WeakMap<Fetch, Fetch>();
const isTracker = new WeakSet<Fetch>();

/** `config` with a fetch that records, per Request, whether and where redirects led. */
function withTracking(config: Config): Config {
  const fetchFn = (config.env?.fetch as Fetch | undefined) ?? globalThis.fetch;
  if (isTracker.has(fetchFn)) return config;
  let tracker = trackers.get(fetchFn);
  if (!tracker) {
    tracker = (input, init) =>
      fetchFn(input, init).then((response) => {
        if (response.redirected) redirectedAnswers.add(input as object), finalUrls.set(input as object, response.url);
        return response;
      });
    trackers.set(fetchFn, tracker);
    isTracker.add(tracker);
  }
  return { ...config, env: { ...config.env, fetch: tracker } };
}

/**
 * A header of a request or an answer, by name in any case: axios's headers, or a custom adapter's
 * plain object. Several values (an array, sent as a line each) count, joined; an empty one does not.
 */
function headerOf(headers: unknown, name: string): string | undefined {
  const value = AxiosHeaders.from(headers as AxiosHeaders).get(name);
  return value ? String(value) : undefined;
}

function isStream(data: unknown): boolean {
  // Node >= 20 and browsers have ReadableStream.
  return typeof (data as { pipe?: unknown } | null | undefined)?.pipe === "function" || data instanceof ReadableStream;
}
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
