/** The receipts ledger as a Redis stream: one entry per record, read back in the order appended. */
import type { Ledger, LedgerRecord, X402Plugin } from "../contracts";
import { recordOutcomes, settledAttempt } from "../extensions/ledger";
import { bounded, checkName, checkStoreOptions, DEFAULT_TIMEOUT_MS, script, type RedisClientLike } from "./client";

export interface RedisLedgerOptions {
  /** The stream's key. Default `"x402:ledger"`. */
  key?: string | undefined;
  /** How long a call may take before it fails. Default 2000. */
  timeoutMs?: number | undefined;
  /** Names the ledger among the client's plug-ins (`ledger <name>`): needed when one client has two ledgers. */
  name?: string | undefined;
}

/** Entries read per XRANGE. */
const PAGE = 500;

/**
 * KEYS: the stream, the set of attempts it holds settled. ARGV: the record's JSON, its attempt. Adds the record unless
 * the attempt is in the set already (0), atomically: two processes that learn one settlement record it once.
 */
const APPEND_SETTLED = `
if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then return 0 end
redis.call('XADD', KEYS[1], '*', 'record', ARGV[1])
return 1`;

/** The key of the set of settled attempts, in the stream's Redis Cluster slot (its `{tag}`, or the key as one). */
const settledKey = (key: string) => (/\{[^}]+\}/.test(key) ? `${key}:attempts` : `{${key}}:attempts`);

/**
 * A `Ledger` in a Redis stream, as a plug-in (`createX402Client({ plugins: [redisLedger(redis)] })`): `append` adds an
 * entry (XADD) whose field `record` holds the record as JSON, and resolves once Redis has it; `records()` reads them in
 * order, a page at a time (XRANGE). Processes sharing the stream share the ledger. An entry that is not a record
 * (another writer's) is skipped.
 */
export function redisLedger(redis: RedisClientLike, options: RedisLedgerOptions = {}): Ledger & X402Plugin {
  checkStoreOptions("redisLedger", redis, options, {
    methods: ["xAdd", "xRange", "evalSha", "eval"],
    checks: { key: checkName, name: checkName },
  });
  const { key = "x402:ledger", timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  const appendSettled = script(redis, APPEND_SETTLED);
  return recordOutcomes(
    {
      async append(record) {
        const attempt = settledAttempt(record);
        const json = JSON.stringify(record);
        await bounded(redis, timeoutMs, "a ledger append", () =>
          attempt === undefined
            ? redis.xAdd(key, "*", { record: json })
            : appendSettled({ keys: [key, settledKey(key)], arguments: [json, attempt] }),
        );
      },
      async *records() {
        for (let start = "-"; ; ) {
          const page = (await bounded(redis, timeoutMs, "a ledger read", () =>
            redis.xRange(key, start, "+", { COUNT: PAGE }),
          )) as StreamEntry[];
          for (const entry of page) {
            const record = parse(entry.message?.record);
            if (record) yield record;
          }
          if (page.length < PAGE) return;
          start = `(${page.at(-1)!.id}`;
        }
      },
    },
    options,
  );
}

interface StreamEntry {
  readonly id: string;
  readonly message?: Readonly<Record<string, unknown>>;
}

function parse(json: unknown): LedgerRecord | undefined {
  try {
    const value: unknown = JSON.parse(String(json));
    return typeof value === "object" && value !== null && typeof (value as LedgerRecord).id === "string"
      ? (value as LedgerRecord)
      : undefined;
  } catch {
    return undefined;
  }
}
