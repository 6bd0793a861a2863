/**
 * Redirects of requests x402-pay sends again (the paid retry, a sign-in): the fetch standard's rules
 * for method and body, plus x402-pay's for headers. Shared by every adapter that follows by hand.
 */

/** Sent only to the origin they were meant for (curl and Node's own clients drop them the same way). */
const CREDENTIALS = ["authorization", "cookie", "proxy-authorization"];
const BODY_HEADERS = ["content-type", "content-length", "content-encoding", "content-language", "content-location"];
export const REDIRECT_STATUSES = [301, 302, 303, 307, 308];

export interface RedirectHop {
  readonly url: string;
  readonly method: string;
  /** The body is not sent on (a 303, or a 301/302 of a POST, turns the request into a GET). */
  readonly dropBody: boolean;
  /** Header names (lower case) not to send to the next hop. */
  readonly dropHeaders: readonly string[];
}

/**
 * Where and how a request goes after a redirect answer. `guarded` headers (a payment, a sign-in
 * proof) never cross to another origin, and never follow once a hop reported a settlement (`settled`):
 * the payment is done and must not be presented again. Throws a `TypeError`, as fetch does, for a
 * target that is not HTTP(S) (`data:`, `file:` ...).
 */
export function redirectHop(
  from: { readonly url: string; readonly method: string },
  status: number,
  location: string,
  guarded: readonly string[],
  settled: boolean,
): RedirectHop {
  const next = new URL(location, from.url);
  if (!/^https?:$/.test(next.protocol)) {
    throw new TypeError(`fetch failed: a redirect to a ${next.protocol} URL is not followed`);
  }
  const crossOrigin = next.origin !== new URL(from.url).origin;
  const toGet = (status === 303 && from.method !== "HEAD") || ((status === 301 || status === 302) && from.method === "POST");
  return {
    url: next.href,
    method: toGet ? "GET" : from.method,
    dropBody: toGet,
    dropHeaders: [
      ...(crossOrigin || settled ? guarded.map((name) => name.toLowerCase()) : []),
      ...(crossOrigin ? CREDENTIALS : []),
      ...(toGet ? BODY_HEADERS : []),
    ],
  };
}

