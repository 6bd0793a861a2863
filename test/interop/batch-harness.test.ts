// Proves the batch-settlement harness (our contract and collectors, localnet/batch.ts) with the REFERENCE
// parts only: the @x402/evm batch-settlement client behind @x402/fetch pays the reference seller's
// `/batch/*` routes through the reference facilitator, and the reference channel manager claims and
// settles. Every step is checked on chain. Tests in this file run in order on one chain.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequirements, SettleResponse } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, http, type Hash, type Hex, type PublicClient } from "viem";
import {
  BATCH_SETTLEMENT,
  PERMIT2_DEPOSIT_COLLECTOR,
  PRICE_ATOMIC,
  USDC_BASE_SEPOLIA,
  WEATHER,
  approvePermit2,
  fundedBuyer,
  startInteropStack,
  type BatchSeller,
  type BatchSettlementReader,
  type Buyer,
  type ChannelConfig,
  type InteropStack,
} from "../localnet/index.js";

/** What the reference seller announces as `minDeposit` (10 × price), and so what the reference client deposits. */
const DEPOSIT = 10n * PRICE_ATOMIC;

let stack: InteropStack;
let batch: BatchSettlementReader;
let seller: BatchSeller;
let chain: PublicClient;

beforeAll(async () => {
  stack = await startInteropStack({ batchSettlement: true, permit2: true });
  batch = stack.batch!;
  seller = stack.seller.batch!;
  chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
});

afterAll(async () => {
  await stack?.stop();
});

/** A buyer paying with the reference batch-settlement client, and its channel on one route. */
interface Payer {
  buyer: Buyer;
  scheme: BatchSettlementEvmScheme;
  pay: typeof fetch;
  config: ChannelConfig;
  channelId: Hex;
}

async function payer(route: string): Promise<Payer> {
  const buyer = await fundedBuyer(stack.usdc);
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(buyer.account, chain));
  const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", scheme));
  const config = scheme.buildChannelConfig(await requirements(route)) as ChannelConfig;
  return { buyer, scheme, pay, config, channelId: await batch.channelId(config) };
}

/** The route's batch-settlement requirements, from an unpaid request's 402. */
async function requirements(route: string): Promise<PaymentRequirements> {
  const response = await fetch(`${stack.seller.url}${route}`);
  await response.arrayBuffer();
  expect(response.status).toBe(402);
  const required = decodePaymentRequiredHeader(response.headers.get("PAYMENT-REQUIRED") ?? "");
  const accept = required.accepts.find((item) => item.scheme === "batch-settlement");
  if (!accept) throw new Error(`${route} offers no batch-settlement`);
  return accept;
}

async function paidCall(p: Payer, route: string): Promise<SettleResponse> {
  const response = await p.pay(`${stack.seller.url}${route}`);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual(WEATHER);
  return decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
}

async function expectMined(transaction: string): Promise<void> {
  const receipt = await chain.getTransactionReceipt({ hash: transaction as Hash });
  expect(receipt.status).toBe("success");
  expect(receipt.to?.toLowerCase()).toBe(BATCH_SETTLEMENT.toLowerCase());
  expect(receipt.from.toLowerCase()).toBe(stack.facilitator.address.toLowerCase());
}

const usdc = (owner: `0x${string}`) => batch.tokenBalance(USDC_BASE_SEPOLIA, owner);

describe("harness setup", () => {
  it("the seller announces a receiver authorizer, the channel id is the contract's own", async () => {
    const accept = await requirements("/batch/weather");
    expect(accept).toMatchObject({ asset: USDC_BASE_SEPOLIA, amount: String(PRICE_ATOMIC), payTo: stack.seller.payTo });
    expect(accept.extra).toMatchObject({ name: "USDC", version: "2", minDeposit: String(DEPOSIT) });
    expect(accept.extra.receiverAuthorizer).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(seller.authorizer).toBe("seller");
    // The reference computes channel ids off chain (EIP-712 over ChannelConfig); ours must agree.
    const { computeChannelId } = await import("@x402/evm/batch-settlement/client");
    const p = await payer("/batch/weather");
    expect(p.channelId).toBe(computeChannelId(p.config as never, "eip155:84532"));
  });
});

describe("EIP-3009 deposit, vouchers, claim and settle, refund", () => {
  let p: Payer;
  let buyerStart: bigint;
  const CALLS = 6n;

  it("the first paid call deposits into the channel", async () => {
    p = await payer("/batch/weather");
    buyerStart = await usdc(p.buyer.address);
    const settle = await paidCall(p, "/batch/weather");
    expect(settle).toMatchObject({ success: true, amount: String(DEPOSIT) });
    await expectMined(settle.transaction);
    expect(await batch.channel(p.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });
    expect(await usdc(p.buyer.address)).toBe(buyerStart - DEPOSIT);
    expect(await usdc(BATCH_SETTLEMENT)).toBe(DEPOSIT);
  });

  it("the next calls send vouchers only: no transaction, nothing moves on chain", async () => {
    const txCount = await batch.transactionCount(stack.facilitator.address);
    const settles = stack.facilitator.requests.filter((r) => r.path === "/settle").length;
    for (let call = 2n; call <= CALLS; call++) {
      const settle = await paidCall(p, "/batch/weather");
      expect(settle).toMatchObject({ success: true, transaction: "" });
      expect(settle.extra?.channelState).toMatchObject({ chargedCumulativeAmount: String(call * PRICE_ATOMIC) });
    }
    expect(await batch.transactionCount(stack.facilitator.address)).toBe(txCount);
    expect(stack.facilitator.requests.filter((r) => r.path === "/settle").length).toBe(settles);
    expect(await batch.channel(p.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });
    expect(await usdc(p.buyer.address)).toBe(buyerStart - DEPOSIT);
  });

  it("claimAndSettle pays the seller exactly what was charged", async () => {
    const charged = CALLS * PRICE_ATOMIC;
    const { claims, settle } = await seller.manager.claimAndSettle();
    expect(claims).toEqual([{ vouchers: 1, transaction: expect.stringMatching(/^0x/) }]);
    await expectMined(claims[0]!.transaction);
    await expectMined(settle!.transaction);
    expect(await usdc(stack.seller.payTo)).toBe(charged);
    expect(await batch.receiver(stack.seller.payTo, USDC_BASE_SEPOLIA)).toEqual({
      totalClaimed: charged,
      totalSettled: charged,
    });
    expect(await batch.channel(p.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: charged });
    expect(await usdc(BATCH_SETTLEMENT)).toBe(DEPOSIT - charged);
  });

  it("a cooperative refund returns exactly the unspent amount", async () => {
    const charged = CALLS * PRICE_ATOMIC;
    const refund = await p.scheme.refund(`${stack.seller.url}/batch/weather`);
    expect(refund).toMatchObject({ success: true, amount: String(DEPOSIT - charged) });
    await expectMined(refund.transaction);
    expect(await usdc(p.buyer.address)).toBe(buyerStart - charged);
    expect(await batch.channel(p.channelId)).toEqual({ balance: charged, totalClaimed: charged });
    expect(await batch.refundNonce(p.channelId)).toBe(1n);
    expect(await usdc(BATCH_SETTLEMENT)).toBe(0n);
    expect(await usdc(stack.seller.payTo)).toBe(charged);
  });
});

describe("Permit2 deposit; refund before any claim", () => {
  let p: Payer;
  let buyerStart: bigint;
  let sellerStart: bigint;
  const CALLS = 3n;

  it("deposits through Permit2 and the Permit2 collector, then pays by voucher", async () => {
    p = await payer("/batch/permit2");
    await approvePermit2(stack.anvil.rpcUrl, { account: p.buyer.account, token: USDC_BASE_SEPOLIA });
    buyerStart = await usdc(p.buyer.address);
    sellerStart = await usdc(stack.seller.payTo);
    const deposit = await paidCall(p, "/batch/permit2");
    expect(deposit).toMatchObject({ success: true, amount: String(DEPOSIT) });
    await expectMined(deposit.transaction);
    const receipt = await chain.getTransactionReceipt({ hash: deposit.transaction as Hash });
    // The Permit2 collector was the spender the buyer signed for (it appears as a log-free call; its
    // address is in the transaction's input as the collector argument).
    const tx = await chain.getTransaction({ hash: receipt.transactionHash });
    expect(tx.input.toLowerCase()).toContain(PERMIT2_DEPOSIT_COLLECTOR.slice(2).toLowerCase());
    for (let call = 2n; call <= CALLS; call++) {
      expect(await paidCall(p, "/batch/permit2")).toMatchObject({ success: true, transaction: "" });
    }
    expect(await batch.channel(p.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });
    expect(await usdc(p.buyer.address)).toBe(buyerStart - DEPOSIT);
  });

  it("a refund of an unclaimed channel claims the charge and refunds the rest in one transaction", async () => {
    const charged = CALLS * PRICE_ATOMIC;
    const refund = await p.scheme.refund(`${stack.seller.url}/batch/permit2`);
    expect(refund).toMatchObject({ success: true, amount: String(DEPOSIT - charged) });
    await expectMined(refund.transaction);
    expect(await batch.channel(p.channelId)).toEqual({ balance: charged, totalClaimed: charged });
    expect(await usdc(p.buyer.address)).toBe(buyerStart - charged);
    // Claimed, not yet paid out. The reference manager's claimAndSettle settles only after claims of
    // its own, and the refund left none: the seller has to call settle() itself.
    expect(await usdc(stack.seller.payTo)).toBe(sellerStart);
    expect(await seller.manager.claimAndSettle()).toEqual({ claims: [], settle: undefined });
    const settle = await seller.manager.settle();
    await expectMined(settle.transaction);
    expect(await usdc(stack.seller.payTo)).toBe(sellerStart + charged);
    expect(await usdc(BATCH_SETTLEMENT)).toBe(0n);
  });
});
