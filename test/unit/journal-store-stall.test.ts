/**
 * A file journal's writer that stalls while it holds the lock (src/file/journal.ts): by the time it is ready to append,
 * its lock may be another process's (a waiter broke it as stale) or too old to trust. It must then write nothing and say
 * so; a line appended then could let one key be paid twice across processes.
 *
 * The stall is made deterministic by holding the store's read of the file (`readLinesFrom`, which runs under the
 * lock) at a gate: a module mock of our own file-reading helper, not of the filesystem (the lock and the journal are
 * real files).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { fileJournalStore } from "../../src/file";
import { journaled } from "../support/store-contracts";

const gate = vi.hoisted(() => {
  let release: (() => void) | undefined;
  let reached: (() => void) | undefined;
  return {
    /** Arms the gate: the next read of the file waits until `open()`; resolves once a read is held there. */
    arm(): Promise<void> {
      return new Promise<void>((resolve) => {
        reached = resolve;
      });
    },
    async pass(): Promise<void> {
      if (!reached) return;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      reached();
      reached = undefined;
      await held;
    },
    open() {
      release?.();
      release = undefined;
    },
  };
});

vi.mock("../../src/file/lines", async (importActual) => {
  const actual = await importActual<typeof import("../../src/file/lines")>();
  return {
    ...actual,
    readLinesFrom: async (path: string, offset: number) => {
      await gate.pass();
      return actual.readLinesFrom(path, offset);
    },
  };
});

const dir = mkdtempSync(join(tmpdir(), "x402-journal-stall-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  gate.open();
  vi.useRealTimers();
});

let run = 0;
const journalFile = () => join(dir, `journal-${++run}.jsonl`);
const lines = async (path: string) =>
  (await readFile(path, "utf8").catch(() => ""))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { id: string; state: string });

describe("a journal writer that stalls holding the file's lock", () => {
  it("whose lock another process took meanwhile appends nothing and rejects, naming the stall", async () => {
    const path = journalFile();
    const store = fileJournalStore(path, { sync: false });
    expect(await store.put(journaled("a1"))).toBe(true);

    const held = gate.arm();
    const put = store.put(journaled("a1", { state: "signed" }), { over: "intent" });
    await held;
    // Another process broke the lock as stale and holds it now, with its own token.
    await writeFile(`${path}.lock`, "f".repeat(32));
    gate.open();

    await expect(put).rejects.toThrow(/stalled past the journal's lock, so wrote nothing/);
    expect(await lines(path)).toEqual([expect.objectContaining({ id: "a1", state: "intent" })]);
    // The other process's lock is left to it.
    expect(await readFile(`${path}.lock`, "utf8")).toBe("f".repeat(32));
  });

  it("past two thirds of the lock's time to live appends nothing, even with the lock still its own", async () => {
    const path = journalFile();
    const store = fileJournalStore(path, { sync: false });
    vi.useFakeTimers({ toFake: ["Date"] });
    const T = Math.floor(Date.now() / 1000) * 1000;
    vi.setSystemTime(T);

    const held = gate.arm();
    const put = store.put(journaled("b1"));
    await held;
    // The lock lives 5 s; it is trusted while a third of that is left (3,333 ms after it was taken).
    vi.setSystemTime(T + 3334);
    gate.open();

    await expect(put).rejects.toThrow(/stalled past the journal's lock/);
    expect(await lines(path)).toEqual([]);
    // The next write waits out the lock the stalled one left (no longer trusted, so not removed), then goes on.
    vi.setSystemTime(T + 10_000);
    expect(await store.put(journaled("b1"))).toBe(true);
    expect(await lines(path)).toEqual([expect.objectContaining({ id: "b1", state: "intent" })]);
  });

  it("held short of that appends its line as usual", async () => {
    const path = journalFile();
    const store = fileJournalStore(path, { sync: false });
    vi.useFakeTimers({ toFake: ["Date"] });
    const T = Math.floor(Date.now() / 1000) * 1000;
    vi.setSystemTime(T);

    const held = gate.arm();
    const put = store.put(journaled("c1"));
    await held;
    vi.setSystemTime(T + 3333);
    gate.open();

    expect(await put).toBe(true);
    expect(await lines(path)).toEqual([expect.objectContaining({ id: "c1", state: "intent" })]);
  });
});
