/** Sign-in-with-x's "paid before" memory in Redis, shared by every process that uses it. */
import type { SignInStore } from "../contracts";
import { show } from "../contracts";
import { bounded, checkName, checkStoreOptions, DEFAULT_TIMEOUT_MS, type RedisClientLike } from "./client";

export interface RedisSignInStoreOptions {
  /** Starts every key (`<prefix><origin><path> <payer>`). Default `"x402:siwx:"`. */
  prefix?: string | undefined;
  /** Forget a route this many seconds after it was paid. Default: never. */
  ttlSeconds?: number | undefined;
  /** How long a call may take before it fails (a failed read counts as "not paid": the request pays). Default 2000. */
  timeoutMs?: number | undefined;
}

/** A `SignInStore` for `signInWithX({ evm, store })` in Redis: GET and SET under a prefix. */
export function redisSignInStore(redis: RedisClientLike, options: RedisSignInStoreOptions = {}): SignInStore {
  checkStoreOptions("redisSignInStore", redis, options, {
    methods: ["get", "set"],
    checks: {
      prefix: checkName,
      ttlSeconds: (value) =>
        Number.isSafeInteger(value) && value > 0
          ? undefined
          : `${show(value)} is not a whole number of seconds above 0`,
    },
  });
  const { prefix = "x402:siwx:", ttlSeconds, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  const expiry = ttlSeconds === undefined ? undefined : { expiration: { type: "EX" as const, value: ttlSeconds } };
  return {
    async get(key) {
      const value = await bounded(redis, timeoutMs, "a sign-in read", () => redis.get(prefix + key));
      return value === null || value === undefined ? null : String(value);
    },
    async set(key, value) {
      await bounded(redis, timeoutMs, "a sign-in write", () => redis.set(prefix + key, value, expiry));
    },
  };
}
