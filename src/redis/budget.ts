/**
 * Budgets shared by every process that uses one Redis: each reserve, commit and release is one Lua
 * script on one entry, so it is atomic across a fleet, and it reads Redis's clock, so the fleet
 * agrees on windows.
 */
import type { BudgetEntry, BudgetStore, BudgetUsage } from "../contracts";
import { bounded, checkName, checkStoreOptions, DEFAULT_TIMEOUT_MS, script, type RedisClientLike } from "./client";

export interface RedisBudgetStoreOptions {
  /** Starts every key: `<prefix>{<budget>:<scope>}`. Default `"x402:budget:"`. */
  prefix?: string | undefined;
  /** How long a call may take; past it the payment is refused (`BUDGET_UNAVAILABLE`). Default 2000. */
  timeoutMs?: number | undefined;
  /** The time in milliseconds. Default: Redis's own clock (`TIME`), which every process of a fleet shares. */
  now?: (() => number) | undefined;
}

/** A window's keys live this much longer than the window, past the last write. */
const EXPIRY_MARGIN_MS = 1000;

/**
 * One entry in two keys that share a hash tag (one Redis Cluster slot). KEYS[1], a hash: the totals
 * `spent` and `reserved`, and each reservation `r:<id>` = `r<amount>` (open) or `c<amount>` (committed,
 * kept only in a window), each channel's standing hold `h:<id>` = its amount, with their total `held` (also counted
 * in `reserved`), and spend drawn from holds in a window `r:~<n>` = `c<amount>`. KEYS[2], for a window: each
 * reservation's and draw's time in a sorted set. ARGV: operation, window ms or "", the keys' time to live in ms,
 * time ms or "" (Redis's), limit, id, amount (for a hold: what to add), then for a hold what to spend, what to
 * release ("all" or an amount) and the attempt it is for ("" for none). KEYS[3]: the latest attempts that added to a
 * hold (`<hold>:+<attempt>`) or ended on it (`<hold>:<attempt>`), in order: each adds once and ends once. Numbers go
 * to Redis as the strings they came as (Lua may print a large one in exponent form); totals change by HINCRBY.
 * Replies: {fits (1 or 0), spent, reserved}, the usage before the call, and for a hold what it held before. Keys
 * holding a channel's money do not expire.
 */
const SCRIPT = `
local MARKS_KEPT = 4096
local hash, times = KEYS[1], KEYS[2]
local op, window, ttl, now = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local limit, id, amount = ARGV[5], ARGV[6], ARGV[7]
local function minus(value) return value == '0' and '0' or '-' .. value end
if window then
  if not now then
    local time = redis.call('TIME')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  local since = now - window
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', times, '-inf', since)) do
    local held = redis.call('HGET', hash, 'r:' .. gone)
    if held then
      redis.call('HINCRBY', hash, string.sub(held, 1, 1) == 'c' and 'spent' or 'reserved', minus(string.sub(held, 2)))
      redis.call('HDEL', hash, 'r:' .. gone)
    end
  end
  redis.call('ZREMRANGEBYSCORE', times, '-inf', since)
end
local spent = tonumber(redis.call('HGET', hash, 'spent') or '0')
local reserved = tonumber(redis.call('HGET', hash, 'reserved') or '0')
if op == 'usage' then return {1, spent, reserved} end
local function keep()
  if not window then return end
  if tonumber(redis.call('HGET', hash, 'held') or '0') > 0 then
    redis.call('PERSIST', hash)
    redis.call('PERSIST', times)
    redis.call('PERSIST', KEYS[3])
  else
    redis.call('PEXPIRE', hash, ttl)
    redis.call('PEXPIRE', times, ttl)
    redis.call('PEXPIRE', KEYS[3], ttl)
  end
end
if op == 'hold' then
  local field = 'h:' .. id
  local before = redis.call('HGET', hash, field) or '0'
  local spend, free, attempt = ARGV[8], ARGV[9], ARGV[10]
  local added, ended = id .. ':+' .. attempt, id .. ':' .. attempt
  local function seen(mark) return redis.call('ZSCORE', KEYS[3], mark) end
  local function note(mark)
    redis.call('ZADD', KEYS[3], redis.call('HINCRBY', hash, 'marks', 1), mark)
    redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -MARKS_KEPT - 1)
  end
  -- An attempt adds once and ends once (its spend, or letting go of what it added, only if it did).
  if attempt ~= '' then
    if amount ~= '0' and seen(added) then amount = '0' end
    if seen(ended) then spend, free = '0', '0' elseif free ~= '0' and not seen(added) then free = '0' end
  end
  if spent + reserved + tonumber(amount) > tonumber(limit) then return {0, spent, reserved, tonumber(before)} end
  if attempt ~= '' and amount ~= '0' then note(added) end
  if attempt ~= '' and (spend ~= '0' or free ~= '0') then note(ended) end
  local function change(by)
    redis.call('HINCRBY', hash, field, by)
    redis.call('HINCRBY', hash, 'reserved', by)
    redis.call('HINCRBY', hash, 'held', by)
  end
  -- Lowers the hold by wanted ("all": by all of it), or by all it holds if less.
  local function take(wanted)
    local left = redis.call('HGET', hash, field) or '0'
    local taken = (wanted == 'all' or tonumber(wanted) > tonumber(left)) and left or wanted
    if taken ~= '0' then change(minus(taken)) end
  end
  if amount ~= '0' then change(amount) end
  if spend ~= '0' then
    take(spend)
    redis.call('HINCRBY', hash, 'spent', spend)
    if window then
      local draw = '~' .. redis.call('HINCRBY', hash, 'draws', 1)
      redis.call('HSET', hash, 'r:' .. draw, 'c' .. spend)
      redis.call('ZADD', times, now, draw)
    end
  end
  if free ~= '0' then take(free) end
  if tonumber(redis.call('HGET', hash, field) or '0') <= 0 then redis.call('HDEL', hash, field) end
  keep()
  return {1, spent, reserved, tonumber(before)}
end
local field = 'r:' .. id
local held = redis.call('HGET', hash, field)
if op == 'reserve' then
  if held then return redis.error_reply('reservation ' .. id .. ' exists') end
  if spent + reserved + tonumber(amount) > tonumber(limit) then return {0, spent, reserved} end
  redis.call('HINCRBY', hash, 'reserved', amount)
  redis.call('HSET', hash, field, 'r' .. amount)
  if window then redis.call('ZADD', times, now, id) end
elseif held and string.sub(held, 1, 1) == 'r' then
  local reservedAmount = string.sub(held, 2)
  redis.call('HINCRBY', hash, 'reserved', minus(reservedAmount))
  if op == 'commit' then
    local spend = tonumber(amount) < tonumber(reservedAmount) and amount or reservedAmount
    redis.call('HINCRBY', hash, 'spent', spend)
    if window then redis.call('HSET', hash, field, 'c' .. spend) else redis.call('HDEL', hash, field) end
  else
    redis.call('HDEL', hash, field)
    if window then redis.call('ZREM', times, id) end
  end
else
  return {1, spent, reserved}
end
keep()
return {1, spent, reserved}
`;

/**
 * A `BudgetStore` in Redis, for `createX402Client({ budget: { limit, store } })`: processes on any
 * number of machines that give the same Redis and budget name share one budget. A budget with a
 * window keeps its keys only as long as the window (they expire with it); one without keeps them for
 * good. A call that fails or outlasts `timeoutMs` refuses the payment: budgets fail closed.
 */
export function redisBudgetStore(redis: RedisClientLike, options: RedisBudgetStoreOptions = {}): BudgetStore {
  checkStoreOptions("redisBudgetStore", redis, options, {
    methods: ["evalSha", "eval"],
    checks: {
      prefix: checkName,
      now: (value) => (typeof value === "function" ? undefined : "must be a function returning milliseconds"),
    },
  });
  const { prefix = "x402:budget:", timeoutMs = DEFAULT_TIMEOUT_MS, now } = options;
  const budgetScript = script(redis, SCRIPT);

  /** Runs `op` on `entry` for `call`: a reservation or hold id, its amount, for a hold what to spend and release. */
  const run = async (op: string, entry: BudgetEntry, call: Call = {}): Promise<number[]> => {
    const { id = "", amount = 0, more = [] } = call;
    checkCall(entry, id, amount);
    const tag = `${prefix}{${entry.key}}`;
    const window =
      entry.windowMs === undefined ? ["", ""] : [String(entry.windowMs), String(entry.windowMs + EXPIRY_MARGIN_MS)];
    const args = {
      keys: [tag, `${tag}:times`, `${tag}:ended`],
      arguments: [op, ...window, now ? String(now()) : "", String(entry.limit), id, String(amount), ...more],
    };
    const reply = await bounded(redis, timeoutMs, `budget ${op}`, () => budgetScript(args));
    return (reply as unknown[]).map(Number);
  };
  const usage = ([, spent, reserved]: number[]): BudgetUsage => ({ spent: spent!, reserved: reserved! });

  return {
    async reserve(entry, id, amount) {
      try {
        const answer = await run("reserve", entry, { id, amount });
        return { ok: answer[0] === 1, ...usage(answer) };
      } catch (error) {
        // Sent but unanswered, the reservation may still be made: its release follows it on the connection.
        if ((error as Error)?.name === "TimeoutError") void run("release", entry, { id }).catch(() => undefined);
        throw error;
      }
    },
    async commit(entry, id, amount) {
      await run("commit", entry, { id, amount });
    },
    async release(entry, id) {
      await run("release", entry, { id });
    },
    async usage(entry) {
      return usage(await run("usage", entry));
    },
    async hold(entry, id, { add = 0, spend = 0, release = 0, attempt = "" }) {
      checkCall(entry, id, spend);
      if (release !== "all") checkCall(entry, id, release);
      const more = [String(spend), String(release), attempt];
      const answer = await run("hold", entry, { id, amount: add, more });
      return { ok: answer[0] === 1, ...usage(answer), held: answer[3]! };
    },
  };
}

interface Call {
  readonly id?: string;
  readonly amount?: number;
  readonly more?: readonly string[];
}

/** Amounts and limits the script can count exactly: whole micro-dollars, at most 9e15. */
function checkCall(entry: BudgetEntry, id: string, amount: number): void {
  const whole = (value: unknown, least: number) =>
    Number.isSafeInteger(value) && (value as number) >= least && (value as number) <= 9e15;
  if (
    typeof entry?.key !== "string" ||
    !whole(entry.limit, 1) ||
    !(entry.windowMs === undefined || whole(entry.windowMs, 1))
  ) {
    throw new TypeError(
      "redisBudgetStore: an entry is { key: string, limit: whole micro-dollars from 1 to 9e15, windowMs: undefined " +
        "or whole milliseconds }.",
    );
  }
  if (typeof id !== "string" || !whole(amount, 0))
    throw new TypeError("redisBudgetStore: an id is a string and an amount whole micro-dollars from 0 to 9e15.");
}
