// The reference facilitator for Solana: @x402/core x402Facilitator + @x402/svm exact facilitator
// schemes (v2 and v1), unmodified, with a fee-payer key generated at run time and funded in the
// local LiteSVM chain.
//
// RPC: the reference signer (toFacilitatorSvmSigner) would build a kit client for the public
// devnet endpoint; `{ defaultRpcUrl }` makes it use the local server for every network instead.
// The static (non smart-wallet) `exact` path calls only simulateTransaction (verify, and again at
// settle), sendTransaction and getSignatureStatuses.
//
// One process can serve EVM and Solana: startSvmFacilitator({ evmRpcUrl }) starts the EVM
// facilitator of localnet/facilitator.ts and registers the Solana schemes on the same instance.

import { x402Facilitator } from "@x402/core/facilitator";
import type { Network } from "@x402/core/types";
import { SettlementCache, toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";
import { ExactSvmSchemeV1 } from "@x402/svm/exact/v1/facilitator";
import { generateKeyPairSigner, type Address, type KeyPairSigner } from "@solana/kit";
import type { Address as EvmAddress } from "viem";
import { serveFacilitator, startFacilitator } from "../facilitator.js";
import type { SolanaRpc } from "./rpc.js";

/** CAIP-2 id of Solana devnet, the v2 network the facilitator and seller use. */
export const SOLANA_DEVNET: Network = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
/** v1 name of Solana devnet. */
export const SOLANA_DEVNET_V1 = "solana-devnet" as Network;

/** Lamports given to the fee payer: 10 SOL, enough for ~2 million settlements at 5001 lamports. */
export const FEE_PAYER_LAMPORTS = 10_000_000_000n;

export interface SvmFacilitator {
  /** Base URL for HTTPFacilitatorClient / x402-express, `http://127.0.0.1:<port>`. */
  url: string;
  /** Solana fee payer: advertised as `extra.feePayer` in /supported, signs slot 0 of each payment. */
  feePayer: Address;
  /** EVM settlement address, when the facilitator also serves eip155:84532 / base-sepolia. */
  evmAddress?: EvmAddress;
  /** Every HTTP request received, in order. */
  requests: { method: string; path: string }[];
  stop(): Promise<void>;
}

export interface RegisterSvmExactOptions {
  /** JSON-RPC endpoint the reference signer uses for every Solana network. */
  rpcUrl: string;
  feePayer: KeyPairSigner;
  /** v2 networks; default Solana devnet. */
  networks?: Network[];
  /** v1 network names; default `solana-devnet`. */
  v1Networks?: Network[];
}

/**
 * Registers the reference `exact` SVM facilitator schemes (v2 + v1, sharing one settlement cache,
 * as the reference's own register helper does) on `facilitator`. The reference helper itself
 * would register all three v1 names (solana, solana-devnet, solana-testnet); this registers only
 * the networks asked for.
 */
export function registerSvmExact(
  facilitator: x402Facilitator,
  { rpcUrl, feePayer, networks = [SOLANA_DEVNET], v1Networks = [SOLANA_DEVNET_V1] }: RegisterSvmExactOptions,
): x402Facilitator {
  const signer = toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: rpcUrl });
  const cache = new SettlementCache();
  for (const network of networks) facilitator.register(network, new ExactSvmScheme(signer, cache));
  for (const network of v1Networks) facilitator.registerV1(network, new ExactSvmSchemeV1(signer, cache));
  return facilitator;
}

export interface StartSvmFacilitatorOptions {
  rpc: SolanaRpc;
  /** Also serve EVM (eip155:84532 + base-sepolia) through this anvil endpoint, in the same facilitator. */
  evmRpcUrl?: string;
  /** Fee payer; default a fresh key funded with {@link FEE_PAYER_LAMPORTS}. */
  feePayer?: KeyPairSigner;
}

export async function startSvmFacilitator({
  rpc,
  evmRpcUrl,
  feePayer,
}: StartSvmFacilitatorOptions): Promise<SvmFacilitator> {
  if (!feePayer) {
    feePayer = await generateKeyPairSigner();
    rpc.setLamports(feePayer.address, FEE_PAYER_LAMPORTS);
  }
  // The path only labels the facilitator's calls in rpc.calls; the server ignores it.
  const register = { rpcUrl: `${rpc.url}/facilitator`, feePayer };
  if (evmRpcUrl) {
    const evm = await startFacilitator({ rpcUrl: evmRpcUrl, extend: (f) => registerSvmExact(f, register) });
    const { url, address: evmAddress, requests, stop } = evm;
    return { url, feePayer: feePayer.address, evmAddress, requests, stop };
  }
  const server = await serveFacilitator(registerSvmExact(new x402Facilitator(), register));
  return { url: server.url, feePayer: feePayer.address, requests: server.requests, stop: server.stop };
}
