/** Both wrappers behind one small interface, so a behaviour can be checked through each (describe.each). */
import axios, { type AxiosResponse } from "axios";
import type { PaymentRequestOptions, X402Client } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import { wrapFetchWithPayment } from "../../src/fetch";

export { rejection } from "./throws";

export interface Reply {
  readonly status: number;
  header(name: string): string | null;
  readonly text: string;
  /** The wrapper's own response object (a `Response` or an `AxiosResponse`): the key for getPaymentReceipt. */
  readonly raw: object;
}

export interface Outgoing {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** axios only: the adapter to use (default: axios's choice, the Node http adapter here). */
  axiosAdapter?: "fetch" | "http";
  /** x402-pay's per-request options (fetch's `init.x402`, axios's `config.x402`). */
  x402?: PaymentRequestOptions;
}

export interface Wrapper {
  readonly name: "fetch" | "axios";
  send(client: X402Client, request: Outgoing): Promise<Reply>;
}

/** A paying fetch over msw's (looked up at call time: msw patches globalThis.fetch in server.listen()). */
export const paidFetch = (client: X402Client) =>
  wrapFetchWithPayment((input, init) => globalThis.fetch(input, init), client);

/** A paying axios instance. */
export const paidAxios = (client: X402Client) => wrapAxiosWithPayment(axios.create(), client);

export const fetchWrapper: Wrapper = {
  name: "fetch",
  async send(client, request) {
    // msw patches globalThis.fetch in server.listen(): look it up at call time.
    const paidFetch = wrapFetchWithPayment((input, init) => globalThis.fetch(input, init), client);
    const response = await paidFetch(request.url, {
      method: request.method ?? "GET",
      headers: request.headers,
      body: request.body,
      ...(request.x402 && { x402: request.x402 }),
      ...(request.signal && { signal: request.signal }),
    });
    const text = await response.clone().text();
    return { status: response.status, header: (name) => response.headers.get(name), text, raw: response };
  },
};

export const axiosWrapper: Wrapper = {
  name: "axios",
  async send(client, request) {
    const instance = wrapAxiosWithPayment(axios.create(), client);
    const response: AxiosResponse = await instance.request({
      url: request.url,
      method: request.method ?? "GET",
      headers: request.headers,
      data: request.body,
      ...(request.axiosAdapter ? { adapter: request.axiosAdapter } : {}),
      ...(request.x402 && { x402: request.x402 }),
      ...(request.signal && { signal: request.signal }),
    });
    const text = typeof response.data === "string" ? response.data : JSON.stringify(response.data);
    return {
      status: response.status,
      header: (name) => {
        const value = response.headers[name.toLowerCase()];
        return value === undefined || value === null ? null : String(value);
      },
      text,
      raw: response,
    };
  },
};

export const wrappers: readonly Wrapper[] = [fetchWrapper, axiosWrapper];
