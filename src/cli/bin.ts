/** The `x402-pay` command: runs the CLI on this process's arguments, streams and signals. */
import { main } from "./index";

const interrupted = new AbortController();
// The first Ctrl-C ends the request (before the payment left, nothing is paid); a second one kills.
process.once("SIGINT", () => interrupted.abort(new DOMException("Interrupted", "AbortError")));

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

process.exitCode = await main(process.argv.slice(2), {
  env: process.env,
  writeOut: (chunk) => void process.stdout.write(chunk),
  writeErr: (text) => void process.stderr.write(text),
  errIsTTY: process.stderr.isTTY === true,
  readStdin,
  signal: interrupted.signal,
});
