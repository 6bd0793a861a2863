/**
 * `x402-pay/redis` (Node): budgets, the receipts ledger, sign-in's "paid before" memory, batch-settlement
 * channels and the payment journal in Redis, shared by every process and machine that uses it. Give each a
 * connected node-redis client.
 */
export { redisBudgetStore, type RedisBudgetStoreOptions } from "./budget";
export { redisLedger, type RedisLedgerOptions } from "./ledger";
export { redisSignInStore, type RedisSignInStoreOptions } from "./siwx";
export type { RedisClientLike } from "./client";
export { redisChannelStore, type RedisChannelStoreOptions } from "./channels";
export { redisJournalStore, type RedisJournalStoreOptions } from "./journal";
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../entries/types";
