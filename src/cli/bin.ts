/** The `x402-pay` command: runs the CLI on this process's arguments, streams and signals. */
import { bodySource, readBytes, type ReadError } from "../io";
import { main } from "./index";
import { UsageError } from "./output";

const interrupted = new AbortController();
// The first Ctrl-C ends the request (before the payment left, nothing is paid); a second one kills.
process.once("SIGINT", () => interrupted.abort(new DOMException("Interrupted", "AbortError")));

/** Standard input, refused past `maxBytes` (and closed there). */
async function readStdin(maxBytes: number): Promise<Uint8Array> {
  return readBytes(bodySource(process.stdin) as ReadableStream, { maxBytes }).catch((error: ReadError) => {
    if (error.reason !== "size") throw error.cause;
    throw new UsageError(`--data @-: standard input is larger than ${maxBytes} bytes.`);
  });
}

// stdout at the reader's pace: a write waits for 'drain' when the pipe is full, and fails once the
// reader has gone (EPIPE).
let stdoutFailed: Error | undefined;
process.stdout.on("error", (error) => void (stdoutFailed = error));
function writeOut(chunk: string | Uint8Array): void | Promise<void> {
  if (stdoutFailed) return Promise.reject(stdoutFailed);
  if (process.stdout.write(chunk)) return;
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      process.stdout.off("drain", done);
      process.stdout.off("error", done);
      if (error) reject(error);
      else resolve();
    };
    process.stdout.once("drain", done);
    process.stdout.once("error", done);
  });
}

process.exitCode = await main(process.argv.slice(2), {
  env: process.env,
  writeOut,
  writeErr: (text) => void process.stderr.write(text),
  errIsTTY: process.stderr.isTTY === true,
  readStdin,
  signal: interrupted.signal,
});
