/**
 * Solana `upto` over HTTP, through both wrappers: a 402 with an upto requirement on devnet, a channel open signed by
 * uptoSvm, the paid retry verified by the reference facilitator (its `verify` over a stub chain: the channel program
 * cannot run here), and a receipt that says "up to", escrow, and what the seller settled. A ceiling over the policy
 * is refused before the wallet is asked; a budget reserves the ceiling and keeps what was settled.
 */
import { createNoopSigner, type Address } from "@solana/kit";
import { UptoSvmScheme } from "@x402/svm/upto/facilitator";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import {
  budget,
  createX402Client,
  getPaymentReceipt,
  memoryBudgetStore,
  memoryLedger,
  type PaymentReceipt,
  type PaymentSnapshot,
} from "../../src";
import { uptoSvm } from "../../src/svm";
import vectorFile from "../vectors/upto-svm.json";
import { useMswServer } from "../support/msw";
import { PATH, SELLER, challengeResponse, decodeHeader, settlementHeader, v2Challenge } from "../support/seller";
import { buyer } from "../support/svm";
import { countingSvmSigner } from "../support/wallets";
import { rejection, wrappers } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const base = vectorFile.vectors[0]!.requirement;
const SIGNATURE = "5".repeat(88);

/** 5 devnet USDC at most, in a channel the facilitator `base.extra.feePayer` opens. */
const ceiling = (amount = "5000000") => ({ ...base, amount });

/** A seller whose facilitator verifies with the reference's upto verify, then settles `settled` of the ceiling. */
function uptoSvmSeller(requirement: Record<string, unknown>, settled = "1234", during?: () => Promise<void>) {
  const challenge = v2Challenge({ accepts: [requirement] });
  const facilitator = new UptoSvmScheme({
    getAddresses: () => [base.extra.feePayer as Address],
    getSigner: (address: string) => createNoopSigner(address as Address),
    getAccountInfo: async () => null,
    getLatestBlockhash: async () => ({ blockhash: base.extra.recentBlockhash, lastValidBlockHeight: 1n }),
    getSlot: async () => 400_000_000n,
  } as never);
  const payments: any[] = [];
  const verdicts: unknown[] = [];
  const handler = http.all(url, async ({ request }) => {
    const header = request.headers.get("PAYMENT-SIGNATURE");
    if (!header) return challengeResponse(challenge);
    const payment = decodeHeader(header);
    payments.push(payment);
    const verdict = await facilitator.verify(payment, requirement as never);
    verdicts.push(verdict);
    if (!verdict.isValid) return challengeResponse({ ...challenge, error: verdict.invalidReason });
    await during?.();
    const settle = {
      success: true,
      transaction: SIGNATURE,
      network: base.network,
      payer: verdict.payer,
      amount: settled,
    };
    return HttpResponse.json({ data: "metered" }, { headers: settlementHeader(2, settle) });
  });
  return { handler, payments, verdicts };
}

describe.each(wrappers)("$name: Solana upto", (wrapper) => {
  it("opens a channel holding the ceiling; the receipt says up to, escrow, and what was settled", async () => {
    const seller = uptoSvmSeller(ceiling());
    server.use(seller.handler);
    const { signer, calls } = countingSvmSigner();
    const seen: { snapshot?: PaymentSnapshot; settled?: PaymentReceipt } = {};
    const ledger = memoryLedger();
    const client = createX402Client({
      schemes: [uptoSvm({ signer })],
      policy: { maxAmountPerPayment: "$5" },
      plugins: [ledger],
      onBeforePayment: (snapshot) => void (seen.snapshot = snapshot),
      onPaymentSettled: (receipt) => void (seen.settled = receipt),
    });
    const reply = await wrapper.send(client, { url });
    expect(reply.status).toBe(200);
    expect(calls).toHaveLength(1);
    expect(seller.verdicts).toEqual([{ isValid: true, payer: buyer.address }]);
    expect(seen.snapshot).toMatchObject({ scheme: "upto", amount: "5000000", upTo: true, flow: "escrow" });

    const [payment] = seller.payments;
    expect(payment.accepted).toEqual(ceiling());
    expect(payment.payload).toMatchObject({
      deposit: "5000000",
      maxAmount: "5000000",
      from: buyer.address,
      authorizedSigner: base.extra.receiverAuthorizer,
      openSlot: "400000000",
    });
    const receipt = getPaymentReceipt(reply.raw);
    expect(receipt).toMatchObject({
      scheme: "upto",
      network: base.network,
      amount: "5000000",
      upTo: true,
      flow: "escrow",
      settledAmount: "1234",
      settled: true,
      transaction: SIGNATURE,
    });
    expect(seen.settled).toEqual(receipt);
    expect(ledger.list.map((r) => r.flow)).toEqual(["escrow"]);
  });

  it("a ceiling over the spend policy is refused before the wallet is asked", async () => {
    const seller = uptoSvmSeller(ceiling());
    server.use(seller.handler);
    const { signer, calls } = countingSvmSigner();
    const error = await rejection(wrapper.send(createX402Client({ schemes: [uptoSvm({ signer })] }), { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0].reason).toBe("5 USDC is over policy.maxAmountPerPayment ($1)");
    expect(calls).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
  });

  it("a fee payer that is the buyer is refused before the wallet is asked", async () => {
    const requirement = { ...ceiling("1000"), extra: { ...base.extra, feePayer: buyer.address } };
    const seller = uptoSvmSeller(requirement);
    server.use(seller.handler);
    const { signer, calls } = countingSvmSigner();
    const error = await rejection(wrapper.send(createX402Client({ schemes: [uptoSvm({ signer })] }), { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0].reason).toMatch(/^extra\.feePayer is the buyer's own address/);
    expect(calls).toHaveLength(0);
    expect(seller.payments).toHaveLength(0);
  });

  it("a budget reserves the ceiling while paying and keeps what was settled", async () => {
    const store = memoryBudgetStore();
    const usage = () => store.usage({ key: "client/life:client", limit: 1, windowMs: undefined });
    let during: unknown;
    const seller = uptoSvmSeller(ceiling("50000"), "1234", async () => void (during = await usage()));
    server.use(seller.handler);
    const client = createX402Client({
      schemes: [uptoSvm({ signer: countingSvmSigner().signer })],
      plugins: [budget({ limit: "$0.05", store })],
    });
    expect((await wrapper.send(client, { url })).status).toBe(200);
    expect(during).toEqual({ spent: 0, reserved: 50_000 });
    // 1234 base units of a 6-decimal stablecoin: $0.001234.
    expect(await usage()).toEqual({ spent: 1234, reserved: 0 });
  });
});
