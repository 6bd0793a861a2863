/** `wrapAxiosWithPayment`: adds an interceptor that pays a 402 once and retries the same request. */
import { AxiosError, AxiosHeaders, type AxiosInstance, type AxiosResponse, type InternalAxiosRequestConfig } from "axios";
import type { X402Client } from "../client";
import { BodyNotReplayableError } from "../errors";
import { handlePaymentRequired, type Transport } from "../handshake";
import { SETTLEMENT_HEADERS } from "../protocol";

const RETRY_FLAG = "x402PaidRetry";
/** Marks the paid retry; receives its response before any later interceptor can reshape it. */
type Config = InternalAxiosRequestConfig & { [RETRY_FLAG]?: (response: AxiosResponse) => void };

/**
 * Installs the payment interceptor on an axios instance and returns the instance. Works with the
 * default `validateStatus` and with one that accepts 402.
 */
export function wrapAxiosWithPayment<T extends AxiosInstance>(instance: T, client: X402Client): T {
  const isUnpaid402 = (response: AxiosResponse | undefined): response is AxiosResponse =>
    response?.status === 402 && !(response.config as Config | undefined)?.[RETRY_FLAG];
  instance.interceptors.response.use(
    (response) => {
      (response.config as Config | undefined)?.[RETRY_FLAG]?.(response);
      return isUnpaid402(response) ? pay(instance, client, response) : response;
    },
    (error: unknown) => {
      const response = (error as { response?: AxiosResponse } | null)?.response;
      return isUnpaid402(response) ? pay(instance, client, response) : Promise.reject(error);
    },
  );
  return instance;
}

async function pay(instance: AxiosInstance, client: X402Client, response: AxiosResponse): Promise<AxiosResponse> {
  const config = response.config as Config;
  if (isStream(config.data)) {
    throw new BodyNotReplayableError("The request body is a stream, which axios cannot send twice, so the 402 cannot be paid.", {
      hint: "Send the body as a string, Buffer, ArrayBuffer or FormData instead.",
    });
  }
  const url = absoluteUrl(instance.getUri(config));
  let paid: AxiosResponse | undefined;
  // Settlement headers of a redirect answer to the paid request, which the caller never sees.
  const hops: Record<string, string> = {};
  const transport: Transport<AxiosResponse> = {
    request: { url, method: (config.method ?? "get").toUpperCase() },
    requestHeader: (name) => headerOf(config.headers, name),
    // The retry runs through the instance's interceptors; keep the response as this interceptor saw it,
    // so one added later (e.g. `r => r.data`) reshapes the paid response once, in the caller's chain.
    resend: async (extra) => {
      let raw: AxiosResponse | undefined;
      const result = await instance.request({
        ...config,
        headers: AxiosHeaders.from(config.headers).set(extra),
        validateStatus: () => true,
        beforeRedirect: keepPaymentToOrigin(url, Object.keys(extra), hops, config.beforeRedirect),
        [RETRY_FLAG]: (response: AxiosResponse) => (raw ??= response),
      } as Config);
      return (paid = raw ?? result);
    },
    status: (r) => r.status,
    header: (r, name) => headerOf(r.headers, name) ?? (r === paid ? hops[name] : undefined),
    body: (r) => readBody(r.data),
  };
  try {
    paid = await handlePaymentRequired(client, transport, response);
  } finally {
    if (isStream(response.data)) (response.data as { destroy?: () => void }).destroy?.();
  }
  if (config.validateStatus && !config.validateStatus(paid.status)) {
    const code = paid.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST;
    throw new AxiosError(`Request failed with status code ${paid.status}`, code, paid.config, paid.request, paid);
  }
  return paid;
}

/**
 * Node only (axios follows redirects itself): drop payment headers on a hop to another origin or
 * after a settlement, and keep that settlement in `hops` for the receipt.
 */
function keepPaymentToOrigin(
  url: string,
  names: string[],
  hops: Record<string, string>,
  next: Config["beforeRedirect"],
): NonNullable<Config["beforeRedirect"]> {
  const origin = new URL(url).origin;
  return (options, details, request) => {
    const target = options.href ? new URL(String(options.href)).origin : `${String(options.protocol)}//${String(options.host)}`;
    const settled = SETTLEMENT_HEADERS.filter((name) => typeof details.headers?.[name.toLowerCase()] === "string");
    for (const name of settled) hops[name] = details.headers[name.toLowerCase()] as string;
    if (target !== origin || settled.length) {
      const headers = (options.headers ?? {}) as Record<string, unknown>;
      for (const key of Object.keys(headers)) if (names.some((n) => n.toLowerCase() === key.toLowerCase())) delete headers[key];
    }
    next?.(options, details, request);
  };
}

function headerOf(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined;
  const h = headers as { get?: (n: string) => unknown } & Record<string, unknown>;
  const value = typeof h.get === "function" ? h.get(name) : (h[name] ?? h[name.toLowerCase()]);
  return typeof value === "string" ? value : undefined;
}

/** A 402 body as text or parsed JSON: buffers are decoded, streams (`responseType: "stream"`) read. */
async function readBody(data: unknown): Promise<unknown> {
  if (typeof ReadableStream !== "undefined" && data instanceof ReadableStream) return new Response(data).text();
  if (isStream(data)) {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of data as AsyncIterable<Uint8Array | string>) text += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    return text + decoder.decode();
  }
  return data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? new TextDecoder().decode(data) : data;
}

function isStream(data: unknown): boolean {
  return (
    !!data &&
    typeof data === "object" &&
    (typeof (data as { pipe?: unknown }).pipe === "function" ||
      (typeof ReadableStream !== "undefined" && data instanceof ReadableStream))
  );
}

function absoluteUrl(uri: string): string {
  const base = (globalThis as { location?: { href?: string } }).location?.href;
  return new URL(uri, base).href;
}
