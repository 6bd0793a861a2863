/** Solana cluster facts: CAIP-2 ids, protocol v1 names, and the USDC mints the spend policy can price. */
import type { KnownAsset } from "../protocol";

export const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
export const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
export const SOLANA_TESTNET = "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z";

/** Protocol v1 Solana network names → CAIP-2. */
export const SVM_V1_NETWORKS: Readonly<Record<string, string>> = {
  solana: SOLANA_MAINNET,
  "solana-devnet": SOLANA_DEVNET,
  "solana-testnet": SOLANA_TESTNET,
};

/** USDC mints on Solana (6 decimals). */
export const SVM_KNOWN_ASSETS: readonly KnownAsset[] = [
  { network: SOLANA_MAINNET, address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", decimals: 6, symbol: "USDC" },
  { network: SOLANA_DEVNET, address: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", decimals: 6, symbol: "USDC" },
];
