// Solana exact, its chain reads: how a failed read is reported (RPC_FAILED, naming the RPC and the
// method, nothing signed), and how reads end (the caller's abort, a timeout). RPC URLs are served by msw; kit RPC objects are the one stand-in, fakeRpc.
import { HttpResponse, delay } from "msw";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createX402Client, encodeBase64Json, parseChallenge, type SpendPolicy } from "../../src";
import { exactSvm } from "../../src/svm";
import { useMswServer } from "../support/msw";
import { DEVNET_GENESIS_HASH, USDC_DEVNET, fakeRpc, rpcHandler, svmRequirement, watchedBuyer } from "../support/svm";

const server = useMswServer();

const RPC_URL = "https://rpc.example/solana";
const RESOURCE = "https://api.example/x";
const onDevnet = svmRequirement();

type Scheme = ReturnType<typeof exactSvm>;

function pay(scheme: Scheme, accepts: unknown[] = [onDevnet], options: { signal?: AbortSignal; policy?: SpendPolicy } = {}) {
  const client = createX402Client({ schemes: [scheme], policy: options.policy });
  const challenge = parseChallenge({ header: encodeBase64Json({ x402Version: 2, resource: { url: RESOURCE }, accepts }) });
  return client.createPayment(challenge, { url: RESOURCE, method: "GET", signal: options.signal });
}

const jsonRpcError = (code: number, message: string) => (request: { id: number }) =>
  HttpResponse.json({ jsonrpc: "2.0", id: request.id, error: { code, message } });
/** Answers `method` with `result` (anything, for malformed answers); the rest as a node would. */
const answering = (method: string, result: unknown) => (request: { id: number; method: string }) =>
  request.method === method ? HttpResponse.json({ jsonrpc: "2.0", id: request.id, result }) : undefined;

describe("the JSON-RPC client for an RPC URL", () => {
  it("sends JSON-RPC 2.0 requests, numbered per URL across payments", async () => {
    const rpc = rpcHandler(RPC_URL);
    server.use(rpc.handler);
    const scheme = exactSvm({ signer: watchedBuyer().signer, rpc: RPC_URL });
    await pay(scheme);
    await pay(scheme);
    const account = { method: "getAccountInfo", params: [USDC_DEVNET, { encoding: "base64", commitment: "confirmed" }] };
    const blockhash = { method: "getLatestBlockhash", params: [{ commitment: "confirmed" }] };
    expect(rpc.requests).toEqual([
      { jsonrpc: "2.0", id: 1, ...account },
      { jsonrpc: "2.0", id: 2, ...blockhash },
      { jsonrpc: "2.0", id: 3, ...account },
      { jsonrpc: "2.0", id: 4, ...blockhash },
    ]);
  });
});

describe("a failed chain read is RPC_FAILED, names the RPC and the method, and nothing is signed", () => {
  it.each([
    ["an HTTP 500", "getLatestBlockhash", (r: { method: string }) => (r.method === "getLatestBlockhash" ? new HttpResponse("oops", { status: 500 }) : undefined), /HTTP 500/],
    ["a JSON-RPC error", "getAccountInfo", (r: { id: number; method: string }) => (r.method === "getAccountInfo" ? jsonRpcError(-32602, "bad params")(r) : undefined), /JSON-RPC error -32602: bad params/],
    ["a network failure", "getAccountInfo", (r: { method: string }) => (r.method === "getAccountInfo" ? HttpResponse.error() : undefined), /fetch/i],
    ["no result", "getLatestBlockhash", (r: { id: number; method: string }) => (r.method === "getLatestBlockhash" ? HttpResponse.json({ jsonrpc: "2.0", id: r.id }) : undefined), /malformed/],
    ["a body that is not JSON", "getAccountInfo", (r: { method: string }) => (r.method === "getAccountInfo" ? new HttpResponse("<html>") : undefined), /JSON/],
    ["a blockhash that is not one", "getLatestBlockhash", answering("getLatestBlockhash", { value: { blockhash: "0xabc", lastValidBlockHeight: 1 } }), /malformed/],
    ["a block height that is not a u64", "getLatestBlockhash", answering("getLatestBlockhash", { value: { blockhash: DEVNET_GENESIS_HASH, lastValidBlockHeight: -1 } }), /malformed/],
    ["account data not in base64", "getAccountInfo", answering("getAccountInfo", { value: { owner: "x", data: { parsed: {} } } }), /malformed/],
    ["account data that is not base64", "getAccountInfo", answering("getAccountInfo", { value: { owner: "x", data: ["!!", "base64"] } }), /malformed/],
    ["no value", "getAccountInfo", answering("getAccountInfo", {}), /malformed/],
  ])("%s", async (_, rpcMethod, respond, reason) => {
    server.use(rpcHandler(RPC_URL, { respond }).handler);
    const { signer, signed } = watchedBuyer();
    const error = await pay(exactSvm({ signer, rpc: RPC_URL })).catch((e) => e);
    expect(error).toMatchObject({ name: "RpcError", code: "RPC_FAILED", phase: "sign", details: { rpcUrl: RPC_URL, rpcMethod } });
    expect(error.message).toContain(`The Solana RPC ${RPC_URL} failed on ${rpcMethod}`);
    expect(error.message).toMatch(/nothing was signed/);
    expect(error.cause.message).toMatch(reason);
    expect(signed).toEqual([]);
  });

  it("an answer larger than 1 MiB, declared or streamed, is refused without reading it all", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, result: "x".repeat(1024 * 1024) });
    let pulled = 0;
    const endless = () =>
      new ReadableStream({
        pull(controller) {
          pulled++;
          controller.enqueue(new TextEncoder().encode("x".repeat(64 * 1024)));
        },
      });
    for (const respond of [() => new HttpResponse(big, { headers: { "content-length": String(big.length) } }), () => new HttpResponse(endless())]) {
      server.use(rpcHandler(RPC_URL, { respond }).handler);
      const error = await pay(exactSvm({ signer: watchedBuyer().signer, rpc: RPC_URL })).catch((e) => e);
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
    const { signer, signed } = watchedBuyer();
    const error = await pay(exactSvm({ signer, rpc })).catch((e) => e);
    expect(error).toMatchObject({ code: "RPC_FAILED", details: { rpcUrl: undefined, rpcMethod: "getLatestBlockhash" } });
    expect(error.message).toMatch(/^The Solana RPC the RPC given to exactSvm failed on getLatestBlockhash \(HTTP error \(503\)/);
    expect(error.cause).toBe(failure);
    expect(signed).toEqual([]);
  });

  it("names the URL without its query, where API keys often are", async () => {
    const keyed = `${RPC_URL}?api-key=0123456789abcdef`;
    server.use(rpcHandler(RPC_URL, { respond: () => new HttpResponse(null, { status: 401 }) }).handler);
    const error = await pay(exactSvm({ signer: watchedBuyer().signer, rpc: keyed })).catch((e) => e);
    expect(error.details.rpcUrl).toBe(RPC_URL);
    expect(error.message).not.toMatch(/api-key|0123456789abcdef/);
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
    const { signer, signed } = watchedBuyer();
    const started = Date.now();
    const error = await pay(exactSvm({ signer, rpc: RPC_URL, rpcTimeoutMs: 50 })).catch((e) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toMatchObject({ code: "RPC_FAILED", details: { rpcMethod: "getAccountInfo" }, cause: { name: "TimeoutError" } });
    expect(error.message).toContain(`The Solana RPC ${RPC_URL} did not answer getAccountInfo within 50 ms`);
    expect(signed).toEqual([]);
  });

  it("the default bound is 10 s, and holds for a kit RPC that ignores abortSignal", async () => {
    vi.useFakeTimers();
    const rpc = fakeRpc({ answer: { getLatestBlockhash: () => new Promise(() => {}) } });
    const outcome = pay(exactSvm({ signer: watchedBuyer().signer, rpc })).catch((e) => e);
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
    const { signer, signed } = watchedBuyer();
    const error = await pay(exactSvm({ signer, rpc }), [onDevnet], { signal: controller.signal }).catch((e) => e);
    expect(error).toMatchObject({ name: "AbortError", code: "ABORTED" });
    expect(rpc.signals.length).toBeGreaterThan(0);
    expect(rpc.signals.every((s) => s?.aborted)).toBe(true);
    expect(signed).toEqual([]);
  });

  it("the scheme itself reports the caller's abort as ABORTED, also through the URL client", async () => {
    server.use(rpcHandler(RPC_URL, { respond: () => delay("infinite").then(() => undefined) }).handler);
    const scheme = exactSvm({ signer: watchedBuyer().signer, rpc: RPC_URL });
    const challenge = parseChallenge({ header: encodeBase64Json({ x402Version: 2, resource: { url: RESOURCE }, accepts: [onDevnet] }) });
    const requirement = challenge.requirements[0]!;
    const controller = new AbortController();
    const request = { url: RESOURCE, method: "GET", signal: controller.signal };
    setTimeout(() => controller.abort(), 20);
    await expect(scheme.createPayload(requirement, { challenge, request, signal: controller.signal })).rejects.toMatchObject({
      code: "ABORTED",
    });
  });
});

describe("exactSvm checks rpcTimeoutMs at construction", () => {
  it.each([0, -1, 1.5, Number.NaN, Infinity, 2 ** 31, "100"])("refuses %s", (rpcTimeoutMs) => {
    expect(() => exactSvm({ signer: watchedBuyer().signer, rpcTimeoutMs: rpcTimeoutMs as never })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", details: { option: "rpcTimeoutMs" } }),
    );
  });
});
