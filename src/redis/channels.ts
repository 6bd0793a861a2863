/**
 * Batch-settlement channels in Redis, shared by every process that uses them: a lock per channel that a crashed
 * process cannot keep (it expires unless its holder renews it), waiters served in arrival order, and a state that
 * only the lock's holder can write (a compare-and-set on the lock's token, in one script).
 */
import { randomBytes } from "node:crypto";
import {
  backoff,
  channelLines,
  channelStateFrom,
  channelStateJson,
  checkChannelId,
  pause,
  type ChannelHold,
  type ChannelState,
  type ChannelStore,
} from "../contracts";
import { bounded, checkName, checkStoreOptions, DEFAULT_TIMEOUT_MS, script, type RedisClientLike } from "./client";

export interface RedisChannelStoreOptions {
  /** Starts every key: `<prefix>{<channel id>}` holds the state, `…:lock` the lock. Default `"x402:channel:"`. */
  prefix?: string | undefined;
  /**
   * How long a lock outlives its last renewal: a holder renews it every third of this while it holds the channel,
   * so this is how long a crashed holder keeps others waiting. Default 10000.
   */
  lockTtlMs?: number | undefined;
  /** How long a call may take before it fails. Default 2000. */
  timeoutMs?: number | undefined;
}

/**
 * KEYS: the state, the lock, the waiters in arrival order (a sorted set), each waiter's deadline (a sorted set), the
 * arrival counter; all under one hash tag (one Cluster slot). ARGV: operation, token, lock ms, waiter ms, state JSON.
 * `acquire` queues the token (or keeps it in place) and takes the lock if it is free and the token is first of the
 * waiters still alive (a waiter that stopped asking for longer than its ms is dropped); `renew` and `save` act only
 * for the lock's holder (`save` also renews); `release` lets the lock go if it is the token's, and leaves the queue.
 * Replies 1 (done) or 0 (not: the lock is another's, or none's).
 */
const SCRIPT = `
local state, lock, queue, beats, seq = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local op, token, ttl, wait = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
if op == 'acquire' then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', beats, '-inf', now)) do redis.call('ZREM', queue, gone) end
  redis.call('ZREMRANGEBYSCORE', beats, '-inf', now)
  if not redis.call('ZSCORE', queue, token) then redis.call('ZADD', queue, redis.call('INCR', seq), token) end
  redis.call('ZADD', beats, now + wait, token)
  for _, key in ipairs({queue, beats, seq}) do redis.call('PEXPIRE', key, 2 * wait) end
  if redis.call('EXISTS', lock) == 0 and redis.call('ZRANGE', queue, 0, 0)[1] == token then
    redis.call('SET', lock, token, 'PX', ttl)
    redis.call('ZREM', queue, token)
    redis.call('ZREM', beats, token)
    return 1
  end
  return 0
end
if op == 'release' then
  redis.call('ZREM', queue, token)
  redis.call('ZREM', beats, token)
  if redis.call('GET', lock) == token then redis.call('DEL', lock) return 1 end
  return 0
end
if redis.call('GET', lock) ~= token then return 0 end
if op == 'save' then
  if ARGV[5] == '' then redis.call('DEL', state) else redis.call('SET', state, ARGV[5]) end
end
redis.call('PEXPIRE', lock, ttl)
return 1
`;

const STORE = "redisChannelStore";

/**
 * A `ChannelStore` in Redis, for `batchSettlementEvm({ storage })`: processes on any number of machines that give the
 * same Redis and prefix share their channels. A channel is held by one payment at a time across all of them, from
 * before its voucher is signed until the seller's answer is read; waiting processes take their turns in arrival order
 * (within a process too). A process that dies while holding a channel keeps it at most `lockTtlMs`; what it saved
 * (the largest voucher it signed, before sending it) is there for the next. A hold whose lock expired (its process
 * stalled past `lockTtlMs`) can no longer save: `save` throws rather than overwrite the next holder's state.
 */
export function redisChannelStore(redis: RedisClientLike, options: RedisChannelStoreOptions = {}): ChannelStore {
  checkStoreOptions(STORE, redis, options, {
    methods: ["evalSha", "eval", "get"],
    checks: {
      prefix: checkName,
      lockTtlMs: (value) =>
        Number.isSafeInteger(value) && (value as number) >= 30 && (value as number) <= 86_400_000
          ? undefined
          : "is not a whole number of milliseconds from 30 to 86400000",
    },
  });
  const { prefix = "x402:channel:", lockTtlMs = 10_000, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  const channelScript = script(redis, SCRIPT);
  const waitMs = String(Math.max(lockTtlMs, 1000));
  const line = channelLines();
  const stateKey = (id: string) => `${prefix}{${id}}`;

  const run = async (op: string, id: string, token: string, json = ""): Promise<boolean> => {
    const key = stateKey(id);
    const call = {
      keys: [key, `${key}:lock`, `${key}:queue`, `${key}:waiting`, `${key}:arrivals`],
      arguments: [op, token, String(lockTtlMs), waitMs, json],
    };
    const reply = await bounded(redis, timeoutMs, `a channel ${op}`, () => channelScript(call));
    return Number(reply) === 1;
  };
  const read = async (id: string) => {
    const json = await bounded(redis, timeoutMs, "a channel read", () => redis.get(stateKey(id)));
    return json === null || json === undefined ? undefined : channelStateFrom(STORE, id, String(json));
  };

  return {
    async peek(id) {
      checkChannelId(STORE, id);
      return read(id);
    },
    async hold(id, signal) {
      checkChannelId(STORE, id);
      const leave = await line(id, signal);
      const token = randomBytes(16).toString("hex");
      const letGo = () => run("release", id, token).catch(() => undefined);
      let state: ChannelState | undefined;
      try {
        for (let attempt = 0; !(await run("acquire", id, token)); attempt++) await pause(backoff(attempt), signal);
        state = await read(id);
      } catch (error) {
        // Given up (or failed) while waiting or reading: out of the queue, the lock let go if it was taken.
        await letGo();
        leave();
        throw error;
      }
      let held = true;
      let lost = false;
      const renewal = setInterval(() => {
        void run("renew", id, token).then(
          (ok) => void (lost ||= !ok),
          () => undefined, // unanswered: the next save (a compare-and-set) tells
        );
      }, lockTtlMs / 3);
      renewal.unref?.();
      return {
        state,
        async save(next) {
          if (!held) throw new Error(`${STORE}: the hold on channel ${id} was released before its state was saved.`);
          if (lost || !(await run("save", id, token, next === undefined ? "" : channelStateJson(next)))) {
            lost = true;
            throw new Error(
              `${STORE}: the lock on channel ${id} expired before its state was saved (this process stalled past ` +
                `lockTtlMs); nothing was written.`,
            );
          }
        },
        async release() {
          if (!held) return;
          held = false;
          clearInterval(renewal);
          await letGo();
          leave();
        },
      } satisfies ChannelHold;
    },
  };
}
