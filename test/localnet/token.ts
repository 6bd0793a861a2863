// Installs the TestUSDC runtime code (contracts/TestUSDC.json) at the address the reference
// packages use for USDC on Base Sepolia, and mints / reads balances on it. Also installs a
// Multicall3 `tryAggregate` stand-in (contracts/TryAggregate.json), which the reference
// facilitator uses to explain failed payments (insufficient balance, used nonce, ...), and, on
// request, a plain ERC-20 without EIP-2612 or EIP-3009 (contracts/PlainToken.json).

import {
  createPublicClient,
  createWalletClient,
  http,
  parseAbi,
  type Abi,
  type Address,
  type Hash,
  type Hex,
} from "viem";
import artifact from "./contracts/TestUSDC.json" with { type: "json" };
import plainTokenArtifact from "./contracts/PlainToken.json" with { type: "json" };
import tryAggregateArtifact from "./contracts/TryAggregate.json" with { type: "json" };
import { BASE_SEPOLIA_CHAIN_ID, localChain, rpc } from "./anvil.js";

/** USDC on Base Sepolia (the reference's default asset for eip155:84532 and v1 base-sepolia). */
export const USDC_BASE_SEPOLIA: Address = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

/** Multicall3's address on public chains, where the reference facilitator calls `tryAggregate`. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** Full ABI of TestUSDC, from the compiled artifact. */
export const testUsdcAbi = artifact.abi as Abi;
/** Runtime bytecode of TestUSDC, as placed with anvil_setCode. */
export const testUsdcRuntimeCode = artifact.deployedBytecode as Hex;

const usdcAbi = parseAbi([
  "function name() view returns (string)",
  "function balanceOf(address) view returns (uint256)",
  "function mint(address to, uint256 value)",
]);

export interface TestUsdc {
  /** Where the token lives. */
  address: Address;
  /** Mints `amount` atomic units (6 decimals) to `to`; resolves once mined. */
  mintUsdc(to: Address, amount: bigint): Promise<Hash>;
  /** Balance of `owner` in atomic units. */
  usdcBalance(owner: Address): Promise<bigint>;
}

export interface InstallTestUsdcOptions {
  /** Defaults to USDC on Base Sepolia. */
  address?: Address;
  chainId?: number;
  /**
   * Also place the `tryAggregate` stand-in at {@link MULTICALL3_ADDRESS} if nothing is there yet.
   * Without it the reference facilitator reports every failed simulation as
   * `invalid_exact_evm_transaction_simulation_failed`. Default true.
   */
  multicall3?: boolean;
}

/** Places TestUSDC at `address` with anvil_setCode (no constructor runs; none is needed). */
export async function installTestUsdc(
  rpcUrl: string,
  { address = USDC_BASE_SEPOLIA, chainId = BASE_SEPOLIA_CHAIN_ID, multicall3 = true }: InstallTestUsdcOptions = {},
): Promise<TestUsdc> {
  await rpc(rpcUrl, "anvil_setCode", [address, testUsdcRuntimeCode]);
  if (multicall3 && (await rpc<Hex>(rpcUrl, "eth_getCode", [MULTICALL3_ADDRESS, "latest"])) === "0x") {
    await rpc(rpcUrl, "anvil_setCode", [MULTICALL3_ADDRESS, tryAggregateArtifact.deployedBytecode]);
  }
  const token = testUsdcAt(rpcUrl, { address, chainId });
  const name = await createPublicClient({ transport: http(rpcUrl) }).readContract({
    address,
    abi: usdcAbi,
    functionName: "name",
  });
  if (name !== "USDC") throw new Error(`TestUSDC install check failed: name() returned ${name}`);
  return token;
}

/** Helpers for a TestUSDC already installed at `address`. */
export function testUsdcAt(
  rpcUrl: string,
  { address = USDC_BASE_SEPOLIA, chainId = BASE_SEPOLIA_CHAIN_ID }: Omit<InstallTestUsdcOptions, "multicall3"> = {},
): TestUsdc {
  const chain = localChain(rpcUrl, chainId);
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 });
  const walletClient = createWalletClient({ chain, transport: http(rpcUrl) });
  let minter: Promise<Address> | undefined;

  return {
    address,
    async mintUsdc(to, amount) {
      // Sent from an unlocked anvil dev account (eth_sendTransaction): no key needed, and the node
      // assigns nonces, so concurrent mints do not collide with each other or the facilitator.
      minter ??= rpc<Address[]>(rpcUrl, "eth_accounts", []).then((accounts) => {
        const last = accounts.at(-1);
        if (!last) throw new Error("anvil has no unlocked accounts");
        return last;
      });
      const hash = await walletClient.writeContract({
        account: await minter,
        address,
        abi: usdcAbi,
        functionName: "mint",
        args: [to, amount],
      });
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== "success") throw new Error(`mint reverted: ${hash}`);
      return hash;
    },
    usdcBalance(owner) {
      return publicClient.readContract({ address, abi: usdcAbi, functionName: "balanceOf", args: [owner] });
    },
  };
}

/** Where {@link installPlainToken} places PlainToken by default (an address with no meaning elsewhere). */
export const PLAIN_TOKEN_ADDRESS: Address = "0x7E57000000000000000000000000000000000020";

/** Full ABI of PlainToken, from the compiled artifact. */
export const plainTokenAbi = plainTokenArtifact.abi as Abi;

export interface TestToken {
  address: Address;
  /** Mints `amount` atomic units (6 decimals) to `to`; resolves once mined. */
  mint(to: Address, amount: bigint): Promise<Hash>;
  balanceOf(owner: Address): Promise<bigint>;
}

/**
 * Places PlainToken (ERC-20 with open `mint`, 6 decimals, no `permit`, no EIP-3009) at `address`
 * with anvil_setCode. Buyers pay with it only through Permit2 after an ERC-20 approval.
 */
export async function installPlainToken(
  rpcUrl: string,
  { address = PLAIN_TOKEN_ADDRESS, chainId = BASE_SEPOLIA_CHAIN_ID }: { address?: Address; chainId?: number } = {},
): Promise<TestToken> {
  await rpc(rpcUrl, "anvil_setCode", [address, plainTokenArtifact.deployedBytecode]);
  const usdcLike = testUsdcAt(rpcUrl, { address, chainId });
  return { address, mint: usdcLike.mintUsdc, balanceOf: usdcLike.usdcBalance };
}
