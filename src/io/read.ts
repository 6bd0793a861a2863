/**
 * The one bounded reader: a body read whole, at most `maxBytes`, within `timeoutMs`, and never past
 * the caller's signal, each bound checked as the data arrives (a hostile server that floods or drips
 * cannot grow memory or hang the call). A failure is a `ReadError` saying which bound stopped it;
 * each caller says it in its own words (a 402's INVALID_CHALLENGE, an RPC's RPC_FAILED, ...).
 */
import { concatBytes, utf8 } from "../protocol";

/** Why a read stopped: too large, too slow, the caller's signal, or the source itself failed (`cause`). */
export type ReadFailure = "size" | "time" | "aborted" | "unreadable";

export class ReadError extends Error {
  declare readonly reason: ReadFailure;
  constructor(reason: ReadFailure, options?: ErrorOptions) {
    super(reason, options);
    this.reason = reason;
  }
}

export interface ReadLimits {
  readonly maxBytes: number;
  /** Longest time the whole read may take, in ms; none: only the signal ends a stalled read. */
  readonly timeoutMs?: number | undefined;
  /** The caller's: once it fires, the read stops (`aborted`, its reason as `cause`). */
  readonly signal?: AbortSignal | undefined;
  /** A read nobody waits for (a drain): its timeout does not keep a Node process alive. */
  readonly unref?: boolean | undefined;
}

/**
 * Reads a web stream (chunks of bytes or text) to its end, handing each chunk to `take` as bytes.
 * The stream is released when reading stops, whatever stopped it; one someone already reads (locked)
 * is `unreadable`. The time bound and the signal stop a read by cancelling the reader, which ends
 * the read pending on it: one timer and one listener a read, nothing allocated a chunk.
 */
async function pump(stream: ReadableStream, limits: ReadLimits, take: (bytes: Uint8Array) => void) {
  const { maxBytes, timeoutMs, signal } = limits;
  let size = 0;
  let reader: ReadableStreamDefaultReader | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let late = false;
  const stop = () => void reader?.cancel().catch(() => {});
  try {
    reader = stream.getReader();
    if (signal?.aborted) throw new ReadError("aborted", { cause: signal.reason });
    signal?.addEventListener("abort", stop, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        late = true;
        stop();
      }, timeoutMs);
      if (limits.unref) (timer as { unref?: () => void }).unref?.();
    }
    for (;;) {
      const { done, value } = await reader.read();
      // Ended by the signal or the clock (the reader was cancelled), not by the stream.
      if (signal?.aborted) throw new ReadError("aborted", { cause: signal.reason });
      if (late) throw new ReadError("time");
      if (done) return;
      const bytes = toBytes(value);
      if ((size += bytes.length) > maxBytes) throw new ReadError("size");
      take(bytes);
    }
  } catch (error) {
    // Stopped by the signal (or failed because of it, as fetch's body does): the caller's abort.
    if (signal?.aborted) throw new ReadError("aborted", { cause: signal.reason });
    if (late) throw new ReadError("time");
    throw error instanceof ReadError ? error : new ReadError("unreadable", { cause: error });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
    stop();
  }
}

/** A web stream read to its end and let go (see `pump`): a body nobody reads, drained so its connection is freed. */
export const drain = (stream: ReadableStream, limits: ReadLimits): Promise<void> => pump(stream, limits, () => {});

/** A web stream's bytes (see `pump`). */
export async function readBytes(stream: ReadableStream, limits: ReadLimits): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  await pump(stream, limits, (bytes) => chunks.push(bytes));
  return chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
}

/**
 * A web stream's first `maxBytes` bytes (see `pump`): more is not read (the stream is let go), and `cut` says there
 * was more.
 */
export async function readUpTo(
  stream: ReadableStream,
  limits: ReadLimits,
): Promise<{ bytes: Uint8Array; cut: boolean }> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  const bytes = () => (chunks.length === 1 ? chunks[0]! : concatBytes(chunks));
  try {
    await pump(stream, { ...limits, maxBytes: Number.POSITIVE_INFINITY }, (chunk) => {
      const room = limits.maxBytes - kept;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        throw new ReadError("size");
      }
      chunks.push(chunk);
      kept += chunk.length;
    });
    return { bytes: bytes(), cut: false };
  } catch (error) {
    if (error instanceof ReadError && error.reason === "size") return { bytes: bytes(), cut: true };
    throw error;
  }
}

/** A web stream's text, decoded as UTF-8 as it arrives (see `pump`). */
async function readText(stream: ReadableStream, limits: ReadLimits): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  await pump(stream, limits, (bytes) => void (text += decoder.decode(bytes, { stream: true })));
  return text + decoder.decode();
}

/**
 * A body as an HTTP library holds it: a web stream is read as UTF-8 text, text is measured as it is
 * (in UTF-16 units), and anything else (parsed JSON, `null`) passes through as it is. Other kinds of
 * body (bytes, a Blob, a Node stream) go through `bodySource` first.
 */
export async function readBounded(source: unknown, limits: ReadLimits): Promise<unknown> {
  if (typeof source === "string") {
    if (source.length > limits.maxBytes) throw new ReadError("size");
    return source;
  }
  if (typeof ReadableStream === "undefined" || !(source instanceof ReadableStream)) return source;
  return readText(source, limits);
}

/**
 * A fetch answer's body as text: refused before reading when its declared length is over the bound.
 * Without a stream to count (old polyfills), only the caller's own bounds hold it.
 */
export async function readResponse(response: Response, limits: ReadLimits): Promise<string> {
  if (Number(response.headers.get("content-length")) > limits.maxBytes) {
    void response.body?.cancel().catch(() => {});
    throw new ReadError("size");
  }
  return response.body ? readText(response.body, limits) : response.text();
}

/**
 * What the reader reads, from the other kinds of body an HTTP library may hold: bytes, a Blob, an
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
      // An iterable that cannot be iterated fails the stream: the read is `unreadable`, its error the cause.
      async pull(controller) {
        const { done, value } = await (iterator ??= iterable[Symbol.asyncIterator]()).next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: () => void iterator?.return?.()?.catch?.(() => {}),
    });
  }
  return data;
}

/** A chunk as bytes: text is UTF-8 encoded, an ArrayBuffer or view read as its bytes; nothing else can be read. */
function toBytes(chunk: unknown): Uint8Array {
  if (typeof chunk === "string") return utf8.encode(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError(`A body chunk is ${chunk === null ? "null" : typeof chunk}, not bytes or text.`);
}
