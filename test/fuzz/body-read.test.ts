/**
 * Regressions found by the handshake fuzz property: reading a 402 body never lets an exception
 * other than an X402Error out, whatever the stream hands over.
 */
import { describe, expect, it } from "vitest";
import { isX402Error } from "../../src";
import { readBody } from "../../src/handshake";

const bytes = (text: string) => new TextEncoder().encode(text);
const streamOf = (...chunks: unknown[]) =>
  new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });

async function failure(work: Promise<unknown>) {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isX402Error(error), String(error)).toBe(true);
  return error as { code: string; message: string };
}

describe("reading a 402 body: chunks that are not a Uint8Array", () => {
  it("reads ArrayBuffer and other views as their bytes, after a Uint8Array (was: RangeError from Uint8Array.set)", async () => {
    const body = streamOf(bytes('{"x402'), bytes('Version":').buffer, new DataView(bytes("2,").buffer), new Uint16Array(bytes('"a":1}').buffer.slice(0, 6)));
    await expect(readBody(body, undefined)).resolves.toBe('{"x402Version":2,"a":1}');
  });

  it.each([
    ["a number", 7],
    ["null", null],
    ["an array-like object", { length: 3 }],
  ])("refuses %s as INVALID_CHALLENGE", async (_, chunk) => {
    const error = await failure(readBody(streamOf(bytes("{"), chunk, bytes("}")), undefined));
    expect(error.code).toBe("INVALID_CHALLENGE");
  });
});
