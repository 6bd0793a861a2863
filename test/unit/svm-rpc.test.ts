// Solana exact, its chain reads: which RPC serves which network, how a failed read is reported
// (RPC_FAILED, naming the RPC and the method, nothing signed), and how reads end (the caller's abort,
// a timeout). RPC URLs are served by msw; kit RPC objects are the one stand-in, fakeRpc.
import { createSolanaRpc } from "@solana/kit";
import { HttpResponse, delay } from "msw";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createX402Client, type SpendPolicy } from "../../src";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { DEFAULT_SOLANA_RPC_URLS, SOLANA_DEVNET, SOLANA_MAINNET, exactSvm } from "../../src/svm";
import { useMswServer } from "../support/msw";
import {
  DEVNET_GENESIS_HASH,
  MAINNET_GENESIS_HASH,
  USDC_DEVNET,
  fakeRpc,
  rpcHandler,
  svmRequirement,
} from "../support/svm";
import { countingSvmSigner } from "../support/wallets";
import { engineOf } from "../../src/client";

const server = useMswServer();

const RPC_URL = "https://rpc.example/solana";
const RESOURCE = "https://api.example/x";
const USDC_MAINNET = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const onDevnet = svmRequirement();
const onMainnet = svmRequirement({}, { network: SOLANA_MAINNET, asset: USDC_MAINNET });

type Scheme = ReturnType<typeof exactSvm>;

function pay(
  scheme: Scheme,
  accepts: unknown[] = [onDevnet],
  options: { signal?: AbortSignal; policy?: SpendPolicy } = {},
) {
  const client = createX402Client({ schemes: [scheme], policy: options.policy });
  const challenge = parseChallenge({
    header: encodeBase64Json({ x402Version: 2, resource: { url: RESOURCE }, accepts }),
  });
  return engineOf(client).createPayment(challenge, { url: RESOURCE, method: "GET", signal: options.signal });
}

const jsonRpcError = (code: number, message: string) => (request: { id: number }) =>
  HttpResponse.json({ jsonrpc: "2.0", id: request.id, error: { code, message } });
/** Answers `method` with `result` (anything, for malformed answers); the rest as a node would. */
const answering = (method: string, result: unknown) => (request: { id: number; method: string }) =>
  request.method === method ? HttpResponse.json({ jsonrpc: "2.0", id: request.id, result }) : undefined;

describe("the JSON-RPC client for an RPC URL", () => {
  it("sends JSON-RPC 2.0 requests, numbered per URL across payments; asks the genesis hash and the mint once", async () => {
    const rpc = rpcHandler(RPC_URL);
    server.use(rpc.handler);
    const scheme = exactSvm({ signer: countingSvmSigner().signer, rpc: RPC_URL });
    await pay(scheme);
    await pay(scheme);
    const account = {
      method: "getAccountInfo",
      params: [USDC_DEVNET, { encoding: "base64", commitment: "confirmed" }],
    };
    const blockhash = { method: "getLatestBlockhash", params: [{ commitment: "confirmed" }] };
    expect(rpc.requests).toEqual([
      { jsonrpc: "2.0", id: 1, ...account },
      { jsonrpc: "2.0", id: 2, ...blockhash },
      { jsonrpc: "2.0", id: 3, method: "getGenesisHash", params: [] },
      { jsonrpc: "2.0", id: 4, ...blockhash },
    ]);
  });
});

describe("a failed chain read is RPC_FAILED, names the RPC and the method, and nothing is signed", () => {
  it.each([
    [
      "an HTTP 500",
      "getLatestBlockhash",
      (r: { method: string }) =>
        r.method === "getLatestBlockhash" ? new HttpResponse("oops", { status: 500 }) : undefined,
      /HTTP 500/,
    ],
    [
      "a JSON-RPC error",
      "getAccountInfo",
      (r: { id: number; method: string }) =>
        r.method === "getAccountInfo" ? jsonRpcError(-32602, "bad params")(r) : undefined,
      /JSON-RPC error -32602: bad params/,
    ],
    [
      "a network failure",
      "getAccountInfo",
      (r: { method: string }) => (r.method === "getAccountInfo" ? HttpResponse.error() : undefined),
      /fetch/i,
    ],
    [
      "a genesis-hash failure",
      "getGenesisHash",
      (r: { method: string }) => (r.method === "getGenesisHash" ? new HttpResponse(null, { status: 429 }) : undefined),
      /HTTP 429/,
    ],
    [
      "no result",
      "getLatestBlockhash",
      (r: { id: number; method: string }) =>
        r.method === "getLatestBlockhash" ? HttpResponse.json({ jsonrpc: "2.0", id: r.id }) : undefined,
      /malformed/,
    ],
    [
      "a body that is not JSON",
      "getAccountInfo",
      (r: { method: string }) => (r.method === "getAccountInfo" ? new HttpResponse("<html>") : undefined),
      /JSON/,
    ],
    [
      "a blockhash that is not one",
      "getLatestBlockhash",
      answering("getLatestBlockhash", { value: { blockhash: "0xabc", lastValidBlockHeight: 1 } }),
      /malformed/,
    ],
    [
      "a block height that is not a u64",
      "getLatestBlockhash",
      answering("getLatestBlockhash", { value: { blockhash: DEVNET_GENESIS_HASH, lastValidBlockHeight: -1 } }),
      /malformed/,
    ],
    [
      "account data not in base64",
      "getAccountInfo",
      answering("getAccountInfo", { value: { owner: "x", data: { parsed: {} } } }),
      /malformed/,
    ],
    [
      "account data that is not base64",
      "getAccountInfo",
      answering("getAccountInfo", { value: { owner: "x", data: ["!!", "base64"] } }),
      /malformed/,
    ],
    ["no value", "getAccountInfo", answering("getAccountInfo", {}), /malformed/],
    ["a genesis hash that is not one", "getGenesisHash", answering("getGenesisHash", 42), /malformed/],
  ])("%s", async (_, rpcMethod, respond, reason) => {
    server.use(rpcHandler(RPC_URL, { respond }).handler);
    const { signer, calls: signed } = countingSvmSigner();
    const error = await pay(exactSvm({ signer, rpc: RPC_URL })).catch((e) => e);
    expect(error).toMatchObject({
      name: "RpcError",
      code: "RPC_FAILED",
      phase: "sign",
      details: { rpcUrl: RPC_URL, rpcMethod },
    });
    expect(error.message).toContain(`The Solana RPC ${RPC_URL} failed on ${rpcMethod}`);
    expect(error.message).toMatch(/nothing was signed/);
    expect(error.cause.message).toMatch(reason);
    expect(signed).toEqual([]);
  });

  it("an answer larger than 1 MiB, whole or endless, is cut off there", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, result: "x".repeat(1024 * 1024) });
    let pulled = 0;
    const endless = () =>
      new ReadableStream({
        pull(controller) {
          pulled++;
          controller.enqueue(new TextEncoder().encode("x".repeat(64 * 1024)));
        },
      });
    for (const respond of [
      () => new HttpResponse(big, { headers: { "content-length": String(big.length) } }),
      () => new HttpResponse(endless()),
    ]) {
      server.use(rpcHandler(RPC_URL, { respond }).handler);
      const error = await pay(exactSvm({ signer: countingSvmSigner().signer, rpc: RPC_URL })).catch((e) => e);
      expect(error).toMatchObject({ code: "RPC_FAILED", cause: { message: "answer larger than 1024 KiB" } });
    }
    // Cut off after about 1 MiB (plus what the stream buffers ahead), not read on and on.
    expect(pulled * 64).toBeLessThan(16 * 1024);
  });

  it("a kit RPC's failure is named as the RPC given to exactSvm, its error kept whole as cause", async () => {
    const failure = Object.assign(new Error("HTTP error (503): Service Unavailable"), { context: { statusCode: 503 } });
    const rpc = fakeRpc({
      answer: {
        getLatestBlockhash: () => {
          throw failure;
        },
      },
    });
    const { signer, calls: signed } = countingSvmSigner();
    const error = await pay(exactSvm({ signer, rpc })).catch((e) => e);
    expect(error).toMatchObject({
      code: "RPC_FAILED",
      details: { rpcUrl: undefined, rpcMethod: "getLatestBlockhash" },
    });
    expect(error.message).toMatch(/^The RPC given to exactSvm failed on getLatestBlockhash \(HTTP error \(503\)/);
    expect(error.cause).toBe(failure);
    expect(signed).toEqual([]);
  });

  it("names the URL without its query, where API keys often are", async () => {
    const keyed = `${RPC_URL}?api-key=0123456789abcdef`;
    server.use(rpcHandler(RPC_URL, { respond: () => new HttpResponse(null, { status: 401 }) }).handler);
    const error = await pay(exactSvm({ signer: countingSvmSigner().signer, rpc: keyed })).catch((e) => e);
    expect(error.details.rpcUrl).toBe(RPC_URL);
    expect(error.message).not.toMatch(/api-key|0123456789abcdef/);
  });

  it("a failed genesis-hash read is not kept: the next payment asks again", async () => {
    let failing = true;
    const rpc = fakeRpc({
      answer: {
        getGenesisHash: () => {
          if (failing) throw new Error("unavailable");
          return DEVNET_GENESIS_HASH;
        },
      },
    });
    const scheme = exactSvm({ signer: countingSvmSigner().signer, rpc });
    await expect(pay(scheme)).rejects.toMatchObject({ code: "RPC_FAILED", details: { rpcMethod: "getGenesisHash" } });
    failing = false;
    await expect(pay(scheme)).resolves.toBeDefined();
    expect(rpc.calls.filter((c) => c === "getGenesisHash")).toHaveLength(2);
  });
});

describe("time bounds and cancellation", () => {
  afterEach(() => vi.useRealTimers());

  it("a read that does not answer within rpcTimeoutMs is RPC_FAILED saying so", async () => {
    const respond = async (r: { method: string }) => {
      if (r.method !== "getAccountInfo") return undefined;
      await delay("infinite");
      return undefined;
    };
    server.use(rpcHandler(RPC_URL, { respond }).handler);
    const { signer, calls: signed } = countingSvmSigner();
    const started = Date.now();
    const error = await pay(exactSvm({ signer, rpc: RPC_URL, rpcTimeoutMs: 50 })).catch((e) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toMatchObject({
      code: "RPC_FAILED",
      details: { rpcMethod: "getAccountInfo" },
      cause: { name: "TimeoutError" },
    });
    expect(error.message).toContain(`The Solana RPC ${RPC_URL} did not answer getAccountInfo within 50 ms`);
    expect(signed).toEqual([]);
  });

  it("the default bound is 10 s, and holds for a kit RPC that ignores abortSignal", async () => {
    vi.useFakeTimers();
    const rpc = fakeRpc({ answer: { getLatestBlockhash: () => new Promise(() => {}) } });
    const outcome = pay(exactSvm({ signer: countingSvmSigner().signer, rpc })).catch((e) => e);
    let settled = false;
    void outcome.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(9_999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toMatchObject({ code: "RPC_FAILED", details: { rpcMethod: "getLatestBlockhash" } });
    expect((await outcome).message).toMatch(/did not answer getLatestBlockhash within 10000 ms/);
  });

  it("the caller's abort mid-read is ABORTED, not RPC_FAILED; the read is cancelled and nothing is signed", async () => {
    const controller = new AbortController();
    const rpc = fakeRpc({
      answer: {
        getAccountInfo: (abortSignal) => {
          controller.abort(new Error("user left"));
          return new Promise((_, reject) => abortSignal!.addEventListener("abort", () => reject(abortSignal!.reason)));
        },
      },
    });
    const { signer, calls: signed } = countingSvmSigner();
    const error = await pay(exactSvm({ signer, rpc }), [onDevnet], { signal: controller.signal }).catch((e) => e);
    expect(error).toMatchObject({ name: "AbortError", code: "ABORTED" });
    // The mint and blockhash reads are cancelled; the genesis-hash read is shared between payments
    // and bounded by the timeout only.
    const own = rpc.signals.filter((_, i) => rpc.calls[i] !== "getGenesisHash");
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((s) => s?.aborted)).toBe(true);
    expect(signed).toEqual([]);
  });

  it("the scheme itself reports the caller's abort as ABORTED, also through the URL client", async () => {
    server.use(rpcHandler(RPC_URL, { respond: () => delay("infinite").then(() => undefined) }).handler);
    const scheme = exactSvm({ signer: countingSvmSigner().signer, rpc: RPC_URL });
    const challenge = parseChallenge({
      header: encodeBase64Json({ x402Version: 2, resource: { url: RESOURCE }, accepts: [onDevnet] }),
    });
    const requirement = challenge.requirements[0]!;
    const controller = new AbortController();
    const request = { url: RESOURCE, method: "GET", signal: controller.signal };
    setTimeout(() => controller.abort(), 20);
    await expect(
      scheme.createPayload(requirement, { challenge, request, signal: controller.signal }),
    ).rejects.toMatchObject({
      code: "ABORTED",
    });
  });
});

describe("one RPC per network", () => {
  it("a map routes each network to its own RPC: the devnet URL is never called for a mainnet requirement", async () => {
    const devnet = rpcHandler("https://devnet.rpc.example/");
    const mainnet = rpcHandler(DEFAULT_SOLANA_RPC_URLS[SOLANA_MAINNET]!, { genesisHash: MAINNET_GENESIS_HASH });
    server.use(devnet.handler, mainnet.handler);
    const scheme = exactSvm({
      signer: countingSvmSigner().signer,
      rpc: { [SOLANA_DEVNET]: "https://devnet.rpc.example/" },
    });
    await pay(scheme, [onMainnet]);
    expect(devnet.requests).toEqual([]);
    // A map entry is the caller's word for its network: no genesis-hash read.
    expect(mainnet.requests.map((r) => r.method)).toEqual(["getAccountInfo", "getLatestBlockhash"]);
    await pay(scheme, [onDevnet]);
    expect(devnet.requests.map((r) => r.method)).toEqual(["getAccountInfo", "getLatestBlockhash"]);
    expect(mainnet.requests).toHaveLength(2);
  });

  it("a map of kit RPCs: each serves only its network", async () => {
    const devnet = fakeRpc();
    const mainnet = fakeRpc({ genesisHash: MAINNET_GENESIS_HASH });
    const scheme = exactSvm({
      signer: countingSvmSigner().signer,
      rpc: { [SOLANA_DEVNET]: devnet, [SOLANA_MAINNET]: mainnet },
    });
    await pay(scheme, [onMainnet]);
    expect(devnet.calls).toEqual([]);
    expect(mainnet.calls).toEqual([`getAccountInfo ${USDC_MAINNET}`, "getLatestBlockhash"]);
  });

  it("a network with no entry and no public endpoint is refused by check, saying to add it to the map", async () => {
    const localnet = "solana:LocaLnetGenesisHash1111111111111";
    const scheme = exactSvm({ signer: countingSvmSigner().signer, rpc: { [SOLANA_DEVNET]: fakeRpc() } });
    await expect(pay(scheme, [svmRequirement({}, { network: localnet })])).rejects.toMatchObject({
      code: "NO_PAYABLE_REQUIREMENT",
      message: expect.stringContaining(
        `no RPC is known for ${localnet}: add it to exactSvm({ rpc: { "${localnet}": url } })`,
      ),
    });
  });

  it("a single RPC pays only the cluster it reports: a mismatch is refused before signing, naming both networks", async () => {
    const rpc = rpcHandler(RPC_URL); // reports devnet's genesis hash
    server.use(rpc.handler);
    const { signer, calls: signed } = countingSvmSigner();
    const scheme = exactSvm({ signer, rpc: RPC_URL });
    const error = await pay(scheme, [onMainnet]).catch((e) => e);
    expect(error).toMatchObject({ code: "UNPAYABLE_REQUIREMENT" });
    expect(error.message).toContain(`the Solana RPC ${RPC_URL} serves ${SOLANA_DEVNET}, not ${SOLANA_MAINNET}`);
    expect(error.message).toContain(`exactSvm({ rpc: { "${SOLANA_MAINNET}": url } })`);
    expect(signed).toEqual([]);

    // Now that the cluster is known, selection skips the mainnet option and pays on devnet.
    const payment = await pay(scheme, [onMainnet, onDevnet]);
    expect(payment.requirement.network).toBe(SOLANA_DEVNET);
    await expect(pay(scheme, [onMainnet])).rejects.toMatchObject({
      code: "NO_PAYABLE_REQUIREMENT",
      message: expect.stringContaining(`serves ${SOLANA_DEVNET}, not ${SOLANA_MAINNET}`),
    });
    expect(rpc.requests.filter((r) => r.method === "getGenesisHash")).toHaveLength(1);
  });

  it("a kit RPC from createSolanaRpc is one RPC (not mistaken for an empty map): its cluster is checked", async () => {
    const rpc = rpcHandler(RPC_URL, { genesisHash: MAINNET_GENESIS_HASH });
    server.use(rpc.handler);
    const { signer, calls: signed } = countingSvmSigner();
    const error = await pay(exactSvm({ signer, rpc: createSolanaRpc(RPC_URL) })).catch((e) => e);
    expect(error).toMatchObject({ code: "UNPAYABLE_REQUIREMENT" });
    expect(error.message).toContain(`the RPC given to exactSvm serves ${SOLANA_MAINNET}, not ${SOLANA_DEVNET}`);
    expect(rpc.requests.map((r) => r.method).sort()).toEqual([
      "getAccountInfo",
      "getGenesisHash",
      "getLatestBlockhash",
    ]);
    expect(signed).toEqual([]);
  });

  it("the genesis hash is read beside the mint and the blockhash (no added round trip), once per RPC", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated = () => (_: AbortSignal | undefined) => gate.then(() => undefined as never);
    const rpc = fakeRpc();
    const slow = fakeRpc({ answer: { getAccountInfo: gated(), getLatestBlockhash: gated(), getGenesisHash: gated() } });
    // All three are asked before any answers.
    const scheme = exactSvm({ signer: countingSvmSigner().signer, rpc: slow });
    void pay(scheme).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(slow.calls.sort()).toEqual([`getAccountInfo ${USDC_DEVNET}`, "getGenesisHash", "getLatestBlockhash"]);
    release();

    // Concurrent and later payments, on two networks, share one genesis-hash read.
    const single = exactSvm({ signer: countingSvmSigner().signer, rpc });
    await Promise.all([pay(single), pay(single), pay(single, [onMainnet]).catch(() => {})]);
    await pay(single);
    expect(rpc.calls.filter((c) => c === "getGenesisHash")).toHaveLength(1);
  });

  it("a single RPC on a cluster with no public endpoint (a localnet) pays it", async () => {
    const genesisHash = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"; // testnet's, standing in for any cluster
    const network = `solana:${genesisHash.slice(0, 32)}`;
    const rpc = fakeRpc({ genesisHash });
    const policy = { assets: [{ network, address: USDC_DEVNET, decimals: 6, symbol: "USDC" }] };
    const payment = await pay(
      exactSvm({ signer: countingSvmSigner().signer, rpc }),
      [svmRequirement({}, { network })],
      { policy },
    );
    expect(payment.requirement.network).toBe(network);
  });
});

describe("exactSvm checks rpc at construction", () => {
  const kitRpc = fakeRpc();
  it.each([
    [
      "a URL that is not http(s)",
      "ftp://rpc.example",
      /rpc is "ftp:\/\/rpc.example"; pass an http\(s\) URL or a @solana\/kit RPC/,
    ],
    ["text that is not a URL", "api.devnet.solana.com", /pass an http\(s\) URL/],
    ["a URL with credentials (fetch refuses them)", "https://user:secret@rpc.example", /credentials/],
    ["an empty string", "", /rpc is ""/],
    ["a number", 8899, /rpc is number; .*, or a map \{ \[network\]: URL or RPC \}/],
    ["null", null, /rpc is null/],
    ["a URL object", new URL(RPC_URL), /rpc is object/],
    ["an array", [RPC_URL], /rpc is object/],
    [
      "an object with only some RPC methods",
      { getAccountInfo: kitRpc.getAccountInfo, getLatestBlockhash: kitRpc.getLatestBlockhash },
      /getGenesisHash/,
    ],
    [
      "a map keyed by a v1 name",
      { "solana-devnet": RPC_URL },
      new RegExp(`"solana-devnet" is not a Solana network id; use ${SOLANA_DEVNET}`),
    ],
    [
      "a map keyed by an EVM network",
      { "eip155:8453": RPC_URL },
      /"eip155:8453" is not a Solana network id; use CAIP-2/,
    ],
    [
      "a map entry that is not a URL",
      { [SOLANA_DEVNET]: "devnet" },
      /rpc\["solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"\] is "devnet"/,
    ],
    [
      "a map entry left undefined",
      { [SOLANA_MAINNET]: undefined },
      /rpc\["solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"\] is undefined/,
    ],
  ])("refuses %s with INVALID_CONFIG naming what to pass", (_, rpc, message) => {
    expect(() => exactSvm({ signer: countingSvmSigner().signer, rpc: rpc as never })).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        details: { option: "rpc" },
        message: expect.stringMatching(message),
      }),
    );
  });

  it.each([0, -1, 1.5, Number.NaN, Infinity, 2 ** 31, "100"])("refuses rpcTimeoutMs %s", (rpcTimeoutMs) => {
    expect(() => exactSvm({ signer: countingSvmSigner().signer, rpcTimeoutMs: rpcTimeoutMs as never })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", details: { option: "rpcTimeoutMs" } }),
    );
  });

  it.each([
    ["an https URL", RPC_URL],
    ["an http URL", "http://127.0.0.1:8899"],
    ["a kit RPC object", createSolanaRpc(RPC_URL)],
    ["a map of URLs and kit RPCs", { [SOLANA_DEVNET]: RPC_URL, [SOLANA_MAINNET]: kitRpc }],
    ["an empty map (public endpoints)", {}],
  ])("accepts %s", (_, rpc) => {
    expect(() => exactSvm({ signer: countingSvmSigner().signer, rpc })).not.toThrow();
  });
});
