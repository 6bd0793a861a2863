/**
 * The JSONL file ledger (`x402-pay/file`): records read back in order; a torn last line is skipped and
 * closed off; and a writer killed mid-stream loses none of the records it was told were stored, and
 * never leaves a line that breaks reading.
 */
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { spendBy, type LedgerRecord } from "../../src";
import { fileLedger } from "../../src/file";

const root = fileURLToPath(new URL("../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "x402-ledger-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const record = (id: string, over: Partial<LedgerRecord> = {}): LedgerRecord => ({
  id,
  time: "2026-11-23T12:00:00.000Z",
  outcome: "settled",
  url: "https://a.example/x",
  method: "GET",
  network: "eip155:84532",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  settledAmount: "10",
  ...over,
});

async function read(path: string) {
  const out: LedgerRecord[] = [];
  for await (const r of fileLedger(path).records()) out.push(r);
  return out;
}

describe("file ledger", () => {
  it("one line per record, read back in order; concurrent appends from one process keep their order; a missing file is empty", async () => {
    const path = join(dir, "a.jsonl");
    expect(await read(path)).toEqual([]);
    const ledger = fileLedger(path, { sync: false });
    await Promise.all(Array.from({ length: 50 }, (_, i) => ledger.append(record(`r${i}`))));
    expect((await read(path)).map((r) => r.id)).toEqual(Array.from({ length: 50 }, (_, i) => `r${i}`));
    expect(readFileSync(path, "utf8").split("\n")).toHaveLength(51);
    expect((await spendBy(ledger, "asset"))[0]).toMatchObject({ amount: "500", count: 50 });
  });

  it("named, it is the plug-in `ledger <name>` (a second ledger of one client)", () => {
    const path = join(dir, "named.jsonl");
    expect([fileLedger(path).name, fileLedger(path, { name: "audit", sync: false }).name]).toEqual([
      "ledger",
      "ledger audit",
    ]);
    expect(() => fileLedger(path, { name: "two words" })).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });

  it("a torn last line is skipped, and the next record starts a line of its own", async () => {
    const path = join(dir, "torn.jsonl");
    const ledger = fileLedger(path);
    await ledger.append(record("before"));
    appendFileSync(path, '{"id":"torn","time":"2026-11-23T12:00:00.0');
    expect((await read(path)).map((r) => r.id)).toEqual(["before"]);
    await ledger.append(record("after"));
    expect((await read(path)).map((r) => r.id)).toEqual(["before", "after"]);
  });

  it.each(["sync", "nosync"])(
    "a writer killed mid-stream (%s): every record it reported stored is there, and every line reads",
    async (mode) => {
      const path = join(dir, `killed-${mode}.jsonl`);
      const child = spawn(process.execPath, ["--import", "tsx", "test/support/ledger-writer.ts", path, mode], {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"],
      });
      let reported = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (reported += chunk));
      // Kill once it has stored a good number of records.
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (reported.split("\n").length > 200) {
            clearInterval(poll);
            resolve();
          }
        }, 5);
      });
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      const stored = reported.split("\n").slice(0, -1);
      const ids = new Set((await read(path)).map((r) => r.id));
      expect(stored.filter((id) => !ids.has(id))).toEqual([]);
      // Whole lines are whole records; at most the last is torn.
      const lines = readFileSync(path, "utf8").split("\n");
      const broken = lines.slice(0, -1).filter((line) => {
        try {
          JSON.parse(line);
          return false;
        } catch {
          return true;
        }
      });
      expect(broken).toEqual([]);
      // And the file takes more records after it.
      await fileLedger(path).append(record("after-crash"));
      expect([...(await read(path))].pop()!.id).toBe("after-crash");
    },
    30_000,
  );
});

describe("file ledger lines that are no record", () => {
  it("JSON that is not a record with an id (a number, null, an array, an object without id) is skipped", async () => {
    const path = join(dir, "odd.jsonl");
    appendFileSync(path, `${["42", "null", "[1]", '{"time":"x"}', '{"id":7}', '"text"', ""].join("\n")}\n`);
    await fileLedger(path).append(record("real"));
    expect((await read(path)).map((r) => r.id)).toEqual(["real"]);
  });
});
