// x402-pay paying through Permit2 (`exact` with assetTransferMethod "permit2", and `upto`) against
// the unmodified reference seller and facilitator on a local anvil chain (chain id 84532). Permit2
// and the x402 proxies are ours (contracts/), placed at their canonical addresses. Every case
// asserts chain state: balances, Permit2 allowances, Permit2 nonces.
import { x402Client } from "@x402/core/client";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme as ReferenceExactClient } from "@x402/evm/exact/client";
import { UptoEvmScheme as ReferenceUptoClient } from "@x402/evm/upto/client";
import {
  BaseError,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  keccak256,
  toHex,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
  type StateOverride,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, type X402Client } from "../../src";
import { exactEvm, permit2ApprovalTransaction, uptoEvm, type EvmSignerInput } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  ANVIL_TEST_KEYS,
  EXACT_PERMIT2_PROXY,
  PERMIT2,
  PRICE_ATOMIC,
  UPTO_MAX_ATOMIC,
  UPTO_PERMIT2_PROXY,
  WEATHER,
  approvePermit2,
  exactPermit2ProxyAbi,
  fundedBuyer,
  installPermit2,
  isPermit2NonceUsed,
  newBuyer,
  permit2Abi,
  permit2Allowance,
  randomAddress,
  rpc,
  startAnvil,
  startInteropStack,
  uptoPermit2ProxyAbi,
  type Buyer,
  type InteropStack,
} from "../localnet/index.js";
import { recordingFetch } from "../support/fetches";
import { evmVectors } from "../support/vectors";

let stack: InteropStack;
let chain: PublicClient;

beforeAll(async () => {
  stack = await startInteropStack({ permit2: true });
  chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
});
afterAll(async () => {
  await stack?.stop();
});

const MAX_UINT256 = 2n ** 256n - 1n;
const policy = { maxAmountPerPayment: "$0.05", networks: ["eip155:84532"] };

const clientFor = (signer: EvmSignerInput, facilitators?: string[]): X402Client =>
  createX402Client({ schemes: [exactEvm({ signer }), uptoEvm({ signer, facilitators })], policy });

/** A buyer holding 1 test USDC who approved Permit2 for `allowance` (and paid the gas for it). */
async function permit2Buyer(allowance: bigint = 50_000n): Promise<Buyer> {
  const buyer = await fundedBuyer(stack.usdc);
  await approvePermit2(stack.anvil.rpcUrl, { account: buyer.account, token: stack.usdc.address, amount: allowance });
  return buyer;
}

/** What a payment can change on chain. */
async function state(buyer: Buyer) {
  const [balance, payee, allowance] = await Promise.all([
    stack.usdc.usdcBalance(buyer.address),
    stack.usdc.usdcBalance(stack.seller.payTo),
    permit2Allowance(stack.anvil.rpcUrl, stack.usdc.address, buyer.address),
  ]);
  return { buyer: balance, payee, allowance };
}

/** The Permit2 nonce a PAYMENT-SIGNATURE header carries. */
function nonceOf(header: string): bigint {
  const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
  return BigInt(payload.payload.permit2Authorization.nonce);
}

async function expectMined(transaction: string | undefined) {
  expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);
  const receipt = await chain.getTransactionReceipt({ hash: transaction as Hash });
  expect(receipt.status).toBe("success");
  return receipt;
}

describe("our Permit2 and proxies against the golden vectors", () => {
  const errorAbi = [...permit2Abi, ...exactPermit2ProxyAbi, ...uptoPermit2ProxyAbi];
  const signer = ANVIL_TEST_KEYS[0]; // the vectors' signer, 0xf39F...2266

  beforeAll(async () => {
    // The vectors' buyer needs tokens and a Permit2 allowance for the transfers to go through.
    const buyer = newBuyer(signer);
    await stack.usdc.mintUsdc(buyer.address, 10_000_000n);
    await approvePermit2(stack.anvil.rpcUrl, { account: buyer.account, token: stack.usdc.address });
  });

  /**
   * eth_call of `data` on `to` from `from` at block time `time` (default: the chain's), with
   * storage overrides: "ok", or the revert's error name (with its message for a plain revert).
   */
  async function simulate(
    to: Address,
    data: Hex,
    from: Address,
    time?: bigint,
    stateOverride?: StateOverride,
  ): Promise<string> {
    try {
      await chain.call({
        to,
        data,
        account: from,
        ...(time !== undefined && { blockOverrides: { time } }),
        ...(stateOverride && { stateOverride }),
      });
      return "ok";
    } catch (error) {
      const reverted =
        error instanceof BaseError
          ? (error.walk((e) => typeof (e as { data?: unknown }).data === "string") as { data?: Hex } | null)
          : null;
      if (!reverted?.data) throw error;
      const { errorName, args } = decodeErrorResult({ abi: errorAbi, data: reverted.data });
      return errorName === "Error" ? `Error: ${String(args?.[0])}` : errorName;
    }
  }

  it("Permit2's domain separator is the vectors' for Permit2 on chains 84532 and 8453", async () => {
    const read = (client: PublicClient) =>
      client.readContract({ address: PERMIT2, abi: permit2Abi, functionName: "DOMAIN_SEPARATOR" });
    expect(await read(chain)).toBe(evmVectors.domainSeparators["Permit2 eip155:84532"]);

    // The separator follows the chain it runs on (computed per call, not fixed at deployment).
    const base = await startAnvil({ chainId: 8453 });
    try {
      await installPermit2(base.rpcUrl);
      expect(await read(createPublicClient({ transport: http(base.rpcUrl) }))).toBe(
        evmVectors.domainSeparators["Permit2 eip155:8453"],
      );
    } finally {
      await base.stop();
    }
  });

  it.each([
    ["exact", EXACT_PERMIT2_PROXY, exactPermit2ProxyAbi, "ExactWitness", "PermitWitnessTransferFrom_exact"],
    ["upto", UPTO_PERMIT2_PROXY, uptoPermit2ProxyAbi, "UptoWitness", "PermitWitnessTransferFrom_upto"],
  ] as const)("the %s proxy signs for the vectors' witness type", async (_, proxy, abi, witness, full) => {
    const [typeHash, typeString, permit2] = await Promise.all(
      (["WITNESS_TYPEHASH", "WITNESS_TYPE_STRING", "PERMIT2"] as const).map((functionName) =>
        chain.readContract({ address: proxy, abi, functionName }),
      ),
    );
    expect(typeHash).toBe(evmVectors.typeHashes[witness]);
    expect(permit2).toBe(PERMIT2);
    const start =
      "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";
    expect(keccak256(toHex(start + (typeString as string)))).toBe(evmVectors.typeHashes[full]);
  });

  const exact = evmVectors.exact_permit2.schemeResult.payload;
  const upto = evmVectors.upto_permit2.schemeResult.payload;
  const permitOf = (a: typeof exact.permit2Authorization) => ({
    permitted: { token: a.permitted.token as Address, amount: BigInt(a.permitted.amount) },
    nonce: BigInt(a.nonce),
    deadline: BigInt(a.deadline),
  });
  /** settle() of the exact vector, to `to` (default: the signed payee). */
  const settleExact = (to: Address = exact.permit2Authorization.witness.to as Address) =>
    encodeFunctionData({
      abi: exactPermit2ProxyAbi,
      functionName: "settle",
      args: [
        permitOf(exact.permit2Authorization),
        exact.permit2Authorization.from,
        { to, validAfter: BigInt(exact.permit2Authorization.witness.validAfter) },
        exact.signature,
      ],
    });
  /** settle() of the upto vector for `amount`. */
  const settleUpto = (amount: bigint) => {
    const { witness } = upto.permit2Authorization;
    return encodeFunctionData({
      abi: uptoPermit2ProxyAbi,
      functionName: "settle",
      args: [
        permitOf(upto.permit2Authorization),
        amount,
        upto.permit2Authorization.from,
        { to: witness.to, facilitator: witness.facilitator, validAfter: BigInt(witness.validAfter) },
        upto.signature,
      ],
    });
  };
  const anyone = randomAddress(); // exact: anyone may submit
  const named = upto.permit2Authorization.witness.facilitator as Address; // upto: only this one
  // Both vectors were signed at 1740672000 (validAfter = 1740671400); the chain's clock is later.
  const signedAt = 1_740_672_000n;

  it("the exact_permit2 vector settles at its own time; a changed payee or the wrong time does not", async () => {
    const { deadline, witness } = exact.permit2Authorization;
    expect(await simulate(EXACT_PERMIT2_PROXY, settleExact(), anyone, signedAt)).toBe("ok");
    expect(await simulate(EXACT_PERMIT2_PROXY, settleExact(randomAddress()), anyone, signedAt)).toBe("InvalidSigner");
    expect(await simulate(EXACT_PERMIT2_PROXY, settleExact(), anyone, BigInt(deadline) + 1n)).toBe("SignatureExpired");
    expect(await simulate(EXACT_PERMIT2_PROXY, settleExact(), anyone)).toBe("SignatureExpired"); // the chain's own clock
    expect(await simulate(EXACT_PERMIT2_PROXY, settleExact(), anyone, BigInt(witness.validAfter) - 1n)).toBe(
      "PaymentTooEarly",
    );
  });

  it("the upto_permit2 vector settles up to its maximum, only from the facilitator it names", async () => {
    const max = BigInt(upto.permit2Authorization.permitted.amount);
    expect(await simulate(UPTO_PERMIT2_PROXY, settleUpto(1234n), named, signedAt)).toBe("ok");
    expect(await simulate(UPTO_PERMIT2_PROXY, settleUpto(max), named, signedAt)).toBe("ok");
    expect(await simulate(UPTO_PERMIT2_PROXY, settleUpto(max + 1n), named, signedAt)).toBe("AmountExceedsPermitted");
    expect(await simulate(UPTO_PERMIT2_PROXY, settleUpto(0n), named, signedAt)).toBe("InvalidAmount");
    expect(await simulate(UPTO_PERMIT2_PROXY, settleUpto(1234n), stack.facilitator.address, signedAt)).toBe(
      "UnauthorizedFacilitator",
    );
  });

  it("Permit2 binds the spender: the exact vector pays only when the exact proxy calls, and never more than signed", async () => {
    const a = exact.permit2Authorization;
    const typeString = (await chain.readContract({
      address: EXACT_PERMIT2_PROXY,
      abi: exactPermit2ProxyAbi,
      functionName: "WITNESS_TYPE_STRING",
    })) as string;
    const transfer = (requestedAmount: bigint) =>
      encodeFunctionData({
        abi: permit2Abi,
        functionName: "permitWitnessTransferFrom",
        args: [
          permitOf(a),
          { to: a.witness.to, requestedAmount },
          a.from,
          evmVectors.exact_permit2.witnessHash,
          typeString,
          exact.signature,
        ],
      });
    const amount = BigInt(a.permitted.amount);
    expect(await simulate(PERMIT2, transfer(amount), EXACT_PERMIT2_PROXY, signedAt)).toBe("ok");
    expect(await simulate(PERMIT2, transfer(amount - 1n), EXACT_PERMIT2_PROXY, signedAt)).toBe("ok");
    expect(await simulate(PERMIT2, transfer(amount + 1n), EXACT_PERMIT2_PROXY, signedAt)).toBe("InvalidAmount");
    expect(await simulate(PERMIT2, transfer(amount), UPTO_PERMIT2_PROXY, signedAt)).toBe("InvalidSigner");
  });

  it("settleWithPermit: the exact_permit2_eip2612 vector approves Permit2 and pays in one call; a failing permit is skipped", async () => {
    const { payload, extensions } = evmVectors.exact_permit2_eip2612.schemeResult;
    const info = extensions.eip2612GasSponsoring.info;
    const owner = info.from as Address;
    const sig = info.signature as Hex;
    const settleWithPermit = (value: bigint = BigInt(info.amount)) =>
      encodeFunctionData({
        abi: exactPermit2ProxyAbi,
        functionName: "settleWithPermit",
        args: [
          {
            value,
            deadline: BigInt(info.deadline),
            r: `0x${sig.slice(2, 66)}`,
            s: `0x${sig.slice(66, 130)}`,
            v: parseInt(sig.slice(130, 132), 16),
          },
          permitOf(payload.permit2Authorization),
          owner,
          {
            to: payload.permit2Authorization.witness.to,
            validAfter: BigInt(payload.permit2Authorization.witness.validAfter),
          },
          payload.signature,
        ],
      });
    // TestUSDC storage: allowance is slot 2, nonces slot 3. The vector was signed for EIP-2612
    // nonce 7 and a buyer who had not approved Permit2.
    const slot = (key: Address, base: Hex) =>
      keccak256(encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [key, base]));
    const word = (n: bigint) => toHex(n, { size: 32 });
    const allowanceSlot = slot(PERMIT2, slot(owner, word(2n)));
    const storage = (nonce: bigint, allowance: bigint): StateOverride => [
      {
        address: stack.usdc.address,
        stateDiff: [
          { slot: slot(owner, word(3n)), value: word(nonce) },
          { slot: allowanceSlot, value: word(allowance) },
        ],
      },
    ];
    const noAllowance = "Error: TestUSDC: transfer amount exceeds allowance";

    expect(await simulate(EXACT_PERMIT2_PROXY, settleExact(), anyone, signedAt, storage(7n, 0n))).toBe(noAllowance);
    expect(await simulate(EXACT_PERMIT2_PROXY, settleWithPermit(), anyone, signedAt, storage(7n, 0n))).toBe("ok");
    expect(await simulate(EXACT_PERMIT2_PROXY, settleWithPermit(9_999n), anyone, signedAt, storage(7n, 0n))).toBe(
      "Permit2612AmountMismatch",
    );
    // The permit fails (nonce 8 is not what was signed) and is skipped: paid if Permit2 was approved before, refused if
    // not.
    expect(await simulate(EXACT_PERMIT2_PROXY, settleWithPermit(), anyone, signedAt, storage(8n, 0n))).toBe(
      noAllowance,
    );
    expect(await simulate(EXACT_PERMIT2_PROXY, settleWithPermit(), anyone, signedAt, storage(8n, MAX_UINT256))).toBe(
      "ok",
    );
  });

  it("a nonce the owner invalidated (word nonce >> 8, bit nonce & 255) refuses both vectors", async () => {
    // Both vectors use the same nonce (the same fixed random bytes).
    const nonce = BigInt(exact.permit2Authorization.nonce);
    expect(BigInt(upto.permit2Authorization.nonce)).toBe(nonce);
    expect(await isPermit2NonceUsed(stack.anvil.rpcUrl, exact.permit2Authorization.from as Address, nonce)).toBe(false);

    const owner = newBuyer(signer);
    const wallet = createWalletClient({
      account: owner.account,
      chain: stack.anvil.chain,
      transport: http(stack.anvil.rpcUrl),
    });
    const hash = await wallet.writeContract({
      address: PERMIT2,
      abi: permit2Abi,
      functionName: "invalidateUnorderedNonces",
      args: [nonce >> 8n, 1n << (nonce & 0xffn)],
    });
    expect((await chain.waitForTransactionReceipt({ hash })).status).toBe("success");

    expect(await isPermit2NonceUsed(stack.anvil.rpcUrl, owner.address, nonce)).toBe(true);
    expect(await isPermit2NonceUsed(stack.anvil.rpcUrl, owner.address, nonce + 1n)).toBe(false);
    expect(await simulate(EXACT_PERMIT2_PROXY, settleExact(), anyone, signedAt)).toBe("InvalidNonce");
    expect(await simulate(UPTO_PERMIT2_PROXY, settleUpto(1234n), named, signedAt)).toBe("InvalidNonce");
  });
});

describe("exact through Permit2 with the reference seller and facilitator", () => {
  it.each([
    ["a finite allowance drops by the price", 5_000n, 5_000n - PRICE_ATOMIC],
    ["an unlimited allowance stays unlimited", MAX_UINT256, MAX_UINT256],
  ])("a buyer who approved Permit2 pays exactly the price; %s", async (_, allowance, allowanceAfter) => {
    const buyer = await permit2Buyer(allowance);
    const before = await state(buyer);
    expect(before.allowance).toBe(allowance);

    const response = await wrapFetchWithPayment(fetch, clientFor(buyer.account))(`${stack.seller.url}/permit2/weather`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(WEATHER);

    const after = await state(buyer);
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.payee - before.payee).toBe(PRICE_ATOMIC);
    expect(after.allowance).toBe(allowanceAfter);
    const receipt = getPaymentReceipt(response);
    expect(receipt).toMatchObject({
      scheme: "exact",
      amount: String(PRICE_ATOMIC),
      upTo: false,
      payer: buyer.address,
      settled: true,
    });
    expect(receipt?.requirement).toMatchObject({ extra: { assetTransferMethod: "permit2" } });
    // Settled by the exact proxy (through Permit2), not by the token's EIP-3009.
    expect((await expectMined(receipt?.transaction)).to?.toLowerCase()).toBe(EXACT_PERMIT2_PROXY.toLowerCase());
  });
});

describe("a buyer who never approved Permit2", () => {
  it.each(["/permit2/weather", "/upto/metered"])(
    "%s: the reference's 412 is PERMIT2_ALLOWANCE_REQUIRED, nothing moves; the approval it names, then the payment succeeds",
    async (path) => {
      const buyer = await fundedBuyer(stack.usdc);
      const before = await state(buyer);
      expect(before.allowance).toBe(0n);
      const recorder = recordingFetch();
      const paidFetch = wrapFetchWithPayment(recorder.fetch, clientFor(buyer.account));

      const error = await paidFetch(`${stack.seller.url}${path}`).catch((e) => e);
      expect(error).toMatchObject({
        code: "PERMIT2_ALLOWANCE_REQUIRED",
        details: {
          reason: "permit2_allowance_required",
          status: 412,
          token: stack.usdc.address,
          owner: buyer.address,
          spender: PERMIT2,
        },
      });
      expect(await state(buyer)).toEqual(before);
      expect(await isPermit2NonceUsed(stack.anvil.rpcUrl, buyer.address, nonceOf(recorder.paymentHeaders[0]!))).toBe(
        false,
      );

      // The fix the error names: one approval transaction from the payer's wallet, for exactly the amount.
      const { token, amount } = error.details;
      await rpc(stack.anvil.rpcUrl, "anvil_setBalance", [buyer.address, toHex(10n ** 18n)]);
      const wallet = createWalletClient({
        account: buyer.account,
        chain: stack.anvil.chain,
        transport: http(stack.anvil.rpcUrl),
      });
      await chain.waitForTransactionReceipt({
        hash: await wallet.sendTransaction(permit2ApprovalTransaction({ token, amount })),
      });
      expect(await permit2Allowance(stack.anvil.rpcUrl, stack.usdc.address, buyer.address)).toBe(BigInt(amount));

      const response = await paidFetch(`${stack.seller.url}${path}${path.startsWith("/upto") ? "?charge=1000" : ""}`);
      expect(response.status).toBe(200);
      expect(getPaymentReceipt(response)?.settled).toBe(true);
      expect(before.buyer - (await state(buyer)).buyer).toBe(1000n);
    },
  );
});

describe("upto with the reference seller and facilitator", () => {
  it("the seller settles less than the maximum: the buyer loses exactly what was settled", async () => {
    const buyer = await permit2Buyer(50_000n);
    const before = await state(buyer);
    const recorder = recordingFetch();

    const response = await wrapFetchWithPayment(
      recorder.fetch,
      clientFor(buyer.account),
    )(`${stack.seller.url}/upto/metered?charge=2500`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ charged: "2500" });
    expect(response.headers.get("settlement-overrides")).toBeNull(); // the middleware strips it

    const after = await state(buyer);
    expect(before.buyer - after.buyer).toBe(2500n);
    expect(after.payee - before.payee).toBe(2500n);
    expect(before.allowance - after.allowance).toBe(2500n);
    const receipt = getPaymentReceipt(response);
    expect(receipt).toMatchObject({
      scheme: "upto",
      upTo: true,
      amount: String(UPTO_MAX_ATOMIC),
      settledAmount: "2500",
      settled: true,
    });
    expect((await expectMined(receipt?.transaction)).to?.toLowerCase()).toBe(UPTO_PERMIT2_PROXY.toLowerCase());
    expect(await isPermit2NonceUsed(stack.anvil.rpcUrl, buyer.address, nonceOf(recorder.paymentHeaders[0]!))).toBe(
      true,
    );
  });

  it("settling zero moves nothing: the reference answers success with no transaction, and the signed permit stays unused", async () => {
    const buyer = await permit2Buyer(50_000n);
    const before = await state(buyer);
    const sentBefore = await chain.getTransactionCount({ address: stack.facilitator.address });
    const recorder = recordingFetch();

    const response = await wrapFetchWithPayment(
      recorder.fetch,
      clientFor(buyer.account),
    )(`${stack.seller.url}/upto/metered?charge=0`);
    expect(response.status).toBe(200);

    expect(await state(buyer)).toEqual(before);
    expect(await chain.getTransactionCount({ address: stack.facilitator.address })).toBe(sentBefore);
    const receipt = getPaymentReceipt(response);
    expect(receipt).toMatchObject({
      upTo: true,
      amount: String(UPTO_MAX_ATOMIC),
      settledAmount: "0",
      settled: true,
      transaction: undefined,
    });
    expect(receipt?.settlement).toMatchObject({ success: true, transaction: "", amount: "0" });
    // No transaction, so the nonce is not spent: the authorization (up to the maximum) remains
    // usable by the named facilitator until its deadline.
    expect(await isPermit2NonceUsed(stack.anvil.rpcUrl, buyer.address, nonceOf(recorder.paymentHeaders[0]!))).toBe(
      false,
    );
  });

  it("a facilitator outside the buyer's list is refused before signing, and nothing moves", async () => {
    const buyer = await permit2Buyer(50_000n);
    const before = await state(buyer);
    let signatures = 0;
    const counting = {
      address: buyer.address,
      signTypedData: (request: Parameters<typeof buyer.account.signTypedData>[0]) => {
        signatures++;
        return buyer.account.signTypedData(request);
      },
    };
    const requestsBefore = stack.facilitator.requests.length;

    const error = await wrapFetchWithPayment(
      fetch,
      clientFor(counting as EvmSignerInput, [randomAddress()]),
    )(`${stack.seller.url}/upto/metered?charge=2500`).catch((e) => e);
    expect(error).toMatchObject({ code: "NO_PAYABLE_REQUIREMENT" });
    expect(error.details.rejected[0].reason).toBe(
      `facilitator ${stack.facilitator.address} is not in the scheme's facilitators`,
    );
    expect(signatures).toBe(0);
    expect(stack.facilitator.requests.slice(requestsBefore).filter((r) => r.method === "POST")).toEqual([]);
    expect(await state(buyer)).toEqual(before);
  });
});

describe("replay", () => {
  it.each([
    ["exact", "/permit2/weather", PRICE_ATOMIC],
    ["upto", "/upto/metered?charge=3000", 3000n],
  ] as const)("a replayed %s Permit2 PAYMENT-SIGNATURE is refused and moves nothing", async (_, path, paid) => {
    const buyer = await permit2Buyer(50_000n);
    const start = await state(buyer);
    const recorder = recordingFetch();
    const url = `${stack.seller.url}${path}`;
    const first = await wrapFetchWithPayment(recorder.fetch, clientFor(buyer.account))(url);
    expect(first.status).toBe(200);
    const header = recorder.paymentHeaders.at(-1)!;
    const before = await state(buyer);
    expect(start.buyer - before.buyer).toBe(paid);
    expect(await isPermit2NonceUsed(stack.anvil.rpcUrl, buyer.address, nonceOf(header))).toBe(true);

    const replay = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(replay.status).toBe(402);
    expect(replay.headers.get("payment-response")).toBeNull();
    // The facilitator's simulation hits Permit2's used nonce; it reports the generic reason.
    const challenge = JSON.parse(Buffer.from(replay.headers.get("payment-required")!, "base64").toString("utf8"));
    expect(challenge.error).toMatch(/permit2_simulation_failed/);
    expect(await state(buyer)).toEqual(before);
  });
});

describe("the reference facilitator's /verify", () => {
  /** The seller's 402 for `path`, decoded. */
  async function challengeFor(path: string): Promise<PaymentRequired> {
    const response = await fetch(`${stack.seller.url}${path}`);
    expect(response.status).toBe(402);
    return JSON.parse(Buffer.from(response.headers.get("payment-required")!, "base64").toString("utf8"));
  }

  /** Our client's payment for `path`, caught before it reaches the seller. */
  async function ourPayload(buyer: Buyer, path: string): Promise<Record<string, unknown>> {
    let header: string | undefined;
    const intercept: typeof fetch = async (input, init) => {
      header = new Headers(init?.headers).get("payment-signature") ?? undefined;
      return header
        ? new Response("{}", { status: 200, headers: { "content-type": "application/json" } })
        : fetch(input, init);
    };
    await wrapFetchWithPayment(intercept, clientFor(buyer.account))(`${stack.seller.url}${path}`);
    expect(header).toBeDefined();
    return JSON.parse(Buffer.from(header!, "base64").toString("utf8"));
  }

  async function facilitator(path: "/verify" | "/settle", paymentPayload: Record<string, unknown>) {
    const response = await fetch(`${stack.facilitator.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: paymentPayload.accepted }),
    });
    expect(response.status).toBe(200);
    return response.json();
  }

  it.each([
    ["exact", "/permit2/weather", PRICE_ATOMIC],
    ["upto", "/upto/metered", UPTO_MAX_ATOMIC],
  ] as const)(
    "accepts %s Permit2 payloads signed by the reference client and by ours; both settle on chain",
    async (scheme, path, amount) => {
      const buyer = await permit2Buyer(MAX_UINT256);
      const before = await state(buyer);
      const paymentRequired = await challengeFor(path);
      const referenceScheme =
        scheme === "exact" ? new ReferenceExactClient(buyer.account) : new ReferenceUptoClient(buyer.account);
      const reference = (await new x402Client()
        .register("eip155:84532", referenceScheme)
        .createPaymentPayload(paymentRequired)) as unknown as Record<string, unknown>;
      const ours = await ourPayload(buyer, path);
      expect(ours.accepted).toEqual(reference.accepted);

      for (const payload of [reference, ours]) {
        expect(await facilitator("/verify", payload)).toMatchObject({ isValid: true, payer: buyer.address });
      }
      // Verifying only simulates: nothing moved, no nonce spent.
      expect(await state(buyer)).toEqual(before);
      for (const payload of [reference, ours]) {
        const nonce = BigInt(
          (payload.payload as { permit2Authorization: { nonce: string } }).permit2Authorization.nonce,
        );
        expect(await isPermit2NonceUsed(stack.anvil.rpcUrl, buyer.address, nonce)).toBe(false);
      }

      for (const payload of [reference, ours]) {
        const settled = await facilitator("/settle", payload);
        expect(settled).toMatchObject({ success: true, payer: buyer.address });
        await expectMined(settled.transaction);
      }
      const after = await state(buyer);
      expect(before.buyer - after.buyer).toBe(2n * amount);
      expect(after.payee - before.payee).toBe(2n * amount);
    },
  );
});

describe("harness", () => {
  it("the localnet addresses are the ones x402-pay signs for", async () => {
    const { PERMIT2_ADDRESS, EXACT_PERMIT2_PROXY: exact, UPTO_PERMIT2_PROXY: upto } = await import("../../src/evm");
    expect([PERMIT2, EXACT_PERMIT2_PROXY, UPTO_PERMIT2_PROXY]).toEqual([PERMIT2_ADDRESS, exact, upto]);
  });
});
