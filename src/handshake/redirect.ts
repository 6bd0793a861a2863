/**
 * Redirects of requests x402-pay sends again (the paid retry, a sign-in): the fetch standard's rules
 * for method and body, plus x402-pay's for headers. Shared by every adapter that follows by hand.
 */
import { SETTLEMENT_HEADERS } from "../protocol";

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

/** Headers the handshake added (a payment, a sign-in proof), and whether a hop reported a settlement. */
export interface Guard {
  readonly guarded?: readonly string[] | undefined;
  readonly settled?: boolean | undefined;
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
  { guarded = [], settled = false }: Guard = {},
): RedirectHop {
  const next = new URL(location, from.url);
  if (!/^https?:$/.test(next.protocol)) {
    throw new TypeError(`fetch failed: a redirect to a ${next.protocol} URL is not followed`);
  }
  const crossOrigin = next.origin !== new URL(from.url).origin;
  const toGet =
    (status === 303 && from.method !== "HEAD") || ((status === 301 || status === 302) && from.method === "POST");
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

/** A request as sent to one URL, as far as the redirect loop reads it (each library's own type beyond). */
export interface SentTo {
  readonly url: string;
  readonly method: string;
}

/** How the redirect loop sends with one HTTP library: `R` is its answer, `S` its request as sent to one URL. */
export interface Hops<R, S extends SentTo> {
  /** Sends `sent` once, redirects not followed (the library's manual mode). */
  send(sent: S): Promise<R>;
  status(response: R): number;
  header(response: R, name: string): string | null | undefined;
  /** Releases a redirect answer the caller never sees. */
  discard(response: R): void;
  /** `sent` as it goes on to `hop`: its URL and method, without the headers and body it drops. */
  next(sent: S, hop: RedirectHop): S;
  /** Awaited before each send after the first (fetch's wait for the connection to be free). */
  beforeHop?(): Promise<void> | undefined;
}

/** How far redirects are followed: the library's own setting, translated. */
export interface RedirectRules {
  /** `false`: the first answer is returned, a redirect or not (fetch's `manual`, axios's `maxRedirects: 0`). */
  readonly follow: boolean;
  /** Redirects followed at most; one more fails with a `TypeError` saying `tooMany`. */
  readonly limit: number;
  readonly tooMany: string;
  /** Headers the handshake added (a payment): kept on their origin, and dropped after a hop reported a settlement. */
  readonly guarded: readonly string[];
}

export interface Followed<R, S> {
  readonly response: R;
  /** The request as sent to the URL that gave `response`. */
  readonly sent: S;
  /** `response` came after redirects. */
  readonly redirected: boolean;
  /** Settlement headers the redirect answers on the way reported (the caller never sees those answers). */
  readonly settled: Record<string, string>;
}

/**
 * Sends `start` and follows its redirects by hand, hop by hop, with the shared rules (`redirectHop`),
 * so the request is known as it was when a 402 came, and a payment never crosses to another origin nor
 * goes on after a hop that reported a settlement. Used outside a browser, whose fetch hides redirects.
 */
export async function followRedirects<R, S extends SentTo>(
  http: Hops<R, S>,
  start: S,
  rules: RedirectRules,
): Promise<Followed<R, S>> {
  const settled: Record<string, string> = {};
  let sent = start;
  for (let count = 0; ; count++) {
    if (count > 0) await http.beforeHop?.();
    const response = await http.send(sent);
    const status = http.status(response);
    const location = http.header(response, "location");
    if (!rules.follow || !location || !REDIRECT_STATUSES.includes(status)) {
      return { response, sent, redirected: count > 0, settled };
    }
    http.discard(response);
    if (count >= rules.limit) throw new TypeError(rules.tooMany);
    let reported = false;
    for (const name of SETTLEMENT_HEADERS) {
      const value = http.header(response, name);
      if (value == null) continue;
      settled[name] = value;
      reported = true;
    }
    sent = http.next(sent, redirectHop(sent, status, location, { guarded: rules.guarded, settled: reported }));
  }
}
