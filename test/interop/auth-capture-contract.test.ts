// `auth-capture` on anvil: payloads signed by the reference client (@x402/evm AuthCaptureEvmScheme, real time and
// randomness) collected into our escrow (contracts/AuthCaptureEscrow.sol at the canonical v1.1 addresses) by the
// harness operator, who does on chain what the reference facilitator and lifecycle manager would: authorize, capture
// part with a fee, void the rest, refund part of the captured. Balances of payer, receiver, fee recipient, operator
// and escrow are read on chain after each step. Then what the escrow refuses, and the reference client paying the
// local seller (localnet/auth-capture-seller.ts) end to end. Tests run in order on one chain; the deadline cases
// come last, as they move the chain's clock ahead of the wall clock.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { AuthCaptureEvmScheme } from "@x402/evm/auth-capture/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import {
  createPublicClient,
  createWalletClient,
  http,
  toEventSelector,
  type AbiEvent,
  type AbiFunction,
  type Address,
} from "viem";
import { formatAbiItem } from "viem/utils";
import {
  ANVIL_TEST_KEYS,
  AUTH_CAPTURE_ESCROW,
  USDC_BASE_SEPOLIA,
  approvePermit2,
  authCaptureEscrowAbi,
  authCaptureOperator,
  catchUpChainClock,
  collectedPayment,
  fundedBuyer,
  installAuthCapture,
  installPermit2,
  installTestUsdc,
  randomAddress,
  rpc,
  startAnvil,
  startAuthCaptureSeller,
  type Anvil,
  type AuthCaptureMethod,
  type AuthCaptureOperator,
  type AuthCaptureReader,
  type Buyer,
  type PaymentInfo,
  type TestUsdc,
} from "../localnet/index.js";

let anvil: Anvil;
let usdc: TestUsdc;
let escrow: AuthCaptureReader;
let operator: AuthCaptureOperator;

beforeAll(async () => {
  anvil = await startAnvil();
  usdc = await installTestUsdc(anvil.rpcUrl);
  await installPermit2(anvil.rpcUrl);
  escrow = await installAuthCapture(anvil.rpcUrl);
  operator = authCaptureOperator(anvil.rpcUrl);
  await operator.fundRefunds(usdc, 1_000_000n);
  await catchUpChainClock(anvil.rpcUrl);
});

afterAll(async () => {
  await anvil?.stop();
});

const AMOUNT = 100_000n;

interface Parties {
  payTo: Address;
  feeRecipient: Address;
}

/** An auth-capture requirement as a seller would put it, captured by the harness operator. */
function requirement(
  { payTo, feeRecipient }: Parties,
  method: AuthCaptureMethod = "eip3009",
  { captureIn = 3600, refundIn = 7200, extra = {} as Record<string, unknown> } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  return {
    scheme: "auth-capture",
    network: "eip155:84532" as const,
    amount: String(AMOUNT),
    asset: USDC_BASE_SEPOLIA,
    payTo,
    maxTimeoutSeconds: 60,
    extra: {
      name: "USDC",
      version: "2",
      captureAuthorizer: operator.address,
      captureDeadline: now + captureIn,
      refundDeadline: now + refundIn,
      feeRecipient,
      minFeeBps: 100,
      maxFeeBps: 500,
      paymentFlow: "escrow",
      ...(method === "permit2" && { assetTransferMethod: "permit2" }),
      ...extra,
    },
  };
}

/** A funded buyer (and for Permit2, one that approved Permit2) with the reference client's payload for `terms`. */
async function signedBy(method: AuthCaptureMethod, terms: ReturnType<typeof requirement>, buyer?: Buyer) {
  const payer = buyer ?? (await fundedBuyer(usdc));
  if (!buyer && method === "permit2")
    await approvePermit2(anvil.rpcUrl, { account: payer.account, token: usdc.address });
  const { payload } = await new AuthCaptureEvmScheme(payer.account).createPaymentPayload(2, terms);
  return { buyer: payer, ...collectedPayment(terms, payload) };
}

function parties(): Parties {
  return { payTo: randomAddress(), feeRecipient: randomAddress() };
}

async function balances(buyer: Address, { payTo, feeRecipient }: Parties) {
  const of = (owner: Address) => escrow.balance(USDC_BASE_SEPOLIA, owner);
  return {
    payer: await of(buyer),
    receiver: await of(payTo),
    fee: await of(feeRecipient),
    operator: await of(operator.address),
    escrow: await of(AUTH_CAPTURE_ESCROW),
  };
}

/** The escrow's revert name for `call` (it must revert). */
async function refusal(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error, "the call should have reverted").toBeDefined();
  return (error as { errorName?: string }).errorName ?? String(error);
}

describe("the escrow's ABI", () => {
  it("has the v1.1 functions, events and errors the reference facilitator calls and decodes", () => {
    const pi = "(address,address,address,address,uint120,uint48,uint48,uint48,uint16,uint16,address,uint256)";
    const signatures = authCaptureEscrowAbi.map((item) => `${item.type} ${formatAbiItem(item)}`);
    for (const expected of [
      `function authorize(${pi},uint256,address,bytes)`,
      `function charge(${pi},uint256,address,bytes,uint256,address)`,
      `function capture(${pi},uint256,uint256,address)`,
      `function void(${pi})`,
      `function reclaim(${pi})`,
      `function refund(${pi},uint256,address,bytes)`,
      `function getHash(${pi})`,
      "function getTokenStore(address)",
      "function paymentState(bytes32)",
      "error PaymentAlreadyCollected(bytes32)",
      "error FeeAmountOutOfRange(uint256,uint256,uint256)",
      "error AfterAuthorizationExpiry(uint48,uint48)",
      "error AfterRefundExpiry(uint48,uint48)",
      "error RefundExceedsCapture(uint256,uint256)",
      "error InvalidSender(address,address)",
    ]) {
      expect(signatures).toContain(expected);
    }
    const outputs = (name: string) =>
      authCaptureEscrowAbi.find((item) => item.type === "function" && item.name === name) as AbiFunction;
    expect(outputs("paymentState").outputs.map((output) => output.type)).toEqual(["bool", "uint120", "uint120"]);
    // topic0 of the v1.1 (absolute fee) events, as commerce-payments documents them.
    const topic = (name: string) =>
      toEventSelector(authCaptureEscrowAbi.find((item) => item.type === "event" && item.name === name) as AbiEvent);
    expect(topic("PaymentCharged")).toBe("0x137b0e73e4453f43c2e1ad2552980a0e0c7e988764619974ca26d37a7159940c");
    expect(topic("PaymentCaptured")).toBe("0xac1e0db1957daedbc6944bcb4c8dc947ff8101d710671ac2ec26309f7f38d58e");
  });
});

// Many transactions each: room for a loaded machine (2 CPUs shared), not a timing assertion.
describe.each(["eip3009", "permit2"] as const)("a %s payment through the escrow", { timeout: 60_000 }, (method) => {
  it("is authorized in full, captured in part with a fee, voided for the rest and refunded in part", async () => {
    const who = parties();
    const terms = requirement(who, method);
    const { buyer, paymentInfo, signature, nonce } = await signedBy(method, terms);
    // The signed nonce is the escrow's own hash of the terms with the payer zeroed.
    expect(nonce).toBe(await escrow.hash({ ...paymentInfo, payer: "0x0000000000000000000000000000000000000000" }));
    const start = await balances(buyer.address, who);

    await operator.authorize(paymentInfo, AMOUNT, method, signature);
    expect(await balances(buyer.address, who)).toEqual({
      ...start,
      payer: start.payer - AMOUNT,
      escrow: start.escrow + AMOUNT,
    });
    expect(await escrow.paymentState(paymentInfo)).toEqual({
      hasCollectedPayment: true,
      capturable: AMOUNT,
      refundable: 0n,
    });

    // Capture 60% with a 2% fee (bounds 1%..5% of the capture: 600..3000).
    await operator.capture(paymentInfo, 60_000n, 1_200n);
    expect(await balances(buyer.address, who)).toEqual({
      ...start,
      payer: start.payer - AMOUNT,
      receiver: start.receiver + 58_800n,
      fee: start.fee + 1_200n,
      escrow: start.escrow + 40_000n,
    });
    expect(await escrow.paymentState(paymentInfo)).toEqual({
      hasCollectedPayment: true,
      capturable: 40_000n,
      refundable: 60_000n,
    });

    await operator.void(paymentInfo);
    expect(await balances(buyer.address, who)).toEqual({
      ...start,
      payer: start.payer - 60_000n,
      receiver: start.receiver + 58_800n,
      fee: start.fee + 1_200n,
    });
    expect(await escrow.paymentState(paymentInfo)).toEqual({
      hasCollectedPayment: true,
      capturable: 0n,
      refundable: 60_000n,
    });

    // The operator refunds from its own funds; the receiver and fee recipient keep theirs.
    await operator.refund(paymentInfo, 25_000n);
    expect(await balances(buyer.address, who)).toEqual({
      ...start,
      payer: start.payer - 35_000n,
      receiver: start.receiver + 58_800n,
      fee: start.fee + 1_200n,
      operator: start.operator - 25_000n,
    });
    expect(await escrow.paymentState(paymentInfo)).toEqual({
      hasCollectedPayment: true,
      capturable: 0n,
      refundable: 35_000n,
    });

    // Not beyond what was captured, not captured again once voided, not collected twice.
    expect(await refusal(operator.refund(paymentInfo, 35_001n))).toBe("RefundExceedsCapture");
    expect(await refusal(operator.capture(paymentInfo, 1_000n, 10n))).toBe("InsufficientAuthorization");
    expect(await refusal(operator.authorize(paymentInfo, AMOUNT, method, signature))).toBe("PaymentAlreadyCollected");
    expect(await balances(buyer.address, who)).toEqual({
      ...start,
      payer: start.payer - 35_000n,
      receiver: start.receiver + 58_800n,
      fee: start.fee + 1_200n,
      operator: start.operator - 25_000n,
    });
  });

  it("is refused when its terms changed after signing: the collector's nonce no longer matches", async () => {
    const who = parties();
    const { buyer, paymentInfo, signature } = await signedBy(method, requirement(who, method));
    const start = await balances(buyer.address, who);
    const badSignature = method === "permit2" ? "InvalidSigner" : "TestUSDC: invalid signature";
    const changed: PaymentInfo[] = [
      { ...paymentInfo, maxAmount: AMOUNT * 2n },
      { ...paymentInfo, receiver: randomAddress() },
      { ...paymentInfo, maxFeeBps: 5_000 },
      { ...paymentInfo, refundExpiry: paymentInfo.refundExpiry - 3_000 },
    ];
    for (const terms of changed) {
      expect(await refusal(operator.authorize(terms, terms.maxAmount, method, signature))).toBe(badSignature);
      expect((await escrow.paymentState(terms)).hasCollectedPayment).toBe(false);
    }
    expect(await balances(buyer.address, who)).toEqual(start);
    // The unchanged terms still work.
    await operator.authorize(paymentInfo, AMOUNT, method, signature);
    expect((await balances(buyer.address, who)).payer).toBe(start.payer - AMOUNT);
  });
});

describe("what the escrow refuses", () => {
  it("an operator other than the capture authorizer, for every operation", async () => {
    const who = parties();
    const { buyer, paymentInfo, signature } = await signedBy("eip3009", requirement(who));
    const stranger = authCaptureOperator(anvil.rpcUrl, { privateKey: ANVIL_TEST_KEYS[2] });
    expect(await refusal(stranger.authorize(paymentInfo, AMOUNT, "eip3009", signature))).toBe("InvalidSender");
    // Naming itself operator changes the terms: the buyer's signature no longer fits.
    const hijacked = { ...paymentInfo, operator: stranger.address };
    expect(await refusal(stranger.authorize(hijacked, AMOUNT, "eip3009", signature))).toBe(
      "TestUSDC: invalid signature",
    );
    await operator.authorize(paymentInfo, AMOUNT, "eip3009", signature);
    expect(await refusal(stranger.capture(paymentInfo, 10_000n, 100n))).toBe("InvalidSender");
    expect(await refusal(stranger.void(paymentInfo))).toBe("InvalidSender");
    await operator.capture(paymentInfo, 10_000n, 100n);
    expect(await refusal(stranger.refund(paymentInfo, 1_000n))).toBe("InvalidSender");
    expect(await escrow.paymentState(paymentInfo)).toEqual({
      hasCollectedPayment: true,
      capturable: 90_000n,
      refundable: 10_000n,
    });
    expect((await balances(buyer.address, who)).payer).toBe(1_000_000n - AMOUNT);
  });

  it("a fee outside the signed bounds or to another receiver, and more than the hold", async () => {
    const who = parties();
    const { paymentInfo, signature } = await signedBy("eip3009", requirement(who));
    await operator.authorize(paymentInfo, AMOUNT, "eip3009", signature);
    // 1%..5% of a 10000 capture: 100..500.
    expect(await refusal(operator.capture(paymentInfo, 10_000n, 99n))).toBe("FeeAmountOutOfRange");
    expect(await refusal(operator.capture(paymentInfo, 10_000n, 501n))).toBe("FeeAmountOutOfRange");
    expect(await refusal(operator.capture(paymentInfo, 10_000n, 100n, randomAddress()))).toBe("InvalidFeeReceiver");
    expect(await refusal(operator.capture(paymentInfo, AMOUNT + 1n, 1_000n))).toBe("InsufficientAuthorization");
    expect(await escrow.paymentState(paymentInfo)).toEqual({
      hasCollectedPayment: true,
      capturable: AMOUNT,
      refundable: 0n,
    });
  });

  it("terms the reference client signs without a word: deadlines out of order, fee bounds out of range", async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [Record<string, unknown>, string][] = [
      // The pre-approval (signing time + maxTimeoutSeconds 60) expires after the capture deadline.
      [{ captureDeadline: now + 30 }, "InvalidExpiries"],
      [{ captureDeadline: now + 3600, refundDeadline: now + 3599 }, "InvalidExpiries"],
      [{ maxFeeBps: 20_000 }, "FeeBpsOverflow"],
      [{ minFeeBps: 600, maxFeeBps: 500 }, "InvalidFeeBpsRange"],
    ];
    for (const [extra, reason] of cases) {
      const who = parties();
      const { buyer, paymentInfo, signature } = await signedBy("eip3009", requirement(who, "eip3009", { extra }));
      expect(await refusal(operator.authorize(paymentInfo, AMOUNT, "eip3009", signature))).toBe(reason);
      expect((await balances(buyer.address, who)).payer).toBe(1_000_000n);
    }
  });

  it("an authorization above the signed maximum", async () => {
    const who = parties();
    const { paymentInfo, signature } = await signedBy("eip3009", requirement(who));
    expect(await refusal(operator.authorize(paymentInfo, AMOUNT + 1n, "eip3009", signature))).toBe("ExceedsMaxAmount");
  });
});

describe("the reference client paying the local seller", () => {
  it.each(["eip3009", "permit2"] as const)(
    "over %s: the seller holds the amount, captures its price with a fee and voids the rest",
    async (method) => {
      const seller = await startAuthCaptureSeller({
        rpcUrl: anvil.rpcUrl,
        operator,
        price: AMOUNT,
        charge: 60_000n,
        minFeeBps: 50,
        maxFeeBps: 200,
        feeBps: 100,
        assetTransferMethod: method,
      });
      try {
        const buyer = await fundedBuyer(usdc);
        if (method === "permit2") await approvePermit2(anvil.rpcUrl, { account: buyer.account, token: usdc.address });
        const who = { payTo: seller.payTo, feeRecipient: seller.feeRecipient };
        const start = await balances(buyer.address, who);
        const client = new x402Client().register("eip155:*", new AuthCaptureEvmScheme(buyer.account));
        const response = await wrapFetchWithPayment(fetch, client)(`${seller.url}/weather`);

        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ weather: "sunny", temperature: 21 });
        const [payment] = seller.payments;
        expect(seller.payments).toHaveLength(1);
        expect(decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "")).toEqual({
          success: true,
          transaction: payment?.captureTransaction,
          network: "eip155:84532",
          payer: buyer.address,
          amount: "60000",
        });
        expect(payment?.method).toBe(method);
        expect(await balances(buyer.address, who)).toEqual({
          ...start,
          payer: start.payer - 60_000n,
          receiver: start.receiver + 59_400n,
          fee: start.fee + 600n,
        });
        expect(await escrow.paymentState(payment!.paymentInfo)).toEqual({
          hasCollectedPayment: true,
          capturable: 0n,
          refundable: 60_000n,
        });
      } finally {
        await seller.stop();
      }
    },
  );
});

describe("the local seller charging nothing", () => {
  it("voids the whole hold: the buyer keeps everything", async () => {
    const seller = await startAuthCaptureSeller({ rpcUrl: anvil.rpcUrl, operator, price: AMOUNT, charge: 0n });
    try {
      const buyer = await fundedBuyer(usdc);
      const client = new x402Client().register("eip155:*", new AuthCaptureEvmScheme(buyer.account));
      const response = await wrapFetchWithPayment(fetch, client)(`${seller.url}/weather`);
      expect(response.status).toBe(200);
      const [payment] = seller.payments;
      expect(payment?.captureTransaction).toBeUndefined();
      expect(decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "")).toMatchObject({
        success: true,
        transaction: payment?.voidTransaction,
        amount: "0",
      });
      expect(await escrow.balance(USDC_BASE_SEPOLIA, buyer.address)).toBe(1_000_000n);
      expect(await escrow.paymentState(payment!.paymentInfo)).toEqual({
        hasCollectedPayment: true,
        capturable: 0n,
        refundable: 0n,
      });
    } finally {
      await seller.stop();
    }
  });
});

describe("the local seller's checks", () => {
  it("refuses a tampered payload before it reaches the chain, and takes nothing", async () => {
    const seller = await startAuthCaptureSeller({ rpcUrl: anvil.rpcUrl, operator, price: AMOUNT });
    try {
      const buyer = await fundedBuyer(usdc);
      const { payload } = await new AuthCaptureEvmScheme(buyer.account).createPaymentPayload(2, seller.requirement);
      const authorization = payload.authorization as Record<string, string>;
      const send = (changed: Record<string, unknown>, accepted: object = seller.requirement) => {
        const header = { x402Version: 2, payload: { ...payload, ...changed }, accepted };
        return fetch(`${seller.url}/weather`, {
          headers: { "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(header)).toString("base64") },
        });
      };
      const pay = async (changed: Record<string, unknown>, accepted?: object) => {
        const response = await send(changed, accepted);
        expect(response.status).toBe(402);
        const required = JSON.parse(Buffer.from(response.headers.get("PAYMENT-REQUIRED") ?? "", "base64").toString());
        return required.error as string;
      };
      const start = await escrow.balance(USDC_BASE_SEPOLIA, buyer.address);
      expect(await pay({ salt: `0x${"11".repeat(32)}` })).toBe("invalid_auth_capture_evm_nonce_mismatch");
      expect(await pay({ authorization: { ...authorization, value: "1" } })).toBe(
        "invalid_auth_capture_evm_amount_mismatch",
      );
      // Another buyer's signature (over other terms) recovers to someone other than `from`.
      const other = await new AuthCaptureEvmScheme(
        (await fundedBuyer(usdc, { amount: 0n })).account,
      ).createPaymentPayload(2, seller.requirement);
      expect(await pay({ signature: other.payload.signature })).toBe("invalid_auth_capture_evm_signature");
      expect(await pay({ signature: "0x1234" })).toBe("invalid_auth_capture_evm_signature");
      expect(await pay({}, { ...seller.requirement, amount: "1" })).toBe(
        "invalid_auth_capture_evm_requirements_mismatch",
      );
      expect(seller.payments).toEqual([]);
      expect(await escrow.balance(USDC_BASE_SEPOLIA, buyer.address)).toBe(start);
      // The untouched payload is paid.
      expect((await send({})).status).toBe(200);
      expect(seller.payments).toHaveLength(1);
    } finally {
      await seller.stop();
    }
  });
});

describe("deadlines (the chain's clock moves ahead)", () => {
  it("no capture from the capture deadline on (the payer reclaims), no refund from the refund deadline", async () => {
    const who = parties();
    const terms = requirement(who, "eip3009", { captureIn: 600, refundIn: 1200 });
    const { buyer, paymentInfo, signature } = await signedBy("eip3009", terms);
    const late = await signedBy("eip3009", terms);
    await operator.authorize(paymentInfo, AMOUNT, "eip3009", signature);
    await operator.capture(paymentInfo, 50_000n, 500n);
    const start = await balances(buyer.address, who);

    await rpc(anvil.rpcUrl, "evm_mine", [paymentInfo.authorizationExpiry]);
    expect(await refusal(operator.capture(paymentInfo, 10_000n, 100n))).toBe("AfterAuthorizationExpiry");
    // A payload signed before is past its pre-approval expiry too.
    expect(await refusal(operator.authorize(late.paymentInfo, AMOUNT, "eip3009", late.signature))).toBe(
      "AfterPreApprovalExpiry",
    );
    // The payer takes back what is still held; the operator may still refund until the refund deadline.
    const stillHeld = (await escrow.paymentState(paymentInfo)).capturable;
    expect(stillHeld).toBe(50_000n);
    const wallet = authCaptureOperator(anvil.rpcUrl, { privateKey: buyer.privateKey });
    await rpc(anvil.rpcUrl, "anvil_setBalance", [buyer.address, "0xde0b6b3a7640000"]);
    expect(await refusal(wallet.void(paymentInfo))).toBe("InvalidSender");
    await reclaim(buyer, paymentInfo);
    await operator.refund(paymentInfo, 20_000n);
    expect(await balances(buyer.address, who)).toEqual({
      ...start,
      payer: start.payer + 70_000n,
      operator: start.operator - 20_000n,
      escrow: start.escrow - 50_000n,
    });

    await rpc(anvil.rpcUrl, "evm_mine", [paymentInfo.refundExpiry]);
    expect(await refusal(operator.refund(paymentInfo, 10_000n))).toBe("AfterRefundExpiry");
    expect(await escrow.paymentState(paymentInfo)).toEqual({
      hasCollectedPayment: true,
      capturable: 0n,
      refundable: 30_000n,
    });
  });
});

/** `reclaim(paymentInfo)` sent by the payer. */
async function reclaim(buyer: Buyer, paymentInfo: PaymentInfo): Promise<void> {
  const client = createPublicClient({ chain: anvil.chain, transport: http(anvil.rpcUrl), pollingInterval: 50 });
  const wallet = createWalletClient({ account: buyer.account, chain: anvil.chain, transport: http(anvil.rpcUrl) });
  const { request } = await client.simulateContract({
    account: buyer.account,
    address: AUTH_CAPTURE_ESCROW,
    abi: authCaptureEscrowAbi,
    functionName: "reclaim",
    args: [paymentInfo],
  });
  const hash = await wallet.writeContract(request);
  expect((await client.waitForTransactionReceipt({ hash })).status).toBe("success");
}
