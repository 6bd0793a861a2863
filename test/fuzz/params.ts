/**
 * How many inputs each property gets, and with which seed. `npm test` runs a small fixed-seed
 * sample; `npm run fuzz` sets FUZZ_RUNS (100,000 by default) and draws a seed it prints. Replay a
 * failure with FUZZ_SEED=<seed> (and fast-check's printed `path`, via FUZZ_PATH).
 */
import fc from "fast-check";

const requested = Number(process.env.FUZZ_RUNS);
/** A large run was asked for (`npm run fuzz`). */
export const LARGE = Number.isSafeInteger(requested) && requested > 0;

/** The seed of the small runs in `npm test`: fixed, so the suite is deterministic. */
const FIXED_SEED = 402;

function seed(): number {
  if (process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== "") return Number(process.env.FUZZ_SEED);
  return LARGE ? Math.floor(Math.random() * 2 ** 31) : FIXED_SEED;
}

/** Longest a single input may take, synchronous or not: anything slower counts as a hang. */
export const RUN_BOUND_MS = 2_000;

/** fast-check parameters for a property: `small` runs in `npm test`, FUZZ_RUNS in a large run. */
export function parameters<T>(small: number, extra: fc.Parameters<T> = {}): fc.Parameters<T> {
  const path = process.env.FUZZ_PATH;
  return { numRuns: LARGE ? requested : small, seed: seed(), ...(path ? { path } : {}), ...extra };
}

/**
 * Runs a property with `parameters(small)`; in a large run prints runs, seed and time, the record
 * the fuzz run keeps. `fc.assert` throws with the seed, the path and the shrunk counterexample.
 */
export async function check<T>(
  name: string,
  property: fc.IProperty<T> | fc.IAsyncProperty<T>,
  small: number,
  extra: fc.Parameters<T> = {},
) {
  const params = parameters(small, extra);
  const started = performance.now();
  let failed = false;
  try {
    await fc.assert(property as fc.IAsyncProperty<T>, params);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    if (LARGE) {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const runs = params.path ? `replay of path ${params.path}` : `${params.numRuns} runs`;
      console.log(`[fuzz] ${name}: ${runs}, seed ${params.seed}, ${seconds} s, ${failed ? "FAILED" : "0 failures"}`);
    }
  }
}

/** Throws (failing the run) unless `condition` holds. Cheaper than `expect` in a hot loop. */
export function ensure(condition: unknown, message: string | (() => string)): asserts condition {
  if (!condition) throw new Error(typeof message === "function" ? message() : message);
}

/** Runs `work` and fails if it took longer than RUN_BOUND_MS. */
export function bounded<T>(work: () => T): T {
  const started = performance.now();
  try {
    return work();
  } finally {
    const ms = performance.now() - started;
    ensure(ms < RUN_BOUND_MS, `took ${ms.toFixed(0)} ms (bound ${RUN_BOUND_MS} ms)`);
  }
}
