/**
 * Reading the body of a 402, bounded: at most 1 MiB and 10 seconds, and never past the caller's
 * AbortSignal. A hostile server that drips or floods its body cannot hang the call or grow memory.
 */
import { InvalidChallengeError, isX402Error, raceAbort } from "../errors";
import { utf8 } from "../protocol";

/** Largest 402 body read (bytes) and longest time spent reading it (ms); a body left unread is drained (not cancelled) up to `drainBytes`, for at most `drainMs`. */
export const BODY_LIMITS = { bytes: 1024 * 1024, ms: 10_000, drainBytes: 16_384, drainMs: 5_000 };

const tooLarge = () => new InvalidChallengeError(`The 402 body is larger than ${BODY_LIMITS.bytes / 1024} KiB.`);

/**
 * The body as text (a web stream is read), or parsed JSON passed through as it is. A stream is
 * released when reading stops, whatever stopped it. Other kinds (bytes, a Blob, a Node stream) go
 * through `bodySource` first.
 */
export async function readBody(source: unknown, signal: AbortSignal | undefined): Promise<unknown> {
  if (typeof source === "string") {
    if (source.length > BODY_LIMITS.bytes) throw tooLarge();
    return source;
  }
  if (typeof ReadableStream === "undefined" || !(source instanceof ReadableStream)) return source;
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  let reader: ReadableStreamDefaultReader | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    // A stream someone already reads (locked) fails here: it "could not be read".
    reader = (source as ReadableStream).getReader();
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new InvalidChallengeError(`The 402 body did not finish within ${BODY_LIMITS.ms / 1000} s.`)), BODY_LIMITS.ms);
    });
    for (;;) {
      const { done, value } = await raceAbort(Promise.race([reader.read(), late]), signal);
      if (done) return text + decoder.decode();
      const bytes = toBytes(value);
      if ((size += bytes.length) > BODY_LIMITS.bytes) throw tooLarge();
      text += decoder.decode(bytes, { stream: true });
    }
  } catch (error) {
    throw isX402Error(error) ? error : unreadable(error);
  } finally {
    clearTimeout(timer);
    reader?.cancel().catch(() => {});
  }
}

/**
 * What `readBody` reads, from the other kinds of body an HTTP library may hold: bytes, a Blob, an
 * async iterable (a Node stream), as a web stream; text and parsed JSON as they are. (Only adapters
 * that meet these need it, so a fetch bundle does not carry it.)
 */
export function bodySource(data: unknown): unknown {
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return new Blob([data as ArrayBuffer]).stream();
  if (typeof Blob !== "undefined" && data instanceof Blob) return data.stream();
  if (data && typeof data === "object" && Symbol.asyncIterator in data && !(data instanceof ReadableStream)) {
    const iterable = data as AsyncIterable<unknown>;
    let iterator: AsyncIterator<unknown> | undefined;
    return new ReadableStream({
      async pull(controller) {
        const { done, value } = await (iterator ??= open(() => iterable[Symbol.asyncIterator]())).next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: () => void iterator?.return?.()?.catch?.(() => {}),
    });
  }
  return data;
}

const unreadable = (cause: unknown) => new InvalidChallengeError("The 402 body could not be read.", { cause });

/** Starts reading a body (an iterable that throws): failures are a typed error. */
function open<T>(start: () => T): T {
  try {
    return start();
  } catch (error) {
    throw unreadable(error);
  }
}

/** A chunk as bytes: text is UTF-8 encoded, any ArrayBuffer or view read as its bytes; anything else cannot be read. */
function toBytes(chunk: unknown): Uint8Array {
  if (typeof chunk === "string") return utf8.encode(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError(`A body chunk is ${chunk === null ? "null" : typeof chunk}, not bytes or text.`);
}
