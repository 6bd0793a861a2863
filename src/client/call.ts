/** Running a step of someone else's code (a hook, a plug-in, a wallet) inside a payment. */
import { PaymentRefusedError, isX402Error, raceAbort, requestDetails, throwIfAborted, toWalletError } from "../errors";
import type { X402Request } from "../contracts";

/**
 * Runs a step raced against the request's signal; failures become typed errors: a `hook` that throws
 * refuses the payment, anything else failed to sign. A request already aborted never starts the step.
 */
export async function call<T>(
  step: () => T | Promise<T>,
  what: string,
  request: X402Request,
  hook?: boolean,
): Promise<T> {
  const where = requestDetails(request);
  throwIfAborted(request.signal, where);
  try {
    return await raceAbort(step(), request.signal, where);
  } catch (error) {
    throw hook && !isX402Error(error)
      ? new PaymentRefusedError(`${what} threw, so nothing was paid.`, { cause: error, details: where })
      : toWalletError(error, what, where);
  }
}

/**
 * Runs observers one after the other; what they throw is ignored (they cannot change how a payment ended). Resolves
 * whether every one of them succeeded.
 */
export async function observe(observers: readonly (() => unknown)[]): Promise<boolean> {
  let all = true;
  for (const observer of observers) {
    try {
      await observer();
    } catch {
      // An observer must not turn a paid response into an error.
      all = false;
    }
  }
  return all;
}
