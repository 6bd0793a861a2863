/**
 * `x402-pay/redis` (Node): budgets in Redis, shared by every process and machine that uses it.
 * Give it a connected node-redis client.
 */
export { redisBudgetStore, type RedisBudgetStoreOptions } from "./budget";
export type { RedisClientLike } from "./client";
