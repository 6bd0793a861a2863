/**
 * What the model reads back: the answer's status, type and body (bounded, text or JSON, binary described), what was
 * paid, or a failure as a code and a sentence it can act on. Never key material, never a signed payment header.
 */
import type { PaymentReceipt } from "../contracts";
import { MONEY_MAY_HAVE_MOVED, clip, isX402Error, redactSecrets } from "../errors";
import { readUpTo } from "../io";
import { formatUnits, type KnownAsset } from "../protocol";

/** The tool's answer, the same in every framework. */
export interface PaidFetchAnswer {
  /** true when the request was answered 2xx. */
  readonly ok: boolean;
  /** The HTTP status, when there was an answer. */
  readonly status?: number | undefined;
  readonly contentType?: string | undefined;
  /** The body: parsed JSON when it is JSON and whole, else text; absent for a binary body or none. */
  readonly body?: unknown;
  /** Where a redirect points: not followed where the client's policy names the origins the model may reach. */
  readonly location?: string | undefined;
  /** What the model should know of the body: cut short, binary, empty. */
  readonly bodyNote?: string | undefined;
  /** What was paid, as a sentence: `"0.001 USDC on eip155:84532 (transaction 0x…)"`, or `"nothing"`. */
  readonly paid: string;
  /** Why the request failed: an x402-pay error code (`BUDGET_EXCEEDED`) or the tool's own, and what happened. */
  readonly error?: { readonly code: string; readonly message: string } | undefined;
}

/** Longest time a body is read. */
const READ_MS = 30_000;

/** An answer to a request the tool refused before sending anything. */
export const refusedAnswer = (code: string, message: string): PaidFetchAnswer => ({
  ok: false,
  paid: "nothing",
  error: { code, message },
});

/** A thrown error as the model's answer; an abort is not an answer (the framework's run was cancelled): rethrown. */
export function errorAnswer(error: unknown, signal: AbortSignal | undefined): PaidFetchAnswer {
  if (signal?.aborted || (isX402Error(error) && error.code === "ABORTED")) throw error;
  if (!isX402Error(error)) {
    // Not x402-pay's: the HTTP library's (the seller is down, the name does not resolve). Nothing was paid.
    const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
    const said = error instanceof Error ? error.message : String(error);
    const code = typeof cause === "string" ? ` (${redactSecrets(cause)})` : "";
    const message = `The request failed: ${clip(redactSecrets(said), 300)}${code}.`;
    return refusedAnswer("REQUEST_FAILED", message);
  }
  const moved = MONEY_MAY_HAVE_MOVED.includes(error.code);
  const details = error.details as { transaction?: unknown; network?: unknown } | undefined;
  const transaction = typeof details?.transaction === "string" && details.transaction ? details.transaction : undefined;
  const message = redactSecrets(error.message);
  return {
    ok: false,
    paid: moved
      ? `unknown: the payment may have moved money${transaction ? ` (transaction ${transaction})` : ""}; ` +
        "do not pay for this again until it is known"
      : "nothing",
    error: { code: error.code, message },
  };
}

/** Bounds of what the model reads. */
export interface Bounds {
  readonly maxBytes: number;
  readonly maxChars: number;
}

/** A response as the model's answer: its body read bounded (never past `maxBytes`), and what was paid for it. */
export async function responseAnswer(
  response: Response,
  {
    receipt,
    asset,
    bounds,
    signal,
  }: {
    receipt: PaymentReceipt | undefined;
    asset: KnownAsset | undefined;
    bounds: Bounds;
    signal: AbortSignal | undefined;
  },
): Promise<PaidFetchAnswer> {
  const contentType = response.headers.get("content-type") ?? undefined;
  const location = locationOf(response);
  const head = {
    ok: response.ok,
    status: response.status,
    ...(contentType && { contentType }),
    ...(location && { location }),
    paid: paidOf(receipt, asset),
  };
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (!response.body) return { ...head, bodyNote: "no body" };
  if (!isText(contentType)) {
    void response.body.cancel().catch(() => {});
    const size = Number.isFinite(declared) ? `, ${declared} bytes` : "";
    return { ...head, bodyNote: `a binary body (${contentType ?? "no content type"}${size}), not shown` };
  }
  const { bytes, cut } = await readUpTo(response.body, { maxBytes: bounds.maxBytes, timeoutMs: READ_MS, signal });
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: !cut }).decode(bytes);
  } catch {
    return { ...head, bodyNote: `a body that is not UTF-8 text (${bytes.length} bytes), not shown` };
  }
  if (cut) text = text.replace(/\uFFFD$/, "");
  if (text.length === 0) return { ...head, bodyNote: "an empty body" };
  if (!cut && isJson(contentType)) {
    try {
      const value: unknown = JSON.parse(text);
      if (JSON.stringify(value).length <= bounds.maxChars) return { ...head, body: value };
    } catch {
      // Said to be JSON, and it is not: shown as the text it is.
    }
  }
  if (!cut && text.length <= bounds.maxChars) return { ...head, body: text };
  const shown = text.slice(0, bounds.maxChars);
  const total = cut ? `more than ${bytes.length} bytes` : `${text.length} characters`;
  return { ...head, body: shown, bodyNote: `cut short: the first ${shown.length} characters of ${total}` };
}

/** What a receipt says was paid, as a sentence. */
export function paidOf(receipt: PaymentReceipt | undefined, asset: KnownAsset | undefined): string {
  if (!receipt) return "nothing";
  const amount = receipt.settledAmount ?? receipt.amount;
  const shown = asset
    ? `${receipt.settledAmount === undefined && receipt.upTo ? "up to " : ""}` +
      `${formatUnits(BigInt(amount), asset.decimals)} ${asset.symbol}`
    : `${amount} base units of ${receipt.asset}`;
  const where = `${shown} on ${receipt.network}${receipt.transaction ? ` (transaction ${receipt.transaction})` : ""}`;
  if (receipt.pending) return `${where}, pending: the transaction is not yet confirmed`;
  if (!receipt.settled) return `${where}, signed; the seller did not say it settled: the payment may have moved money`;
  return where;
}

/** Where a redirect answer points, resolved against the URL it answered (a browser hides it: none). */
function locationOf(response: Response): string | undefined {
  const location = response.status >= 300 && response.status < 400 ? response.headers.get("location") : null;
  if (!location) return undefined;
  try {
    return new URL(location, response.url || undefined).href;
  } catch {
    return undefined;
  }
}

const isJson = (type: string | undefined) => !!type && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type);
/** Text a model can read: text/*, JSON, XML, JavaScript, form data; no type is read as text (and checked as UTF-8). */
const isText = (type: string | undefined) =>
  !type ||
  /^text\//i.test(type) ||
  isJson(type) ||
  /^application\/(?:[\w.+-]+\+)?xml\b|^application\/(?:javascript|ecmascript|x-www-form-urlencoded|graphql)\b/i.test(
    type,
  );
