// x402-pay paying through Permit2 when the buyer has not approved Permit2 and the server sponsors the
// approval: an EIP-2612 permit (`eip2612GasSponsoring`) or a signed ERC-20 approval the facilitator
// broadcasts (`erc20ApprovalGasSponsoring`). Reference seller and facilitator (with the sponsoring
// extensions of @x402/extensions) on a local anvil chain; every case asserts chain state.
import {
  createPublicClient,
  decodeEventLog,
  decodeFunctionData,
  erc20Abi,
  http,
  keccak256,
  maxUint256,
  parseTransaction,
  recoverTransactionAddress,
  type Address,
  type Hash,
  type PublicClient,
  type TransactionSerialized,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, type X402Client } from "../../src";
import {
  exactEvm,
  permit2Allowance as allowanceCheck,
  uptoEvm,
  type EvmSignerInput,
  type Permit2AllowanceOptions,
} from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  EXACT_PERMIT2_PROXY,
  PERMIT2,
  PRICE_ATOMIC,
  UPTO_MAX_ATOMIC,
  UPTO_PERMIT2_PROXY,
  WEATHER,
  approvePermit2,
  exactPermit2ProxyAbi,
  fundedBuyer,
  isPermit2NonceUsed,
  newBuyer,
  permit2Allowance,
  startInteropStack,
  testUsdcAbi,
  uptoPermit2ProxyAbi,
  type Buyer,
  type InteropStack,
  type TestToken,
} from "../localnet/index.js";
import { recordingFetch } from "../support/fetches";

let stack: InteropStack;
let chain: PublicClient;
let plainToken: TestToken;

beforeAll(async () => {
  stack = await startInteropStack({ sponsored: true });
  chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
  plainToken = stack.plainToken!;
});
afterAll(async () => {
  await stack?.stop();
});

const policy = { maxAmountPerPayment: "$0.05", networks: ["eip155:84532"] };

/** Our client with the allowance check on the anvil RPC, for exact and upto; PlainToken capped at the price. */
function clientFor(signer: EvmSignerInput, options: Partial<Permit2AllowanceOptions> = {}): X402Client {
  const permit2 = allowanceCheck({ rpc: stack.anvil.rpcUrl, ...options });
  const plainCap = { network: "eip155:84532", asset: plainToken.address, maxAmount: String(PRICE_ATOMIC) };
  return createX402Client({
    schemes: [exactEvm({ signer, permit2 }), uptoEvm({ signer, permit2 })],
    policy: { ...policy, assetCaps: [plainCap] },
  });
}

/** Everything a payment can change for `buyer` in `token`: balances, Permit2 allowance, ETH, transactions sent. */
async function state(buyer: Buyer, token: Address = stack.usdc.address) {
  const balanceOf = (owner: Address) =>
    chain.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] });
  const [balance, payee, allowance, eth, sent] = await Promise.all([
    balanceOf(buyer.address),
    balanceOf(stack.seller.payTo),
    permit2Allowance(stack.anvil.rpcUrl, token, buyer.address),
    chain.getBalance({ address: buyer.address }),
    chain.getTransactionCount({ address: buyer.address }),
  ]);
  return { buyer: balance, payee, allowance, eth, sent };
}

/** The buyer's EIP-2612 nonce on TestUSDC. */
const permitNonce = (owner: Address) =>
  chain.readContract({
    address: stack.usdc.address,
    abi: testUsdcAbi,
    functionName: "nonces",
    args: [owner],
  }) as Promise<bigint>;

/** A PAYMENT-SIGNATURE header, decoded. */
function decode(header: string) {
  return JSON.parse(Buffer.from(header, "base64").toString("utf8")) as {
    payload: { permit2Authorization: { nonce: string; deadline: string } };
    extensions?: Record<string, { info: Record<string, string> }>;
  };
}

/** The mined settlement of `response`: its receipt and the proxy function it called. */
async function settlement(response: Response, proxy: Address) {
  const hash = getPaymentReceipt(response)?.transaction as Hash;
  const [receipt, transaction] = await Promise.all([
    chain.getTransactionReceipt({ hash }),
    chain.getTransaction({ hash }),
  ]);
  expect(receipt.status).toBe("success");
  expect(transaction.to?.toLowerCase()).toBe(proxy.toLowerCase());
  const abi = proxy === EXACT_PERMIT2_PROXY ? exactPermit2ProxyAbi : uptoPermit2ProxyAbi;
  return { receipt, functionName: decodeFunctionData({ abi, data: transaction.input }).functionName };
}

describe("eip2612GasSponsoring: a permit instead of the approval", () => {
  it("exact: a buyer with no allowance and no ETH pays in one paid request; the permit approves exactly what Permit2 then spends", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await state(buyer);
    expect(before).toMatchObject({ allowance: 0n, eth: 0n, sent: 0 });
    expect(await permitNonce(buyer.address)).toBe(0n);
    const recorder = recordingFetch();

    const response = await wrapFetchWithPayment(
      recorder.fetch,
      clientFor(buyer.account),
    )(`${stack.seller.url}/sponsored/permit`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(WEATHER);
    expect(recorder.calls).toHaveLength(2); // the 402, then one paid request

    // The route declares both extensions; the permit is tried first, so only it carries our data.
    const sent = decode(recorder.paymentHeaders[0]!);
    expect(sent.extensions?.eip2612GasSponsoring?.info).toMatchObject({
      from: buyer.address,
      asset: stack.usdc.address,
      spender: PERMIT2,
      amount: String(PRICE_ATOMIC),
      nonce: "0",
      deadline: sent.payload.permit2Authorization.deadline,
      version: "1",
    });
    expect(sent.extensions?.erc20ApprovalGasSponsoring?.info).not.toHaveProperty("signedTransaction");

    const after = await state(buyer);
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.payee - before.payee).toBe(PRICE_ATOMIC);
    expect(after.allowance).toBe(0n); // approved 1000, spent 1000
    expect(after).toMatchObject({ eth: 0n, sent: 0 }); // the buyer sent nothing and paid no gas
    expect(await permitNonce(buyer.address)).toBe(1n); // the permit was used
    expect(
      await isPermit2NonceUsed(stack.anvil.rpcUrl, buyer.address, BigInt(sent.payload.permit2Authorization.nonce)),
    ).toBe(true);
    expect((await settlement(response, EXACT_PERMIT2_PROXY)).functionName).toBe("settleWithPermit");
  });

  it("upto: the permit is for the maximum, the seller settles less, the buyer loses exactly what was settled", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    const before = await state(buyer);
    expect(before).toMatchObject({ allowance: 0n, eth: 0n, sent: 0 });
    const recorder = recordingFetch();

    const response = await wrapFetchWithPayment(
      recorder.fetch,
      clientFor(buyer.account),
    )(`${stack.seller.url}/sponsored/upto?charge=2500`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ charged: "2500" });
    expect(recorder.calls).toHaveLength(2);

    const sent = decode(recorder.paymentHeaders[0]!);
    expect(sent.extensions?.eip2612GasSponsoring?.info).toMatchObject({
      from: buyer.address,
      spender: PERMIT2,
      amount: String(UPTO_MAX_ATOMIC),
      nonce: "0",
    });
    expect(
      await isPermit2NonceUsed(stack.anvil.rpcUrl, buyer.address, BigInt(sent.payload.permit2Authorization.nonce)),
    ).toBe(true);

    const after = await state(buyer);
    expect(before.buyer - after.buyer).toBe(2500n);
    expect(after.payee - before.payee).toBe(2500n);
    expect(after.allowance).toBe(UPTO_MAX_ATOMIC - 2500n); // the permit approved the maximum; Permit2 moved 2500
    expect(after).toMatchObject({ eth: 0n, sent: 0 });
    expect(await permitNonce(buyer.address)).toBe(1n);
    expect(getPaymentReceipt(response)).toMatchObject({
      scheme: "upto",
      amount: String(UPTO_MAX_ATOMIC),
      settledAmount: "2500",
      settled: true,
    });
    expect((await settlement(response, UPTO_PERMIT2_PROXY)).functionName).toBe("settleWithPermit");
  });
});

describe("erc20ApprovalGasSponsoring: a signed approval the facilitator broadcasts (PlainToken, no EIP-2612)", () => {
  it.each([
    ["exactly the price (the default)", {}, PRICE_ATOMIC, 0n],
    [
      'unlimited (approvalAmount: "unlimited"); the token never lowers it',
      { approvalAmount: "unlimited" } as const,
      maxUint256,
      maxUint256,
    ],
  ])("the approval is for %s", async (_, options, approved, allowanceAfter) => {
    const buyer = newBuyer();
    await plainToken.mint(buyer.address, 1_000_000n);
    const before = await state(buyer, plainToken.address);
    expect(before).toMatchObject({ allowance: 0n, eth: 0n, sent: 0 });
    const topUps = stack.facilitator.gasTopUps.length;
    const recorder = recordingFetch();

    const response = await wrapFetchWithPayment(
      recorder.fetch,
      clientFor(buyer.account, options),
    )(`${stack.seller.url}/sponsored/plain`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(WEATHER);
    expect(recorder.calls).toHaveLength(2);

    // What the buyer signed: approve(Permit2, approved) on the token, nonce 0, not sent by us.
    const sent = decode(recorder.paymentHeaders[0]!);
    expect(
      await isPermit2NonceUsed(stack.anvil.rpcUrl, buyer.address, BigInt(sent.payload.permit2Authorization.nonce)),
    ).toBe(true);
    const info = sent.extensions!.erc20ApprovalGasSponsoring!.info;
    expect(info).toMatchObject({
      from: buyer.address,
      asset: plainToken.address,
      spender: PERMIT2,
      amount: String(approved),
      version: "1",
    });
    const signed = info.signedTransaction as TransactionSerialized;
    const approval = parseTransaction(signed);
    expect(approval).toMatchObject({
      type: "eip1559",
      chainId: 84532,
      to: plainToken.address.toLowerCase(),
      nonce: 0,
      gas: 70_000n,
    });
    expect(decodeFunctionData({ abi: erc20Abi, data: approval.data! })).toEqual({
      functionName: "approve",
      args: [PERMIT2, approved],
    });
    expect(await recoverTransactionAddress({ serializedTransaction: signed })).toBe(buyer.address);

    // The facilitator gave the buyer the gas the approval may cost, then broadcast it unchanged.
    expect(stack.facilitator.gasTopUps.slice(topUps)).toEqual([
      { payer: buyer.address, value: 70_000n * approval.maxFeePerGas!, transaction: expect.any(String) },
    ]);
    const approvalReceipt = await chain.getTransactionReceipt({ hash: keccak256(signed) });
    expect(approvalReceipt).toMatchObject({ status: "success", from: buyer.address.toLowerCase() });
    const [event] = approvalReceipt.logs.map((log) => decodeEventLog({ abi: erc20Abi, ...log }));
    expect(event).toMatchObject({
      eventName: "Approval",
      args: { owner: buyer.address, spender: PERMIT2, value: approved },
    });

    const after = await state(buyer, plainToken.address);
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.payee - before.payee).toBe(PRICE_ATOMIC);
    expect(after.allowance).toBe(allowanceAfter);
    // The only transaction from the buyer's address is the approval it signed; what it did not burn in
    // gas of the top-up stays with it.
    expect(after.sent).toBe(1);
    expect(after.eth).toBe(
      70_000n * approval.maxFeePerGas! - approvalReceipt.gasUsed * approvalReceipt.effectiveGasPrice,
    );
    expect((await settlement(response, EXACT_PERMIT2_PROXY)).functionName).toBe("settle");
  });
});

describe("no sponsorship needed or possible", () => {
  it("a buyer whose allowance suffices pays plainly on a sponsoring route: no data of ours under the extension keys, nothing extra on chain", async () => {
    const buyer = await fundedBuyer(stack.usdc);
    await approvePermit2(stack.anvil.rpcUrl, { account: buyer.account, token: stack.usdc.address, amount: 50_000n });
    const before = await state(buyer);
    const topUps = stack.facilitator.gasTopUps.length;
    const recorder = recordingFetch();

    const response = await wrapFetchWithPayment(
      recorder.fetch,
      clientFor(buyer.account),
    )(`${stack.seller.url}/sponsored/permit`);
    expect(response.status).toBe(200);

    // The declarations are echoed as the server sent them, nothing added.
    const challenge = JSON.parse(
      Buffer.from(recorder.responses[0]!.headers.get("payment-required")!, "base64").toString("utf8"),
    );
    const sent = decode(recorder.paymentHeaders[0]!);
    expect(sent.extensions).toEqual(challenge.extensions);

    const after = await state(buyer);
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.payee - before.payee).toBe(PRICE_ATOMIC);
    expect(before.allowance - after.allowance).toBe(PRICE_ATOMIC);
    expect(after).toMatchObject({ eth: before.eth, sent: before.sent });
    expect(await permitNonce(buyer.address)).toBe(0n);
    expect(stack.facilitator.gasTopUps.length).toBe(topUps);
    expect((await settlement(response, EXACT_PERMIT2_PROXY)).functionName).toBe("settle");
  });

  /** `buyer.account` behind an `{ address, signTypedData }` wallet that counts its signatures. */
  function typedDataOnly(buyer: Buyer) {
    const counter = { signatures: 0 };
    const signer = {
      address: buyer.address,
      signTypedData: (request: Parameters<typeof buyer.account.signTypedData>[0]) => {
        counter.signatures++;
        return buyer.account.signTypedData(request);
      },
    };
    return { signer: signer as EvmSignerInput, counter };
  }

  it("only an ERC-20 approval is sponsored and the wallet cannot sign transactions: PERMIT2_ALLOWANCE_REQUIRED before signing", async () => {
    const buyer = newBuyer();
    await plainToken.mint(buyer.address, 1_000_000n);
    const before = await state(buyer, plainToken.address);
    const { signer, counter } = typedDataOnly(buyer);
    const recorder = recordingFetch();
    const posts = stack.facilitator.requests.length;

    const error = await wrapFetchWithPayment(
      recorder.fetch,
      clientFor(signer),
    )(`${stack.seller.url}/sponsored/plain`).catch((e) => e);
    expect(error).toMatchObject({
      code: "PERMIT2_ALLOWANCE_REQUIRED",
      details: {
        token: plainToken.address,
        owner: buyer.address,
        spender: PERMIT2,
        amount: String(PRICE_ATOMIC),
        allowance: "0",
      },
    });
    expect(counter.signatures).toBe(0);
    expect(recorder.calls.map((c) => c.paymentHeader)).toEqual([null]); // only the unpaid request
    expect(stack.facilitator.requests.slice(posts).filter((r) => r.method === "POST")).toEqual([]);
    expect(await state(buyer, plainToken.address)).toEqual(before);
  });

  it.each([
    ["exact", "/sponsored/permit"],
    ["upto", "/sponsored/upto?charge=2500"],
  ])(
    "%s on a sponsoring route without the permit2 option: INVALID_CONFIG naming permit2, nothing signed",
    async (_, path) => {
      const buyer = await fundedBuyer(stack.usdc);
      const before = await state(buyer);
      const { signer, counter } = typedDataOnly(buyer);
      const recorder = recordingFetch();
      const client = createX402Client({ schemes: [exactEvm({ signer }), uptoEvm({ signer })], policy });

      const error = await wrapFetchWithPayment(recorder.fetch, client)(`${stack.seller.url}${path}`).catch((e) => e);
      expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option: "permit2" } });
      expect(counter.signatures).toBe(0);
      expect(recorder.calls.map((c) => c.paymentHeader)).toEqual([null]);
      expect(await state(buyer)).toEqual(before);
    },
  );
});
