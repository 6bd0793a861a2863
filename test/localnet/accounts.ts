// Accounts used by the harness. The keys below are the PUBLIC Anvil / Hardhat development keys
// (derived from the well-known "test test ... junk" mnemonic). They hold nothing of value and
// must never be used outside a local test chain.

import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { Address, Hex } from "viem";

/** Public Anvil test keys by account index. */
export const ANVIL_TEST_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
] as const satisfies readonly Hex[];

/** Anvil account #1 signs the facilitator's settlement transactions (#0 is left for buyers). */
export const FACILITATOR_KEY: Hex = ANVIL_TEST_KEYS[1];

/** A buyer with a fresh random key. */
export interface Buyer {
  privateKey: Hex;
  account: PrivateKeyAccount;
  address: Address;
}

export function newBuyer(privateKey: Hex = generatePrivateKey()): Buyer {
  const account = privateKeyToAccount(privateKey);
  return { privateKey, account, address: account.address };
}

/** A random address with no key, e.g. a seller's payTo. */
export function randomAddress(): Address {
  return privateKeyToAccount(generatePrivateKey()).address;
}
