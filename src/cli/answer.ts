/**
 * The final answer, streamed: its body goes to stdout or the `-o` file chunk by chunk, never held
 * whole, and `--json` is written as the body arrives (the object's last member is the body).
 */
import { raceAbort } from "../errors";
import { bytesToBase64, concatBytes } from "../protocol";
import type { Sink } from "./output";

/** How much of the body `--json` looks at to choose between text and base64. */
export const JSON_SNIFF_BYTES = 64 * 1024;

type Body = ReadableStream<Uint8Array> | null;

/** A body that stopped coming (the connection cut, the signal fired). */
export class BodyReadError extends Error {}

/**
 * The body's chunks as they come, each read raced against `signal` (a fetch whose body does not end
 * with its signal cannot hold the run); a read failure is a `BodyReadError`. The stream is released
 * whatever stops it.
 */
async function* chunks(body: Body, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  if (!body) return;
  const reader = body.getReader();
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await raceAbort(reader.read(), signal);
      } catch (error) {
        throw new BodyReadError(`answer was cut (${(error as Error)?.message ?? String(error)})`, { cause: error });
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** The body, as it comes, to `sink`. */
export async function streamBody(body: Body, sink: Sink, signal: AbortSignal): Promise<void> {
  for await (const chunk of chunks(body, signal)) await sink.write(chunk);
}

/**
 * `--json`: one object, `{"status","headers","payment",` then the body as its last member, written as
 * it arrives. `body` (text) when the first 64 KiB of it are UTF-8 (a later invalid byte reads as
 * U+FFFD, as fetch's `text()` reads it), else `bodyBase64`. A body of at most 64 KiB is judged whole.
 */
export async function streamJson(head: object, body: Body, sink: Sink, signal: AbortSignal): Promise<void> {
  const opening = JSON.stringify(head);
  const source = chunks(body, signal);
  // The first 64 KiB (the whole body, if it is no longer) decide how it is written.
  const first: Uint8Array[] = [];
  let size = 0;
  let ended = false;
  while (size <= JSON_SNIFF_BYTES) {
    const next = await source.next();
    if (next.done) {
      ended = true;
      break;
    }
    first.push(next.value);
    size += next.value.length;
  }
  const peeked = concat(first);
  const text = isUtf8(peeked, ended);
  await sink.write(`${opening.slice(0, -1)}${opening.length > 2 ? "," : ""}"${text ? "body" : "bodyBase64"}":"`);
  const encode = text ? textEncoder() : base64Encoder();
  await sink.write(encode.chunk(peeked));
  if (!ended) for await (const chunk of source) await sink.write(encode.chunk(chunk));
  await sink.write(`${encode.end()}"}\n`);
}

/** One part as it is; several joined. */
const concat = (parts: readonly Uint8Array[]): Uint8Array => (parts.length === 1 ? parts[0]! : concatBytes(parts));

/** UTF-8 throughout; a body not yet `ended` may stop inside a character. */
function isUtf8(bytes: Uint8Array, ended: boolean): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: !ended });
    return true;
  } catch {
    return false;
  }
}

interface ChunkEncoder {
  /** The JSON string content (no quotes) of this chunk. */
  chunk(bytes: Uint8Array): string;
  end(): string;
}

/** Text, escaped for a JSON string chunk by chunk (a character split between chunks is kept for the next). */
function textEncoder(): ChunkEncoder {
  const decoder = new TextDecoder();
  const jsonText = (text: string) => JSON.stringify(text).slice(1, -1);
  return { chunk: (bytes) => jsonText(decoder.decode(bytes, { stream: true })), end: () => jsonText(decoder.decode()) };
}

/** Base64 chunk by chunk: whole 3-byte groups now, the rest carried to the next chunk. */
function base64Encoder(): ChunkEncoder {
  let carry = new Uint8Array(0);
  return {
    chunk(bytes) {
      const all = carry.length ? concat([carry, bytes]) : bytes;
      const whole = all.length - (all.length % 3);
      carry = all.slice(whole);
      return bytesToBase64(all.subarray(0, whole));
    },
    end: () => bytesToBase64(carry),
  };
}
