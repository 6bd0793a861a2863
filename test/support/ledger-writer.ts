/**
 * A child process for the file ledger's crash test: appends records to the file named by argv[2] as
 * fast as it can, several at a time, and prints each record's id once its append has resolved. The
 * test kills it with SIGKILL mid-stream.
 */
import { fileLedger } from "../../src/file";

const ledger = fileLedger(process.argv[2]!, { sync: process.argv[3] !== "nosync" });
let n = 0;
async function writer(lane: number) {
  for (;;) {
    const id = `${process.pid}-${lane}-${n++}`;
    // Long lines, so a write is more likely to be cut by the kill.
    await ledger.append({
      id,
      time: new Date().toISOString(),
      outcome: "settled",
      url: `https://a.example/${"x".repeat(3000)}`,
      method: "GET",
    });
    process.stdout.write(`${id}\n`);
  }
}
for (let lane = 0; lane < 4; lane++) void writer(lane);
