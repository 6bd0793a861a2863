/**
 * The chain reads behind permit2Allowance (src/evm/chain.ts, src/io): what is asked, how answers are
 * checked, how an RPC is named when it fails, and the bounds (timeout, caller's abort, answer size).
 * The RPC is an EIP-1193 requester or, for URLs, an msw JSON-RPC endpoint.
 */
import { http, HttpResponse } from "msw";
import { decodeFunctionData, encodeAbiParameters, erc20Abi, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import {
  PERMIT2_ADDRESS,
  batchSettlementEvm,
  evmSettlement,
  exactEvm,
  permit2Allowance,
  type EvmRequester,
} from "../../src/evm";
import { useMswServer } from "../support/msw";
import { ANVIL_KEY_0, evmVectors } from "../support/vectors";
import { countingSigner } from "../support/wallets";
import { engineOf } from "../../src/client";

const server = useMswServer();
const account = privateKeyToAccount(ANVIL_KEY_0);
const request = { url: "https://api.example.com/premium-data", method: "GET" };
const requirements = evmVectors.exact_permit2.requirements;
const TOKEN = requirements.asset as Hex;
const uint = (n: bigint) => encodeAbiParameters([{ type: "uint256" }], [n]);
const challenge = (extensions?: object) =>
  parseChallenge({
    header: encodeBase64Json({
      x402Version: 2,
      resource: { url: request.url },
      accepts: [requirements],
      ...(extensions && { extensions }),
    }),
  });

type Answer = (params: readonly unknown[] | undefined) => unknown;
/** A requester on 84532 answering from `answers` (allowance 0, token nonce 7, tx nonce 3 by default). */
function requester(answers: Record<string, Answer> = {}) {
  const calls: { method: string; params?: readonly unknown[] }[] = [];
  const defaults: Record<string, Answer> = {
    eth_chainId: () => "0x14a34",
    eth_call: (params) => {
      const { data } = (params as [{ data: Hex }])[0];
      const nonces = {
        type: "function",
        name: "nonces",
        stateMutability: "view",
        inputs: [{ type: "address" }],
        outputs: [{ type: "uint256" }],
      } as const;
      return decodeFunctionData({ abi: [...erc20Abi, nonces], data }).functionName === "allowance"
        ? uint(0n)
        : uint(7n);
    },
    eth_getTransactionCount: () => "0x3",
    eth_maxPriorityFeePerGas: () => "0xf4240",
    eth_getBlockByNumber: () => ({ baseFeePerGas: "0x3b9aca00" }),
  };
  const rpc: EvmRequester = {
    async request(args) {
      calls.push(args);
      return (answers[args.method] ?? defaults[args.method]!)(args.params);
    },
  };
  return { rpc, calls };
}

const pay = (rpc: unknown, extensions?: object, options: { rpcTimeoutMs?: number; signal?: AbortSignal } = {}) => {
  const { signer: counting, calls } = countingSigner();
  // Can sign transactions too, as a viem account can: the sponsored ERC-20 approval path is open.
  const signer = { ...counting, signTransaction: (tx: never) => account.signTransaction(tx) };
  const permit2 = permit2Allowance({ rpc: rpc as never, rpcTimeoutMs: options.rpcTimeoutMs });
  const payment = engineOf(createX402Client({ schemes: [exactEvm({ signer, permit2 })] }))
    .createPayment(challenge(extensions), { ...request, signal: options.signal })
    .catch((e) => e);
  return { payment, signs: calls };
};

describe("what is asked", () => {
  it("the allowance at the latest block, the pending transaction count, the tip and the latest base fee", async () => {
    const { rpc, calls } = requester();
    const result = await pay(rpc, { erc20ApprovalGasSponsoring: {} }).payment;
    expect(result.payload.extensions.erc20ApprovalGasSponsoring.info).toBeDefined();
    const allowance = encodeAbiParameters(
      [{ type: "address" }, { type: "address" }],
      [account.address, PERMIT2_ADDRESS],
    ).slice(2);
    expect(calls).toEqual([
      { method: "eth_chainId" },
      { method: "eth_call", params: [{ to: TOKEN, data: `0xdd62ed3e${allowance}` }, "latest"] },
      { method: "eth_getTransactionCount", params: [account.address, "pending"] },
      { method: "eth_maxPriorityFeePerGas", params: [] },
      { method: "eth_getBlockByNumber", params: ["latest", false] },
    ]);
  });

  it("a single RPC's chain is asked once; a failed ask is asked again", async () => {
    let fail = true;
    const { rpc, calls } = requester({
      eth_chainId: () => (fail ? Promise.reject(new Error("flaky")) : "0x14a34"),
      eth_call: () => uint(10n ** 6n),
    });
    const permit2 = permit2Allowance({ rpc });
    const client = createX402Client({ schemes: [exactEvm({ signer: account, permit2 })] });
    expect(
      await engineOf(client)
        .createPayment(challenge(), request)
        .catch((e) => e.code),
    ).toBe("RPC_FAILED");
    fail = false;
    await engineOf(client).createPayment(challenge(), request);
    await engineOf(client).createPayment(challenge(), request);
    expect(calls.filter((c) => c.method === "eth_chainId")).toHaveLength(2);
  });
});

describe("answers are checked: anything else is RPC_FAILED naming the method, and nothing is signed", () => {
  it.each([
    ["eth_call answering odd-length hex", "eth_call", "0x123", "eth_call (allowance)"],
    ["eth_call answering text", "eth_call", "zz0x00", "eth_call (allowance)"],
    ["eth_call answering hex with junk after it", "eth_call", "0x00zz", "eth_call (allowance)"],
    ["eth_chainId answering text", "eth_chainId", "base", "eth_chainId"],
    ["eth_chainId answering a number", "eth_chainId", 84532, "eth_chainId"],
    ["eth_chainId answering hex with junk", "eth_chainId", "0x14a34 ", "eth_chainId"],
    ["eth_chainId answering hex with junk before it", "eth_chainId", " 0x14a34", "eth_chainId"],
    ["eth_getTransactionCount answering nothing", "eth_getTransactionCount", null, "eth_getTransactionCount"],
    ["eth_getBlockByNumber answering no block", "eth_getBlockByNumber", null, "eth_getBlockByNumber"],
    ["eth_getBlockByNumber answering a block without a base fee", "eth_getBlockByNumber", {}, "eth_getBlockByNumber"],
  ])("%s", async (_, method, answer, named) => {
    const { rpc } = requester({ [method]: () => answer });
    const { payment, signs } = pay(rpc, { erc20ApprovalGasSponsoring: {} });
    const error = await payment;
    expect(error).toMatchObject({ code: "RPC_FAILED", details: { rpcMethod: named, rpcUrl: undefined } });
    expect(error.message).toBe(
      `The RPC given to permit2Allowance failed on ${named} (malformed answer): nothing was signed. Retry, or give permit2Allowance another rpc.`,
    );
    expect(signs).toEqual([]);
  });

  it("an RPC of a map is named by its network", async () => {
    const { rpc } = requester({ eth_call: () => "0x1" });
    const error = await pay({ "eip155:84532": rpc }).payment;
    expect(error.message).toMatch(/^The RPC given for eip155:84532 failed on eth_call \(allowance\)/);
  });
});

describe("bounds", () => {
  it("an RPC that never answers: RPC_FAILED after rpcTimeoutMs, naming the wait", async () => {
    const { rpc } = requester({ eth_chainId: () => new Promise(() => {}) });
    const error = await pay(rpc, undefined, { rpcTimeoutMs: 30 }).payment;
    expect(error.code).toBe("RPC_FAILED");
    expect(error.message).toBe(
      "The RPC given to permit2Allowance did not answer eth_chainId within 30 ms: nothing was signed. Retry, or give permit2Allowance another rpc.",
    );
    expect(error.cause).toMatchObject({ name: "TimeoutError", message: "No answer within 30 ms." });
  });

  it("the caller's abort during a read is ABORTED, not an RPC failure", async () => {
    const controller = new AbortController();
    const { rpc } = requester({ eth_call: () => (controller.abort(new Error("user left")), new Promise(() => {})) });
    const error = await pay({ "eip155:84532": rpc }, undefined, { signal: controller.signal }).payment;
    expect(error.code).toBe("ABORTED");
  });
});

describe("RPC URLs: JSON-RPC over fetch", () => {
  const url = "https://rpc.example/";
  const answering = (reply: (body: { id: number; method: string }) => unknown) =>
    server.use(
      http.post(url, async ({ request: r }) =>
        HttpResponse.json(reply((await r.json()) as { id: number; method: string }) as never),
      ),
    );

  it("a JSON-RPC error: RPC_FAILED with its code and message, the URL named without a trailing slash", async () => {
    answering((b) => ({ jsonrpc: "2.0", id: b.id, error: { code: -32000, message: "header not found" } }));
    const error = await pay(url).payment;
    expect(error).toMatchObject({
      code: "RPC_FAILED",
      details: { rpcUrl: "https://rpc.example", rpcMethod: "eth_chainId" },
    });
    expect(error.message).toContain(
      "The EVM RPC https://rpc.example failed on eth_chainId (JSON-RPC error -32000: header not found)",
    );
  });

  it.each([
    ["no result", (b: { id: number }) => ({ jsonrpc: "2.0", id: b.id })],
    ["null", () => null],
  ])("an answer with %s: malformed", async (_, reply) => {
    answering(reply);
    expect((await pay(url).payment).message).toContain("(malformed answer)");
  });

  it("an answer over 1 MiB is refused while it is read", async () => {
    server.use(
      http.post(url, () => new HttpResponse(`{"jsonrpc":"2.0","id":1,"result":"0x${"0".repeat(1024 * 1024)}"}`)),
    );
    expect((await pay(url).payment).message).toContain("answer larger than 1024 KiB");
  });

  it("an answer of exactly 1 MiB is read", async () => {
    const head = '{"jsonrpc":"2.0","id":1,"result":"0x14a34","pad":"';
    server.use(http.post(url, () => new HttpResponse(`${head}${"x".repeat(1024 * 1024 - head.length - 2)}"}`)));
    const error = await pay(url).payment;
    // The chain id was read; the next read (same answer again) fails on eth_call for another reason.
    expect(error.details.rpcMethod).toBe("eth_call (allowance)");
  });

  it("answers split in multi-byte characters are decoded whole", async () => {
    const body = new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"nœud arrêté ✓"}}');
    server.use(
      http.post(url, () => {
        const stream = new ReadableStream({
          start(c) {
            for (const byte of body) c.enqueue(Uint8Array.of(byte));
            c.close();
          },
        });
        return new HttpResponse(stream);
      }),
    );
    const error = await pay(url).payment;
    expect(error.message).toContain("(JSON-RPC error -32000: nœud arrêté ✓)");
  });

  it("a long failure is cut to 160 characters in the message (the whole of it stays in cause)", async () => {
    const long = `${"x".repeat(150)}${"y".repeat(150)}`;
    answering((b) => ({ jsonrpc: "2.0", id: b.id, error: { code: -1, message: long } }));
    const error = await pay(url).payment;
    expect(error.message).toContain(`(${`JSON-RPC error -1: ${long}`.slice(0, 160)}):`);
    expect(error.cause.message).toContain(long);
  });
});

describe("configuration, checked when permit2Allowance is called", () => {
  it.each([
    [
      "a URL with credentials",
      "https://user:secret@rpc.example",
      "permit2Allowance: rpc is a URL with credentials, which fetch refuses; pass a viem PublicClient.",
    ],
    [
      "a URL of another scheme",
      "xhttp://rpc.example",
      'permit2Allowance: rpc is "xhttp://rpc.example"; pass an http(s) URL, a viem PublicClient or an EIP-1193 provider.',
    ],
    [
      "a number",
      42,
      "permit2Allowance: rpc is number; pass an http(s) URL, a viem PublicClient or an EIP-1193 provider.",
    ],
    [
      "a map entry that is not an RPC",
      { "eip155:8453": 5 },
      "permit2Allowance: eip155:8453 is number; pass an http(s) URL, a viem PublicClient or an EIP-1193 provider.",
    ],
    [
      "a map key that is not an EVM network",
      { base: "https://rpc.example" },
      'permit2Allowance: rpc key "base" is not an EVM network id such as eip155:8453.',
    ],
    [
      "nothing",
      null,
      "permit2Allowance: rpc is missing; pass an http(s) URL, a viem PublicClient, or a map { [network]: rpc }.",
    ],
  ])("%s: INVALID_CONFIG", (_, rpc, message) => {
    expect(() => permit2Allowance({ rpc: rpc as never })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", message, details: { option: "rpc" } }),
    );
  });

  it("plain http URLs are accepted (a local node)", () => {
    expect(() => permit2Allowance({ rpc: "http://127.0.0.1:8545" })).not.toThrow();
  });

  // Else a read would end at once (0, none, or past what setTimeout takes): every chain read an RPC failure.
  it.each([0, -1, 1.5, Number.NaN, 2 ** 31])("rpcTimeoutMs %s: INVALID_CONFIG, for each EVM reader", (rpcTimeoutMs) => {
    const rpc = "https://rpc.example";
    const problem = `rpcTimeoutMs must be a whole number of milliseconds from 1 to 2^31 - 1, not ${rpcTimeoutMs}.`;
    for (const [owner, make] of [
      ["permit2Allowance", () => permit2Allowance({ rpc, rpcTimeoutMs })],
      ["evmSettlement", () => evmSettlement({ rpc, rpcTimeoutMs })],
      ["batchSettlementEvm", () => batchSettlementEvm({ signer: account, rpc, rpcTimeoutMs })],
    ] as const)
      expect(make).toThrow(
        expect.objectContaining({
          code: "INVALID_CONFIG",
          message: `${owner}: ${problem}`,
          details: { option: "rpcTimeoutMs" },
        }),
      );
  });

  it("rpcTimeoutMs at its edges, 1 and 2^31 - 1, is accepted", () => {
    for (const rpcTimeoutMs of [1, 2 ** 31 - 1])
      expect(() => permit2Allowance({ rpc: "https://rpc.example", rpcTimeoutMs })).not.toThrow();
  });
});
