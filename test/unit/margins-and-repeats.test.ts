/**
 * Time margins, one millisecond either side, on a mocked clock; and two occurrences in one input wherever one is
 * handled. A margin tested only far inside and far outside lets "no margin at all" through; a rule tested on one
 * occurrence lets "the first one only" through.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getBase58Decoder } from "@solana/kit";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createX402Client } from "../../src";
import { engineOf } from "../../src/client";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { main } from "../../src/cli";
import { shown } from "../../src/cli/output";
import { redactSecrets } from "../../src/entries/errors";
import { batchSettlementEvm, evmSettlement, exactEvm, permit2Allowance } from "../../src/evm";
import { CLOCK_SKEW_SECONDS, MAX_AGE_SECONDS } from "../../src/extensions/sign-in-with-x";
import { checkDeclaration } from "../../src/extensions/sign-in-with-x/challenge";
import { fileChannelStore } from "../../src/file";
import { exactSvm, uptoSvm } from "../../src/svm";
import { PATH, SELLER, v2Challenge, v2Requirement } from "../support/seller";
import { buyer } from "../support/svm";
import { account } from "../support/wallets";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
afterEach(() => void vi.useRealTimers());

const CHANNEL = `0x${"ab".repeat(32)}`;
const iso = (ms: number) => new Date(ms).toISOString();

describe("fileChannelStore: a holder writes only while its lock is fresh with a third of lockTtlMs to spare", () => {
  const TTL = 30_000;
  const MARGIN = TTL / 3;

  /** Holds the channel at `t0` on a mocked clock (Date only: the file system runs for real), then saves at `t0 + at`. */
  async function saveAt(at: number) {
    const dir = mkdtempSync(join(tmpdir(), "x402-margin-"));
    dirs.push(dir);
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.now();
    const store = fileChannelStore(dir, { lockTtlMs: TTL, sync: false });
    const hold = await store.hold(CHANNEL);
    vi.setSystemTime(t0 + at);
    const saved = hold.save({ balance: "10", charged: "1", signed: "1" }).then(
      () => "saved",
      (error: Error) => error.message,
    );
    const outcome = await saved;
    await hold.release();
    vi.useRealTimers();
    return { outcome, state: await store.peek(CHANNEL) };
  }

  it("one ms inside the margin: saved", async () => {
    const { outcome, state } = await saveAt(TTL - MARGIN - 1);
    expect(outcome).toBe("saved");
    expect(state).toMatchObject({ balance: "10", charged: "1", signed: "1" });
  });

  it.each([TTL - MARGIN, TTL - MARGIN + 1, TTL - 1])(
    "at %s ms (the margin reached, the lock not yet stale): nothing is written",
    async (at) => {
      const { outcome, state } = await saveAt(at);
      expect(outcome).toMatch(/expired or was taken before its state was saved .*nothing was written/);
      expect(state).toBeUndefined();
    },
  );

  it("after a refused save, the next holder takes the channel once the lock is stale, one ms past lockTtlMs", async () => {
    const { outcome } = await saveAt(TTL - MARGIN);
    expect(outcome).toMatch(/nothing was written/);
    // The refused holder let go without removing a lock it could no longer vouch for: it is the breaker's.
    const dir = dirs.at(-1)!;
    const store = fileChannelStore(dir, { lockTtlMs: TTL, sync: false });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + TTL + 1_000);
    const next = await store.hold(CHANNEL);
    await next.save({ balance: "5", charged: "2", signed: "2" });
    await next.release();
    expect(await store.peek(CHANNEL)).toMatchObject({ balance: "5" });
  });
});

describe("fileChannelStore: a stalled holder's lock is broken at lockTtlMs after its last renewal, not before", () => {
  const TTL = 30_000;

  it.each([
    [TTL, "waits"],
    [TTL + 1, "takes it"],
  ])("a waiter %s ms after the holder's last renewal: %s", async (later, expected) => {
    const dir = mkdtempSync(join(tmpdir(), "x402-stale-"));
    dirs.push(dir);
    vi.useFakeTimers({ toFake: ["Date"] });
    // A whole second: a file system's modification times hold it exactly.
    const renewed = Math.ceil((Date.now() + 5_000) / 1000) * 1000;
    const stalled = fileChannelStore(dir, { lockTtlMs: TTL, sync: false });
    const holder = await stalled.hold(CHANNEL);
    // Its last renewal, by its clock: the save confirms (and renews) the lock.
    vi.setSystemTime(renewed);
    await holder.save({ balance: "10", charged: "1", signed: "1" });
    vi.setSystemTime(renewed + later);
    const waiter = fileChannelStore(dir, { lockTtlMs: TTL, sync: false });
    const controller = new AbortController();
    const taking = waiter.hold(CHANNEL, controller.signal).then(
      async (hold) => {
        expect(hold.state).toMatchObject({ balance: "10", charged: "1", signed: "1" });
        await hold.release();
        return "takes it";
      },
      (error: { code?: string }) => (error.code === "ABORTED" ? "waits" : String(error)),
    );
    // Taking it needs no time bound; waiting is seen over several rounds of the waiter's backoff (2 to 25 ms).
    if (expected === "waits") setTimeout(() => controller.abort(), 300);
    expect(await taking).toBe(expected);
    vi.useRealTimers();
  });
});

describe("sign-in-with-x: each time margin holds to the ms (CLOCK_SKEW_SECONDS, MAX_AGE_SECONDS)", () => {
  const url = "http://127.0.0.1:4021/weather";
  const issued = Date.parse("2025-02-27T16:00:00.000Z");
  const skew = CLOCK_SKEW_SECONDS * 1000;
  const declaration = (info: Record<string, unknown> = {}) => ({
    info: {
      domain: "127.0.0.1:4021",
      uri: url,
      version: "1",
      nonce: "0f1e2d3c4b5a6978",
      issuedAt: iso(issued),
      ...info,
    },
    supportedChains: [{ chainId: "eip155:84532", type: "eip191" }],
  });
  const reason = (d: unknown, now: number) => {
    try {
      checkDeclaration(d, { url, method: "GET" }, now);
    } catch (error) {
      return (error as { details: { reason: string } }).details.reason;
    }
    return "accepted";
  };
  const expires = issued + 120_000;
  const notBefore = issued + 30_000;

  it.each([
    ["issuedAt ahead of the clock by the skew", declaration(), issued - skew, "accepted"],
    ["issuedAt ahead by the skew and 1 ms", declaration(), issued - skew - 1, "issued_in_future"],
    [
      "issuedAt as old as MAX_AGE_SECONDS and the skew",
      declaration(),
      issued + MAX_AGE_SECONDS * 1000 + skew,
      "accepted",
    ],
    ["1 ms older", declaration(), issued + MAX_AGE_SECONDS * 1000 + skew + 1, "issued_too_long_ago"],
    ["expirationTime past by the skew", declaration({ expirationTime: iso(expires) }), expires + skew, "accepted"],
    ["past by the skew and 1 ms", declaration({ expirationTime: iso(expires) }), expires + skew + 1, "expired"],
    ["notBefore ahead by the skew", declaration({ notBefore: iso(notBefore) }), notBefore - skew, "accepted"],
    ["ahead by the skew and 1 ms", declaration({ notBefore: iso(notBefore) }), notBefore - skew - 1, "not_yet_valid"],
  ])("%s", (_, d, now, expected) => {
    expect(reason(d, now)).toBe(expected);
  });
});

describe("an EVM authorization's window, one ms either side of a second", () => {
  /** The signed window of an exact payment made at `nowMs`, for a requirement of `maxTimeoutSeconds`. */
  async function window(nowMs: number, maxTimeoutSeconds = 300) {
    const client = createX402Client({ schemes: [exactEvm({ signer: account, now: () => nowMs })] });
    const challenge = parseChallenge({
      header: encodeBase64Json(v2Challenge({ accepts: [v2Requirement({ maxTimeoutSeconds })] })),
    });
    const payment = await engineOf(client).createPayment(challenge, { url: `${SELLER}${PATH}`, method: "GET" });
    const { validAfter, validBefore } = (payment.payload.payload as { authorization: Record<string, string> })
      .authorization;
    return [Number(validAfter), Number(validBefore)];
  }
  const second = 1_750_000_000;

  it.each([
    [second * 1000 - 1, [second - 1 - 600, second - 1 + 300]],
    [second * 1000, [second - 600, second + 300]],
    [second * 1000 + 999, [second - 600, second + 300]],
  ])(
    "at %s ms: back-dated 600 s, valid for maxTimeoutSeconds from the second it was signed in",
    async (now, expected) => {
      expect(await window(now)).toEqual(expected);
    },
  );

  it("a deadline facilitators can meet: 6 s is refused, 7 s is signed", async () => {
    await expect(window(second * 1000, 6)).rejects.toMatchObject({ code: "NO_PAYABLE_REQUIREMENT" });
    expect(await window(second * 1000, 7)).toEqual([second - 600, second + 7]);
  });

  it("at the epoch: validAfter is not below 0", async () => {
    expect(await window(599_999)).toEqual([0, 599 + 300]);
  });
});

// ---------------------------------------------------------------- two occurrences in one input

/** Key-shaped values, fresh each run: EVM keys with and without 0x, Solana secret keys, key files' byte arrays. */
const shapes = () => [
  { shape: "EVM 0x + 64 hex", key: () => `0x${randomBytes(32).toString("hex")}` },
  { shape: "EVM 64 hex", key: () => randomBytes(32).toString("hex") },
  { shape: "Solana base58 secret key", key: () => getBase58Decoder().decode(new Uint8Array(randomBytes(64))) },
  { shape: "JSON byte array", key: () => JSON.stringify([...randomBytes(40)]) },
  // The library's redaction leaves a run of letters and digits alone (an id, a hash): only the CLI hides those.
  {
    shape: "a run of 64 letters and digits",
    key: () => randomBytes(48).toString("base64").replace(/[+/=]/g, "A"),
    cliOnly: true,
  },
];

describe.each(shapes())("redaction of two keys in one text: $shape", ({ key, cliOnly }) => {
  const [first, second] = [key(), key()];
  const text = `first ${first} and then ${second}.`;

  /** Each key replaced by `[redacted]`: none of it shown, and as many `[redacted]` as keys. */
  const hidesAll = (said: string, keys: string[]) => {
    for (const k of keys) expect(said).not.toContain(k.slice(-16));
    expect(said.split("[redacted]")).toHaveLength(keys.length + 1);
  };

  it("the CLI's redaction hides both", () => {
    hidesAll(shown(text), [first, second]);
  });

  if (!cliOnly)
    it("the library's redaction hides both", () => {
      hidesAll(redactSecrets(text), [first, second]);
    });

  it("three keys, one text: none is shown", () => {
    const third = key();
    hidesAll(shown(`${first} ${second}\n${third}`), [first, second, third]);
  });
});

describe("the CLI never echoes either of two keys given in one value", () => {
  const quiet = () => new AbortController().signal;
  async function cli(args: string[]) {
    let said = "";
    const code = await main(args, {
      env: {},
      writeOut: (chunk) => void (said += String(chunk)),
      writeErr: (text) => void (said += text),
      errIsTTY: false,
      readStdin: async () => new Uint8Array(),
      signal: quiet(),
    });
    return { code, said };
  }
  const places: [string, (value: string) => string[]][] = [
    ["where the URL goes", (v) => [v]],
    ["--max", (v) => ["--max", v, "https://api.example.com/x"]],
    ["--network", (v) => ["--network", v, "https://api.example.com/x"]],
    ["an unknown option", (v) => [`--evm-key=${v}`, "https://api.example.com/x"]],
  ];
  const cases = places.flatMap(([place, args]) => shapes().map(({ shape, key }) => ({ place, args, shape, key })));
  it.each(cases)("$place, $shape", async ({ args, key }) => {
    const [first, second] = [key(), key()];
    const { said } = await cli(args(`${first}:${second}`));
    expect(said).not.toBe("");
    for (const k of [first, second]) expect(said.toLowerCase()).not.toContain(k.slice(-16).toLowerCase());
  });
});

describe("RPC URLs carrying credentials are refused, a user name alone included, and each of two in a map", () => {
  const evmRpcs: [string, (rpc: unknown) => unknown][] = [
    ["batchSettlementEvm", (rpc) => batchSettlementEvm({ signer: account, rpc: rpc as never })],
    ["permit2Allowance", (rpc) => permit2Allowance({ rpc: rpc as never })],
    ["evmSettlement", (rpc) => evmSettlement({ rpc: rpc as never })],
  ];
  const svmRpcs: [string, (rpc: unknown) => unknown][] = [
    ["exactSvm", (rpc) => exactSvm({ signer: buyer, rpc: rpc as never })],
    ["uptoSvm", (rpc) => uptoSvm({ signer: buyer, rpc: rpc as never })],
  ];
  const KEY = "k3y0f4nrpcpr0v1d3r";
  const credentials = [
    ["a user name alone (an API key as the user)", `https://${KEY}@rpc.example`],
    ["a password alone", `https://:${KEY}@rpc.example`],
    ["a user and a password", `https://user:${KEY}@rpc.example`],
  ];

  /** What constructing with the RPC throws (each checks its rpc option at construction). */
  const refusal = (make: () => unknown) => {
    try {
      make();
    } catch (error) {
      return error as Error & { code?: string };
    }
    return undefined;
  };

  describe.each([
    ...evmRpcs.map((r) => [...r, "eip155:8453", "https://base.example"] as const),
    ...svmRpcs.map((r) => [...r, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "https://devnet.example"] as const),
  ])("%s", (_, make, network, plain) => {
    it.each(credentials)("%s: refused, and not shown", (_, url) => {
      const error = refusal(() => make(url));
      expect(error?.code).toBe("INVALID_CONFIG");
      expect(error?.message).toMatch(/credentials/);
      expect(error?.message).not.toContain(KEY);
    });

    it.each(credentials)("in a map, after a good entry: %s refused", (_, url) => {
      const error = refusal(() => make({ [network]: plain, [network.replace(/.$/, "0")]: url }));
      expect(error?.code).toBe("INVALID_CONFIG");
      expect(error?.message).not.toContain(KEY);
    });
  });
});
