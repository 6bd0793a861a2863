// Proves the interop harness with the REFERENCE buyer client (@x402/fetch + @x402/evm): a paid
// request against the reference v2 seller and the legacy v1 seller settles on the local chain.
// Also checks the TestUSDC semantics the facilitator depends on. Tests in this file run in order
// on one chain (the last one looks up the nonce the first v2 payment spent).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import {
  createPublicClient,
  createWalletClient,
  domainSeparator,
  http,
  parseSignature,
  toHex,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
} from "viem";
import {
  PRICE_ATOMIC,
  USDC_BASE_SEPOLIA,
  WEATHER,
  fundedBuyer,
  newBuyer,
  randomAddress,
  rpc,
  startInteropStack,
  testUsdcAbi,
  type Buyer,
  type InteropStack,
} from "../localnet/index.js";
import { transferWithAuthorizationFields } from "../support/vectors";

let stack: InteropStack;
let buyer: Buyer;
let chain: PublicClient;
let payingFetch: typeof fetch;

beforeAll(async () => {
  stack = await startInteropStack({ v1: true });
  buyer = await fundedBuyer(stack.usdc);
  chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
  const client = new x402Client()
    .register("eip155:*", new ExactEvmScheme(buyer.account))
    .registerV1("base-sepolia" as Network, new ExactEvmSchemeV1(buyer.account));
  payingFetch = wrapFetchWithPayment(fetch, client);
});

afterAll(async () => {
  await stack?.stop();
});

async function balances(): Promise<{ buyer: bigint; payTo: bigint }> {
  const [b, p] = await Promise.all([stack.usdc.usdcBalance(buyer.address), stack.usdc.usdcBalance(stack.seller.payTo)]);
  return { buyer: b, payTo: p };
}

async function expectSettled(transaction: string): Promise<void> {
  const receipt = await chain.getTransactionReceipt({ hash: transaction as Hash });
  expect(receipt.status).toBe("success");
  expect(receipt.to?.toLowerCase()).toBe(USDC_BASE_SEPOLIA.toLowerCase());
  expect(receipt.from.toLowerCase()).toBe(stack.facilitator.address.toLowerCase());
}

describe("harness setup", () => {
  it("installs TestUSDC at the Base Sepolia USDC address and funds the buyer", async () => {
    expect(stack.anvil.chain.id).toBe(84532);
    expect(stack.usdc.address).toBe(USDC_BASE_SEPOLIA);
    expect(await stack.usdc.usdcBalance(buyer.address)).toBeGreaterThan(0n);
  });

  it("facilitator advertises v2 eip155:84532 and v1 base-sepolia", async () => {
    const supported = (await (await fetch(`${stack.facilitator.url}/supported`)).json()) as {
      kinds: { x402Version: number; scheme: string; network: string }[];
      signers: Record<string, string[]>;
    };
    expect(supported.kinds).toEqual(
      expect.arrayContaining([
        { x402Version: 2, scheme: "exact", network: "eip155:84532" },
        { x402Version: 1, scheme: "exact", network: "base-sepolia" },
      ]),
    );
    expect(supported.signers["eip155:*"]).toEqual([stack.facilitator.address]);
  });

  it("v2 seller quotes in the PAYMENT-REQUIRED header; /free needs no payment", async () => {
    const unpaid = await fetch(`${stack.seller.url}/weather`);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.x402Version).toBe(2);
    expect(required.accepts[0]).toMatchObject({
      scheme: "exact",
      network: "eip155:84532",
      amount: "1000",
      asset: USDC_BASE_SEPOLIA,
      payTo: stack.seller.payTo,
      extra: { name: "USDC", version: "2" },
    });
    expect((await fetch(`${stack.seller.url}/free`)).status).toBe(200);
  });

  it("v1 seller quotes in the JSON body", async () => {
    const unpaid = await fetch(`${stack.v1Seller!.url}/weather`);
    expect(unpaid.status).toBe(402);
    const body = (await unpaid.json()) as { x402Version: number; accepts: Record<string, unknown>[] };
    expect(body.x402Version).toBe(1);
    expect(body.accepts[0]).toMatchObject({
      scheme: "exact",
      network: "base-sepolia",
      maxAmountRequired: "1000",
      asset: USDC_BASE_SEPOLIA,
      extra: { name: "USDC", version: "2" },
    });
  });
});

describe("reference client pays the reference sellers", () => {
  it("v2: GET /weather, 1000 atomic units move, PAYMENT-RESPONSE names a successful tx", async () => {
    const before = await balances();
    const response = await payingFetch(`${stack.seller.url}/weather`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(WEATHER);

    const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    expect(settlement).toMatchObject({ success: true, network: "eip155:84532" });
    expect((settlement.payer as Address).toLowerCase()).toBe(buyer.address.toLowerCase());
    await expectSettled(settlement.transaction);

    const after = await balances();
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.payTo - before.payTo).toBe(PRICE_ATOMIC);
  });

  it("v2: POST /echo delivers the JSON body intact on the paid retry", async () => {
    const sent = { question: "ünïcode ✓", n: 42, nested: { list: [1, 2, 3] } };
    const before = await balances();
    const response = await payingFetch(`${stack.seller.url}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(sent),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(sent);
    const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    await expectSettled(settlement.transaction);
    expect(before.buyer - (await balances()).buyer).toBe(PRICE_ATOMIC);
  });

  it("v2: GET /dynamic re-quotes on the paid retry, so nothing is paid", async () => {
    const before = await balances();
    const response = await payingFetch(`${stack.seller.url}/dynamic`);
    expect(response.status).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.error).toBe("No matching payment requirements");
    expect(await balances()).toEqual(before);
  });

  it("v2: an unfunded buyer gets the facilitator's specific reason (needs the Multicall3 stand-in)", async () => {
    const broke = newBuyer();
    const client = new x402Client().register("eip155:*", new ExactEvmScheme(broke.account));
    const response = await wrapFetchWithPayment(fetch, client)(`${stack.seller.url}/weather`);
    expect(response.status).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.error).toBe("invalid_exact_evm_insufficient_balance");
  });

  it("v1: GET /weather on x402-express, X-PAYMENT-RESPONSE names a successful tx", async () => {
    const v1Seller = stack.v1Seller!;
    const before = await balances();
    const response = await payingFetch(`${v1Seller.url}/weather`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(WEATHER);

    expect(response.headers.get("PAYMENT-RESPONSE")).toBeNull();
    const settlement = decodePaymentResponseHeader(response.headers.get("X-PAYMENT-RESPONSE") ?? "");
    expect(settlement).toMatchObject({ success: true, network: "base-sepolia" });
    expect((settlement.payer as Address).toLowerCase()).toBe(buyer.address.toLowerCase());
    await expectSettled(settlement.transaction);

    const after = await balances();
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.payTo - before.payTo).toBe(PRICE_ATOMIC);
  });
});

describe("TestUSDC behaves like USDC (FiatToken v2) where x402 relies on it", () => {
  type Authorization = {
    from: Address;
    to: Address;
    value: bigint;
    validAfter: bigint;
    validBefore: bigint;
    nonce: Hex;
  };
  type AuthorizationType = "TransferWithAuthorization" | "ReceiveWithAuthorization";

  const domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: USDC_BASE_SEPOLIA } as const;
  const now = () => BigInt(Math.floor(Date.now() / 1000));
  const randomNonce = () => toHex(crypto.getRandomValues(new Uint8Array(32)));
  const authorization = (overrides: Partial<Authorization> = {}): Authorization => ({
    from: buyer.address,
    to: stack.seller.payTo,
    value: 1n,
    validAfter: 0n,
    validBefore: now() + 600n,
    nonce: randomNonce(),
    ...overrides,
  });
  const authorizationArgs = (a: Authorization) => [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce];
  const read = (functionName: string, args: unknown[] = []) =>
    chain.readContract({ address: USDC_BASE_SEPOLIA, abi: testUsdcAbi, functionName, args });

  /** An unlocked anvil dev account: it sends transactions without any key in this file. */
  async function devAccount(index: number): Promise<Address> {
    const accounts = await rpc<Address[]>(stack.anvil.rpcUrl, "eth_accounts", []);
    return accounts[index]!;
  }

  function signAuthorization(primaryType: AuthorizationType, message: Authorization): Promise<Hex> {
    return buyer.account.signTypedData({
      domain,
      types: {
        [primaryType]: transferWithAuthorizationFields,
      },
      primaryType,
      message,
    });
  }

  it("derives its EIP-712 domain from the chain id and its own address", async () => {
    expect(await read("DOMAIN_SEPARATOR")).toBe(domainSeparator({ domain }));
    expect(await read("name")).toBe("USDC");
    expect(await read("version")).toBe("2");
    expect(await read("decimals")).toBe(6);
  });

  it("EIP-2612 permit sets the allowance and consumes the nonce", async () => {
    const spender = await devAccount(5);
    const deadline = now() + 600n;
    const signature = await buyer.account.signTypedData({
      domain,
      types: {
        Permit: [
          { name: "owner", type: "address" },
          { name: "spender", type: "address" },
          { name: "value", type: "uint256" },
          { name: "nonce", type: "uint256" },
          { name: "deadline", type: "uint256" },
        ],
      },
      primaryType: "Permit",
      message: { owner: buyer.address, spender, value: 123n, nonce: 0n, deadline },
    });
    const { v, r, s } = parseSignature(signature);
    const wallet = createWalletClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
    const hash = await wallet.writeContract({
      account: spender,
      address: USDC_BASE_SEPOLIA,
      abi: testUsdcAbi,
      functionName: "permit",
      args: [buyer.address, spender, 123n, deadline, Number(v), r, s],
    });
    expect((await chain.waitForTransactionReceipt({ hash })).status).toBe("success");
    expect(await read("allowance", [buyer.address, spender])).toBe(123n);
    expect(await read("nonces", [buyer.address])).toBe(1n);
  });

  it("receiveWithAuthorization (v,r,s form) succeeds only when the payee submits it", async () => {
    const payee = await devAccount(6);
    const message = authorization({ to: payee, value: 7n });
    const { v, r, s } = parseSignature(await signAuthorization("ReceiveWithAuthorization", message));
    const call = {
      address: USDC_BASE_SEPOLIA,
      abi: testUsdcAbi,
      functionName: "receiveWithAuthorization",
      args: [...authorizationArgs(message), Number(v), r, s],
    };
    await expect(chain.simulateContract({ ...call, account: await devAccount(7) })).rejects.toThrow(
      /caller must be the payee/,
    );
    await expect(chain.simulateContract({ ...call, account: payee })).resolves.toBeDefined();
  });

  it("transferWithAuthorization (bytes form) rejects expired, early, badly signed and used authorizations", async () => {
    const submitter = await devAccount(8);
    const simulate = async (message: Authorization, signature?: Hex) =>
      chain.simulateContract({
        account: submitter,
        address: USDC_BASE_SEPOLIA,
        abi: testUsdcAbi,
        functionName: "transferWithAuthorization",
        args: [
          ...authorizationArgs(message),
          signature ?? (await signAuthorization("TransferWithAuthorization", message)),
        ],
      });

    await expect(simulate(authorization())).resolves.toBeDefined();
    await expect(simulate(authorization({ validBefore: now() - 1n }))).rejects.toThrow(/authorization is expired/);
    await expect(simulate(authorization({ validAfter: now() + 600n }))).rejects.toThrow(
      /authorization is not yet valid/,
    );
    const signedForOtherValue = await signAuthorization("TransferWithAuthorization", authorization({ value: 2n }));
    await expect(simulate(authorization(), signedForOtherValue)).rejects.toThrow(/invalid signature/);

    // The nonce the facilitator settled for the v2 payment above is spent.
    const [used] = (await chain.getContractEvents({
      address: USDC_BASE_SEPOLIA,
      abi: testUsdcAbi,
      eventName: "AuthorizationUsed",
      args: { authorizer: buyer.address },
      fromBlock: 0n,
    })) as unknown as { args: { nonce: Hex } }[];
    expect(used).toBeDefined();
    const usedNonce = used!.args.nonce;
    expect(await read("authorizationState", [buyer.address, usedNonce])).toBe(true);
    await expect(simulate(authorization({ nonce: usedNonce }))).rejects.toThrow(/authorization is used or canceled/);
  });

  it("checks signatures of accounts with code through ERC-1271", async () => {
    const wallet = randomAddress();
    await stack.usdc.mintUsdc(wallet, 10n);
    const message = authorization({ from: wallet });
    const simulate = () =>
      chain.simulateContract({
        account: stack.facilitator.address,
        address: USDC_BASE_SEPOLIA,
        abi: testUsdcAbi,
        functionName: "transferWithAuthorization",
        args: [...authorizationArgs(message), "0x1234"],
      });
    // Runtime code that answers any call with the ERC-1271 magic value 0x1626ba7e (left-aligned).
    await rpc(stack.anvil.rpcUrl, "anvil_setCode", [wallet, "0x631626ba7e60e01b60005260206000f3"]);
    await expect(simulate()).resolves.toBeDefined();
    // Runtime code that answers 32 zero bytes: the signature is refused.
    await rpc(stack.anvil.rpcUrl, "anvil_setCode", [wallet, "0x60206000f3"]);
    await expect(simulate()).rejects.toThrow(/invalid signature/);
  });
});
