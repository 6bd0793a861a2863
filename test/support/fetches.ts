/** A fetch stand-in that passes every call on and records what it was called with and what came back. */

/** One call: the request as sent (headers included) and, once it came, the response. */
export interface RecordedCall {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  /** `PAYMENT-SIGNATURE` (v2) or `X-PAYMENT` (v1), when the request carried one. */
  readonly paymentHeader: string | null;
  response?: Response;
}

/**
 * Records each call, then passes it to `next` (default: `globalThis.fetch` looked up at call time,
 * so msw's patched fetch is used where a test started msw).
 */
export function recordingFetch(next: typeof fetch = (input, init) => globalThis.fetch(input, init)) {
  const calls: RecordedCall[] = [];
  /** The responses received, in order. */
  const responses: Response[] = [];
  /** The payment headers sent, in order. */
  const paymentHeaders: string[] = [];
  const fetchFn: typeof fetch = async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const headers = new Headers(init?.headers ?? request?.headers);
    const call: RecordedCall = {
      url: request ? request.url : String(input),
      method: init?.method ?? request?.method ?? "GET",
      headers,
      paymentHeader: headers.get("payment-signature") ?? headers.get("x-payment"),
    };
    calls.push(call);
    if (call.paymentHeader) paymentHeaders.push(call.paymentHeader);
    call.response = await next(input, init);
    responses.push(call.response);
    return call.response;
  };
  return { fetch: fetchFn, calls, responses, paymentHeaders };
}
