// Everything at once for Solana: LiteSVM-backed RPC + devnet USDC + Token-2022 mint + reference
// facilitator (also serving EVM by default, on anvil) + v2 seller (+ v1 seller).

import type { Address as EvmAddress } from "viem";
import { randomAddress } from "../accounts.js";
import { startAnvil, type Anvil } from "../anvil.js";
import { stopStack } from "../cleanup.js";
import { installTestUsdc, type TestUsdc } from "../token.js";
import { startSvmFacilitator, type SvmFacilitator } from "./facilitator.js";
import {
  fundedSolanaBuyer,
  installSolanaTokens,
  newSolanaBuyer,
  type FundedSolanaBuyerOptions,
  type SolanaBuyer,
  type SolanaTokens,
} from "./mints.js";
import { startSolanaRpc, type SolanaRpc } from "./rpc.js";
import { startSvmSeller, startV1SvmSeller, type SvmSeller } from "./seller.js";
import type { Address } from "@solana/kit";

export interface SolanaStack {
  rpc: SolanaRpc;
  tokens: SolanaTokens;
  facilitator: SvmFacilitator;
  /** v2 seller (`/weather`, `/weather-2022`, `/free`). */
  seller: SvmSeller;
  /** v1 seller (x402-express 1.x, `/weather` on solana-devnet), when started with `v1: true`. */
  v1Seller?: SvmSeller;
  /** The EVM chain, when started with `evm: true` (the default). */
  anvil?: Anvil;
  /** TestUSDC on the EVM chain, when started with `evm: true`. */
  usdc?: TestUsdc;
  /** A fresh buyer holding 1 token of each test mint (by default). */
  fundedBuyer(options?: FundedSolanaBuyerOptions): Promise<SolanaBuyer>;
  /** Stops everything, sellers first. Idempotent. */
  stop(): Promise<void>;
}

export interface StartSolanaStackOptions {
  /**
   * Also run anvil + TestUSDC and let the same facilitator serve eip155:84532 / base-sepolia, so
   * `/weather` offers Base Sepolia and Solana. Default true; false gives a Solana-only stack.
   */
  evm?: boolean;
  /** Also start the legacy v1 seller (adds the x402@1 import time). Default false. */
  v1?: boolean;
  /** Solana payTo of the sellers; default a fresh address. Its ATAs for both mints are created. */
  payTo?: Address;
  /** EVM payTo for `/weather`; default a fresh address. */
  evmPayTo?: EvmAddress;
  /** Make the v2 seller embed a recent blockhash in its Solana requirements (see StartSvmSellerOptions). */
  blockhashInRequirements?: boolean;
}

export async function startSolanaStack({
  evm = true,
  v1 = false,
  payTo,
  evmPayTo = randomAddress(),
  blockhashInRequirements = false,
}: StartSolanaStackOptions = {}): Promise<SolanaStack> {
  const { add, stop } = stopStack();
  try {
    const [rpc, anvil] = await Promise.all([startSolanaRpc(), evm ? startAnvil() : undefined]);
    add(rpc.stop);
    if (anvil) add(anvil.stop);
    const usdc = anvil ? await installTestUsdc(anvil.rpcUrl) : undefined;

    const tokens = await installSolanaTokens(rpc);
    const sellerPayTo = payTo ?? (await newSolanaBuyer()).address;
    await tokens.createAta(tokens.usdc, sellerPayTo);
    await tokens.createAta(tokens.token2022, sellerPayTo);

    const facilitator = await startSvmFacilitator({ rpc, ...(anvil ? { evmRpcUrl: anvil.rpcUrl } : {}) });
    add(facilitator.stop);
    const [seller, v1Seller] = await Promise.all([
      startSvmSeller({
        facilitatorUrl: facilitator.url,
        payTo: sellerPayTo,
        token2022Mint: tokens.token2022.address,
        ...(anvil ? { evmPayTo } : {}),
        ...(blockhashInRequirements ? { blockhashRpcUrl: `${rpc.url}/seller` } : {}),
      }),
      v1 ? startV1SvmSeller({ facilitatorUrl: facilitator.url, payTo: sellerPayTo }) : undefined,
    ]);
    add(seller.stop);
    if (v1Seller) add(v1Seller.stop);

    return {
      rpc,
      tokens,
      facilitator,
      seller,
      ...(v1Seller ? { v1Seller } : {}),
      ...(anvil && usdc ? { anvil, usdc } : {}),
      fundedBuyer: (options) => fundedSolanaBuyer(tokens, options),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
