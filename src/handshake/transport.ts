/** What the handshake needs of an HTTP library (or an MCP tool call): adapters supply one per request. */
import type { X402Request } from "../contracts";

/** How the handshake talks to an HTTP library. `R` is that library's response type. */
export interface Transport<R> {
  /** The request as it was when the 402 came (URL, method), with the caller's signal. */
  readonly request: X402Request;
  /**
   * Only a payment travels this way (an MCP tool call): no extension tries instead of paying (a sign-in), and no quote
   * is cached.
   */
  readonly paymentOnly?: boolean | undefined;
  /** Why the request cannot be sent again exactly (a stream body), if it cannot: refused before anything is signed. */
  readonly notReplayable?: string | undefined;
  /** A header of the request as the caller sent it. */
  requestHeader(name: string): string | null | undefined;
  /**
   * Sends the request again (method, URL, headers, body bytes) with `headers` added. The added
   * headers never go to another origin on a redirect, nor again once a redirect answer reported a
   * settlement. Throw `PaymentNotSentError` when the request certainly did not leave, and
   * `PaymentAbortedError` when the caller's signal fired before it left.
   */
  resend(headers: Record<string, string>): Promise<R>;
  status(response: R): number;
  header(response: R, name: string): string | null | undefined;
  /** Did this answer come after redirects (hops that may have settled the payment without a word)? */
  redirected(response: R): boolean;
  /** The raw body of a 402: text, bytes, a stream, or parsed JSON (read bounded by the handshake). */
  body(response: R): unknown;
  /** Releases a response the caller will never see. */
  discard(response: R): void;
}
