// Our batch-settlement contract (contracts/BatchSettlement.sol) on its own: the checks the reference
// flows never trip (bad signatures, wrong callers, stale refund nonces, claims beyond the deposit), the
// payer's non-cooperative withdrawal, and the ABI the reference calls it with. Also the harness variant
// where the facilitator holds the receiver authorizer key. Tests in this file run in order on one chain
// (the reference flow first: the withdrawal test moves the chain's clock 15 minutes ahead).

import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import {
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  keccak256,
  toHex,
  zeroAddress,
  type Abi,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { formatAbiItem, formatAbiParams } from "viem/utils";
import {
  BATCH_SETTLEMENT,
  ERC3009_DEPOSIT_COLLECTOR,
  PRICE_ATOMIC,
  USDC_BASE_SEPOLIA,
  batchSettlementAbi,
  fundedBuyer,
  rpc,
  startInteropStack,
  type BatchSettlementReader,
  type Buyer,
  type ChannelConfig,
  type InteropStack,
} from "../localnet/index.js";

let stack: InteropStack;
let batch: BatchSettlementReader;
let chain: PublicClient;

beforeAll(async () => {
  stack = await startInteropStack({ batchSettlement: { authorizer: "facilitator" } });
  batch = stack.batch!;
  chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl), pollingInterval: 50 });
});

afterAll(async () => {
  await stack?.stop();
});

const domain = () => ({
  name: "x402 Batch Settlement",
  version: "1",
  chainId: stack.anvil.chain.id,
  verifyingContract: BATCH_SETTLEMENT,
});

function signVoucher(signer: LocalAccount, channelId: Hex, maxClaimableAmount: bigint): Promise<Hex> {
  return signer.signTypedData({
    domain: domain(),
    types: {
      Voucher: [
        { name: "channelId", type: "bytes32" },
        { name: "maxClaimableAmount", type: "uint128" },
      ],
    },
    primaryType: "Voucher",
    message: { channelId, maxClaimableAmount },
  });
}

function signRefund(signer: LocalAccount, channelId: Hex, nonce: bigint, amount: bigint): Promise<Hex> {
  return signer.signTypedData({
    domain: domain(),
    types: {
      Refund: [
        { name: "channelId", type: "bytes32" },
        { name: "nonce", type: "uint256" },
        { name: "amount", type: "uint128" },
      ],
    },
    primaryType: "Refund",
    message: { channelId, nonce, amount },
  });
}

/** Sends `functionName(args)` to the settlement contract from `account` (given ETH for gas if it has none). */
async function send(account: LocalAccount, functionName: string, args: readonly unknown[]): Promise<void> {
  if ((await chain.getBalance({ address: account.address })) === 0n) {
    await rpc(stack.anvil.rpcUrl, "anvil_setBalance", [account.address, toHex(10n ** 18n)]);
  }
  const wallet = createWalletClient({ account, chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
  const hash = await wallet.writeContract({ address: BATCH_SETTLEMENT, abi: batchSettlementAbi, functionName, args });
  expect((await chain.waitForTransactionReceipt({ hash })).status).toBe("success");
}

/** Simulates the call from `from`; resolves to the revert's error name, or "ok". */
async function outcome(from: Address, functionName: string, args: readonly unknown[]): Promise<string> {
  try {
    await chain.simulateContract({
      account: from,
      address: BATCH_SETTLEMENT,
      abi: batchSettlementAbi,
      functionName,
      args,
    });
    return "ok";
  } catch (error) {
    const match = /reverted with the following reason:\s*\n?\s*(\w+)|Error: (\w+)\(/.exec(String(error));
    return match?.[1] ?? match?.[2] ?? String(error);
  }
}

/** Deposits `amount` for `buyer` through the EIP-3009 collector, as the facilitator would. */
async function deposit(buyer: Buyer, config: ChannelConfig, amount: bigint): Promise<Hex> {
  const channelId = await batch.channelId(config);
  const salt = BigInt(keccak256(toHex(generatePrivateKey())));
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3600);
  const signature = await buyer.account.signTypedData({
    domain: { name: "USDC", version: "2", chainId: stack.anvil.chain.id, verifyingContract: USDC_BASE_SEPOLIA },
    types: {
      ReceiveWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "ReceiveWithAuthorization",
    message: {
      from: buyer.address,
      to: ERC3009_DEPOSIT_COLLECTOR,
      value: amount,
      validAfter: 0n,
      validBefore,
      nonce: keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [channelId, salt])),
    },
  });
  const collectorData = encodeAbiParameters(
    [{ type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "bytes" }],
    [0n, validBefore, salt, signature],
  );
  await send(privateKeyToAccount(generatePrivateKey()), "deposit", [
    config,
    amount,
    ERC3009_DEPOSIT_COLLECTOR,
    collectorData,
  ]);
  return channelId;
}

describe("our contract has the ABI the reference calls it with", () => {
  it("every function and event of @x402/evm's batchSettlementABI, with the same types", async () => {
    // The reference ABI is not exported; it lives in one of the package's build chunks.
    const entry = createRequire(import.meta.url).resolve("@x402/evm/batch-settlement/facilitator");
    const dist = join(entry.slice(0, entry.lastIndexOf(`${sep}dist${sep}`)), "dist", "esm");
    const chunk = readdirSync(dist).find(
      (file) => file.endsWith(".mjs") && readFileSync(join(dist, file), "utf8").includes("var batchSettlementABI"),
    );
    expect(chunk).toBeDefined();
    const { batchSettlementABI } = (await import(pathToFileURL(join(dist, chunk!)).href)) as {
      batchSettlementABI: Abi;
    };
    const text = (abi: Abi) =>
      abi
        .filter((item) => item.type === "function" || item.type === "event")
        .map((item) => {
          const outputs = "outputs" in item ? ` returns (${formatAbiParams(item.outputs)})` : "";
          return `${item.type} ${formatAbiItem(item)}${outputs}`;
        });
    const ours = new Set(text(batchSettlementAbi));
    expect(text(batchSettlementABI).filter((item) => !ours.has(item))).toEqual([]);
  });
});

describe("harness variant: the facilitator holds the receiver authorizer key", () => {
  it("the seller announces it; deposit, voucher, claim and settle, refund all go through", async () => {
    const authorizer = stack.facilitator.receiverAuthorizer;
    expect(authorizer).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(stack.seller.batch?.authorizer).toBe("facilitator");

    const buyer = await fundedBuyer(stack.usdc);
    const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(buyer.account, chain));
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", scheme));
    const url = `${stack.seller.url}/batch/weather`;
    const start = await stack.usdc.usdcBalance(buyer.address);
    for (let call = 0; call < 2; call++) {
      const response = await pay(url);
      expect(response.status, await response.clone().text()).toBe(200);
      await response.arrayBuffer();
      const settle = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
      expect(settle.success).toBe(true);
    }
    const { claims, settle } = await stack.seller.batch!.manager.claimAndSettle();
    expect(claims).toHaveLength(1);
    expect(settle?.transaction).toMatch(/^0x/);
    expect(await stack.usdc.usdcBalance(stack.seller.payTo)).toBe(2n * PRICE_ATOMIC);
    const refund = await scheme.refund(url);
    expect(refund).toMatchObject({ success: true, amount: String(8n * PRICE_ATOMIC) });
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(start - 2n * PRICE_ATOMIC);
  });
});

describe("contract checks", () => {
  let buyer: Buyer;
  let receiverAuthorizer: LocalAccount;
  let config: ChannelConfig;
  let channelId: Hex;
  const receiver = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    buyer = await fundedBuyer(stack.usdc);
    receiverAuthorizer = privateKeyToAccount(generatePrivateKey());
    config = {
      payer: buyer.address,
      payerAuthorizer: buyer.address,
      receiver: receiver.address,
      receiverAuthorizer: receiverAuthorizer.address,
      token: USDC_BASE_SEPOLIA,
      withdrawDelay: 900,
      salt: toHex(1n, { size: 32 }),
    };
    channelId = await deposit(buyer, config, 10_000n);
  });

  const claimOf = (maxClaimableAmount: bigint, signature: Hex, totalClaimed: bigint) => ({
    voucher: { channel: config, maxClaimableAmount },
    signature,
    totalClaimed,
  });

  it("deposits land in the channel; bad channel settings are refused", async () => {
    expect(await batch.channel(channelId)).toEqual({ balance: 10_000n, totalClaimed: 0n });
    const anyone = buyer.address;
    const data = "0x";
    expect(
      await outcome(anyone, "deposit", [{ ...config, withdrawDelay: 899 }, 1n, ERC3009_DEPOSIT_COLLECTOR, data]),
    ).toBe("WithdrawDelayOutOfRange");
    expect(
      await outcome(anyone, "deposit", [{ ...config, receiver: zeroAddress }, 1n, ERC3009_DEPOSIT_COLLECTOR, data]),
    ).toBe("InvalidChannel");
    expect(await outcome(anyone, "deposit", [config, 0n, ERC3009_DEPOSIT_COLLECTOR, data])).toBe("ZeroDeposit");
    expect(await outcome(anyone, "deposit", [config, 1n, zeroAddress, data])).toBe("InvalidCollector");
  });

  it("a collector takes calls from the settlement contract only", async () => {
    const call = encodeFunctionData({
      abi: [
        {
          type: "function",
          name: "collect",
          stateMutability: "nonpayable",
          inputs: [
            { name: "payer", type: "address" },
            { name: "token", type: "address" },
            { name: "amount", type: "uint256" },
            { name: "channelId", type: "bytes32" },
            { name: "collectorData", type: "bytes" },
          ],
          outputs: [],
        },
      ],
      functionName: "collect",
      args: [buyer.address, USDC_BASE_SEPOLIA, 1n, channelId, "0x"],
    });
    await expect(chain.call({ account: buyer.address, to: ERC3009_DEPOSIT_COLLECTOR, data: call })).rejects.toThrow(
      /reverted/,
    );
  });

  it("claims need the receiver side as caller and the payer authorizer's voucher, within the deposit", async () => {
    const good = await signVoucher(buyer.account, channelId, 3_000n);
    const stranger = await signVoucher(privateKeyToAccount(generatePrivateKey()), channelId, 3_000n);
    expect(await outcome(buyer.address, "claim", [[claimOf(3_000n, good, 3_000n)]])).toBe("NotAuthorizedToClaim");
    expect(await outcome(receiver.address, "claim", [[claimOf(3_000n, stranger, 3_000n)]])).toBe("InvalidSignature");
    expect(await outcome(receiver.address, "claim", [[claimOf(3_000n, good, 3_001n)]])).toBe("ClaimExceedsCeiling");
    const tooMuch = await signVoucher(buyer.account, channelId, 20_000n);
    expect(await outcome(receiver.address, "claim", [[claimOf(20_000n, tooMuch, 10_001n)]])).toBe(
      "ClaimExceedsBalance",
    );
    expect(await outcome(receiver.address, "claim", [[]])).toBe("EmptyBatch");
    await send(receiver, "claim", [[claimOf(3_000n, good, 3_000n)]]);
    expect(await batch.channel(channelId)).toEqual({ balance: 10_000n, totalClaimed: 3_000n });
    expect(await batch.receiver(receiver.address, USDC_BASE_SEPOLIA)).toEqual({
      totalClaimed: 3_000n,
      totalSettled: 0n,
    });
    // A claim at or below what is claimed already changes nothing.
    await send(receiver, "claim", [[claimOf(3_000n, good, 2_000n)]]);
    expect(await batch.channel(channelId)).toEqual({ balance: 10_000n, totalClaimed: 3_000n });
  });

  it("without a payer authorizer, vouchers are checked against the payer itself", async () => {
    const own = { ...config, payerAuthorizer: zeroAddress, salt: toHex(2n, { size: 32 }) };
    const ownId = await deposit(buyer, own, 1_000n);
    const claim = (signature: Hex) => ({
      voucher: { channel: own, maxClaimableAmount: 500n },
      signature,
      totalClaimed: 500n,
    });
    const stranger = await signVoucher(privateKeyToAccount(generatePrivateKey()), ownId, 500n);
    expect(await outcome(receiver.address, "claim", [[claim(stranger)]])).toBe("InvalidSignature");
    await send(receiver, "claim", [[claim(await signVoucher(buyer.account, ownId, 500n))]]);
    expect(await batch.channel(ownId)).toEqual({ balance: 1_000n, totalClaimed: 500n });
  });

  it("a signed refund needs the current nonce and the receiver authorizer's signature", async () => {
    const nonce = await batch.refundNonce(channelId);
    const stale = await signRefund(receiverAuthorizer, channelId, nonce + 1n, 1_000n);
    expect(await outcome(buyer.address, "refundWithSignature", [config, 1_000n, nonce + 1n, stale])).toBe(
      "InvalidRefundNonce",
    );
    const forged = await signRefund(buyer.account, channelId, nonce, 1_000n);
    expect(await outcome(buyer.address, "refundWithSignature", [config, 1_000n, nonce, forged])).toBe(
      "InvalidSignature",
    );
    const before = await stack.usdc.usdcBalance(buyer.address);
    await send(buyer.account, "refundWithSignature", [
      config,
      1_000n,
      nonce,
      await signRefund(receiverAuthorizer, channelId, nonce, 1_000n),
    ]);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(before + 1_000n);
    expect(await batch.refundNonce(channelId)).toBe(nonce + 1n);
    expect(await batch.channel(channelId)).toEqual({ balance: 9_000n, totalClaimed: 3_000n });
  });

  it("the payer withdraws what is unclaimed after the withdraw delay, not before", async () => {
    expect(await outcome(receiver.address, "initiateWithdraw", [config, 1n])).toBe("NotAuthorizedToFinalizeWithdraw");
    expect(await outcome(buyer.address, "initiateWithdraw", [config, 6_001n])).toBe("WithdrawAmountExceedsAvailable");
    await send(buyer.account, "initiateWithdraw", [config, 6_000n]);
    const pending = await batch.pendingWithdrawal(channelId);
    expect(pending.amount).toBe(6_000n);
    expect(pending.initiatedAt).toBeGreaterThan(0);
    expect(await outcome(buyer.address, "initiateWithdraw", [config, 1n])).toBe("WithdrawalAlreadyPending");
    expect(await outcome(buyer.address, "finalizeWithdraw", [config])).toBe("WithdrawDelayNotElapsed");

    // The receiver side may still claim meanwhile; the withdrawal then pays only what is left.
    const voucher = await signVoucher(buyer.account, channelId, 4_000n);
    await send(receiver, "claim", [[claimOf(4_000n, voucher, 4_000n)]]);
    await rpc(stack.anvil.rpcUrl, "evm_increaseTime", [900]);
    await rpc(stack.anvil.rpcUrl, "evm_mine", []);
    const before = await stack.usdc.usdcBalance(buyer.address);
    await send(buyer.account, "finalizeWithdraw", [config]);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBe(before + 5_000n);
    expect(await batch.channel(channelId)).toEqual({ balance: 4_000n, totalClaimed: 4_000n });
    expect(await batch.pendingWithdrawal(channelId)).toEqual({ amount: 0n, initiatedAt: 0 });
    expect(await outcome(buyer.address, "finalizeWithdraw", [config])).toBe("WithdrawalNotPending");
  });

  it("settle pays the receiver its claimed total (both channels) once; anyone may call it", async () => {
    await send(buyer.account, "settle", [receiver.address, USDC_BASE_SEPOLIA]);
    expect(await stack.usdc.usdcBalance(receiver.address)).toBe(4_500n);
    await send(buyer.account, "settle", [receiver.address, USDC_BASE_SEPOLIA]);
    expect(await stack.usdc.usdcBalance(receiver.address)).toBe(4_500n);
    expect(await batch.receiver(receiver.address, USDC_BASE_SEPOLIA)).toEqual({
      totalClaimed: 4_500n,
      totalSettled: 4_500n,
    });
  });
});
