/**
 * Reading the body of a 402, bounded: at most 1 MiB and 10 seconds, and never past the caller's
 * AbortSignal. A hostile server that drips or floods its body cannot hang the call or grow memory.
 */
import { InvalidChallengeError, isX402Error, raceAbort } from "../errors";

/** Largest 402 body read (bytes) and longest time spent reading it (ms). */
export const BODY_LIMITS = { bytes: 1024 * 1024, ms: 10_000 };

const tooLarge = () => new InvalidChallengeError(`The 402 body is larger than ${BODY_LIMITS.bytes / 1024} KiB.`);

/**
 * The body as text (bytes are decoded, streams read), or parsed JSON passed through as it is.
 * Streams are released when reading stops, whatever stopped it.
 */
export async function readBody(source: unknown, signal: AbortSignal | undefined): Promise<unknown> {
  if (typeof source === "string") {
    if (source.length > BODY_LIMITS.bytes) throw tooLarge();
    return source;
  }
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    if (source.byteLength > BODY_LIMITS.bytes) throw tooLarge();
    return new TextDecoder().decode(source);
  }
  if (typeof Blob !== "undefined" && source instanceof Blob) source = source.stream();
  if (typeof ReadableStream !== "undefined" && source instanceof ReadableStream) {
    const stream = source;
    const reader = open(() => stream.getReader());
    return drain(() => reader.read(), () => void reader.cancel().catch(() => {}), signal);
  }
  if (source && typeof source === "object" && Symbol.asyncIterator in source) {
    const iterable = source as AsyncIterable<Uint8Array | string>;
    const iterator = open(() => iterable[Symbol.asyncIterator]());
    return drain(() => iterator.next(), () => void iterator.return?.()?.catch?.(() => {}), signal);
  }
  return source;
}

/** Starts reading a body (a stream someone already locked, an iterable that throws): failures are a typed error. */
function open<T>(start: () => T): T {
  try {
    return start();
  } catch (error) {
    throw new InvalidChallengeError("The 402 body could not be read.", { cause: error });
  }
}

async function drain(
  next: () => Promise<IteratorResult<Uint8Array | string>> | Promise<ReadableStreamReadResult<Uint8Array>>,
  release: () => void,
  signal: AbortSignal | undefined,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InvalidChallengeError(`The 402 body did not finish within ${BODY_LIMITS.ms / 1000} s.`)), BODY_LIMITS.ms);
  });
  try {
    for (;;) {
      const { done, value } = await raceAbort(Promise.race([next(), late]), signal);
      if (done) break;
      const bytes = toBytes(value);
      if ((size += bytes.length) > BODY_LIMITS.bytes) throw tooLarge();
      chunks.push(bytes);
    }
  } catch (error) {
    if (isX402Error(error)) throw error;
    throw new InvalidChallengeError("The 402 body could not be read.", { cause: error });
  } finally {
    clearTimeout(timer);
    release();
  }
  const all = new Uint8Array(size);
  chunks.reduce((offset, chunk) => (all.set(chunk, offset), offset + chunk.length), 0);
  return new TextDecoder().decode(all);
}

/** A chunk as bytes: text is UTF-8 encoded, any ArrayBuffer or view read as its bytes; anything else cannot be read. */
function toBytes(chunk: unknown): Uint8Array {
  if (typeof chunk === "string") return new TextEncoder().encode(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError(`A body chunk is ${chunk === null ? "null" : typeof chunk}, not bytes or text.`);
}
