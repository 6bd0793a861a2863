/** What `x402-pay/redis` asks of a Redis client, and every call bounded in time. */
import { sha1 } from "@noble/hashes/legacy.js";
import { checkOptions, fail, show, type Check } from "../contracts";
import { bytesToHex, utf8 } from "../protocol";

/**
 * The node-redis calls these stores make: a connected `createClient()` or `createCluster()` from the
 * `redis` package (v6) fits. Each store needs only its own few.
 */
export interface RedisClientLike {
  /** node-redis: `false` while (re)connecting. A call then fails at once rather than waiting in its offline queue. */
  readonly isReady?: boolean;
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  get(key: string): Promise<unknown>;
  set(key: string, value: string, options?: { expiration: { type: "EX"; value: number } }): Promise<unknown>;
  xAdd(key: string, id: string, message: Record<string, string>): Promise<unknown>;
  xRange(key: string, start: string, end: string, options: { COUNT: number }): Promise<unknown>;
}

/** How long a call may take before it fails, by default. */
export const DEFAULT_TIMEOUT_MS = 2000;

const MAX_TIMEOUT_MS = 2_147_483_647;

/** Checks a store's client and options (`InvalidConfigError` naming the option); the client must have `methods`. */
export function checkStoreOptions(
  store: string,
  redis: unknown,
  options: object,
  { methods, checks }: { methods: readonly (keyof RedisClientLike)[]; checks: Readonly<Record<string, Check>> },
): void {
  const missing = methods.filter((method) => typeof (redis as Record<string, unknown> | null)?.[method] !== "function");
  if (missing.length > 0)
    fail(
      `${store}.redis`,
      `must be a connected node-redis client (createClient() or createCluster() of the redis package), lacking ` +
        `${missing.join(", ")}`,
    );
  if (typeof options !== "object" || options === null) fail(store, "options must be an object");
  checkOptions(`${store}.`, options, { timeoutMs: checkTimeout, ...checks });
}

const checkTimeout = (value: unknown) =>
  Number.isSafeInteger(value) && (value as number) > 0 && (value as number) <= MAX_TIMEOUT_MS
    ? undefined
    : `${show(value)} is not a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`;

/** A key prefix or name: a non-empty string. */
export const checkName = (value: unknown) =>
  typeof value === "string" && value.length > 0 ? undefined : `${show(value)} is not a non-empty string`;

/** A Lua script's keys and arguments. */
export interface ScriptCall {
  keys: string[];
  arguments: string[];
}

/**
 * A Lua script, run by its SHA-1 (`EVALSHA`: the script's text is sent only when this Redis has not seen it yet,
 * answering `NOSCRIPT`, after a restart too).
 */
export function script(redis: Pick<RedisClientLike, "evalSha" | "eval">, text: string) {
  const sha = bytesToHex(sha1(utf8.encode(text))).slice(2);
  return async (call: ScriptCall): Promise<unknown> => {
    try {
      return await redis.evalSha(sha, call);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
      return redis.eval(text, call);
    }
  };
}

/**
 * Runs one call, failing at once if the client is not connected and with a `TimeoutError` if no
 * answer comes within `timeoutMs`: a store never hangs its caller.
 */
export async function bounded<T>(
  redis: Pick<RedisClientLike, "isReady">,
  timeoutMs: number,
  what: string,
  call: () => Promise<T>,
): Promise<T> {
  if (redis.isReady === false) throw new Error(`Redis is not connected: ${what} was not sent.`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DOMException(`Redis did not answer ${what} within ${timeoutMs} ms.`, "TimeoutError")),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([call(), late]);
  } finally {
    clearTimeout(timer);
  }
}
