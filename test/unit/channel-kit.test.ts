/**
 * The kit channel stores are built with (src/contracts/channels.ts), at its edges: turns on a channel within a process
 * (never two holders, whatever order they leave in), the id a store takes, a stored state read back (a corrupt one is
 * an error, never a channel not known; what it keeps and nothing else), and the waits of a lock (a pause that stops
 * on its signal and leaves no timer, a backoff that stays within its bounds). The stores' contract, run against each
 * store, is test/support/store-contracts.ts; this is what every store shares.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  backoff,
  channelLines,
  channelStateFrom,
  channelStateJson,
  checkChannelId,
  pause,
  type ChannelState,
} from "../../src/contracts";

const ID = `0x${"ab".repeat(32)}`;

describe("channelLines: one holder per channel at a time, in arrival order", () => {
  it("the third to ask waits for the second, after the first let go (the line is kept while anyone is in it)", async () => {
    const line = channelLines();
    const log: string[] = [];
    const leaveA = await line(ID);
    const b = line(ID).then((leave) => (log.push("b"), leave));
    await Promise.resolve();
    leaveA();
    const leaveB = await b;
    // B holds; C asks now: it waits for B.
    const c = line(ID).then((leave) => (log.push("c"), leave));
    await new Promise((r) => setTimeout(r, 5));
    expect(log).toEqual(["b"]);
    leaveB();
    (await c)();
    expect(log).toEqual(["b", "c"]);
    // All gone: the next takes the channel at once.
    const leaveD = await line(ID);
    leaveD();
  });

  it("another channel's line is its own", async () => {
    const line = channelLines();
    const leave = await line(ID);
    const other = await Promise.race([
      line(`0x${"cd".repeat(32)}`),
      new Promise((r) => setTimeout(() => r("waited"), 20)),
    ]);
    expect(other).toBeTypeOf("function");
    (other as () => void)();
    leave();
  });

  it("a wait given up on its signal: ABORTED, and the turn passes on to the next as soon as it comes", async () => {
    const line = channelLines();
    const leaveA = await line(ID);
    const controller = new AbortController();
    const b = line(ID, controller.signal);
    const c = line(ID);
    controller.abort();
    await expect(b).rejects.toMatchObject({ code: "ABORTED" });
    leaveA();
    (await c)();
  });
});

describe("checkChannelId: 0x and 64 lower-case hex digits, nothing else", () => {
  it.each([
    ["upper-case", `0x${"AB".repeat(32)}`],
    ["one digit short", ID.slice(0, -1)],
    ["one digit more", `${ID}a`],
    ["text before it", `x${ID}`],
    ["no 0x", "ab".repeat(33)],
    ["a path", `0x${"ab".repeat(31)}/.`],
    ["not a string", 42],
  ])("%s: a TypeError naming the store", (_name, id) => {
    expect(() => checkChannelId("fileChannelStore", id)).toThrow(
      new TypeError("fileChannelStore: a channel id is 0x and 64 lower-case hex digits."),
    );
  });

  it("a good id passes", () => {
    expect(() => checkChannelId("fileChannelStore", ID)).not.toThrow();
  });
});

describe("channelStateFrom: a stored state read back", () => {
  const full: ChannelState = {
    balance: "1000",
    charged: "30",
    signed: "40",
    signature: "0xsig",
    disputed: "the seller's account did not hold up",
    owners: { "40": "attempt-1" },
    ended: { "attempt-0": "charged", "attempt-9": "dropped" },
  };

  it("what channelStateJson wrote, and only the fields of a channel state (frozen)", () => {
    const read = channelStateFrom("s", ID, channelStateJson(full));
    expect(read).toStrictEqual(full);
    expect(Object.isFrozen(read)).toBe(true);
    const extra = channelStateFrom("s", ID, JSON.stringify({ ...full, note: "x" }));
    expect(Object.keys(extra).sort()).toEqual(Object.keys(full).sort());
  });

  it("absent optional fields stay absent (not present as undefined)", () => {
    const read = channelStateFrom("s", ID, channelStateJson({ balance: "1", charged: "0", signed: "0" }));
    expect(Object.keys(read)).toEqual(["balance", "charged", "signed"]);
  });

  const bad: [string, unknown][] = [
    ["not JSON", "{ not a channel"],
    ["null", null],
    ["a number", 7],
    ["balance not decimal", { ...full, balance: "0x10" }],
    ["balance with text after", { ...full, balance: "10 " }],
    ["balance with text before", { ...full, balance: "-10" }],
    ["balance a number", { ...full, balance: 10 }],
    ["balance past 78 digits", { ...full, balance: "1".repeat(79) }],
    ["charged missing", { ...full, charged: undefined }],
    ["signed empty", { ...full, signed: "" }],
    ["signature not text", { ...full, signature: 5 }],
    ["disputed not text", { ...full, disputed: true }],
    ["an owner not text", { ...full, owners: { "40": 1 } }],
    ["one owner of two not text", { ...full, owners: { "40": "attempt-1", "50": 2 } }],
    ["owners a list", { ...full, owners: ["attempt-1"] }],
    ["owners null", { ...full, owners: null }],
    ["owners text", { ...full, owners: "attempt-1" }],
    ["an end neither charged nor dropped", { ...full, ended: { a: "paid" } }],
    ["ended a list", { ...full, ended: ["charged"] }],
  ];
  it.each(bad)("%s: an error naming the store and channel; never 'not known'", (_name, value) => {
    const json = typeof value === "string" ? value : JSON.stringify(value);
    expect(() => channelStateFrom("redisChannelStore", ID, json)).toThrow(
      `redisChannelStore: the stored state of channel ${ID} is not a channel state; it was left as it is.`,
    );
  });

  it("the largest amount a uint256 can hold (78 digits) is a state", () => {
    const max = (2n ** 256n - 1n).toString();
    expect(channelStateFrom("s", ID, channelStateJson({ balance: max, charged: "0", signed: "0" })).balance).toBe(max);
  });
});

describe("the waits of a lock", () => {
  afterEach(() => void vi.useRealTimers());

  it("pause waits its time, and on its signal rejects ABORTED at once, leaving no timer", async () => {
    vi.useFakeTimers();
    let done = false;
    const waiting = pause(100).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(99);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    expect(done).toBe(true);

    const controller = new AbortController();
    const stopped = pause(60_000, controller.signal);
    controller.abort();
    await expect(stopped).rejects.toMatchObject({ code: "ABORTED" });
    expect(vi.getTimerCount()).toBe(0);
    // Already aborted: not even started.
    expect(() => pause(10, controller.signal)).toThrow(expect.objectContaining({ code: "ABORTED" }));
  });

  it("backoff grows from 1–2 ms to at most 25 ms, jittered by up to half", () => {
    const samples = (attempt: number) => Array.from({ length: 200 }, () => backoff(attempt));
    for (const ms of samples(0)) expect(ms >= 1 && ms <= 2).toBe(true);
    for (const ms of samples(3)) expect(ms >= 3.375 && ms <= 6.75).toBe(true);
    for (const ms of samples(40)) expect(ms >= 12.5 && ms <= 25).toBe(true);
    // Jittered: not one value.
    expect(new Set(samples(40)).size).toBeGreaterThan(1);
  });
});
