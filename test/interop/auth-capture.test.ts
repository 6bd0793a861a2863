// x402-pay's own authCaptureEvm paying an auth-capture seller on anvil, end to end: the escrow and collectors written
// here (contracts/AuthCaptureEscrow.sol) at the canonical v1.1 addresses, and the local seller
// (localnet/auth-capture-seller.ts), which stands in for the reference server and facilitator (neither is on npm):
// it authorizes before the handler, captures its price with a fee after, voids the rest. Balances are read on chain;
// the receipt, the ledger and checkSettlement are checked against them. Then a later refund reported to the client,
// and a policy that refuses the escrow's fee before anything is signed.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { checkSettlement, createX402Client, getPaymentReceipt, memoryLedger, type PaymentSnapshot } from "../../src";
import { authCaptureEvm, evmSettlement, permit2Allowance } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  AUTH_CAPTURE_ESCROW,
  USDC_BASE_SEPOLIA,
  approvePermit2,
  authCaptureOperator,
  catchUpChainClock,
  fundedBuyer,
  installAuthCapture,
  installPermit2,
  installTestUsdc,
  paymentInfoHash,
  startAnvil,
  startAuthCaptureSeller,
  type Anvil,
  type AuthCaptureOperator,
  type AuthCaptureReader,
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

const PRICE = 100_000n;
const balanceOf = (owner: Address) => escrow.balance(USDC_BASE_SEPOLIA, owner);

describe.each(["eip3009", "permit2"] as const)("authCaptureEvm over %s, on anvil", (method) => {
  it("the seller holds the amount, captures its price with a fee and voids the rest; receipt, ledger and chain agree", async () => {
    const seller = await startAuthCaptureSeller({
      rpcUrl: anvil.rpcUrl,
      operator,
      price: PRICE,
      charge: 60_000n,
      minFeeBps: 50,
      maxFeeBps: 200,
      feeBps: 100,
      assetTransferMethod: method,
    });
    try {
      const buyer = await fundedBuyer(usdc);
      if (method === "permit2") await approvePermit2(anvil.rpcUrl, { account: buyer.account, token: usdc.address });
      const rpc = { [`eip155:${84532}`]: anvil.rpcUrl };
      const ledger = memoryLedger();
      const seen: PaymentSnapshot[] = [];
      const client = createX402Client({
        schemes: [
          authCaptureEvm({
            signer: buyer.account,
            settlement: evmSettlement({ rpc }),
            ...(method === "permit2" && { permit2: permit2Allowance({ rpc }) }),
          }),
        ],
        policy: { maxFeeBps: 200, flows: ["escrow"] },
        plugins: [ledger],
        onBeforePayment: (payment) => void seen.push(payment),
      });
      const start = {
        payer: await balanceOf(buyer.address),
        payTo: await balanceOf(seller.payTo),
        fee: await balanceOf(seller.feeRecipient),
        escrow: await balanceOf(AUTH_CAPTURE_ESCROW),
      };

      const response = await wrapFetchWithPayment(fetch, client)(`${seller.url}/weather`);

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ weather: "sunny", temperature: 21 });
      const [payment] = seller.payments;
      expect(seller.payments).toHaveLength(1);
      expect(payment!.method).toBe(method);
      // Before signing, the buyer was shown what the escrow gives: who captures, until when, for what fee.
      expect(seen[0]!.escrow).toEqual({
        contract: AUTH_CAPTURE_ESCROW,
        capturer: operator.address,
        captureDeadline: seller.requirement.extra.captureDeadline,
        refundableUntil: seller.requirement.extra.refundDeadline,
        fees: { minBps: 50, maxBps: 200, recipient: seller.feeRecipient },
      });
      // On chain: 60000 taken (59400 to the payee, 600 fee), the 40000 rest voided back, nothing left in escrow.
      expect({
        payer: await balanceOf(buyer.address),
        payTo: await balanceOf(seller.payTo),
        fee: await balanceOf(seller.feeRecipient),
        escrow: await balanceOf(AUTH_CAPTURE_ESCROW),
      }).toEqual({ ...start, payer: start.payer - 60_000n, payTo: start.payTo + 59_400n, fee: start.fee + 600n });
      expect(await escrow.paymentState(payment!.paymentInfo)).toEqual({
        hasCollectedPayment: true,
        capturable: 0n,
        refundable: 60_000n,
      });
      // The receipt and the ledger say what was captured, up to the amount held, and in escrow.
      const receipt = getPaymentReceipt(response)!;
      expect(receipt).toMatchObject({
        settled: true,
        upTo: true,
        flow: "escrow",
        amount: String(PRICE),
        settledAmount: "60000",
        transaction: payment!.captureTransaction,
      });
      const [record] = ledger.list;
      expect(record).toMatchObject({ outcome: "settled", flow: "escrow", settledAmount: "60000" });
      expect(record!.escrow?.refundableUntil).toBe(seller.requirement.extra.refundDeadline);
      // The chain confirms it: the named capture paid the payee from the escrow (the payer's money went in before).
      expect(await checkSettlement(client, receipt)).toMatchObject({
        state: "settled",
        transaction: payment!.captureTransaction,
        amount: "59400",
      });
      // A record naming the hold instead (a seller that reports its authorize): the payer's money went into the
      // escrow, so it settled, not failed (a failed one would free the budget and let the buyer pay again).
      expect(await checkSettlement(client, { ...receipt, transaction: payment!.authorizeTransaction })).toMatchObject({
        state: "settled",
        transaction: payment!.authorizeTransaction,
        amount: String(PRICE),
      });

      // Later the operator refunds 10000 of the captured, before the refund deadline; told of it, the ledger records it.
      const refund = await operator.refund(payment!.paymentInfo, 10_000n);
      expect(await balanceOf(buyer.address)).toBe(start.payer - 50_000n);
      await client.refunded({
        url: `${seller.url}/weather`,
        scheme: "auth-capture",
        network: "eip155:84532",
        asset: USDC_BASE_SEPOLIA,
        payTo: seller.payTo,
        payer: buyer.address,
        channel: paymentInfoHash(payment!.paymentInfo),
        amount: "10000",
        balance: "50000",
        transaction: refund,
      });
      expect(ledger.list.at(-1)).toMatchObject({ kind: "refund", settledAmount: "10000", transaction: refund });
    } finally {
      await seller.stop();
    }
  });
});

describe("authCaptureEvm refuses before signing, on anvil", () => {
  it("an escrow fee over policy.maxFeeBps: nothing signed, nothing held", async () => {
    const seller = await startAuthCaptureSeller({ rpcUrl: anvil.rpcUrl, operator, maxFeeBps: 500 });
    try {
      const buyer = await fundedBuyer(usdc);
      const before = await balanceOf(buyer.address);
      let signs = 0;
      const signer = { address: buyer.address, signTypedData: (t: any) => (signs++, buyer.account.signTypedData(t)) };
      const client = createX402Client({ schemes: [authCaptureEvm({ signer })], policy: { maxFeeBps: 100 } });
      const error = await wrapFetchWithPayment(fetch, client)(`${seller.url}/weather`).catch((e) => e);
      expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
      expect(error.details.rejected[0].reason).toBe("an escrow fee of up to 500 bps is over policy.maxFeeBps (100)");
      expect(signs).toBe(0);
      expect(seller.payments).toHaveLength(0);
      expect(await balanceOf(buyer.address)).toBe(before);
    } finally {
      await seller.stop();
    }
  });
});
