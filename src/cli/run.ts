/** What every command shares: the run's deadline (`--max-time`) and the client its options make. */
import { createX402Client, type X402Client, type X402ClientOptions } from "../client";
import { fileLedger } from "../file";
import type { CliIo } from "./index";
import { UsageError } from "./output";
import { wallets, type WalletOptions } from "./wallets";

/** `--max-time`'s default, in seconds: the whole run (the 402, the payment, the paid answer and its body). */
export const DEFAULT_MAX_TIME_SECONDS = 120;

/** The run's signal: Ctrl-C, or `--max-time` running out (`timedOut` says which). */
export interface Deadline {
  readonly signal: AbortSignal;
  readonly seconds: number | undefined;
  timedOut(): boolean;
}

/** `--max-time` (seconds, `0`: none) beside Ctrl-C's signal: whichever fires first ends the run. */
export function deadline(maxTime: string | undefined, interrupt: AbortSignal): Deadline {
  const text = maxTime ?? String(DEFAULT_MAX_TIME_SECONDS);
  const seconds = /^\d{1,7}(\.\d{1,3})?$/.test(text) ? Number(text) : NaN;
  // The longest a timer can wait is 2^31 - 1 ms (24.8 days).
  if (!(seconds >= 0 && seconds * 1000 <= 2 ** 31 - 1)) {
    throw new UsageError("--max-time takes seconds, such as 30 or 2.5 (0: no limit).");
  }
  if (seconds === 0) return { signal: interrupt, seconds: undefined, timedOut: () => false };
  const timer = AbortSignal.timeout(Math.max(1, Math.round(seconds * 1000)));
  return { signal: AbortSignal.any([interrupt, timer]), seconds, timedOut: () => timer.aborted };
}

export interface ClientOptions extends WalletOptions {
  max?: string | undefined;
  network?: string[] | string | undefined;
  ledger?: string | undefined;
}

type Hooks = Pick<X402ClientOptions, "onBeforePayment" | "onPaymentSettled" | "onPaymentFailed">;

/** A client with the wallets the environment or key files give, the policy of the options, and the ledger. */
export async function makeClient(options: ClientOptions, io: CliIo, hooks: Hooks = {}): Promise<X402Client> {
  const schemes = await wallets(options, io.env);
  const networks = options.network === undefined ? [] : ([] as string[]).concat(options.network);
  const ledgerPath = options.quoteOnly ? undefined : (options.ledger ?? io.env.X402_LEDGER);
  const max = options.max === undefined ? undefined : options.max.startsWith("$") ? options.max : `$${options.max}`;
  return createX402Client({
    schemes,
    policy: { ...(max !== undefined && { maxAmountPerPayment: max }), ...(networks.length > 0 && { networks }) },
    ...(ledgerPath && { plugins: [fileLedger(ledgerPath)] }),
    ...hooks,
  });
}
