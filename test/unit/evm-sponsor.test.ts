/**
 * Permit2 allowance checks and sponsored approvals (`permit2Allowance`), against the reference's golden
 * vectors. The chain is an EIP-1193 requester answering the vector's reads (`rpcReads`): the on-chain
 * version of these flows runs in test/interop against anvil and the reference facilitator.
 */
import { http, HttpResponse } from "msw";
import {
  decodeFunctionData,
  encodeAbiParameters,
  erc20Abi,
  maxUint256,
  parseTransaction,
  recoverTransactionAddress,
  type Hex,
} from "viem";
import { createWalletClient, custom } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { baseSepolia } from "viem/chains";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { PERMIT2_ADDRESS, exactEvm, permit2Allowance, uptoEvm, type EvmRequester } from "../../src/evm";
import { useMswServer } from "../support/msw";
import { ANVIL_KEY_0, VECTOR_NOW_MS, countingBytes, evmVectors } from "../support/vectors";
import { countingSigner } from "../support/wallets";
import { engineOf } from "../../src/client";

const server = useMswServer();
const account = privateKeyToAccount(ANVIL_KEY_0);
const request = { url: "https://api.example.com/premium-data", method: "GET" };
const uint = (n: bigint) => encodeAbiParameters([{ type: "uint256" }], [n]);
const hex = (n: bigint | number) => `0x${n.toString(16)}`;

/**
 * A chain on 84532 where the payer's Permit2 allowance is `allowance`, its token nonce 7, its next transaction nonce 3.
 */
function chain({ allowance = 0n as bigint | null, chainId = 84532, nonces = true } = {}) {
  const calls: { method: string; params?: readonly unknown[] }[] = [];
  const requester: EvmRequester = {
    async request(args) {
      calls.push(args);
      if (args.method === "eth_chainId") return hex(chainId);
      if (args.method === "eth_getTransactionCount") return "0x3";
      if (args.method === "eth_maxPriorityFeePerGas") return hex(1_000_000n);
      // 1,665,833,334 × 1.2 + 1,000,000 = 2 gwei, the vector's maxFeePerGas.
      if (args.method === "eth_getBlockByNumber") return { baseFeePerGas: hex(1_665_833_334n) };
      if (args.method === "eth_call") {
        const { data } = (args.params as [{ data: Hex }])[0];
        const call = decodeFunctionData({
          abi: [
            ...erc20Abi,
            {
              type: "function",
              name: "nonces",
              stateMutability: "view",
              inputs: [{ type: "address" }],
              outputs: [{ type: "uint256" }],
            },
          ],
          data,
        });
        if (call.functionName === "allowance") return allowance === null ? "0x" : uint(allowance);
        return call.functionName === "nonces" && nonces ? uint(7n) : "0x";
      }
      throw new Error(`unexpected ${args.method}`);
    },
  };
  return { requester, calls };
}

function challengeOf(requirements: object, extensions?: object) {
  return parseChallenge({
    header: encodeBase64Json({
      x402Version: 2,
      resource: { url: request.url },
      accepts: [requirements],
      ...(extensions && { extensions }),
    }),
  });
}

const vectorScheme = (
  permit2: ReturnType<typeof permit2Allowance> | undefined,
  signer: Parameters<typeof exactEvm>[0]["signer"] = account,
) => exactEvm({ signer, now: () => VECTOR_NOW_MS, randomBytes: countingBytes, permit2 });

describe("eip2612GasSponsoring", () => {
  it("reproduces the golden vector byte for byte: the Permit2 payload, then the permit for exactly the amount", async () => {
    const v = evmVectors.exact_permit2_eip2612;
    const { requester, calls } = chain();
    const payment = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: requester }))] }),
    ).createPayment(challengeOf(v.requirements, v.serverExtensions), request);
    expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(v.schemeResult.payload));
    const extensions = payment.payload.extensions as Record<string, { info: object; schema: object }>;
    // The vector's info, added after the fields the server declared (kept as declared), and the server's schema beside
    // it.
    const declaredInfo = v.serverExtensions.eip2612GasSponsoring.info;
    expect(JSON.stringify(extensions.eip2612GasSponsoring!.info)).toBe(
      JSON.stringify({ ...declaredInfo, ...v.schemeResult.extensions.eip2612GasSponsoring.info }),
    );
    expect(extensions.eip2612GasSponsoring!.schema).toEqual(v.serverExtensions.eip2612GasSponsoring.schema);
    // The reads the vector lists, and nothing sent.
    expect(calls.map((c) => c.method)).toEqual(["eth_chainId", "eth_call", "eth_call"]);
    expect(calls.some((c) => /send/i.test(c.method))).toBe(false);
  });

  it("upto: the permit is for the maximum, the amount Permit2 is allowed to move", async () => {
    const v = evmVectors.upto_permit2;
    const { requester } = chain();
    const scheme = uptoEvm({
      signer: account,
      now: () => VECTOR_NOW_MS,
      randomBytes: countingBytes,
      permit2: permit2Allowance({ rpc: { "eip155:84532": requester } }),
    });
    const payment = await engineOf(
      createX402Client({ schemes: [scheme], policy: { maxAmountPerPayment: "$5" } }),
    ).createPayment(challengeOf(v.requirements, { eip2612GasSponsoring: {} }), request);
    const info = (payment.payload.extensions as any).eip2612GasSponsoring.info;
    // The extension's own schema version, "1", when the server declared none.
    expect(info).toMatchObject({
      amount: "5000000",
      deadline: "1740672300",
      spender: PERMIT2_ADDRESS,
      nonce: "7",
      version: "1",
    });
  });

  it("uptoEvm without permit2, on a server offering sponsorship: INVALID_CONFIG naming uptoEvm's option", async () => {
    const v = evmVectors.upto_permit2;
    const error = await engineOf(
      createX402Client({ schemes: [uptoEvm({ signer: account })], policy: { maxAmountPerPayment: "$5" } }),
    )
      .createPayment(challengeOf(v.requirements, { eip2612GasSponsoring: {}, erc20ApprovalGasSponsoring: {} }), request)
      .catch((e) => e);
    expect(error.message).toBe(
      "The server sponsors the Permit2 approval (eip2612GasSponsoring, erc20ApprovalGasSponsoring), which needs the allowance read first: give uptoEvm a chain for eip155:84532, uptoEvm({ signer, permit2: permit2Allowance({ rpc }) }).",
    );
  });
});

describe("erc20ApprovalGasSponsoring", () => {
  const v = evmVectors.exact_permit2_erc20approval;
  const declared = { erc20ApprovalGasSponsoring: { info: { version: "1" } } };

  it('with approvalAmount "unlimited": the golden vector byte for byte (nonce 3, 2 gwei cap, 0.001 gwei tip)', async () => {
    const { requester } = chain();
    const payment = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: requester, approvalAmount: "unlimited" }))] }),
    ).createPayment(challengeOf(v.requirements, declared), request);
    expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(v.schemeResult.payload));
    expect(JSON.stringify((payment.payload.extensions as any).erc20ApprovalGasSponsoring.info)).toBe(
      JSON.stringify({
        ...declared.erc20ApprovalGasSponsoring.info,
        ...v.schemeResult.extensions.erc20ApprovalGasSponsoring.info,
      }),
    );
  });

  it("by default approves exactly the payment, never unlimited; the transaction is signed by the payer, not sent", async () => {
    const { requester, calls } = chain();
    const payment = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: requester }))] }),
    ).createPayment(challengeOf(v.requirements, { erc20ApprovalGasSponsoring: {} }), request);
    const info = (payment.payload.extensions as any).erc20ApprovalGasSponsoring.info;
    expect(info.amount).toBe("10000");
    expect(info.version).toBe("1");
    const tx = parseTransaction(info.signedTransaction);
    expect(decodeFunctionData({ abi: erc20Abi, data: tx.data! }).args).toEqual([PERMIT2_ADDRESS, 10_000n]);
    expect(tx).toMatchObject({
      chainId: 84532,
      nonce: 3,
      gas: 70_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    });
    expect(await recoverTransactionAddress({ serializedTransaction: info.signedTransaction })).toBe(account.address);
    expect(calls.filter((c) => /sendRaw|sendTransaction/.test(c.method))).toEqual([]);
    expect(info.amount).not.toBe(maxUint256.toString());
  });
});

describe("wallets on the approval path", () => {
  const v = evmVectors.exact_permit2_erc20approval;
  const declared = { erc20ApprovalGasSponsoring: {} };

  it("a viem WalletClient signs the approval transaction through its account", async () => {
    const { requester } = chain();
    const wallet = createWalletClient({ account, chain: baseSepolia, transport: custom(requester) });
    const scheme = exactEvm({ signer: wallet, permit2: permit2Allowance({ rpc: requester }) });
    const payment = await engineOf(createX402Client({ schemes: [scheme] })).createPayment(
      challengeOf(v.requirements, declared),
      request,
    );
    const info = (payment.payload.extensions as any).erc20ApprovalGasSponsoring.info;
    expect(await recoverTransactionAddress({ serializedTransaction: info.signedTransaction })).toBe(account.address);
  });

  it("a smart-wallet signature (longer than 65 bytes) passes through the Permit2 payload unchanged", async () => {
    const long = `0x${"ab".repeat(200)}` as Hex;
    const { signer } = countingSigner(async () => long);
    const payment = await engineOf(createX402Client({ schemes: [exactEvm({ signer })] })).createPayment(
      challengeOf(evmVectors.exact_permit2.requirements),
      request,
    );
    expect((payment.payload.payload as { signature: string }).signature).toBe(long);
  });
});

describe("the allowance decides, before anything is signed", () => {
  const requirements = evmVectors.exact_permit2.requirements;

  it("enough allowance: the plain Permit2 payment, no sponsored approval even when offered", async () => {
    const { requester, calls } = chain({ allowance: 10_000n });
    const payment = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: requester }))] }),
    ).createPayment(challengeOf(requirements, { eip2612GasSponsoring: {}, erc20ApprovalGasSponsoring: {} }), request);
    expect(payment.payload.extensions).toEqual({ eip2612GasSponsoring: {}, erc20ApprovalGasSponsoring: {} });
    expect(calls.map((c) => c.method)).toEqual(["eth_chainId", "eth_call"]);
  });

  it.each([
    ["nothing is offered", undefined, {}],
    [
      "the permit is offered but the token names no EIP-712 domain",
      { eip2612GasSponsoring: {} },
      { extra: { assetTransferMethod: "permit2" } },
    ],
    ["the approval is offered but the wallet cannot sign transactions", { erc20ApprovalGasSponsoring: {} }, {}],
  ])("short allowance and %s: PERMIT2_ALLOWANCE_REQUIRED, nothing signed", async (_, extensions, over) => {
    const { requester } = chain({ allowance: 9_999n });
    const { signer, calls } = countingSigner();
    const error = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: requester }), signer)] }),
    )
      .createPayment(challengeOf({ ...requirements, ...over }, extensions), request)
      .catch((e) => e);
    expect(error.code).toBe("PERMIT2_ALLOWANCE_REQUIRED");
    expect(error.details).toMatchObject({
      allowance: "9999",
      amount: "10000",
      owner: account.address,
      spender: PERMIT2_ADDRESS,
      network: "eip155:84532",
    });
    expect(error.message).toContain("Nothing was signed");
    expect(calls).toEqual([]);
  });

  it("a token without EIP-2612 (nonces() answers nothing): the offered approval transaction is used instead", async () => {
    const { requester } = chain({ nonces: false });
    const payment = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: requester }))] }),
    ).createPayment(challengeOf(requirements, { eip2612GasSponsoring: {}, erc20ApprovalGasSponsoring: {} }), request);
    expect(payment.payload.extensions).toMatchObject({
      eip2612GasSponsoring: {},
      erc20ApprovalGasSponsoring: { info: { amount: "10000" } },
    });
  });

  it("an asset with no ERC-20 code (allowance() answers nothing): UNPAYABLE_REQUIREMENT, nothing signed", async () => {
    const { requester } = chain({ allowance: null });
    const { signer, calls } = countingSigner();
    const error = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: requester }), signer)] }),
    )
      .createPayment(challengeOf(requirements), request)
      .catch((e) => e);
    expect(error.code).toBe("UNPAYABLE_REQUIREMENT");
    expect(error.message).toContain("does not answer ERC-20 allowance(): not a token there");
    expect(calls).toEqual([]);
  });

  it("an offered approval and no chain to check it with: INVALID_CONFIG naming the option, nothing signed", async () => {
    const { signer, calls } = countingSigner();
    const error = await engineOf(createX402Client({ schemes: [vectorScheme(undefined, signer)] }))
      .createPayment(challengeOf(requirements, { eip2612GasSponsoring: {} }), request)
      .catch((e) => e);
    expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option: "permit2" } });
    expect(error.message).toContain("exactEvm({ signer, permit2: permit2Allowance({ rpc }) })");
    expect(calls).toEqual([]);
  });

  it("no approval offered and no chain: the Permit2 payment is signed (a 412 then says what to approve)", async () => {
    const payment = await engineOf(createX402Client({ schemes: [vectorScheme(undefined)] })).createPayment(
      challengeOf(requirements),
      request,
    );
    expect(payment.payload.payload).toHaveProperty("permit2Authorization");
  });

  it("a single RPC serving another chain: refused before signing", async () => {
    const { requester } = chain({ chainId: 1 });
    const { signer, calls } = countingSigner();
    const error = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: requester }), signer)] }),
    )
      .createPayment(challengeOf(requirements), request)
      .catch((e) => e);
    expect(error.code).toBe("UNPAYABLE_REQUIREMENT");
    expect(error.message).toContain("serves eip155:1, not eip155:84532");
    expect(calls).toEqual([]);
  });

  it("a map without the network: treated as no chain", async () => {
    const { requester, calls } = chain();
    const error = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: { "eip155:8453": requester } }))] }),
    )
      .createPayment(challengeOf(requirements, { eip2612GasSponsoring: {} }), request)
      .catch((e) => e);
    expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option: "permit2" } });
    expect(calls).toEqual([]);
  });
});

describe("chain reads over an RPC URL", () => {
  const rpcUrl = "https://rpc.example/v1?apikey=secret-key";
  const requirements = evmVectors.exact_permit2.requirements;

  it("a failing RPC is RPC_FAILED naming the URL without its query, and nothing is signed", async () => {
    server.use(http.post("https://rpc.example/v1", () => new HttpResponse("down", { status: 503 })));
    const { signer, calls } = countingSigner();
    const error = await engineOf(
      createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: { "eip155:84532": rpcUrl } }), signer)] }),
    )
      .createPayment(challengeOf(requirements), request)
      .catch((e) => e);
    expect(error).toMatchObject({
      code: "RPC_FAILED",
      details: { rpcUrl: "https://rpc.example/v1", rpcMethod: "eth_call (allowance)" },
    });
    expect(error.message).not.toContain("secret-key");
    expect(calls).toEqual([]);
  });

  it("answers through JSON-RPC over fetch; a malformed answer is RPC_FAILED", async () => {
    server.use(
      http.post("https://rpc.example/v1", async ({ request: r }) => {
        const body = (await r.json()) as { id: number; method: string };
        return HttpResponse.json({
          jsonrpc: "2.0",
          id: body.id,
          result: body.method === "eth_call" ? "not hex" : "0x14a34",
        });
      }),
    );
    const error = await engineOf(createX402Client({ schemes: [vectorScheme(permit2Allowance({ rpc: rpcUrl }))] }))
      .createPayment(challengeOf(requirements), request)
      .catch((e) => e);
    expect(error).toMatchObject({ code: "RPC_FAILED", details: { rpcMethod: "eth_call (allowance)" } });
  });

  it.each([
    ["a URL of another scheme", "ftp://rpc.example"],
    ["not a URL", "rpc.example"],
    ["a URL with credentials", "https://user:pass@rpc.example"],
    ["a network key that is not EVM", { "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "https://rpc.example" }],
    ["nothing", undefined],
  ])("%s: INVALID_CONFIG at construction", (_, rpc) => {
    expect(() => permit2Allowance({ rpc: rpc as never })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", details: { option: "rpc" } }),
    );
  });
});
