// x402-pay's batchSettlementEvm against the unmodified reference seller (@x402/evm batch-settlement server behind
// @x402/express) and facilitator, on anvil with our settlement contract and collectors (localnet/batch.ts). Every
// case asserts balances on chain. Tests in this file run in order on one chain.

import { createPublicClient, createWalletClient, http, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt } from "../../src";
import { ChannelDisputedError } from "../../src/entries/errors";
import { batchSettlementEvm, memoryChannelStore } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  BATCH_SETTLEMENT,
  PRICE_ATOMIC,
  USDC_BASE_SEPOLIA,
  WEATHER,
  approvePermit2,
  fundedBuyer,
  localChain,
  rpc,
  startInteropStack,
  type BatchSeller,
  type BatchSettlementReader,
  type Buyer,
  type InteropStack,
} from "../localnet/index.js";

let stack: InteropStack;
let batch: BatchSettlementReader;
let seller: BatchSeller;
let url: string;

beforeAll(async () => {
  stack = await startInteropStack({ batchSettlement: true, permit2: true });
  batch = stack.batch!;
  seller = stack.seller.batch!;
  url = `${stack.seller.url}/batch/weather`;
});

afterAll(async () => {
  await stack?.stop();
});

const usdc = (owner: `0x${string}`) => batch.tokenBalance(USDC_BASE_SEPOLIA, owner);

/** A buyer paying with our scheme; `fetcher` sits between the client and the seller (a lying seller). */
async function payer(options: { multiple?: number; buyer?: Buyer; fetcher?: typeof fetch } = {}) {
  const buyer = options.buyer ?? (await fundedBuyer(stack.usdc));
  const scheme = batchSettlementEvm({
    signer: buyer.account,
    rpc: stack.anvil.rpcUrl,
    deposit: { multiple: options.multiple ?? 100 },
    storage: memoryChannelStore(),
  });
  const client = createX402Client({ schemes: [scheme], policy: { maxAmountPerPayment: "$1" } });
  const pay = wrapFetchWithPayment(options.fetcher ?? fetch, client);
  return { buyer, scheme, pay };
}

async function call(pay: typeof fetch, route = url) {
  const response = await pay(route);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual(WEATHER);
  return getPaymentReceipt(response)!;
}

describe("one deposit, 99 vouchers, a batch claim, a refund", () => {
  let p: Awaited<ReturnType<typeof payer>>;
  let start: bigint;
  let channel: `0x${string}`;
  const DEPOSIT = 150n * PRICE_ATOMIC;

  it("the first call deposits; the next 99 send vouchers only, with no transaction of their own", async () => {
    p = await payer({ multiple: 150 });
    start = await usdc(p.buyer.address);
    const first = await call(p.pay);
    expect(first).toMatchObject({ deposit: String(DEPOSIT), settledAmount: String(PRICE_ATOMIC) });
    channel = first.channel!.id as `0x${string}`;
    expect(await batch.channel(channel)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });
    expect(await usdc(p.buyer.address)).toBe(start - DEPOSIT);

    const txCount = await batch.transactionCount(stack.facilitator.address);
    for (let i = 2n; i <= 100n; i++) {
      const receipt = await call(p.pay);
      expect(receipt).toMatchObject({ settledAmount: String(PRICE_ATOMIC), transaction: undefined });
      expect(receipt.channel).toEqual({ id: channel, balance: String(DEPOSIT), charged: String(i * PRICE_ATOMIC) });
    }
    expect(await batch.transactionCount(stack.facilitator.address)).toBe(txCount);
    expect(await batch.channel(channel)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });
    expect(await usdc(p.buyer.address)).toBe(start - DEPOSIT);
  });

  it("the seller's batch claim and settle move exactly the sum", async () => {
    const before = await usdc(stack.seller.payTo);
    await seller.manager.claimAndSettle();
    expect(await usdc(stack.seller.payTo)).toBe(before + 100n * PRICE_ATOMIC);
    expect(await batch.channel(channel)).toEqual({ balance: DEPOSIT, totalClaimed: 100n * PRICE_ATOMIC });
  });

  it("a client that lost its state recovers through the corrective 402 and pays no call twice", async () => {
    // The same wallet, a fresh memory store: it reads the chain (totalClaimed = 100 calls) and, as the seller
    // counts the same, pays on at 101 calls.
    const again = await payer({ buyer: p.buyer });
    const receipt = await call(again.pay);
    expect(receipt.channel).toMatchObject({ charged: String(101n * PRICE_ATOMIC) });
    expect(receipt.deposit).toBeUndefined();
    await seller.manager.claimAndSettle();
    expect(await batch.channel(channel)).toEqual({ balance: DEPOSIT, totalClaimed: 101n * PRICE_ATOMIC });
    p = again;
  });

  it("a cooperative refund returns exactly the unspent amount", async () => {
    const result = await p.scheme.refund(url, { through: p.pay });
    expect(result).toMatchObject({ channel, refunded: String(DEPOSIT - 101n * PRICE_ATOMIC) });
    expect(await usdc(p.buyer.address)).toBe(start - 101n * PRICE_ATOMIC);
    expect(await batch.channel(channel)).toEqual({ balance: 101n * PRICE_ATOMIC, totalClaimed: 101n * PRICE_ATOMIC });
    expect(await usdc(BATCH_SETTLEMENT)).toBe(0n);
  });
});

describe("top-ups and recovery from the seller's vouchers", () => {
  it("tops the channel up when the next voucher would pass its balance", async () => {
    const p = await payer({ multiple: 2 });
    const start = await usdc(p.buyer.address);
    const receipts = [];
    for (let i = 0; i < 5; i++) receipts.push(await call(p.pay));
    // Deposits are at least the seller's minDeposit (10 x the price): one deposit covers the five calls.
    expect(receipts.map((r) => r.deposit)).toEqual([
      String(10n * PRICE_ATOMIC),
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    for (let i = 0; i < 6; i++) receipts.push(await call(p.pay));
    // The 11th call would pass 10 x the price: a top-up.
    expect(receipts.map((r) => r.deposit !== undefined)).toEqual([true, ...new Array(9).fill(false), true]);
    const channel = receipts[0]!.channel!.id as `0x${string}`;
    expect(await batch.channel(channel)).toEqual({ balance: 20n * PRICE_ATOMIC, totalClaimed: 0n });
    expect(await usdc(p.buyer.address)).toBe(start - 20n * PRICE_ATOMIC);
  });

  it("a lost state with unclaimed vouchers: the seller's corrective 402, checked against our signature", async () => {
    const p = await payer();
    for (let i = 0; i < 3; i++) await call(p.pay);
    // Nothing claimed yet: the chain says 0 charged, the seller counts 3 calls and holds our voucher for them.
    const again = await payer({ buyer: p.buyer });
    const receipt = await call(again.pay);
    expect(receipt.channel).toMatchObject({ charged: String(4n * PRICE_ATOMIC) });
    await seller.manager.claimAndSettle();
    expect(await batch.channel(receipt.channel!.id as `0x${string}`)).toMatchObject({
      totalClaimed: 4n * PRICE_ATOMIC,
    });
  });

  it("a seller that lies in its corrective 402 (a charge we never signed) is refused, and nothing more is signed", async () => {
    const p = await payer();
    await call(p.pay);
    // Between a fresh client and the seller: the corrective 402 says 5 calls charged, where the voucher shows 1.
    const lying: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const header = response.headers.get("PAYMENT-REQUIRED");
      if (response.status !== 402 || !header) return response;
      const challenge = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
      for (const accept of challenge.accepts) {
        if (accept.extra?.channelState) accept.extra.channelState.chargedCumulativeAmount = String(5n * PRICE_ATOMIC);
      }
      const headers = new Headers(response.headers);
      headers.set("PAYMENT-REQUIRED", Buffer.from(JSON.stringify(challenge)).toString("base64"));
      return new Response(await response.arrayBuffer(), { status: 402, headers });
    };
    const again = await payer({ buyer: p.buyer, fetcher: lying });
    const before = await usdc(p.buyer.address);
    await expect(again.pay(url)).rejects.toBeInstanceOf(ChannelDisputedError);
    await expect(again.pay(url)).rejects.toMatchObject({ code: "CHANNEL_DISPUTED" });
    expect(await usdc(p.buyer.address)).toBe(before);
  });
});

describe("Permit2 deposits", () => {
  it("deposits through Permit2 and its collector, then pays by voucher; the refund returns the rest", async () => {
    const p = await payer({ multiple: 10 });
    await approvePermit2(stack.anvil.rpcUrl, { account: p.buyer.account, token: USDC_BASE_SEPOLIA });
    const route = `${stack.seller.url}/batch/permit2`;
    const start = await usdc(p.buyer.address);
    const first = await call(p.pay, route);
    expect(first.deposit).toBe(String(10n * PRICE_ATOMIC));
    const channel = first.channel!.id as `0x${string}`;
    for (let i = 0; i < 3; i++) expect((await call(p.pay, route)).deposit).toBeUndefined();
    expect(await batch.channel(channel)).toEqual({ balance: 10n * PRICE_ATOMIC, totalClaimed: 0n });
    expect(await usdc(p.buyer.address)).toBe(start - 10n * PRICE_ATOMIC);
    const result = await p.scheme.refund(route, { through: p.pay });
    expect(result.refunded).toBe(String(6n * PRICE_ATOMIC));
    expect(await usdc(p.buyer.address)).toBe(start - 4n * PRICE_ATOMIC);
  });
});

// Last: it moves the chain's clock past the withdrawal delay.
describe("the withdrawal, without the seller", () => {
  it("initiate, the seller claims what it holds vouchers for, then after the delay the rest comes back", async () => {
    const p = await payer({ multiple: 10 });
    const start = await usdc(p.buyer.address);
    for (let i = 0; i < 3; i++) await call(p.pay);
    const plan = await p.scheme.withdrawal(url, { through: p.pay });
    expect(plan).toMatchObject({ amount: String(10n * PRICE_ATOMIC), withdrawDelay: 900 });
    const chain = localChain(stack.anvil.rpcUrl);
    await rpc(stack.anvil.rpcUrl, "anvil_setBalance", [p.buyer.address, toHex(10n ** 18n)]);
    const wallet = createWalletClient({ account: p.buyer.account, chain, transport: http(stack.anvil.rpcUrl) });
    const reader = createPublicClient({ chain, transport: http(stack.anvil.rpcUrl), pollingInterval: 50 });
    const send = async (tx: { to: `0x${string}`; data: `0x${string}` }) => {
      const receipt = await reader.waitForTransactionReceipt({ hash: await wallet.sendTransaction(tx) });
      expect(receipt.status).toBe("success");
    };
    await send(plan.initiate);
    // Before the delay the contract refuses to finalize.
    await expect(send(plan.finalize)).rejects.toThrow();
    await seller.manager.claimAndSettle();
    await rpc(stack.anvil.rpcUrl, "evm_increaseTime", [plan.withdrawDelay + 1]);
    await rpc(stack.anvil.rpcUrl, "evm_mine", []);
    await send(plan.finalize);
    expect(await batch.channel(plan.channel as `0x${string}`)).toEqual({
      balance: 3n * PRICE_ATOMIC,
      totalClaimed: 3n * PRICE_ATOMIC,
    });
    expect(await usdc(p.buyer.address)).toBe(start - 3n * PRICE_ATOMIC);
  });
});
