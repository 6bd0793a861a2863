// Everything at once: anvil + TestUSDC + facilitator + v2 seller (+ v1 seller, + Permit2 and upto,
// + gas sponsoring, + batch-settlement), for tests and demos.

import type { Address, Hex } from "viem";
import { installBatchSettlement, type BatchSettlementReader } from "./batch.js";
import { newBuyer, randomAddress, type Buyer } from "./accounts.js";
import { startAnvil, type Anvil } from "./anvil.js";
import { stopStack } from "./cleanup.js";
import { startFacilitator, type Facilitator, type StartFacilitatorOptions } from "./facilitator.js";
import { installPermit2 } from "./permit2.js";
import { startSeller, startV1Seller, type BatchSellerOptions, type Seller } from "./seller.js";
import { installPlainToken, installTestUsdc, type TestToken, type TestUsdc } from "./token.js";

/** One test dollar in atomic units (6 decimals). */
export const ONE_USDC = 1_000_000n;

export interface FundedBuyerOptions {
  /** Atomic units to mint; default 1 USDC. */
  amount?: bigint;
  /** Default: a fresh random key. */
  privateKey?: Hex;
}

/** A buyer holding test USDC. EIP-3009 buyers need no ETH: the facilitator pays the gas. */
export async function fundedBuyer(
  usdc: TestUsdc,
  { amount = ONE_USDC, privateKey }: FundedBuyerOptions = {},
): Promise<Buyer> {
  const buyer = newBuyer(privateKey);
  if (amount > 0n) await usdc.mintUsdc(buyer.address, amount);
  return buyer;
}

export interface InteropStack {
  anvil: Anvil;
  usdc: TestUsdc;
  facilitator: Facilitator;
  /**
   * v2 seller (`/weather`, `/echo`, `/dynamic`, `/redirect`, `/free`; with `permit2`, `/permit2/weather`,
   * `/upto/metered`; with `sponsored`, `/sponsored/*`).
   */
  seller: Seller;
  /** v1 seller (x402-express 1.x, `/weather`), when started with `v1: true`. */
  v1Seller?: Seller;
  /** PlainToken (no EIP-2612), the asset of `/sponsored/plain`, when started with `sponsored: true`. */
  plainToken?: TestToken;
  /** Reads of the batch-settlement contract, when started with `batchSettlement`. */
  batch?: BatchSettlementReader;
  /** Stops everything, sellers first. Idempotent. */
  stop(): Promise<void>;
}

export interface StartInteropStackOptions {
  /** Also start the legacy v1 seller (adds the x402@1 import time). Default false. */
  v1?: boolean;
  /** Receiving address of the sellers; default a fresh random address. */
  payTo?: Address;
  /**
   * Install Permit2 and the x402 proxies, register `upto` with the facilitator and serve the
   * seller's Permit2 routes. Default false.
   */
  permit2?: boolean;
  /**
   * Everything `permit2` starts, plus PlainToken, a facilitator with the gas-sponsoring extensions
   * and the seller's `/sponsored/*` routes. Default false.
   */
  sponsored?: boolean;
  /**
   * Install the batch-settlement contract and collectors (localnet/batch.ts), register the reference
   * `batch-settlement` scheme with the facilitator and serve the seller's `/batch/*` routes; the
   * seller's side is `stack.seller.batch`. `{ authorizer: "facilitator" }` gives the facilitator the
   * receiver authorizer key instead of the seller. Default false.
   */
  batchSettlement?: boolean | BatchSellerOptions;
  /** The facilitator's wait for a settlement's receipt, in ms (see `StartFacilitatorOptions`). */
  receiptTimeoutMs?: number;
  /** Called with the facilitator before it serves, to register more (e.g. localnet/discovery.ts's `catalogue`). */
  extend?: StartFacilitatorOptions["extend"];
}

export async function startInteropStack({
  v1 = false,
  payTo = randomAddress(),
  permit2 = false,
  sponsored = false,
  batchSettlement = false,
  receiptTimeoutMs,
  extend,
}: StartInteropStackOptions = {}): Promise<InteropStack> {
  const batchOptions = batchSettlement === true ? {} : batchSettlement || undefined;
  const { add, stop } = stopStack();
  try {
    const anvil = await startAnvil();
    add(anvil.stop);
    const usdc = await installTestUsdc(anvil.rpcUrl);
    if (permit2 || sponsored) await installPermit2(anvil.rpcUrl);
    const plainToken = sponsored ? await installPlainToken(anvil.rpcUrl) : undefined;
    const batch = batchOptions ? await installBatchSettlement(anvil.rpcUrl) : undefined;
    const upto = permit2 || sponsored;
    const facilitator = await startFacilitator({
      rpcUrl: anvil.rpcUrl,
      upto,
      sponsoring: sponsored,
      ...(batchOptions && { batchSettlement: { authorizer: batchOptions.authorizer === "facilitator" } }),
      extend,
      ...(receiptTimeoutMs && { receiptTimeoutMs }),
    });
    add(facilitator.stop);
    const [seller, v1Seller] = await Promise.all([
      startSeller({
        facilitatorUrl: facilitator.url,
        payTo,
        permit2: permit2 || sponsored,
        sponsored,
        ...(batchOptions && { batchSettlement: batchOptions }),
      }),
      v1 ? startV1Seller({ facilitatorUrl: facilitator.url, payTo }) : undefined,
    ]);
    add(seller.stop);
    if (v1Seller) add(v1Seller.stop);
    return {
      anvil,
      usdc,
      facilitator,
      seller,
      ...(v1Seller ? { v1Seller } : {}),
      ...(plainToken ? { plainToken } : {}),
      ...(batch ? { batch } : {}),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
