/**
 * What a Solana scheme needs to know of a mint: its decimals and the token program that owns it. Neither ever
 * changes, so each (RPC, mint) is read once and kept, in a bounded cache a scheme makes for itself. Only these
 * two facts: never a balance, never a blockhash.
 *
 * - Bounded: the least recently used of `MINT_CACHE_ENTRIES` is let go first.
 * - One read for many: payments that want the same mint while it is read wait for that read.
 * - A failed read, or an account that is not a mint, is not kept: the next payment reads again.
 * - Each caller waits under its own signal; the read stops only when every caller waiting for it has gone,
 *   so one caller's abort never fails another's payment nor leaves a failure behind.
 * - `forget` drops a mint (the scheme calls it when a payment made with it was refused): read again next time.
 */
import type { PaymentOutcome } from "../contracts";
import { raceAbort, throwIfAborted } from "../errors";
import { readVia, type RpcReadOptions } from "../io";
import type { SolanaEndpoint } from "./endpoints";
import { getMint } from "./rpc";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "./transaction";

export interface MintFacts {
  readonly decimals: number;
  /** The SPL Token or the Token-2022 program. */
  readonly tokenProgram: string;
}

/** How many mints a scheme keeps (a few KB): more than a buyer pays in, fewer than a hostile seller could name. */
export const MINT_CACHE_ENTRIES = 256;

export interface MintCache {
  /** The mint's facts, or why it is not a mint (`no such account`, `owner …`): kept, or read once for all waiting. */
  read(endpoint: SolanaEndpoint, mint: string, options: RpcReadOptions): Promise<MintFacts | string>;
  /** Reads the mint again the next time it is asked for. */
  forget(endpoint: SolanaEndpoint, mint: string): void;
}

interface Entry {
  readonly facts: Promise<MintFacts | string>;
  /** Stops the read, once nobody waits for it. */
  readonly stop: AbortController;
  waiting: number;
  done: boolean;
}

/** The facts in a mint account, or why it is not one. */
function factsOf(account: Awaited<ReturnType<typeof getMint>>): MintFacts | string {
  if (!account) return "no such account";
  const { owner, data } = account;
  if ((owner !== TOKEN_PROGRAM && owner !== TOKEN_2022_PROGRAM) || data.length < 82)
    return `owner ${owner}, ${data.length} bytes`;
  return { decimals: data[44]!, tokenProgram: owner };
}

/** A cache of mint facts by (RPC, mint), for one scheme: see the module's comment. */
export function mintCache(capacity: number = MINT_CACHE_ENTRIES): MintCache {
  const entries = new Map<string, Entry>(); // in order of use, least recent first
  const ids = new WeakMap<SolanaEndpoint, number>();
  let nextId = 0;
  const keyOf = (endpoint: SolanaEndpoint, mint: string) => {
    if (!ids.has(endpoint)) ids.set(endpoint, nextId++);
    return `${ids.get(endpoint)} ${mint}`;
  };

  function start(key: string, endpoint: SolanaEndpoint, mint: string, timeoutMs: number): Entry {
    const stop = new AbortController();
    const read = (rpc: SolanaEndpoint["rpc"], abortSignal: AbortSignal) => getMint(rpc, mint, abortSignal);
    const facts = readVia(endpoint, "getAccountInfo", read, { signal: stop.signal, timeoutMs }).then(factsOf);
    const entry: Entry = { facts, stop, waiting: 0, done: false };
    const drop = () => {
      if (entries.get(key) === entry) entries.delete(key);
    };
    facts.then(
      (result) => {
        entry.done = true;
        if (typeof result === "string") drop();
      },
      () => {
        entry.done = true;
        drop();
      },
    );
    entries.set(key, entry);
    if (entries.size > capacity) entries.delete(entries.keys().next().value!);
    return entry;
  }

  return {
    async read(endpoint, mint, { signal, timeoutMs }) {
      throwIfAborted(signal);
      const key = keyOf(endpoint, mint);
      let entry = entries.get(key);
      if (entry) {
        entries.delete(key); // the most recently used goes last
        entries.set(key, entry);
      } else entry = start(key, endpoint, mint, timeoutMs);
      entry.waiting++;
      try {
        return await raceAbort(entry.facts, signal);
      } finally {
        // The last caller gave up on a read still running: stop it, and let the next payment start afresh.
        if (--entry.waiting === 0 && !entry.done && signal?.aborted) {
          if (entries.get(key) === entry) entries.delete(key);
          entry.stop.abort(signal.reason);
        }
      }
    },
    forget(endpoint, mint) {
      entries.delete(keyOf(endpoint, mint));
    },
  };
}

/**
 * A scheme's `onOutcome`: after a payment the server refused (PAYMENT_REJECTED), its mint is read again the next
 * time. The refusal may have come of facts gone wrong (a cache is only as good as its RPC's answer); reading once
 * more after a refusal costs one round trip.
 */
export function forgetRefused(
  cache: MintCache,
  rpcFor: (network: string) => SolanaEndpoint | undefined,
): (outcome: PaymentOutcome) => void {
  return (outcome) => {
    const requirement = outcome.payment?.requirement;
    if (outcome.settled || outcome.error.code !== "PAYMENT_REJECTED" || !requirement?.caip2) return;
    const endpoint = rpcFor(requirement.caip2);
    if (endpoint) cache.forget(endpoint, requirement.asset);
  };
}
