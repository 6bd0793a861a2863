/**
 * `wrapAxiosWithPayment`: pays a 402 beneath the instance's interceptors, around its adapter. The
 * request interceptors and `transformRequest` run once, the paid retry carries exactly the bytes of
 * the first request, and the response interceptors and `transformResponse` see the final response
 * once, whatever their order or kind.
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
import { engineOf, type X402Client } from "../client";
import { REDIRECT_STATUSES, browserOrigin, handlePaymentRequired, planRequest, readPaymentOptions, redirectHop, throwIfPreflightRefused, type PaymentRequestOptions, type Transport } from "../handshake";
import { bodySource } from "../io";
import { PAYMENT_HEADERS, SETTLEMENT_HEADERS } from "../protocol";

declare module "axios" {
  // No type parameters: axios 1.7 declares one, later versions two, and a merge without any fits both.
  interface AxiosRequestConfig {
    /** x402-pay's options for this request, read by `wrapAxiosWithPayment`: `{ paymentId }`, or `resendPayment(error)`. */
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
    // Awaited only when there is a plan to wait for: without one, the request goes out in this turn (synchronous interceptors).
    const planning = options.resend
      ? undefined
      : planRequest(
          client,
          { url: new URL(instance.getUri(config), browserOrigin()).href, method: config.method!.toUpperCase(), signal: config.signal as AbortSignal | undefined },
          PAYMENT_HEADERS.some((name) => headerOf(config.headers, name)),
        );
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
      return !first || first.status === 402 ? await pay(instance, client, send, config, dispatched, first, { ...options, resend }) : first;
    } finally {
      plan?.done();
    }
  };
  return Object.assign(adapter, { [PAYING]: true as const });
}

/** Is `send` axios's own fetch adapter (for this config's env)? */
function isFetchAdapter(send: AxiosAdapter, config: Config): boolean {
  try {
    return send === getAdapter("fetch", config);
  } catch {
    return false; // no fetch here
  }
}

/**
 * `config` sends the paid request; `dispatched` is the one axios dispatched, whose signal axios checks
 * again when the adapter settles. `first` is the 402, none for a resend.
 */
async function pay(
  instance: AxiosInstance,
  client: X402Client,
  send: AxiosAdapter,
  config: Config,
  dispatched: Config,
  first: AxiosResponse | undefined,
  { paymentId, resend }: PaymentRequestOptions,
): Promise<AxiosResponse> {
  const page = browserOrigin();
  // Where the 402 came from: after redirects (followed by axios itself), the last URL and, in Node, its method.
  const requested = new URL(instance.getUri(config), page).href;
  const last = first?.request as { res?: { responseUrl?: string }; responseURL?: string; method?: string; getHeader?: unknown } | undefined;
  const url = last?.res?.responseUrl || last?.responseURL || (last && finalUrls.get(last)) || requested;
  // axios sets the method (lower case) before any adapter runs.
  const asked = config.method!.toUpperCase();
  // Node's http adapter followed the redirects itself: its request is the last hop's, with its method.
  const node = typeof last?.getHeader === "function";
  const method = (node && last!.method) || asked;
  // Turned into a GET on the way (a 303) or not (307): the shared rules say what goes with it.
  const hop = redirectHop({ url: requested, method: asked }, method !== asked ? 303 : 307, url, [], false);
  const headers = new AxiosHeaders(config.headers);
  for (const name of hop.dropHeaders) headers.delete(name);
  const data = hop.dropBody ? undefined : config.data;
  const base: Config = { ...config, url, baseURL: undefined, params: undefined, method, headers, data, validateStatus: () => true };
  const moved = url !== requested && !["GET", "HEAD"].includes(method) && !node;

  let paymentLeft = false;
  const transport: Transport<AxiosResponse> = {
    request: { url, method, signal: config.signal as AbortSignal | undefined, paymentId },
    notReplayable: isStream(config.data)
      ? "The request body is a stream, which axios cannot send twice, so the 402 cannot be paid: send it as a string, Buffer, ArrayBuffer or FormData."
      : moved
        ? "The request was redirected before the 402 and axios does not say how (a 303 makes it a GET): it cannot be resent exactly."
        : undefined,
    requestHeader: (name) => headerOf(config.headers, name),
    async resend(extra) {
      paymentLeft ||= Object.keys(extra).some((name) => (PAYMENT_HEADERS as readonly string[]).includes(name));
      const next = { ...base, headers: new AxiosHeaders(base.headers).set(extra) };
      return page === undefined ? follow(send, next, Object.keys(extra)) : fromPage(send, next, page, Object.keys(extra));
    },
    status: (r) => r.status,
    redirected: (r) => redirectedAnswers.has(r) || redirectedAnswers.has(r.request as object),
    header: (r, name) => headerOf(r.headers, name) ?? hopSettlements.get(r)?.[name],
    body: (r) => bodySource(r.data),
    discard: (r) => (r.data as { destroy?: () => void } | undefined)?.destroy?.(),
  };
  let paid: AxiosResponse;
  try {
    paid = first ? await handlePaymentRequired(client, transport, first) : await resend!(transport);
  } finally {
    // Once the payment may have left, axios must not turn the outcome into a cancellation.
    if (paymentLeft) dispatched.signal = dispatched.cancelToken = undefined;
  }
  if (config.validateStatus && !config.validateStatus(paid.status)) {
    const code = paid.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST;
    throw new AxiosError(`Request failed with status code ${paid.status}`, code, config, paid.request, paid);
  }
  return paid;
}

/** Outside a browser: redirects followed hop by hop with the shared rules (the payment stays on its origin). */
async function follow(send: AxiosAdapter, config: Config, guarded: string[]): Promise<AxiosResponse> {
  const hops: Record<string, string> = {};
  for (let count = 0; ; count++) {
    const response = await send({ ...config, maxRedirects: 0 });
    const location = headerOf(response.headers, "location");
    if (config.maxRedirects === 0 || !location || !REDIRECT_STATUSES.includes(response.status)) {
      if (count > 0) redirectedAnswers.add(response), hopSettlements.set(response, hops);
      return response;
    }
    (response.data as { destroy?: () => void } | undefined)?.destroy?.();
    if (count >= (config.maxRedirects ?? 21)) throw new TypeError("Maximum number of redirects exceeded");
    const settled = SETTLEMENT_HEADERS.filter((name) => headerOf(response.headers, name));
    for (const name of settled) hops[name] = headerOf(response.headers, name)!;
    const hop = redirectHop({ url: config.url!, method: config.method! }, response.status, location, guarded, settled.length > 0);
    const headers = new AxiosHeaders(config.headers);
    for (const name of hop.dropHeaders) headers.delete(name);
    config = { ...config, url: hop.url, method: hop.method, headers, data: hop.dropBody ? undefined : config.data };
  }
}

/**
 * In a browser XHR follows redirects anywhere with every header. The paid request goes through
 * axios's fetch adapter instead: same-origin with the page, the browser follows same-origin redirects
 * and fails any other before sending; elsewhere it does not follow at all.
 */
// Stryker disable all: browser-only; test/browser (Chromium) covers it, which Stryker cannot run.
async function fromPage(send: AxiosAdapter, config: Config, page: string, guarded: string[]): Promise<AxiosResponse> {
  const sameOrigin = new URL(config.url!).origin === page;
  const options = withTracking(sameOrigin ? { ...config, fetchOptions: { ...config.fetchOptions, mode: "same-origin" } } : { ...config, maxRedirects: 0 });
  // A custom adapter is the caller's; axios's own go through its fetch adapter.
  const builtIn = (send as { adapterName?: string }).adapterName === "xhr" || isFetchAdapter(send, config);
  let response: AxiosResponse;
  try {
    response = await (builtIn ? getAdapter("fetch", options) : send)(options);
  } catch (error) {
    if (!sameOrigin && !config.signal?.aborted) await throwIfPreflightRefused(options.env!.fetch!, config.url!, guarded, error);
    throw error;
  }
  if (response.status === 0) throw new TypeError("The paid request was redirected where the browser does not show: not followed.");
  return response;
}
// Stryker restore all

/** Answers (or the fetch Requests behind them) that came after redirects, and where those redirects led. */
const redirectedAnswers = new WeakSet<object>();
const finalUrls = new WeakMap<object, string>();
/** Settlement headers of the redirect answers that came before an answer `follow` returned, by that answer. */
const hopSettlements = new WeakMap<object, Record<string, string>>();
type Fetch = typeof globalThis.fetch;
// One tracking fetch per fetch: axios caches its fetch adapter per function, so a new one per request would grow its cache.
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
