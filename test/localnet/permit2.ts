// Installs Permit2 and the x402 exact / upto Permit2 proxies at their canonical addresses, where
// the reference facilitator calls them. None of them ships as bytecode on npm: the sources are
// ours, in contracts/Permit2.sol and contracts/Permit2Proxies.sol, compiled by
// scripts/compile-token.mjs. Also: a buyer's one-time ERC-20 approval of Permit2.

import {
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  http,
  keccak256,
  parseAbi,
  toHex,
  type Abi,
  type Address,
  type Hash,
  type LocalAccount,
} from "viem";
import permit2Artifact from "./contracts/Permit2.json" with { type: "json" };
import exactProxyArtifact from "./contracts/x402ExactPermit2Proxy.json" with { type: "json" };
import uptoProxyArtifact from "./contracts/x402UptoPermit2Proxy.json" with { type: "json" };
import { BASE_SEPOLIA_CHAIN_ID, localChain, rpc } from "./anvil.js";

/** Uniswap's canonical Permit2 (same address on every chain). */
export const PERMIT2: Address = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
/** x402ExactPermit2Proxy, the Permit2 spender of `exact` payments. */
export const EXACT_PERMIT2_PROXY: Address = "0x402085c248EeA27D92E8b30b2C58ed07f9E20001";
/** x402UptoPermit2Proxy, the Permit2 spender of `upto` payments. */
export const UPTO_PERMIT2_PROXY: Address = "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002";

export const permit2Abi = permit2Artifact.abi as Abi;
export const exactPermit2ProxyAbi = exactProxyArtifact.abi as Abi;
export const uptoPermit2ProxyAbi = uptoProxyArtifact.abi as Abi;

const checkAbi = parseAbi([
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function PERMIT2() view returns (address)",
]);

const erc20Abi = parseAbi([
  "function approve(address spender, uint256 value) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
]);

/**
 * Places Permit2 and both proxies with anvil_setCode (no constructor runs; none is needed), then
 * checks that Permit2 answers with the domain separator of this chain and address.
 */
export async function installPermit2(rpcUrl: string): Promise<void> {
  await rpc(rpcUrl, "anvil_setCode", [PERMIT2, permit2Artifact.deployedBytecode]);
  await rpc(rpcUrl, "anvil_setCode", [EXACT_PERMIT2_PROXY, exactProxyArtifact.deployedBytecode]);
  await rpc(rpcUrl, "anvil_setCode", [UPTO_PERMIT2_PROXY, uptoProxyArtifact.deployedBytecode]);

  const client = createPublicClient({ transport: http(rpcUrl) });
  const chainId = await client.getChainId();
  const expected = keccak256(
    encodeAbiParameters(
      [{ type: "bytes32" }, { type: "bytes32" }, { type: "uint256" }, { type: "address" }],
      [
        keccak256(toHex("EIP712Domain(string name,uint256 chainId,address verifyingContract)")),
        keccak256(toHex("Permit2")),
        BigInt(chainId),
        PERMIT2,
      ],
    ),
  );
  const separator = await client.readContract({ address: PERMIT2, abi: checkAbi, functionName: "DOMAIN_SEPARATOR" });
  if (separator !== expected)
    throw new Error(`Permit2 install check failed: DOMAIN_SEPARATOR() is ${separator}, expected ${expected}`);
  for (const proxy of [EXACT_PERMIT2_PROXY, UPTO_PERMIT2_PROXY]) {
    const permit2 = await client.readContract({ address: proxy, abi: checkAbi, functionName: "PERMIT2" });
    if (permit2 !== PERMIT2) throw new Error(`Permit2 proxy install check failed: ${proxy}.PERMIT2() is ${permit2}`);
  }
}

export interface ApprovePermit2Options {
  /** The token owner; signs and pays for the approve transaction. */
  account: LocalAccount;
  token: Address;
  /** Allowance to set; default 2^256 - 1 (never decreased by most tokens). */
  amount?: bigint;
  chainId?: number;
}

/**
 * The buyer's one-time `token.approve(Permit2, amount)`, sent and paid for by the buyer. A buyer
 * with no ETH is given 1 ETH first (anvil_setBalance). Resolves once mined.
 */
export async function approvePermit2(
  rpcUrl: string,
  { account, token, amount = 2n ** 256n - 1n, chainId = BASE_SEPOLIA_CHAIN_ID }: ApprovePermit2Options,
): Promise<Hash> {
  const chain = localChain(rpcUrl, chainId);
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 });
  if ((await publicClient.getBalance({ address: account.address })) === 0n) {
    await rpc(rpcUrl, "anvil_setBalance", [account.address, toHex(10n ** 18n)]);
  }
  const walletClient = createWalletClient({ account, chain, transport: http(rpcUrl) });
  const hash = await walletClient.writeContract({
    address: token,
    abi: erc20Abi,
    functionName: "approve",
    args: [PERMIT2, amount],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`approve reverted: ${hash}`);
  return hash;
}

/** `token.allowance(owner, Permit2)`. */
export function permit2Allowance(rpcUrl: string, token: Address, owner: Address): Promise<bigint> {
  const client = createPublicClient({ transport: http(rpcUrl) });
  return client.readContract({ address: token, abi: erc20Abi, functionName: "allowance", args: [owner, PERMIT2] });
}

/** Whether `nonce` of `owner` is used (or invalidated) in Permit2's unordered nonce bitmap. */
export async function isPermit2NonceUsed(rpcUrl: string, owner: Address, nonce: bigint): Promise<boolean> {
  const client = createPublicClient({ transport: http(rpcUrl) });
  const word = await client.readContract({
    address: PERMIT2,
    abi: parseAbi(["function nonceBitmap(address owner, uint256 word) view returns (uint256)"]),
    functionName: "nonceBitmap",
    args: [owner, nonce >> 8n],
  });
  return ((word >> (nonce & 0xffn)) & 1n) === 1n;
}
