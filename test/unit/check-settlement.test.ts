/**
 * What `client.checkSettlement` takes, and what it refuses before asking any chain: an error of an
 * outcome that moved nothing, a record that does not say what to look up, a scheme with no chain.
 */
import { describe, expect, it } from "vitest";
import { PaymentRejectedError } from "../../src/entries/errors";
import { checkSettlement, createX402Client, type LedgerRecord } from "../../src";
import { keccak256, toBytes } from "viem";
import { authCaptureEvm, evmSettlement, exactEvm, uptoEvm } from "../../src/evm";
import { SOLANA_MAINNET, exactSvm } from "../../src/svm";
import { account, PAY_TO, TX_HASH, USDC_BASE_SEPOLIA } from "../support/seller";
import { DEVNET, MAINNET_GENESIS_HASH, PAY_TO as SVM_PAY_TO, USDC_DEVNET, buyer, fakeRpc } from "../support/svm";

const record: LedgerRecord = {
  id: "r1",
  time: "2026-11-26T00:00:00.000Z",
  outcome: "pending",
  code: "PAYMENT_PENDING",
  url: "https://seller.example/premium",
  method: "GET",
  scheme: "exact",
  network: "eip155:84532",
  asset: USDC_BASE_SEPOLIA,
  amount: "10000",
  transaction: TX_HASH,
  payer: account.address,
  payee: PAY_TO,
};

describe("checkSettlement refuses before asking any chain", () => {
  const withoutChain = createX402Client({ schemes: [exactEvm({ signer: account })] });

  it("a scheme that has no RPC: INVALID_CONFIG saying how to give it one", async () => {
    const error = await checkSettlement(withoutChain, record).catch((e) => e);
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.message).toContain(
      "has no chain to look it up on: give it one, exactEvm({ signer, settlement: evmSettlement({ rpc }) })",
    );
  });

  it("a network no scheme pays", async () => {
    const error = await checkSettlement(withoutChain, {
      ...record,
      network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    }).catch((e) => e);
    expect(error.message).toContain("no registered scheme pays exact on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
  });

  it.each(["scheme", "network", "asset", "payee", "payer", "amount"] as const)("a record without %s", async (field) => {
    const error = await checkSettlement(withoutChain, { ...record, [field]: undefined }).catch((e) => e);
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.message).toContain(`cannot tell what to look up (no ${field === "payee" ? "payTo" : field})`);
  });

  it("an error of an outcome that moved nothing (a rejection)", async () => {
    const rejected = new PaymentRejectedError("refused", {
      details: { reason: "x", status: 402, requirement: {}, payer: account.address },
    });
    const error = await checkSettlement(withoutChain, rejected as never).catch((e) => e);
    expect(error.message).toContain("was given a PAYMENT_REJECTED error: nothing was paid to check");
  });

  it("an aborted signal: ABORTED, and no chain is asked", async () => {
    const asked: string[] = [];
    const rpc = { request: async ({ method }: { method: string }) => (asked.push(method), null) };
    const client = createX402Client({ schemes: [exactEvm({ signer: account, settlement: evmSettlement({ rpc }) })] });
    const controller = new AbortController();
    controller.abort();
    const error = await checkSettlement(client, record, { signal: controller.signal }).catch((e) => e);
    expect(error.code).toBe("ABORTED");
    expect(asked).toEqual([]);
  });

  it("a v1 network name is looked up under its CAIP-2 id, on the RPC given for it", async () => {
    const asked: string[] = [];
    const rpc = { request: async ({ method }: { method: string }) => (asked.push(method), null) };
    const client = createX402Client({
      schemes: [exactEvm({ signer: account, settlement: evmSettlement({ rpc: { "eip155:84532": rpc } }) })],
    });
    const status = await checkSettlement(client, { ...record, network: "base-sepolia" });
    expect(status).toMatchObject({ state: "pending", transaction: TX_HASH });
    expect(asked).toEqual(["eth_getTransactionReceipt"]);
  });
});

describe("each EVM scheme asks the settlement it was given, and only that", () => {
  /** A settlement that records what it is asked. */
  function recording() {
    const asked: { query: unknown; signal: AbortSignal | undefined }[] = [];
    const settlement = {
      check: async (query: unknown, signal?: AbortSignal) =>
        (asked.push({ query, signal }), { state: "settled", transaction: TX_HASH }) as never,
    };
    return { asked, settlement };
  }

  it.each([
    { name: "exactEvm", scheme: "exact", make: exactEvm },
    { name: "uptoEvm", scheme: "upto", make: uptoEvm },
  ] as const)(
    "$name: the query and the caller's signal reach its settlement; without one it has no checkSettlement",
    async ({ scheme, make }) => {
      expect(make({ signer: account }).checkSettlement).toBeUndefined();
      const { asked, settlement } = recording();
      const client = createX402Client({ schemes: [make({ signer: account, settlement })] });
      const { signal } = new AbortController();
      expect(await checkSettlement(client, { ...record, scheme }, { signal })).toMatchObject({
        state: "settled",
        transaction: TX_HASH,
      });
      expect(asked).toEqual([
        { query: expect.objectContaining({ scheme, network: "eip155:84532", transaction: TX_HASH }), signal },
      ]);
    },
  );
});

describe("exactSvm asks its settlement through the RPC it pays with", () => {
  const svmRecord: LedgerRecord = {
    ...record,
    network: DEVNET,
    asset: USDC_DEVNET,
    payee: SVM_PAY_TO,
    payer: buyer.address,
    transaction: "5".repeat(88),
  };
  function recording() {
    const asked: { endpoint: { rpc: unknown }; query: unknown; options: unknown }[] = [];
    const settlement = {
      check: async (endpoint: never, query: unknown, options: unknown) =>
        (asked.push({ endpoint, query, options }), { state: "settled", transaction: svmRecord.transaction }) as never,
    };
    return { asked, settlement };
  }

  it("the query, the RPC for its network, the caller's signal and the scheme's rpcTimeoutMs reach it; without one, no checkSettlement", async () => {
    expect(exactSvm({ signer: buyer, rpc: fakeRpc() }).checkSettlement).toBeUndefined();
    const { asked, settlement } = recording();
    const rpc = fakeRpc();
    const client = createX402Client({
      schemes: [exactSvm({ signer: buyer, rpc: { [DEVNET]: rpc }, rpcTimeoutMs: 1234, settlement })],
    });
    const { signal } = new AbortController();
    expect(await checkSettlement(client, svmRecord, { signal })).toMatchObject({ state: "settled" });
    expect(asked).toEqual([
      {
        endpoint: expect.objectContaining({ rpc }),
        query: expect.objectContaining({ network: DEVNET }),
        options: { signal, timeoutMs: 1234 },
      },
    ]);
    // An RPC given for its network is not asked which cluster it serves.
    expect(rpc.calls).toEqual([]);
  });

  it("a cluster without an RPC (not devnet, testnet or mainnet, which have public ones): INVALID_CONFIG naming it, the settlement not asked", async () => {
    const { asked, settlement } = recording();
    const localnet = "solana:LocaLnetGenesisHash1111111111111";
    const client = createX402Client({
      schemes: [exactSvm({ signer: buyer, rpc: { [SOLANA_MAINNET]: fakeRpc() }, settlement })],
    });
    const error = await checkSettlement(client, { ...svmRecord, network: localnet }).catch((e) => e);
    expect(error).toMatchObject({
      code: "INVALID_CONFIG",
      details: { option: "rpc" },
      message: `exactSvm has no RPC for ${localnet}: give it one, exactSvm({ rpc: { "${localnet}": url } }).`,
    });
    expect(asked).toEqual([]);
  });

  it("one RPC serving another cluster: refused, and the settlement is not asked", async () => {
    const { asked, settlement } = recording();
    const client = createX402Client({
      schemes: [exactSvm({ signer: buyer, rpc: fakeRpc({ genesisHash: MAINNET_GENESIS_HASH }), settlement })],
    });
    const error = await checkSettlement(client, svmRecord).catch((e) => e);
    expect(error.message).toContain(`serves ${SOLANA_MAINNET}, not ${DEVNET}`);
    expect(asked).toEqual([]);
  });
});

describe("an auth-capture capture pays the payee from the escrow, not from the payer", () => {
  const escrow = "0xf96815976523E00e65Be8f34cA5e64b4f41EB19c";
  const word = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`;
  const transfer = (from: string) => ({
    address: USDC_BASE_SEPOLIA,
    topics: [keccak256(toBytes("Transfer(address,address,uint256)")), word(from), word(PAY_TO)],
    data: `0x${(59_400).toString(16).padStart(64, "0")}`,
  });
  const captureLog = { address: escrow, topics: [`0x${"ab".repeat(32)}`], data: "0x" };
  /** A chain whose only transaction, TX_HASH, was mined with `logs`. */
  const chain = (logs: unknown[]) => ({
    request: async ({ method }: { method: string }) =>
      method === "eth_getTransactionReceipt" ? { status: "0x1", logs } : null,
  });
  const check = (scheme: "auth-capture" | "exact", logs: unknown[]) => {
    const settlement = evmSettlement({ rpc: { "eip155:84532": chain(logs) } });
    const make = scheme === "exact" ? exactEvm : authCaptureEvm;
    const client = createX402Client({ schemes: [make({ signer: account, settlement })] });
    return checkSettlement(client, { ...record, outcome: "settled", code: undefined, scheme });
  };

  it("a known escrow's transaction paying the payee is the capture: settled, for what the payee got", async () => {
    expect(await check("auth-capture", [captureLog, transfer(escrow)])).toMatchObject({
      state: "settled",
      transaction: TX_HASH,
      amount: "59400",
    });
  });

  it("without a known escrow in it, a payment to the payee from someone else is none of this one", async () => {
    const other = { ...captureLog, address: "0x1111111111111111111111111111111111111111" };
    expect(await check("auth-capture", [other, transfer(escrow)])).toMatchObject({ state: "failed" });
  });

  it("an exact payment is still the payer's own transfer only", async () => {
    expect(await check("exact", [captureLog, transfer(escrow)])).toMatchObject({ state: "failed" });
    expect(await check("exact", [transfer(account.address)])).toMatchObject({ state: "settled", amount: "59400" });
  });

  it("only the asset's own Transfer events count: not another token's, not another event of the asset", async () => {
    const otherToken = { ...transfer(account.address), address: "0x2222222222222222222222222222222222222222" };
    const [, from, to] = transfer(account.address).topics;
    const approval = {
      ...transfer(account.address),
      topics: [keccak256(toBytes("Approval(address,address,uint256)")), from, to],
    };
    for (const scheme of ["exact", "auth-capture"] as const) {
      expect(await check(scheme, [captureLog, otherToken])).toMatchObject({ state: "failed" });
      expect(await check(scheme, [captureLog, approval])).toMatchObject({ state: "failed" });
    }
  });
});
