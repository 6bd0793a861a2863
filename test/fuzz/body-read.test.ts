/**
 * Regressions found by the handshake fuzz property: reading a 402 body never lets an exception
 * other than an X402Error out, whatever the stream hands over.
 */
import { describe, expect, it } from "vitest";
import { createX402Client, handlePaymentRequired, isX402Error, type AnyX402Error, type Transport } from "../../src";
import { exactEvm } from "../../src/evm";
import { readBody } from "../../src/handshake";
import { bodySource } from "../../src/io";
import { countingSigner } from "../support/seller";

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
    const body = streamOf(
      bytes('{"x402'),
      bytes('Version":').buffer,
      new DataView(bytes("2,").buffer),
      new Uint16Array(bytes('"a":1}').buffer.slice(0, 6)),
    );
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

describe("reading a 402 body that cannot be started", () => {
  it("a stream already locked (a layer below read it) is INVALID_CHALLENGE (was: TypeError from getReader)", async () => {
    const body = streamOf(bytes("{}"));
    body.getReader();
    const error = await failure(readBody(body, undefined));
    expect(error.code).toBe("INVALID_CHALLENGE");
    expect(error.message).toMatch(/could not be read/);
  });

  it("an async iterable whose iterator cannot be made is INVALID_CHALLENGE (was: its TypeError)", async () => {
    const body = {
      [Symbol.asyncIterator]() {
        throw new TypeError("not iterable after all");
      },
    };
    expect((await failure(readBody(bodySource(body), undefined))).code).toBe("INVALID_CHALLENGE");
  });

  it("through the handshake: the caller gets INVALID_CHALLENGE, reported once, nothing signed", async () => {
    const { signer, calls } = countingSigner();
    const failed: AnyX402Error[] = [];
    const client = createX402Client({ schemes: [exactEvm({ signer })], onPaymentFailed: (e) => void failed.push(e) });
    const locked = streamOf(bytes("{}"));
    locked.getReader();
    const transport: Transport<{ status: number }> = {
      request: { url: "https://seller.example/premium", method: "GET" },
      requestHeader: () => null,
      resend: () => Promise.reject(new Error("must not resend")),
      status: (r) => r.status,
      redirected: () => false,
      header: () => null,
      body: () => locked,
      discard: () => {},
    };
    const error = await failure(handlePaymentRequired(client, transport, { status: 402 }));
    expect(error.code).toBe("INVALID_CHALLENGE");
    expect(failed).toEqual([error]);
    expect(calls).toHaveLength(0);
  });
});
