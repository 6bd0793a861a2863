/**
 * Every wait that both a timeout and a caller's AbortSignal bound, with both given: a signal that
 * never fires leaves the timeout in force (a signal must never replace it), and a signal that fires
 * first ends the wait with the caller's reason, not the timeout's. One row per place in src/:
 * the 402 body (handshake), an RPC read (rpc), the EVM chain reads of permit2Allowance, the Solana
 * reads of exactSvm, the quote cache's probe, a Redis budget. Discovery's reads are in
 * test/http/discovery.test.ts, the CLI's --max-time beside Ctrl-C in test/http/cli.test.ts.
 */
import { encodeAbiParameters } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { budget, createX402Client } from "../../src";
import { encodeBase64Json, parseChallenge, type PaymentChallenge } from "../../src/entries/protocol";
import { PROBE_WAIT_MS, createQuoteCache } from "../../src/extensions/quote-cache/quote-cache";
import { exactEvm, permit2Allowance, type EvmRequester } from "../../src/evm";
import { BODY_LIMITS, readBody } from "../../src/handshake";
import { redisBudgetStore, type RedisClientLike } from "../../src/redis";
import { readRpc } from "../../src/io/rpc";
import { exactSvm } from "../../src/svm";
import { fakeRpc, svmRequirement } from "../support/svm";
import { ANVIL_KEY_0, evmVectors } from "../support/vectors";
import { countingSvmSigner } from "../support/wallets";
import { engineOf } from "../../src/client";

afterEach(() => vi.useRealTimers());

const RESOURCE = "https://api.example.com/premium-data";
const never = () => new Promise<never>(() => {});
/** A caller's signal that never fires, and one that fires after `ms`. */
const quiet = () => new AbortController().signal;
const firesAfter = (ms: number) => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new DOMException("the caller left", "AbortError")), ms);
  return controller.signal;
};
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("expected a rejection"),
    (error: any) => error,
  );
const challengeOf = (accepts: unknown[]): PaymentChallenge =>
  parseChallenge({ header: encodeBase64Json({ x402Version: 2, resource: { url: RESOURCE }, accepts }) });

describe("the 402 body (readBody): BODY_LIMITS.ms and the caller's signal", () => {
  const stalled = () => new ReadableStream({ start: (controller) => controller.enqueue(new Uint8Array([0x7b])) });

  it("a signal that never fires: the body is given up at BODY_LIMITS.ms", async () => {
    vi.useFakeTimers();
    const read = outcome(readBody(stalled(), quiet()));
    await vi.advanceTimersByTimeAsync(BODY_LIMITS.ms);
    const message = `The 402 body did not finish within ${BODY_LIMITS.ms / 1000} s.`;
    expect(await read).toMatchObject({ code: "INVALID_CHALLENGE", message });
  });

  it("a signal that fires first: ABORTED, the caller's reason as the cause", async () => {
    const signal = firesAfter(10);
    const error = await outcome(readBody(stalled(), signal));
    expect(error).toMatchObject({ code: "ABORTED" });
    expect(error.cause).toBe(signal.reason);
  });
});

describe("an RPC read (readRpc): timeoutMs and the caller's signal", () => {
  const rpc = { name: "the RPC", url: undefined };
  const options = { timeoutMs: 50, hint: "Retry." };

  it("a signal that never fires: RPC_FAILED after timeoutMs", async () => {
    const error = await outcome(readRpc(rpc, "eth_call", never, { ...options, signal: quiet() }));
    const message = "The RPC did not answer eth_call within 50 ms: nothing was signed. Retry.";
    expect(error).toMatchObject({ code: "RPC_FAILED", message });
  });

  it("a signal that fires first: ABORTED, and the read is told", async () => {
    let told: AbortSignal | undefined;
    const read = (abortSignal: AbortSignal) => ((told = abortSignal), never());
    const signal = firesAfter(10);
    const error = await outcome(readRpc(rpc, "eth_call", read, { hint: "Retry.", timeoutMs: 60_000, signal }));
    expect(error.code).toBe("ABORTED");
    expect(told?.aborted).toBe(true);
  });
});

describe("the EVM chain reads of permit2Allowance: rpcTimeoutMs and the caller's signal", () => {
  const account = privateKeyToAccount(ANVIL_KEY_0);
  const requirement = evmVectors.exact_permit2.requirements;
  /** Answers the chain id; `stall` never answers. */
  const requester = (stall: string): EvmRequester => ({
    request: async ({ method }) => {
      if (method === stall) return never();
      return method === "eth_chainId" ? "0x14a34" : encodeAbiParameters([{ type: "uint256" }], [0n]);
    },
  });
  const pay = (rpc: unknown, signal: AbortSignal, rpcTimeoutMs: number) => {
    const permit2 = permit2Allowance({ rpc: rpc as never, rpcTimeoutMs });
    const client = createX402Client({ schemes: [exactEvm({ signer: account, permit2 })] });
    return outcome(
      engineOf(client).createPayment(challengeOf([requirement]), { url: RESOURCE, method: "GET", signal }),
    );
  };

  it.each([
    { read: "the shared chain-id read", stall: "eth_chainId" },
    { read: "the payment's own allowance read", stall: "eth_call" },
  ])("$read, a signal that never fires: RPC_FAILED after rpcTimeoutMs", async ({ stall }) => {
    // A single RPC: its chain is asked (once, shared between payments) before the payment's reads.
    const rpcMethod = stall === "eth_call" ? "eth_call (allowance)" : stall;
    expect(await pay(requester(stall), quiet(), 50)).toMatchObject({ code: "RPC_FAILED", details: { rpcMethod } });
  });

  it.each([
    { read: "the shared chain-id read", stall: "eth_chainId" },
    { read: "the payment's own allowance read", stall: "eth_call" },
  ])("$read, a signal that fires first: ABORTED", async ({ stall }) => {
    expect((await pay(requester(stall), firesAfter(10), 60_000)).code).toBe("ABORTED");
  });
});

describe("the Solana reads of exactSvm: rpcTimeoutMs and the caller's signal", () => {
  const reads = ["getGenesisHash", "getAccountInfo", "getLatestBlockhash"] as const;
  const pay = (stall: (typeof reads)[number], signal: AbortSignal, rpcTimeoutMs: number) => {
    const rpc = fakeRpc({ answer: { [stall]: () => never() } });
    const client = createX402Client({ schemes: [exactSvm({ signer: countingSvmSigner().signer, rpc, rpcTimeoutMs })] });
    return outcome(
      engineOf(client).createPayment(challengeOf([svmRequirement()]), { url: RESOURCE, method: "GET", signal }),
    );
  };

  it.each(reads)("%s, a signal that never fires: RPC_FAILED after rpcTimeoutMs", async (stall) => {
    expect(await pay(stall, quiet(), 50)).toMatchObject({ code: "RPC_FAILED", details: { rpcMethod: stall } });
  });

  it.each(reads)("%s, a signal that fires first: ABORTED", async (stall) => {
    expect((await pay(stall, firesAfter(10), 60_000)).code).toBe("ABORTED");
  });
});

describe("the quote cache's probe: PROBE_WAIT_MS and the caller's signal", () => {
  it("a signal that never fires: the waiting request goes on after PROBE_WAIT_MS", async () => {
    vi.useFakeTimers();
    const cache = createQuoteCache();
    await cache.probe("r"); // the prober, which never ends
    let went = false;
    const waiting = cache.probe("r", quiet()).then(() => (went = true));
    await vi.advanceTimersByTimeAsync(PROBE_WAIT_MS - 1);
    expect(went).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    expect(went).toBe(true);
  });

  it("a signal that fires first: it goes on at once", async () => {
    const cache = createQuoteCache();
    await cache.probe("r");
    const controller = new AbortController();
    const waiting = cache.probe("r", controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeTypeOf("function");
  });
});

describe("a Redis budget: the store's timeoutMs and the caller's signal", () => {
  const silent: RedisClientLike = {
    isReady: true,
    evalSha: never,
    eval: never,
    get: never,
    set: never,
    xAdd: never,
    xRange: never,
  };
  const requirement = evmVectors.exact_eip3009.requirements;
  const pay = (signal: AbortSignal, timeoutMs: number) =>
    outcome(
      engineOf(
        createX402Client({
          schemes: [exactEvm({ signer: privateKeyToAccount(ANVIL_KEY_0) })],
          plugins: [budget({ limit: "$5", store: redisBudgetStore(silent, { timeoutMs }) })],
        }),
      ).createPayment(challengeOf([requirement]), { url: RESOURCE, method: "GET", signal }),
    );

  it("a signal that never fires: BUDGET_UNAVAILABLE after timeoutMs (fail closed)", async () => {
    expect((await pay(quiet(), 50)).code).toBe("BUDGET_UNAVAILABLE");
  });

  it("a signal that fires first: ABORTED", async () => {
    expect((await pay(firesAfter(10), 60_000)).code).toBe("ABORTED");
  });
});
