/**
 * Cancellation: the request's AbortSignal reaches every phase, and an abort before sending is never "outcome unknown".
 */
import { isX402Error } from "./base";
import { PaymentAbortedError, requestDetails, type RequestDetails } from "./classes";

function aborted(signal: AbortSignal, details?: RequestDetails) {
  return new PaymentAbortedError("The request was aborted before the payment was sent: nothing was paid.", {
    cause: signal.reason,
    details,
  });
}

/** Throws `PaymentAbortedError` if `signal` has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, details?: RequestDetails): void {
  if (signal?.aborted) throw aborted(signal, details);
}

/**
 * Settles as `work` does, or rejects with `PaymentAbortedError` as soon as `signal` fires, without
 * waiting for `work` (a wallet prompt left open). Whatever `work` produces later is dropped.
 */
export function raceAbort<T>(
  work: T | PromiseLike<T>,
  signal: AbortSignal | undefined,
  details?: RequestDetails,
): Promise<T> {
  if (!signal) return Promise.resolve(work);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted(signal, details));
    // Always observed, also when the signal fired already (while `work` started): a later rejection
    // of work that was dropped must not surface as an unhandled rejection.
    Promise.resolve(work)
      .then(resolve, reject)
      .finally(() => signal.removeEventListener("abort", onAbort));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * What a request's failure is: an abort that surfaced as the HTTP library's own error (during a sign-in retry or a
 * body read, before any payment left) is `ABORTED`; anything else is as thrown.
 */
export function abortedAs(
  thrown: unknown,
  request: { readonly url: string; readonly method: string; readonly signal?: AbortSignal | undefined },
): unknown {
  return !isX402Error(thrown) && request.signal?.aborted
    ? new PaymentAbortedError("The request was aborted: nothing was paid.", {
        cause: thrown,
        details: requestDetails(request),
      })
    : thrown;
}
