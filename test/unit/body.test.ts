/**
 * Reading the body of a 402 (src/handshake/body.ts over src/io's reader), as the adapters hand it
 * over: text, parsed JSON, a web stream (fetch), bytes, a Blob or a Node stream (axios). The read is
 * bounded at 1 MiB, turns every failure into INVALID_CHALLENGE, and releases what it was reading
 * whenever it stops.
 */
import { describe, expect, it } from "vitest";
import { InvalidChallengeError } from "../../src/entries/errors";
import { BODY_LIMITS, readBody } from "../../src/handshake";
import { bodySource, readBytes, readResponse } from "../../src/io";

const MiB = BODY_LIMITS.bytes;
const bytes = (text: string) => new TextEncoder().encode(text);

/** A web stream of these chunks that records whether it was cancelled. */
function trackedStream(chunks: unknown[]) {
  const state = { cancelled: false };
  let i = 0;
  const stream = new ReadableStream<unknown>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]);
      else controller.close();
    },
    cancel: () => void (state.cancelled = true),
  });
  return { stream, state };
}

/** An async iterable (what a Node stream is to readers) that records whether it was closed early. */
function trackedIterable(chunks: unknown[]) {
  const state = { closed: false };
  async function* generate() {
    try {
      for (const chunk of chunks) yield chunk;
    } finally {
      state.closed = true;
    }
  }
  return { iterable: { [Symbol.asyncIterator]: () => generate() }, state };
}

const read = (data: unknown) => readBody(bodySource(data), undefined);
const failure = (work: Promise<unknown>) =>
  work.then(
    () => expect.unreachable("read"),
    (error: unknown) => error as InvalidChallengeError,
  );

describe("a 402 body as text (axios with responseType text)", () => {
  it("up to 1 MiB is read as it is; one byte more is INVALID_CHALLENGE", async () => {
    const limit = "x".repeat(MiB);
    await expect(readBody(limit, undefined)).resolves.toBe(limit);
    const error = await failure(readBody(`${limit}x`, undefined));
    expect(error).toBeInstanceOf(InvalidChallengeError);
    expect(error.message).toBe("The 402 body is larger than 1024 KiB.");
  });
});

describe("a 402 body as a stream", () => {
  it("exactly 1 MiB in chunks is read whole and in order; one byte more is INVALID_CHALLENGE and the stream is cancelled", async () => {
    const quarter = MiB / 4;
    const chunks = ["a", "b", "c", "d"].map((c) => bytes(c.repeat(quarter)));
    await expect(readBody(trackedStream(chunks).stream, undefined)).resolves.toBe(
      ["a", "b", "c", "d"].map((c) => c.repeat(quarter)).join(""),
    );

    const { stream, state } = trackedStream([...chunks, bytes("e"), bytes("never read")]);
    const error = await failure(readBody(stream, undefined));
    expect(error.code).toBe("INVALID_CHALLENGE");
    expect(error.message).toBe("The 402 body is larger than 1024 KiB.");
    expect(state.cancelled).toBe(true);
  });

  it("a stream that errors is INVALID_CHALLENGE 'could not be read', the stream's error as cause", async () => {
    const broken = new TypeError("socket hang up");
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(bytes('{"x402'));
        controller.error(broken);
      },
    });
    const error = await failure(readBody(stream, undefined));
    expect(error).toBeInstanceOf(InvalidChallengeError);
    expect(error.message).toBe("The 402 body could not be read.");
    expect(error.cause).toBe(broken);
  });

  it("a stream someone else already reads (locked) is INVALID_CHALLENGE 'could not be read'", async () => {
    const stream = new ReadableStream();
    stream.getReader();
    const error = await failure(readBody(stream, undefined));
    expect(error).toBeInstanceOf(InvalidChallengeError);
    expect(error.message).toBe("The 402 body could not be read.");
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it("chunks that are neither bytes nor text are INVALID_CHALLENGE, the cause naming what came", async () => {
    for (const [chunk, kind] of [
      [7, "number"],
      [null, "null"],
    ] as const) {
      const error = await failure(readBody(trackedStream([bytes("{"), chunk]).stream, undefined));
      expect(error.message).toBe("The 402 body could not be read.");
      expect((error.cause as Error).message).toBe(`A body chunk is ${kind}, not bytes or text.`);
    }
  });
});

describe("other bodies an HTTP library may hold (bodySource)", () => {
  const json = '{"x402Version":2,"accepts":[]}';

  it("bytes, a Blob, and a Node-style stream of text, byte or ArrayBuffer chunks are read as text", async () => {
    await expect(read(bytes(json))).resolves.toBe(json);
    await expect(read(bytes(json).buffer)).resolves.toBe(json);
    await expect(read(new Blob([json]))).resolves.toBe(json);
    await expect(read(trackedIterable(['{"x402Version"', ':2,"accepts":[]}']).iterable)).resolves.toBe(json);
    await expect(
      read(trackedIterable([bytes('{"x402Version":2,'), bytes('"accepts":[]}').buffer]).iterable),
    ).resolves.toBe(json);
  });

  it("parsed JSON passes through as it is", async () => {
    const parsed = { x402Version: 2 };
    await expect(read(parsed)).resolves.toBe(parsed);
  });

  it("where Blob or ReadableStream do not exist (some runtimes), parsed JSON still passes through", async () => {
    const parsed = { x402Version: 2 };
    for (const name of ["Blob", "ReadableStream"] as const) {
      const saved = globalThis[name];
      try {
        delete (globalThis as Record<string, unknown>)[name];
        expect(bodySource(parsed)).toBe(parsed);
        await expect(readBody(parsed, undefined)).resolves.toBe(parsed);
      } finally {
        (globalThis as Record<string, unknown>)[name] = saved;
      }
    }
  });

  it("a Node stream over 1 MiB is closed when reading stops", async () => {
    const { iterable, state } = trackedIterable([bytes("x".repeat(MiB)), bytes("y"), bytes("never read")]);
    const error = await failure(read(iterable));
    expect(error.message).toBe("The 402 body is larger than 1024 KiB.");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(state.closed).toBe(true);
  });

  it("an iterable that cannot be iterated is INVALID_CHALLENGE 'could not be read', its error as cause", async () => {
    const refused = new Error("already consumed");
    const error = await failure(
      read({
        [Symbol.asyncIterator]() {
          throw refused;
        },
      }),
    );
    expect(error).toBeInstanceOf(InvalidChallengeError);
    expect(error.message).toBe("The 402 body could not be read.");
    expect(error.cause).toBe(refused);
  });
});

describe("the bounded reader's bytes and fetch answers (src/io)", () => {
  /** A stream of `chunks`, counting how many were pulled. */
  const counted = (chunks: Uint8Array[]) => {
    const state = { pulled: 0 };
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks[state.pulled++];
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    return { stream, state };
  };

  it("readBytes joins every chunk in order, and refuses past maxBytes", async () => {
    const parts = [new Uint8Array([1, 2]), new Uint8Array([3]), new Uint8Array([4, 5, 6])];
    expect([...(await readBytes(counted(parts).stream, { maxBytes: 6 }))]).toEqual([1, 2, 3, 4, 5, 6]);
    await expect(readBytes(counted(parts).stream, { maxBytes: 5 })).rejects.toMatchObject({ reason: "size" });
  });

  it("readResponse refuses a declared length over the bound before reading any of the body", async () => {
    const { stream, state } = counted([new Uint8Array(8)]);
    const response = new Response(stream, { headers: { "content-length": "8" } });
    await expect(readResponse(response, { maxBytes: 4 })).rejects.toMatchObject({ reason: "size" });
    expect(state.pulled).toBe(0);
  });
});
