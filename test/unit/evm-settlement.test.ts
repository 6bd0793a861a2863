/**
 * `evmSettlement(...).check` on a scripted JSON-RPC chain: the transaction the server named, then the signed
 * authorization's own state (EIP-3009 `authorizationState`, Permit2's `nonceBitmap`), its deadline by the chain's clock,
 * and the search for the transaction that used it. test/interop/pending-evm.test.ts proves the same on anvil with the
 * reference seller; here each read's answer is chosen, so the edges (a bit beside the nonce's, a deadline one second
 * away, the blocks searched) are reached. The chain is scripted because anvil cannot be made to answer each of these.
 */
import { describe, expect, it } from "vitest";
import { keccak256, toBytes } from "viem";
import type { SettlementQuery } from "../../src";
import { evmSettlement, type SettlementRule } from "../../src/evm";
import { PERMIT2_ADDRESS } from "../../src/protocol";
import { account, PAY_TO, TX_HASH, USDC_BASE_SEPOLIA } from "../support/seller";

const NETWORK = "eip155:84532";
const TRANSFER = keccak256(toBytes("Transfer(address,address,uint256)"));
const AUTHORIZATION_USED = keccak256(toBytes("AuthorizationUsed(address,bytes32)"));
const word = (value: bigint) => `0x${value.toString(16).padStart(64, "0")}`;
const topic = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`;
const NONCE = `0x${"5a".repeat(32)}`;
const OTHER_TX = `0x${"77".repeat(32)}`;
/** The latest block's time and number on the scripted chain. */
const NOW = 1_800_000_000n;
const LATEST = 50_000n;

interface Script {
  /** The receipt of TX_HASH (`null`: not mined). */
  receipt?: unknown;
  /** `authorizationState`'s answer (any `eth_call` to the asset), else Permit2's `nonceBitmap`'s. */
  state?: string;
  bitmap?: string;
  /** The latest block's time (default NOW) and the pace of the last 1,024 blocks (default 2 s a block). */
  now?: bigint;
  secondsPerBlock?: bigint;
  /** Transaction hashes `eth_getLogs` finds; `"refuse"`: the node refuses the read. */
  logs?: string[] | "refuse";
}

/** A scripted RPC for NETWORK, and every request it was asked. */
function scripted(script: Script) {
  const asked: { method: string; params: unknown[] }[] = [];
  const now = script.now ?? NOW;
  const pace = script.secondsPerBlock ?? 2n;
  const block = (number: bigint) => ({
    number: `0x${number.toString(16)}`,
    timestamp: `0x${(now - (LATEST - number) * pace).toString(16)}`,
  });
  const rpc = {
    async request({ method, params }: { method: string; params: unknown[] }) {
      asked.push({ method, params });
      switch (method) {
        case "eth_getTransactionReceipt":
          return script.receipt ?? null;
        case "eth_call": {
          const { to } = params[0] as { to: string };
          return to.toLowerCase() === PERMIT2_ADDRESS.toLowerCase() ? (script.bitmap ?? "0x") : (script.state ?? "0x");
        }
        case "eth_getBlockByNumber":
          return block(params[0] === "latest" ? LATEST : BigInt(params[0] as string));
        case "eth_getLogs":
          if (script.logs === "refuse") throw new Error("query returned more than 10000 results");
          return (script.logs ?? []).map((transactionHash) => ({ transactionHash }));
        default:
          throw new Error(`not scripted: ${method}`);
      }
    },
  };
  return { rpc, asked, check: (query: Partial<SettlementQuery>, rule?: SettlementRule) => check(rpc, query, rule) };
}

const baseQuery: SettlementQuery = {
  scheme: "exact",
  network: NETWORK,
  transaction: TX_HASH,
  asset: USDC_BASE_SEPOLIA,
  payTo: PAY_TO,
  payer: account.address,
  amount: "10000",
};

function check(rpc: unknown, query: Partial<SettlementQuery>, rule?: SettlementRule) {
  return evmSettlement({ rpc: { [NETWORK]: rpc as never } }).check({ ...baseQuery, ...query }, undefined, rule);
}

/** An exact payload's EIP-3009 authorization, valid from `validAfter` until `validBefore` (unix seconds). */
const eip3009 = (validAfter = NOW - 600n, validBefore = NOW + 300n, more: Record<string, unknown> = {}) => ({
  x402Version: 2,
  payload: {
    signature: "0x",
    authorization: {
      from: account.address,
      to: PAY_TO,
      value: "10000",
      validAfter: String(validAfter),
      validBefore: String(validBefore),
      nonce: NONCE,
      ...more,
    },
  },
});
/** A Permit2 payload's authorization: its nonce, its deadline. */
const permit2 = (nonce: bigint, deadline = NOW + 300n) => ({
  x402Version: 2,
  payload: {
    signature: "0x",
    permit2Authorization: { from: account.address, nonce: String(nonce), deadline: String(deadline) },
  },
});
const transfer = (from: string, to: string, value: bigint, data = word(value)) => ({
  address: USDC_BASE_SEPOLIA,
  topics: [TRANSFER, topic(from), topic(to)],
  data,
});
const mined = (...logs: unknown[]) => ({ status: "0x1", logs });

describe("the transaction the server named", () => {
  it("a Transfer of the asset from the payer to the payee: settled for what it moved, by that transaction", async () => {
    const chain = scripted({
      receipt: mined(transfer(account.address, PAY_TO, 6_000n), transfer(account.address, PAY_TO, 4_000n)),
    });
    expect(await chain.check({})).toEqual({
      state: "settled",
      transaction: TX_HASH,
      amount: "10000",
      reason: `transaction ${TX_HASH} moved 10000 base units of ${USDC_BASE_SEPOLIA} from ${account.address} to ${PAY_TO}`,
    });
  });

  it("a hash that is not exactly 32 bytes of hex is not asked for (one byte more, one less, a prefix before it)", async () => {
    for (const transaction of [`${TX_HASH}00`, TX_HASH.slice(0, -2), `x${TX_HASH}`, undefined]) {
      const chain = scripted({ receipt: mined(transfer(account.address, PAY_TO, 10_000n)) });
      const status = await chain.check({ transaction });
      expect(status).toEqual({
        state: "pending",
        transaction: undefined,
        reason: "no transaction was named, and the signed payment is not known",
      });
      expect(chain.asked).toEqual([]);
    }
  });

  it("not mined and no authorization known: pending, saying so", async () => {
    expect(await scripted({ receipt: null }).check({})).toEqual({
      state: "pending",
      transaction: TX_HASH,
      reason: `transaction ${TX_HASH} is not mined yet`,
    });
  });

  it("reverted, even with Transfer logs in its receipt: failed, moved nothing", async () => {
    const receipt = { status: "0x0", logs: [transfer(account.address, PAY_TO, 10_000n)] };
    expect(await scripted({ receipt }).check({})).toEqual({
      state: "failed",
      transaction: TX_HASH,
      reason: `transaction ${TX_HASH} reverted`,
    });
  });

  it("mined, moving nothing of this payment (the payee paid by another, the payer paying another): failed", async () => {
    const stranger = "0x3333333333333333333333333333333333333333";
    const receipt = mined(transfer(stranger, PAY_TO, 10_000n), transfer(account.address, stranger, 10_000n));
    expect(await scripted({ receipt }).check({})).toEqual({
      state: "failed",
      transaction: TX_HASH,
      reason: `transaction ${TX_HASH} moved none of this payment`,
    });
  });

  it("a Transfer whose data is not one word of hex is not counted (longer than a word, not hex, empty)", async () => {
    for (const data of [`0x${"00".repeat(32)}01`, "0xzz", "0x", "27"]) {
      const receipt = mined(transfer(account.address, PAY_TO, 10_000n, data), transfer(account.address, PAY_TO, 5n));
      expect(await scripted({ receipt }).check({})).toMatchObject({ state: "settled", amount: "5" });
    }
  });
});

describe("through an escrow of the scheme's rule: what went in from the payer or out to the payee, the larger", () => {
  const escrow = "0x4444444444444444444444444444444444444444";
  const rule: SettlementRule = { amount: "at-most", escrows: [escrow] };
  const escrowLog = { address: escrow, topics: [`0x${"ab".repeat(32)}`], data: "0x" };

  it("in from the payer (an authorization): what went in, not what others' transfers moved to the escrow", async () => {
    const other = "0x5555555555555555555555555555555555555555";
    const receipt = mined(escrowLog, transfer(account.address, escrow, 9_000n), transfer(other, escrow, 7_000n));
    expect(await scripted({ receipt }).check({}, rule)).toMatchObject({ state: "settled", amount: "9000" });
  });

  it("out to the payee (a capture), larger than what came in: what the payee got", async () => {
    const receipt = mined(escrowLog, transfer(account.address, escrow, 3_000n), transfer(escrow, PAY_TO, 8_000n));
    const status = await scripted({ receipt }).check({}, rule);
    expect(status).toMatchObject({ state: "settled", amount: "8000" });
    expect(status.reason).toBe(
      `transaction ${TX_HASH}, the escrow's, moved 8000 base units of ${USDC_BASE_SEPOLIA} of this payment (from ` +
        `${account.address} into the escrow, or from the escrow to ${PAY_TO})`,
    );
  });

  it("equal in and out: that amount once, not both", async () => {
    const receipt = mined(escrowLog, transfer(account.address, escrow, 4_000n), transfer(escrow, PAY_TO, 4_000n));
    expect(await scripted({ receipt }).check({}, rule)).toMatchObject({ state: "settled", amount: "4000" });
  });

  it("with its authorization known and not used, the escrow's transaction moved others' money: not believed", async () => {
    const receipt = mined(escrowLog, transfer(escrow, PAY_TO, 8_000n));
    const chain = scripted({ receipt, state: word(0n) });
    expect(await chain.check({ payload: eip3009() }, rule)).toMatchObject({
      state: "pending",
      reason: `transaction ${TX_HASH} moved none of this payment; the signed authorization can still move money until ${iso(NOW + 300n)}`,
    });
    const used = scripted({ receipt, state: word(1n) });
    expect(await used.check({ payload: eip3009() }, rule)).toMatchObject({ state: "settled", amount: "8000" });
  });

  it("the default rule is exact's: money moved to the payee through an escrow is not this payment", async () => {
    const receipt = mined(escrowLog, transfer(escrow, PAY_TO, 8_000n));
    expect(await scripted({ receipt }).check({})).toMatchObject({ state: "failed" });
  });
});

const iso = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString();

describe("the signed authorization's own state, when no transaction proves the payment", () => {
  it("EIP-3009, used: settled for the signed amount, by the transaction whose AuthorizationUsed log names it", async () => {
    const chain = scripted({ state: word(1n), logs: [OTHER_TX] });
    const status = await chain.check({ transaction: undefined, payload: eip3009() });
    expect(status).toEqual({
      state: "settled",
      transaction: OTHER_TX,
      amount: "10000",
      reason: `no transaction was named, but the signed authorization was used on chain, by transaction ${OTHER_TX}`,
    });
    const call = chain.asked.find((a) => a.method === "eth_call")!;
    // authorizationState(address,bytes32): the payer and the nonce, on the asset.
    expect(call.params[0]).toEqual({
      to: expect.stringMatching(new RegExp(`^${USDC_BASE_SEPOLIA}$`, "i")),
      data: `0xe94a0102${topic(account.address).slice(2)}${NONCE.slice(2)}`,
    });
    const logs = chain.asked.find((a) => a.method === "eth_getLogs")!.params[0] as Record<string, unknown>;
    expect(logs.topics).toEqual([AUTHORIZATION_USED, topic(account.address), NONCE]);
    expect(String(logs.address).toLowerCase()).toBe(USDC_BASE_SEPOLIA.toLowerCase());
  });

  it("used, under an at-most rule (upto): settled, the amount unknown", async () => {
    const chain = scripted({ state: word(1n), logs: [] });
    const status = await chain.check({ transaction: undefined, payload: eip3009() }, { amount: "at-most" });
    expect(status).toEqual({
      state: "settled",
      transaction: undefined,
      amount: undefined,
      reason: "no transaction was named, but the signed authorization was used on chain",
    });
  });

  it("used, with a named transaction that moved none of it: settled, no search for another (the named one is kept out)", async () => {
    const chain = scripted({ receipt: mined(), state: word(1n), logs: [OTHER_TX] });
    const status = await chain.check({ payload: eip3009() });
    expect(status).toMatchObject({ state: "settled", transaction: undefined, amount: "10000" });
    expect(status.reason).toBe(
      `transaction ${TX_HASH} moved none of this payment, but the signed authorization was used on chain`,
    );
    expect(chain.asked.map((a) => a.method)).not.toContain("eth_getLogs");
  });

  it.each([
    {
      when: "passed on the chain's clock: failed, nothing can move",
      deadline: NOW - 1n,
      state: "failed",
      reason: `no transaction was named, and the signed authorization expired unused at ${iso(NOW - 1n)}`,
    },
    {
      when: "the chain's very second: still pending (a block at that second may still take it)",
      deadline: NOW,
      state: "pending",
      reason: `no transaction was named; the signed authorization can still move money until ${iso(NOW)}`,
    },
  ])("not used, its deadline $when", async ({ deadline, state, reason }) => {
    const status = await scripted({ state: word(0n) }).check({
      transaction: undefined,
      payload: eip3009(NOW - 900n, deadline),
    });
    expect(status).toEqual({ state, transaction: undefined, reason });
  });

  it("a state the token does not answer with a word (no such function): as if unknown, by the receipt alone", async () => {
    const reverted = { status: "0x0", logs: [] };
    expect(await scripted({ receipt: reverted, state: "0x" }).check({ payload: eip3009() })).toMatchObject({
      state: "failed",
    });
    expect(await scripted({ receipt: null, state: "0x" }).check({ payload: eip3009() })).toMatchObject({
      state: "pending",
      reason: `transaction ${TX_HASH} is not mined yet`,
    });
  });

  it("Permit2: the nonce's own bit in its word of the bitmap, asked of Permit2 for the payer and the word's index", async () => {
    const nonce = (7n << 8n) + 3n; // word 7, bit 3
    const bit3 = word(1n << 3n);
    const chain = scripted({ bitmap: bit3 });
    expect(await chain.check({ transaction: undefined, payload: permit2(nonce) })).toMatchObject({
      state: "settled",
      amount: "10000",
      transaction: undefined,
    });
    const call = chain.asked.find((a) => a.method === "eth_call")!.params[0] as { to: string; data: string };
    expect(call.to.toLowerCase()).toBe(PERMIT2_ADDRESS.toLowerCase());
    expect(call.data).toBe(`0x4fe02b44${topic(account.address).slice(2)}${word(7n).slice(2)}`);
    // Permit2's transaction is not searched for.
    expect(chain.asked.map((a) => a.method)).not.toContain("eth_getLogs");
    // The bits beside it are other payments'.
    for (const bitmap of [word(1n << 2n), word(1n << 4n), word((1n << 256n) - 1n - (1n << 3n))]) {
      expect(await scripted({ bitmap }).check({ transaction: undefined, payload: permit2(nonce) })).toMatchObject({
        state: "pending",
      });
    }
  });

  it("a payload whose authorization is malformed is not looked up: the receipt alone decides", async () => {
    const bad = [
      eip3009(NOW - 600n, NOW + 300n, { from: "0x1234" }),
      eip3009(NOW - 600n, NOW + 300n, { from: `${account.address}00` }),
      eip3009(NOW - 600n, NOW + 300n, { from: 7 }),
      eip3009(NOW - 600n, NOW + 300n, { validBefore: "-1" }),
      eip3009(NOW - 600n, NOW + 300n, { validBefore: "12x" }),
      eip3009(NOW - 600n, NOW + 300n, { validBefore: 12 }),
      eip3009(NOW - 600n, NOW + 300n, { validBefore: "1".repeat(79) }),
      eip3009(NOW - 600n, NOW + 300n, { nonce: NONCE.slice(0, -2) }),
      eip3009(NOW - 600n, NOW + 300n, { nonce: `${NONCE}00` }),
      eip3009(NOW - 600n, NOW + 300n, { nonce: 5 }),
      permit2(5n, NOW + 300n).payload.permit2Authorization && {
        payload: { permit2Authorization: { from: account.address, nonce: "0x05", deadline: String(NOW + 300n) } },
      },
    ];
    for (const payload of bad) {
      const chain = scripted({ state: word(1n), bitmap: word((1n << 256n) - 1n) });
      expect(await chain.check({ transaction: undefined, payload })).toMatchObject({ state: "pending" });
      expect(chain.asked).toEqual([]);
    }
  });
});

describe("the search for the transaction that used an EIP-3009 authorization", () => {
  const searched = async (script: Script, validAfter: bigint, validBefore: bigint) => {
    const chain = scripted({ state: word(1n), logs: [OTHER_TX], ...script });
    const status = await chain.check({ transaction: undefined, payload: eip3009(validAfter, validBefore) });
    const logs = chain.asked.find((a) => a.method === "eth_getLogs")?.params[0] as
      | { fromBlock: string; toBlock: string }
      | undefined;
    const blocks = chain.asked.filter((a) => a.method === "eth_getBlockByNumber").map((a) => a.params[0]);
    return { status, blocks, range: logs && [BigInt(logs.fromBlock), BigInt(logs.toBlock)] };
  };

  it("the blocks of its validity, placed by the pace of the last 1,024 blocks, 64 blocks of margin each side", async () => {
    // 2 s a block: valid from 600 s ago (300 blocks) until 400 s ago (200 blocks), the latest block 50,000.
    const { status, blocks, range } = await searched({}, NOW - 600n, NOW - 400n);
    expect(status).toMatchObject({ state: "settled", transaction: OTHER_TX });
    expect(blocks).toEqual(["latest", `0x${(LATEST - 1024n).toString(16)}`]);
    expect(range).toEqual([LATEST - 300n - 64n, LATEST - 200n + 64n]);
  });

  it("a deadline still ahead: up to the latest block; never past it", async () => {
    expect((await searched({}, NOW - 600n, NOW + 3_000n)).range).toEqual([LATEST - 300n - 64n, LATEST]);
    // Deadline 60 s ago: 30 blocks back, then 64 of margin would pass the latest; the latest bounds it.
    expect((await searched({}, NOW - 600n, NOW - 60n)).range).toEqual([LATEST - 300n - 64n, LATEST]);
    // Exactly the latest block's second: not moved back.
    expect((await searched({}, NOW - 600n, NOW)).range).toEqual([LATEST - 364n, LATEST]);
  });

  it("at most 10,000 blocks in one read, ending at its last", async () => {
    // Valid for 40,000 s (20,000 blocks) ending 2,000 s ago (1,000 blocks).
    const { range } = await searched({}, NOW - 42_000n, NOW - 2_000n);
    const last = LATEST - 1_000n + 64n;
    expect(range).toEqual([last - 10_000n, last]);
  });

  it("a young chain (fewer than 1,024 blocks): the sample is block 0, and the search never goes below it", async () => {
    const young = { now: NOW, secondsPerBlock: 2n };
    const chain = scripted({ state: word(1n), logs: [OTHER_TX], ...young });
    // Only 50,000 blocks exist in the script: move the latest to 500 by asking about a chain of that height.
    const small = {
      async request(args: { method: string; params: unknown[] }) {
        if (args.method === "eth_getBlockByNumber") {
          const n = args.params[0] === "latest" ? 500n : BigInt(args.params[0] as string);
          chain.asked.push(args);
          return { number: `0x${n.toString(16)}`, timestamp: `0x${(NOW - (500n - n) * 2n).toString(16)}` };
        }
        return chain.rpc.request(args);
      },
    };
    const status = await check(small, { transaction: undefined, payload: eip3009(NOW - 5_000n, NOW - 300n) });
    expect(status).toMatchObject({ state: "settled", transaction: OTHER_TX });
    const blocks = chain.asked.filter((a) => a.method === "eth_getBlockByNumber").map((a) => a.params[0]);
    expect(blocks).toEqual(["latest", "0x0"]);
    const logs = chain.asked.find((a) => a.method === "eth_getLogs")!.params[0] as {
      fromBlock: string;
      toBlock: string;
    };
    expect([BigInt(logs.fromBlock), BigInt(logs.toBlock)]).toEqual([0n, 500n - 150n + 64n]);
  });

  it("blocks within one second (no pace to go by): the whole sample, up to the latest", async () => {
    const { range } = await searched({ secondsPerBlock: 0n }, NOW - 600n, NOW - 400n);
    expect(range).toEqual([LATEST - 1024n - 64n, LATEST]);
  });

  it("a node that refuses the read: settled all the same, the transaction not named", async () => {
    const { status } = await searched({ logs: "refuse" }, NOW - 600n, NOW - 100n);
    expect(status).toMatchObject({ state: "settled", transaction: undefined, amount: "10000" });
  });

  it("an authorization without validAfter: not searched for", async () => {
    const chain = scripted({ state: word(1n), logs: [OTHER_TX] });
    const payload = eip3009();
    delete (payload.payload.authorization as Record<string, unknown>).validAfter;
    expect(await chain.check({ transaction: undefined, payload })).toMatchObject({
      state: "settled",
      transaction: undefined,
    });
    expect(chain.asked.map((a) => a.method)).not.toContain("eth_getLogs");
  });
});

describe("a network the settlement has no RPC for", () => {
  it("INVALID_CONFIG naming the network and how to give it one; no chain asked", async () => {
    const chain = scripted({});
    const error = await check(chain.rpc, { network: "eip155:8453" }).catch((e) => e);
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.details).toEqual({ option: "rpc" });
    expect(error.message).toBe(
      'evmSettlement has no RPC for eip155:8453: give it one, evmSettlement({ rpc: { "eip155:8453": url } }).',
    );
    expect(chain.asked).toEqual([]);
  });
});
