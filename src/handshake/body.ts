/**
 * Reading the body of a 402, bounded: at most 1 MiB and 10 seconds, and never past the caller's
 * AbortSignal. A hostile server that drips or floods its body cannot hang the call or grow memory.
 */
import { InvalidChallengeError, throwIfAborted } from "../errors";
import { readBounded, type ReadError } from "../io";

/**
 * Largest 402 body read (bytes) and longest time spent reading it (ms); a body left unread is drained
 * (not cancelled) up to `drainBytes`, for at most `drainMs`.
 */
export const BODY_LIMITS = { bytes: 1024 * 1024, ms: 10_000, drainBytes: 16_384, drainMs: 5_000 };

/**
 * The body as text (a web stream is read), or parsed JSON passed through as it is (see `readBounded`).
 * A failure is INVALID_CHALLENGE; the caller's abort is theirs (ABORTED).
 */
export async function readBody(source: unknown, signal: AbortSignal | undefined): Promise<unknown> {
  try {
    return await readBounded(source, { maxBytes: BODY_LIMITS.bytes, timeoutMs: BODY_LIMITS.ms, signal });
  } catch (error) {
    const { reason, cause } = error as ReadError;
    if (reason === "aborted") throwIfAborted(signal);
    throw new InvalidChallengeError(
      reason === "size"
        ? `The 402 body is larger than ${BODY_LIMITS.bytes / 1024} KiB.`
        : reason === "time"
          ? `The 402 body did not finish within ${BODY_LIMITS.ms / 1000} s.`
          : "The 402 body could not be read.",
      { cause },
    );
  }
}
