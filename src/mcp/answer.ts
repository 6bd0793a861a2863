/** What a tool call came back with, read for paying: the challenge it carries, the settlement it reports. */
import { isObject } from "../protocol";
import { MCP_PAYMENT_REQUIRED_CODE, MCP_PAYMENT_RESPONSE_META_KEY } from "./options";

/** What a tool call came back with: its result, or the JSON-RPC payment-required error (other errors are thrown). */
export type Answer = object;
const jsonRpcError = Symbol("x402-pay.mcp.error");

export async function answerOf(call: () => Promise<object>): Promise<Answer> {
  try {
    return await call();
  } catch (error) {
    const answer = paymentRequiredError(error);
    if (answer) return answer;
    throw error;
  }
}

/** A JSON-RPC error that is x402's payment-required form, as an answer (its challenge in `data`); else `undefined`. */
export function paymentRequiredError(error: unknown): Answer | undefined {
  const { code, data } = Object(error) as { code?: unknown; data?: unknown };
  return code === MCP_PAYMENT_REQUIRED_CODE && isChallenge(data) ? { [jsonRpcError]: error, data } : undefined;
}

/** The result as the caller gets it; the JSON-RPC error form is thrown as it came. */
export function unwrap(answer: Answer): object {
  if (jsonRpcError in answer) throw (answer as Record<symbol, unknown>)[jsonRpcError];
  return answer;
}

const challenges = new WeakMap<object, Record<string, unknown> | null>();

/**
 * The payment-required challenge an answer carries, or `undefined`: a tool result with `isError: true`
 * whose `structuredContent`, or else the JSON of its first text content (also as v1's
 * `{ "x402/error": { data } }`), is a PaymentRequired with payment options; or the JSON-RPC 402 error's data.
 */
export function challengeIn(answer: Answer): Record<string, unknown> | undefined {
  let found = challenges.get(answer);
  if (found === undefined) {
    found = null;
    const r = answer as Record<PropertyKey, unknown>;
    if (jsonRpcError in r) found = r.data as Record<string, unknown>;
    else if (r.isError === true) {
      const first = Array.isArray(r.content)
        ? (r.content[0] as { type?: unknown; text?: unknown } | undefined)
        : undefined;
      const text =
        first?.type === "text" && typeof first.text === "string" && first.text.length <= 1024 * 1024
          ? parseJson(first.text)
          : undefined;
      const wrapped = isObject(text) && isObject(text["x402/error"]) ? text["x402/error"].data : undefined;
      found = [r.structuredContent, text, wrapped].find(isChallenge) ?? null;
    }
    challenges.set(answer, found);
  }
  return found ?? undefined;
}

const isChallenge = (value: unknown): value is Record<string, unknown> =>
  isObject(value) &&
  (value.x402Version === 1 || value.x402Version === 2) &&
  Array.isArray(value.accepts) &&
  value.accepts.length > 0;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The settlement an answer reports: `_meta["x402/payment-response"]`, else the one a failed settlement's challenge
 * carries.
 */
export function settlementIn(answer: Answer): unknown {
  const meta = (answer as { _meta?: unknown })._meta;
  if (isObject(meta) && meta[MCP_PAYMENT_RESPONSE_META_KEY] !== undefined) return meta[MCP_PAYMENT_RESPONSE_META_KEY];
  return challengeIn(answer)?.[MCP_PAYMENT_RESPONSE_META_KEY];
}
