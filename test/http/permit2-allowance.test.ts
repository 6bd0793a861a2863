/**
 * A Permit2 payment whose payer never approved Permit2: the reference server answers 412 with
 * `permit2_allowance_required`. x402-pay turns it into PERMIT2_ALLOWANCE_REQUIRED, naming what to
 * approve, and `permit2ApprovalTransaction` builds exactly that approval.
 */
import { HttpResponse } from "msw";
import { decodeFunctionData, erc20Abi, maxUint256 } from "viem";
import { createPermit2ApprovalTx } from "@x402/evm/exact/client";
import { describe, expect, it } from "vitest";
import { createX402Client, type AnyX402Error } from "../../src";
import { exactEvm, permit2ApprovalTransaction, PERMIT2_ADDRESS } from "../../src/evm";
import {
  PATH,
  SELLER,
  USDC_BASE_SEPOLIA,
  account,
  createSeller,
  encodeHeader,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { countingSigner } from "../support/wallets";
import { rejection, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

describe.each(wrappers)("$name: a 412 permit2_allowance_required", (wrapper) => {
  it("is PERMIT2_ALLOWANCE_REQUIRED naming the token, the owner, Permit2 and the amount; reported once; nothing else sent", async () => {
    const requirement = v2Requirement({ extra: { assetTransferMethod: "permit2" } });
    const challenge = v2Challenge({ accepts: [requirement] });
    const seller = createSeller({
      challenge,
      paid: () =>
        HttpResponse.json(
          {},
          {
            status: 412,
            headers: { "PAYMENT-REQUIRED": encodeHeader({ ...challenge, error: "permit2_allowance_required" }) },
          },
        ),
    });
    server.use(seller.handler);
    const failed: AnyX402Error[] = [];
    const { signer, calls } = countingSigner();
    const client = createX402Client({ schemes: [exactEvm({ signer })], onPaymentFailed: (e) => void failed.push(e) });

    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("PERMIT2_ALLOWANCE_REQUIRED");
    expect(error.name).toBe("Permit2AllowanceError");
    expect(error.details).toMatchObject({
      reason: "permit2_allowance_required",
      status: 412,
      token: USDC_BASE_SEPOLIA,
      owner: account.address,
      spender: PERMIT2_ADDRESS,
      network: "eip155:84532",
      amount: "10000",
    });
    expect(error.message).toContain(
      `${account.address} must first let Permit2 (${PERMIT2_ADDRESS}) spend at least 10000 base units of ${USDC_BASE_SEPOLIA}`,
    );
    expect(error.message).toContain("Nothing was charged");
    expect(error.message).toContain("permit2ApprovalTransaction({ token, amount })");
    expect(Object.keys(error.details)).not.toContain("paymentHeader");
    expect(error.details.paymentHeader.name).toBe("PAYMENT-SIGNATURE");
    expect(failed).toEqual([error]);
    expect(calls).toHaveLength(1);
    expect(seller.requests).toHaveLength(2);
  });

  it("other 412s and 402 reasons stay PAYMENT_REJECTED", async () => {
    const requirement = v2Requirement({ extra: { assetTransferMethod: "permit2" } });
    const challenge = v2Challenge({ accepts: [requirement] });
    const seller = createSeller({
      challenge,
      paid: () =>
        HttpResponse.json(
          {},
          {
            status: 412,
            headers: { "PAYMENT-REQUIRED": encodeHeader({ ...challenge, error: "invalid_permit2_signature" }) },
          },
        ),
    });
    server.use(seller.handler);
    const error = await rejection(
      wrapper.send(createX402Client({ schemes: [exactEvm({ signer: countingSigner().signer })] }), { url }),
    );
    expect(error.code).toBe("PAYMENT_REJECTED");
  });
});

describe("permit2ApprovalTransaction", () => {
  const decode = (data: `0x${string}`) => decodeFunctionData({ abi: erc20Abi, data });

  it("approves Permit2 for exactly the amount asked, on the token", () => {
    const tx = permit2ApprovalTransaction({ token: USDC_BASE_SEPOLIA.toLowerCase(), amount: 10_000n });
    expect(tx.to).toBe(USDC_BASE_SEPOLIA);
    expect(decode(tx.data)).toEqual({ functionName: "approve", args: [PERMIT2_ADDRESS, 10_000n] });
    expect(decode(permit2ApprovalTransaction({ token: USDC_BASE_SEPOLIA, amount: "10000" }).data).args).toEqual([
      PERMIT2_ADDRESS,
      10_000n,
    ]);
  });

  it('"unlimited" only when asked: the same transaction as the reference helper builds', () => {
    const ours = permit2ApprovalTransaction({ token: USDC_BASE_SEPOLIA, amount: "unlimited" });
    expect(decode(ours.data).args).toEqual([PERMIT2_ADDRESS, maxUint256]);
    expect(ours).toEqual(createPermit2ApprovalTx(USDC_BASE_SEPOLIA));
  });

  it("its messages name the bad value", () => {
    expect(() => permit2ApprovalTransaction({ token: "USDC", amount: 1n })).toThrow(
      'permit2ApprovalTransaction: token "USDC" is not an EVM address.',
    );
    expect(() => permit2ApprovalTransaction({ token: 7 as never, amount: 1n })).toThrow(
      "permit2ApprovalTransaction: token 7 is not an EVM address.",
    );
    expect(() => permit2ApprovalTransaction({ token: USDC_BASE_SEPOLIA, amount: 0n })).toThrow(
      'permit2ApprovalTransaction: amount 0n is not a positive number of base units or "unlimited".',
    );
    expect(() => permit2ApprovalTransaction({ token: USDC_BASE_SEPOLIA, amount: "0.01" })).toThrow(
      'permit2ApprovalTransaction: amount "0.01" is not a positive number of base units or "unlimited".',
    );
  });

  it.each([
    ["a token that is not an address", { token: "USDC", amount: 1n }, "token"],
    ["no amount", { token: USDC_BASE_SEPOLIA, amount: undefined }, "amount"],
    ["a zero amount", { token: USDC_BASE_SEPOLIA, amount: 0n }, "amount"],
    ["a negative amount", { token: USDC_BASE_SEPOLIA, amount: -1n }, "amount"],
    ["dollars, not base units", { token: USDC_BASE_SEPOLIA, amount: "0.01" }, "amount"],
    ["a number", { token: USDC_BASE_SEPOLIA, amount: 10000 }, "amount"],
    ["over uint256", { token: USDC_BASE_SEPOLIA, amount: maxUint256 + 1n }, "amount"],
  ])("%s: INVALID_CONFIG", (_, options, option) => {
    expect(() => permit2ApprovalTransaction(options as never)).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", details: { option } }),
    );
  });
});
