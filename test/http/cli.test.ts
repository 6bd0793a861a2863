/**
 * The command line in this process (`main` with a test's stdout, stderr and signal) against scripted
 * sellers and discovery endpoints (msw): key material handed to it in the wrong place is never echoed
 * nor made a file name; every run is bounded like the library (the 402 body, `--max-time` beside
 * Ctrl-C, the answer streamed); what must hold for a paid answer to be kept is checked before anything
 * is sent; exit codes.
 * (test/interop/cli.test.ts runs the built command against the reference stack.)
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getBase58Decoder } from "@solana/kit";
import { http, HttpResponse, delay } from "msw";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli";
import { JSON_SNIFF_BYTES } from "../../src/cli/answer";
import { EXIT } from "../../src/cli/exit";
import { useMswServer } from "../support/msw";
import { PATH, SELLER, TX_HASH, USDC_BASE, challengeResponse, createSeller, settlementHeader } from "../support/seller";
import { v2Challenge, v2Requirement } from "../support/seller";
import { ANVIL_KEY_0 } from "../support/vectors";

const server = useMswServer();
const URL_ = `${SELLER}${PATH}`;
const FACILITATOR = "https://facilitator.example";
let dir: string;
beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), "x402-cli-http-"))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Ran {
  code: number;
  stdout: Buffer;
  stderr: string;
}

const quietSignal = () => new AbortController().signal;

/** Runs the CLI with `args` and only `env`; stdin is `stdin`; `signal` plays Ctrl-C. */
async function cli(args: string[], env: Record<string, string> = {}, stdin = "", signal = quietSignal()): Promise<Ran> {
  const out: Buffer[] = [];
  let stderr = "";
  const code = await main(args, {
    env,
    writeOut: (chunk) => void out.push(Buffer.from(chunk)),
    writeErr: (text) => void (stderr += text),
    errIsTTY: false,
    readStdin: async () => new TextEncoder().encode(stdin),
    signal,
  });
  return { code, stdout: Buffer.concat(out), stderr };
}

const paying = { EVM_PRIVATE_KEY: ANVIL_KEY_0 };

// ---------------------------------------------------------------- key material

/** Fresh key-shaped values each run: an EVM key (with and without 0x), a Solana secret key, a key file's byte array. */
const keys = (() => {
  const evm = randomBytes(32).toString("hex");
  const solana = randomBytes(64);
  return [
    { shape: "EVM 0x + 64 hex", key: `0x${evm}` },
    { shape: "EVM 64 hex", key: randomBytes(32).toString("hex") },
    { shape: "Solana base58 secret key", key: getBase58Decoder().decode(solana) },
    { shape: "JSON byte array", key: JSON.stringify([...randomBytes(64)]) },
  ];
})();

/** Does `text` hold any 12 characters of `key` in a row, in any case? */
function leaks(text: string, key: string): boolean {
  const haystack = text.toLowerCase();
  for (let at = 0; at + 12 <= key.length; at++) {
    if (haystack.includes(key.slice(at, at + 12).toLowerCase())) return true;
  }
  return false;
}

describe("key material handed in the wrong place is never echoed, nor made a file name", () => {
  const solanaKey = getBase58Decoder().decode(new Uint8Array(randomBytes(64)));
  // Each place a value goes, with the exit code: every message is the CLI's own words, commander's included.
  type Place = { place: string; args: (key: string) => string[]; env?: Record<string, string>; code: number | [2, 3] };
  const places: Place[] = [
    { place: "where the URL goes", args: (k) => [k], code: EXIT.usage },
    // Refused as no URL, or sent and failed: either way its host is never shown, lower-cased or not.
    { place: "in the URL's host", args: (k) => [`http://${k.replace(/[[\],]/g, "")}/`], env: paying, code: [2, 3] },
    { place: "--evm-key-file", args: (k) => ["--evm-key-file", k, URL_], code: EXIT.usage },
    { place: "--svm-key-file", args: (k) => ["--svm-key-file", k, URL_], code: EXIT.usage },
    { place: "-H", args: (k) => ["-H", k, URL_], env: paying, code: EXIT.usage },
    { place: "-d @file", args: (k) => ["-d", `@${k}`, URL_], env: paying, code: EXIT.usage },
    { place: "-X", args: (k) => ["-X", k, URL_], env: paying, code: EXIT.usage },
    { place: "--ledger", args: (k) => ["--ledger", join(dir, k), URL_], env: paying, code: EXIT.usage },
    { place: "X402_LEDGER", args: () => [URL_], env: {}, code: EXIT.usage },
    { place: "-o", args: (k) => ["-o", join(dir, k), URL_], env: paying, code: EXIT.usage },
    { place: "an unknown option --evm-key=", args: (k) => [`--evm-key=${k}`, URL_], code: EXIT.usage },
    { place: "an unknown option's value", args: (k) => ["--evm-key", k, URL_], code: EXIT.usage },
    { place: "--max", args: (k) => ["--max", k, URL_], env: paying, code: EXIT.usage },
    { place: "--network", args: (k) => ["--network", k, URL_], env: paying, code: EXIT.usage },
    { place: "--max-time", args: (k) => ["--max-time", k, URL_], env: paying, code: EXIT.usage },
    { place: "--svm-rpc", args: (k) => ["--svm-rpc", k, URL_], env: { SVM_PRIVATE_KEY: solanaKey }, code: EXIT.usage },
    { place: "ledger --ledger", args: (k) => ["ledger", "--ledger", join(dir, k)], code: EXIT.usage },
    { place: "ledger --by", args: (k) => ["ledger", "--by", k, "--ledger", join(dir, "none.jsonl")], code: EXIT.usage },
    { place: "discover's facilitator", args: (k) => ["discover", k], code: EXIT.usage },
    { place: "discover --max-items", args: (k) => ["discover", FACILITATOR, "--max-items", k], code: EXIT.usage },
    { place: "discover --max-pages", args: (k) => ["discover", FACILITATOR, "--max-pages", k], code: EXIT.usage },
    { place: "discover --max", args: (k) => ["discover", FACILITATOR, "--max", k], code: EXIT.usage },
  ];

  const cases = places.flatMap((p) => keys.map((k) => ({ ...p, ...k })));
  it.each(cases)("$place, $shape", async ({ args, env, key, code, place }) => {
    // Whatever is sent anywhere fails as a network error: nothing is paid, nothing answers.
    server.use(http.all("*", () => HttpResponse.error()));
    const environment = place === "X402_LEDGER" ? { ...paying, X402_LEDGER: join(dir, key) } : (env ?? {});
    const ran = await cli(args(key), environment);
    expect(leaks(`${ran.stdout}${ran.stderr}`, key), ran.stderr).toBe(false);
    expect([code].flat(), ran.stderr).toContain(ran.code);
    expect(ran.stderr).not.toBe("");
    // No file is named after it.
    expect(readdirSync(dir).filter((name) => leaks(name, key))).toEqual([]);
  });

  it("a key-shaped -o or --ledger path is refused with a usage error saying why, before anything is sent", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const key = keys[0]!.key;
    for (const flag of ["-o", "--ledger"]) {
      const ran = await cli([flag, join(dir, `${key}.json`), URL_], paying);
      expect(ran.code).toBe(EXIT.usage);
      const shapes = "64 hex digits, a base58 secret key, a byte array";
      const said = `the file name looks like key material (${shapes}); refused, and not shown.`;
      expect(ran.stderr).toBe(`x402-pay: ${flag}: ${said}\n`);
    }
    expect(seller.requests).toHaveLength(0);
  });
});

// ---------------------------------------------------------------- checked before anything is sent

describe("what must hold for the answer to be kept is checked before anything is sent", () => {
  it.each([
    { name: "-o in a directory that does not exist", args: () => ["-o", join(dir, "missing", "out.json")] },
    { name: "-o naming a directory", args: () => ["-o", dir] },
    { name: "--ledger in a missing directory", args: () => ["--ledger", join(dir, "missing", "spend.jsonl")] },
    { name: "--ledger naming a directory", args: () => ["--ledger", dir] },
  ])("$name: exit 2, no request sent, nothing signed", async ({ args }) => {
    const seller = createSeller();
    server.use(seller.handler);
    const ran = await cli([...args(), URL_], paying);
    expect(ran.code).toBe(EXIT.usage);
    expect(ran.stderr).toMatch(/cannot be written|not a regular file/);
    expect(seller.requests).toHaveLength(0);
  });

  it("-o: kept as it was when nothing is paid, or removed if the run made it; a paid answer replaces it", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const kept = join(dir, "kept.json");
    writeFileSync(kept, "before");
    expect((await cli(["--max", "0.001", "-o", kept, URL_], paying)).code).toBe(EXIT.refused);
    expect(readFileSync(kept, "utf8")).toBe("before");
    const fresh = join(dir, "fresh.json");
    expect((await cli(["--max", "0.001", "-o", fresh, URL_], paying)).code).toBe(EXIT.refused);
    expect(existsSync(fresh)).toBe(false);
    expect((await cli(["-o", kept, URL_], paying)).code).toBe(EXIT.ok);
    expect(JSON.parse(readFileSync(kept, "utf8"))).toEqual({ data: "premium" });
  });
});

// ---------------------------------------------------------------- bounded like the library

/** A body of `chunks` chunks of 64 KiB; `sent()` says how many bytes were pulled. */
function flood(chunks: number) {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= chunks * 65_536) return controller.close();
      sent += 65_536;
      controller.enqueue(new Uint8Array(65_536).fill(0x61));
    },
  });
  return { stream, sent: () => sent };
}

/** A body that sends `first` and then nothing, for ever. */
const drip = (first = "{") =>
  new ReadableStream<Uint8Array>({ start: (controller) => controller.enqueue(new TextEncoder().encode(first)) });
const JSON_TYPE = { "content-type": "application/json" };

describe("--dry-run reads a 402 body with the library's bounds", () => {
  it("a flood is refused at 1 MiB as it arrives: exit 9, INVALID_CHALLENGE (not CHALLENGE_NOT_FOUND)", async () => {
    const body = flood(800);
    server.use(http.get(URL_, () => new HttpResponse(body.stream, { status: 402, headers: JSON_TYPE })));
    const ran = await cli(["--dry-run", URL_]);
    expect(ran.code).toBe(EXIT.challenge);
    expect(ran.stderr).toContain("INVALID_CHALLENGE: The 402 body is larger than 1024 KiB.");
    expect(body.sent()).toBeLessThan(8 * 1024 * 1024);
  });

  it("a body that drips and never ends is given up after the library's 10 s, even without --max-time", async () => {
    server.use(http.get(URL_, () => new HttpResponse(drip(), { status: 402, headers: JSON_TYPE })));
    const ran = await cli(["--dry-run", "--max-time", "0", URL_]);
    expect(ran.code).toBe(EXIT.challenge);
    expect(ran.stderr).toContain("INVALID_CHALLENGE: The 402 body did not finish within 10 s.");
  }, 30_000);
});

describe("--max-time bounds the whole run", () => {
  it("a server that never answers: exit 11, nothing paid", async () => {
    server.use(http.get(URL_, () => delay("infinite")));
    const ran = await cli(["--max-time", "0.2", URL_], paying);
    expect(ran.code).toBe(EXIT.timeout);
    expect(ran.stderr).toContain("x402-pay: No whole answer within --max-time 0.2 s: nothing was paid.");
  });

  it("--dry-run and a free answer whose body never ends: exit 11", async () => {
    server.use(http.get(URL_, () => delay("infinite")));
    expect((await cli(["--dry-run", "--max-time", "0.2", URL_])).code).toBe(EXIT.timeout);
    server.use(http.get(URL_, () => new HttpResponse(drip("abc"), { status: 200 })));
    const ran = await cli(["--max-time", "0.2", URL_], paying);
    expect(ran.code).toBe(EXIT.timeout);
    expect(ran.stdout.toString()).toBe("abc");
  });

  it("after the payment left, no answer: exit 8, money may have moved, said loudly", async () => {
    const seller = createSeller({ paid: () => delay("infinite") as never });
    server.use(seller.handler);
    const ran = await cli(["--max-time", "0.5", URL_], paying);
    expect(seller.verdicts.map((v) => v.ok)).toEqual([true]);
    expect(ran.code).toBe(EXIT.unknown);
    expect(ran.stderr).toContain("--max-time (0.5 s) ran out after the payment left");
    expect(ran.stderr).toContain("MONEY MAY HAVE MOVED");
  });

  it("after the payment settled, a paid body that never ends: exit 8 (not a timeout), what came is kept", async () => {
    const network = "eip155:84532";
    const settled = (payer: string) => settlementHeader(2, { success: true, transaction: TX_HASH, network, payer });
    const answer = (payer: string) => new HttpResponse(drip("partial"), { status: 200, headers: settled(payer) });
    const seller = createSeller({ paid: (verdict) => answer(verdict.payer) });
    server.use(seller.handler);
    const out = join(dir, "partial.txt");
    const ran = await cli(["--max-time", "0.5", "-o", out, URL_], paying);
    expect(ran.code).toBe(EXIT.unknown);
    expect(ran.stderr).toContain(`settled: transaction ${TX_HASH}`);
    const written = "7 bytes of the answer written";
    expect(ran.stderr).toContain(`x402-pay: --max-time (0.5 s) ran out after the payment left (${written}).\n`);
    expect(ran.stderr).toContain("MONEY MAY HAVE MOVED");
    expect(readFileSync(out, "utf8")).toBe("partial");
  });

  it("a paid body cut by the server: exit 8", async () => {
    const seller = createSeller({
      paid: () =>
        new HttpResponse(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode("half"));
              controller.error(new Error("connection reset"));
            },
          }),
          { status: 200 },
        ),
    });
    server.use(seller.handler);
    const ran = await cli([URL_], paying);
    expect(ran.code).toBe(EXIT.unknown);
    expect(ran.stderr).toContain("x402-pay: The paid answer was cut");
  });

  // The paid request was answered, and the answer does not say the payment settled: fetch returns it,
  // the library reports the outcome, and the exit code is the outcome's, not the status's (4).
  it.each([
    {
      answer: "a 500 without a settlement report",
      paid: () => new HttpResponse("upstream failed", { status: 500 }),
      code: "PAYMENT_OUTCOME_UNKNOWN",
    },
    {
      answer: "a settlement still pending",
      paid: () => {
        const pending = {
          success: false,
          errorReason: "settlement_pending",
          transaction: TX_HASH,
          network: "eip155:84532",
        };
        return HttpResponse.json({}, { status: 402, headers: settlementHeader(2, pending) });
      },
      code: "PAYMENT_PENDING",
    },
  ])(
    "a paid request answered with $answer: exit 8, said loudly, in the ledger to reconcile",
    async ({ paid, code }) => {
      const seller = createSeller({ paid });
      server.use(seller.handler);
      const ledger = join(dir, `${code}.jsonl`);
      const ran = await cli(["--ledger", ledger, URL_], paying);
      expect(seller.verdicts.map((v) => v.ok)).toEqual([true]);
      expect(ran.code).toBe(EXIT.unknown);
      expect(ran.stderr).toContain(code);
      expect(ran.stderr).toContain("MONEY MAY HAVE MOVED");
      expect((await cli(["ledger", "--ledger", ledger])).stdout.toString()).toContain("Outcomes to reconcile: 1");
    },
  );

  it("Ctrl-C before --max-time, before the payment left: exit 130; after it: exit 8", async () => {
    server.use(http.get(URL_, () => delay("infinite")));
    const interrupt = new AbortController();
    setTimeout(() => interrupt.abort(new DOMException("Interrupted", "AbortError")), 50);
    expect((await cli(["--max-time", "60", URL_], paying, "", interrupt.signal)).code).toBe(EXIT.aborted);
    const seller = createSeller({ paid: () => delay("infinite") as never });
    server.use(seller.handler);
    const late = new AbortController();
    const ran = cli(["--max-time", "60", URL_], paying, "", late.signal);
    while (seller.verdicts.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    late.abort(new DOMException("Interrupted", "AbortError"));
    const after = await ran;
    expect(after.code).toBe(EXIT.unknown);
    expect(after.stderr).toContain("MONEY MAY HAVE MOVED");
  });

  it.each(["-1", "1e3", "abc", "", "2147484"])("--max-time %j: exit 2", async (value) => {
    const ran = await cli(["--max-time", value, URL_], paying);
    expect(ran.code).toBe(EXIT.usage);
    expect(ran.stderr).toBe("x402-pay: --max-time takes seconds, such as 30 or 2.5 (0: no limit).\n");
  });
});

describe("the answer streams: -o and --json never hold it whole", () => {
  const answer = (bytes: Uint8Array, chunk = 1000) => {
    server.use(
      http.get(
        URL_,
        () =>
          new HttpResponse(
            new ReadableStream({
              start(controller) {
                for (let at = 0; at < bytes.length; at += chunk) controller.enqueue(bytes.slice(at, at + chunk));
                controller.close();
              },
            }),
            { status: 200, headers: { "content-type": "application/octet-stream" } },
          ),
      ),
    );
  };
  const json = async () => {
    const ran = await cli(["--json", URL_], paying);
    expect(ran.code).toBe(EXIT.ok);
    expect(ran.stdout.toString().endsWith("}\n")).toBe(true);
    return JSON.parse(ran.stdout.toString());
  };

  it("text past the 64 KiB it judges by, characters split between chunks: body, exact", async () => {
    const text = "Previsão ☀ 𝄞 ".repeat(20_000);
    answer(new TextEncoder().encode(text), 777);
    const out = await json();
    expect(out).toMatchObject({ status: 200, payment: null });
    expect(out.body).toBe(text);
    expect(Object.keys(out)).toEqual(["status", "headers", "payment", "body"]);
  });

  it("bytes that are not UTF-8, short or long: bodyBase64, exact", async () => {
    for (const size of [10, JSON_SNIFF_BYTES - 1, JSON_SNIFF_BYTES + 1, 300_001]) {
      const bytes = new Uint8Array(randomBytes(size));
      bytes[0] = 0xff;
      answer(bytes, 4099);
      const out = await json();
      expect(out.body).toBeUndefined();
      expect(Buffer.from(out.bodyBase64, "base64").equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it("an empty body, and a body at most 64 KiB judged whole (an invalid byte at its end: base64)", async () => {
    answer(new Uint8Array(0));
    expect((await json()).body).toBe("");
    const bytes = new Uint8Array(JSON_SNIFF_BYTES).fill(0x61);
    bytes[bytes.length - 1] = 0xc3;
    answer(bytes);
    expect(Buffer.from((await json()).bodyBase64, "base64").equals(Buffer.from(bytes))).toBe(true);
  });

  it("-o writes the bytes as they come; --json -o writes the object there", async () => {
    const bytes = new Uint8Array(randomBytes(200_000));
    answer(bytes, 5000);
    const out = join(dir, "bytes.bin");
    expect((await cli(["-o", out, URL_], paying)).code).toBe(EXIT.ok);
    expect(readFileSync(out).equals(Buffer.from(bytes))).toBe(true);
    answer(new TextEncoder().encode("hello"));
    const ran = await cli(["--json", "-o", out, URL_], paying);
    expect(ran.stdout.length).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ status: 200, body: "hello" });
  });

  it("the paid answer's --json carries the payment before the body", async () => {
    server.use(createSeller().handler);
    const out = await json();
    const payment = { settled: true, transaction: TX_HASH, amount: "10000" };
    expect(out).toMatchObject({ status: 200, body: JSON.stringify({ data: "premium" }), payment });
    expect(out.payment.requirement).toBeUndefined();
  });
});

// ---------------------------------------------------------------- discovery

describe("x402-pay discover: exit codes and bounds", () => {
  const RESOURCES = `${FACILITATOR}/discovery/resources`;
  it.each([
    { name: "a 404", answer: () => HttpResponse.json({ error: "no" }, { status: 404 }), code: EXIT.discovery },
    { name: "a 500", answer: () => new HttpResponse("oops", { status: 500 }), code: EXIT.discovery },
    { name: "HTML", answer: () => new HttpResponse("<html>", { status: 200 }), code: EXIT.discovery },
    { name: "a malformed page", answer: () => HttpResponse.json({ items: 5 }), code: EXIT.discovery },
    { name: "nobody listening", answer: () => HttpResponse.error(), code: EXIT.network },
  ])("$name: exit $code", async ({ answer, code }) => {
    server.use(http.get(RESOURCES, answer));
    const ran = await cli(["discover", FACILITATOR]);
    expect(ran.code).toBe(code);
    expect(ran.stderr).toMatch(/^x402-pay: DISCOVERY_FAILED: /);
  });

  it("an endpoint that never answers: --max-time ends it (the client's own timeout beside it): exit 11", async () => {
    server.use(http.get(RESOURCES, () => delay("infinite")));
    const ran = await cli(["discover", FACILITATOR, "--max-time", "0.2"]);
    expect(ran.code).toBe(EXIT.timeout);
    expect(ran.stderr).toBe("x402-pay: No whole listing within --max-time 0.2 s (0 listed).\n");
  });

  it("a search whose every page has a new cursor and the same listing ends, and --max-pages bounds it", async () => {
    let asked = 0;
    const accepts = [v2Requirement()];
    const listing = (n: number) => ({ resource: `https://a.example/r${n}`, x402Version: 2, accepts });
    const page = (n: number) => ({ resources: [listing(n)], pagination: { cursor: `c${++asked}` } });
    const search = (n: () => number) => http.get(`${FACILITATOR}/discovery/search`, () => HttpResponse.json(page(n())));
    server.use(search(() => 0));
    const ran = await cli(["discover", FACILITATOR, "weather", "--json"]);
    expect(ran.code).toBe(EXIT.ok);
    expect(ran.stdout.toString().trim().split("\n")).toHaveLength(1);
    expect(asked).toBe(2);
    asked = 0;
    server.use(search(() => asked));
    const bounded = await cli(["discover", FACILITATOR, "weather", "--max-pages", "3", "--max-items", "999"]);
    expect(bounded.code).toBe(EXIT.ok);
    expect(asked).toBe(3);
  });
});

// ---------------------------------------------------------------- the ledger, as a person reads it

describe("x402-pay ledger", () => {
  it("human amounts for assets of known decimals (EVM and Solana), base units for the others", async () => {
    const file = join(dir, "ledger.jsonl");
    const at = { url: "https://api.example.com/a" };
    const base = { ...at, time: "2026-11-23T10:00:00.000Z", outcome: "settled", method: "GET" };
    const record = (over: object) => JSON.stringify({ id: randomBytes(8).toString("hex"), ...base, ...over });
    const USDC_84532 = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
    const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
    const USDC_DEVNET = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
    writeFileSync(
      file,
      [
        record({ network: "eip155:84532", asset: "0x036cbd53842c5426634e7929541ec2318f3dcf7e", amount: "1500" }),
        record({ network: "eip155:84532", asset: USDC_84532, amount: "1000", url: "https://b.example/x" }),
        record({ network: "eip155:84532", asset: `0x${"11".repeat(20)}`, amount: "7", url: "https://c.example/x" }),
        record({ network: DEVNET, asset: USDC_DEVNET, amount: "2500000", url: "https://d.example/x" }),
        // USDC's address on another chain is not USDC here.
        record({ network: "eip155:1", asset: USDC_84532, amount: "9", url: "https://e.example/x" }),
        record({ outcome: "unknown", network: "eip155:8453", asset: USDC_BASE, amount: "10000", payer: "0xabc" }),
      ].join("\n"),
    );
    const ran = await cli(["ledger", "--ledger", file]);
    expect(ran.code).toBe(EXIT.ok);
    expect(ran.stdout.toString()).toBe(
      [
        "Spend by origin (settled):",
        "  https://api.example.com  0.0015 USDC on eip155:84532  (1 payment)",
        "  https://b.example  0.001 USDC on eip155:84532  (1 payment)",
        "  https://c.example  7 base units of 0x1111111111111111111111111111111111111111 on eip155:84532  (1 payment)",
        "  https://d.example  2.5 USDC on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1  (1 payment)",
        "  https://e.example  9 base units of 0x036CbD53842c5426634e7929541eC2318f3dCF7e on eip155:1  (1 payment)",
        "Outcomes to reconcile: 1",
        "  2026-11-23T10:00:00.000Z  GET https://api.example.com/a  0.01 USDC on eip155:8453  payer 0xabc",
        "",
      ].join("\n"),
    );
    const json = JSON.parse((await cli(["ledger", "--ledger", file, "--json", "--by", "asset"])).stdout.toString());
    expect(json.spend.map((row: { displayAmount: string }) => row.displayAmount)).toEqual([
      "0.0025 USDC",
      "7 base units of 0x1111111111111111111111111111111111111111",
      "2.5 USDC",
      "9 base units of 0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    ]);
  });

  it("a ledger that is missing or a directory: exit 2", async () => {
    expect((await cli(["ledger", "--ledger", join(dir, "nowhere.jsonl")])).code).toBe(EXIT.usage);
    expect((await cli(["ledger", "--ledger", dir])).code).toBe(EXIT.usage);
  });
});

// ---------------------------------------------------------------- request edges

describe("request options", () => {
  it("-X takes one method word; -d @- reads stdin; -o - is stdout", async () => {
    const seen: string[] = [];
    const echo = async ({ request }: { request: Request }) => {
      seen.push(`${request.method} ${await request.text()}`);
      return HttpResponse.text("ok");
    };
    server.use(http.all(URL_, echo));
    expect((await cli(["-X", "PUT", "-d", "@-", "-o", "-", URL_], paying, "from stdin")).stdout.toString()).toBe("ok");
    expect(seen).toEqual(["PUT from stdin"]);
    expect((await cli(["-X", "GET / HTTP/1.1", URL_], paying)).code).toBe(EXIT.usage);
  });

  it("the challenge's own fields: a dry run with no key quotes with a signer that never signs", async () => {
    server.use(http.get(URL_, () => challengeResponse(v2Challenge())));
    const ran = await cli(["--dry-run", URL_]);
    expect(ran.code).toBe(EXIT.ok);
    expect(ran.stderr).toContain("#0 would pay: 0.01 USDC on eip155:84532");
  });
});
