/**
 * `redisJournalStore(redis)`: the payment journal in Redis, for a fleet: each attempt's latest entry under its id, each
 * key's newest attempt, and the set of unfinished attempts, written together by one script (atomic).
 */
import { UNFINISHED, parseJournalEntry as parse, type JournalEntry, type JournalStore } from "../contracts";
import {
  bounded,
  checkName,
  checkStoreOptions,
  DEFAULT_TIMEOUT_MS,
  script,
  type RedisClientLike,
  type ScriptCall,
} from "./client";

export interface RedisJournalStoreOptions {
  /**
   * Prefix of the store's keys. Default `"{x402:journal}:"`: the braces keep every key in one Redis Cluster slot, as
   * the store's scripts need; a prefix of your own should keep a `{…}` tag too.
   */
  prefix?: string | undefined;
  /** How long a call may take before it fails. Default 2000. */
  timeoutMs?: number | undefined;
}

/**
 * KEYS: the entry, the unfinished set, the key's newest attempt (or none). ARGV: the entry's JSON, "1" if unfinished,
 * its id, the state it must be written over (or ""). A key's newest attempt is the one whose first entry was written
 * last. Refused (0, nothing written) as the journal store contract says: over a state its attempt is not at, over a
 * finished attempt, or a key's new attempt while its newest is unfinished.
 */
const PUT = `
local stored = redis.call('GET', KEYS[1])
if ARGV[4] ~= '' and not (stored and cjson.decode(stored).state == ARGV[4]) then return 0 end
if stored and redis.call('SISMEMBER', KEYS[2], ARGV[3]) == 0 then return 0 end
local newest = not stored and KEYS[3] and redis.call('GET', KEYS[3])
if newest and redis.call('SISMEMBER', KEYS[2], newest) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[2] == '1' then redis.call('SADD', KEYS[2], ARGV[3]) else redis.call('SREM', KEYS[2], ARGV[3]) end
if not stored and KEYS[3] then redis.call('SET', KEYS[3], ARGV[3]) end
return 1`;

/** KEYS: the key's newest attempt, the entries' prefix. The newest attempt's entry, or nil. */
const LATEST = `
local id = redis.call('GET', KEYS[1])
if not id then return nil end
return redis.call('GET', KEYS[2] .. id)`;

/** KEYS: the unfinished set, the entries' prefix. Their entries. */
const UNFINISHED_ENTRIES = `
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local entry = redis.call('GET', KEYS[2] .. id)
  if entry then table.insert(out, entry) end
end
return out`;

/** A journal store in Redis: processes sharing the prefix share the journal. `put` resolves once Redis has it. */
export function redisJournalStore(redis: RedisClientLike, options: RedisJournalStoreOptions = {}): JournalStore {
  checkStoreOptions("redisJournalStore", redis, options, {
    methods: ["evalSha", "eval"],
    checks: { prefix: checkName },
  });
  const { prefix = "{x402:journal}:", timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  const entries = `${prefix}entry:`;
  const open = `${prefix}unfinished`;
  const scripts = {
    put: script(redis, PUT),
    latest: script(redis, LATEST),
    unfinished: script(redis, UNFINISHED_ENTRIES),
  };
  const run = (what: string, call: (call: ScriptCall) => Promise<unknown>, keys: string[], args: string[] = []) =>
    bounded(redis, timeoutMs, what, () => call({ keys, arguments: args }));
  return {
    async put(entry, { over } = {}) {
      const keys = [`${entries}${entry.id}`, open, ...(entry.key === undefined ? [] : [`${prefix}key:${entry.key}`])];
      const unfinished = UNFINISHED.includes(entry.state) ? "1" : "0";
      const args = [JSON.stringify(entry), unfinished, entry.id, over ?? ""];
      return Number(await run("a journal write", scripts.put, keys, args)) === 1;
    },
    async latest(key) {
      return parse(await run("a journal read", scripts.latest, [`${prefix}key:${key}`, entries]));
    },
    async unfinished() {
      const found = (await run("a journal read", scripts.unfinished, [open, entries])) as unknown[];
      return found.map(parse).filter((entry): entry is JournalEntry => entry !== undefined);
    },
  };
}
