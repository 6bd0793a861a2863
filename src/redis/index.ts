/**
 * `x402-pay/redis` (Node): budgets and the receipts ledger in Redis, shared by every process and
 * machine that uses it. Give each a connected node-redis client.
 */
export { redisBudgetStore, type RedisBudgetStoreOptions } from "./budget";
export { redisLedger, type RedisLedgerOptions } from "./ledger";
export type { RedisClientLike } from "./client";
