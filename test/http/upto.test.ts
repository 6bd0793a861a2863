/**
 * `upto` through both wrappers: the policy and the approval hook see the signed maximum, the receipt
 * reports what the server settled next to it, and a requirement without a usable facilitator is
 * refused before anything is signed.
 */
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, type PaymentReceipt, type PaymentSnapshot } from "../../src";
import { uptoEvm } from "../../src/evm";
import {
  PAY_TO,
  SELLER,
  PATH,
  TX_HASH,
  USDC_BASE_SEPOLIA,
  createSeller,
  settlementHeader,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { countingSigner } from "../support/wallets";
import { rejection, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const FACILITATOR = "0x1111111111111111111111111111111111111111";

/** 5 USDC at most, on Base Sepolia, settled through FACILITATOR. */
const upto = (extra: Record<string, unknown> = {}, over: Record<string, unknown> = {}) =>
  v2Requirement({
    scheme: "upto",
    amount: "5000000",
    extra: { name: "USDC", version: "2", assetTransferMethod: "permit2", facilitatorAddress: FACILITATOR, ...extra },
    ...over,
  });

/** A seller that settles `settled` base units of whatever was signed. */
function uptoSeller(requirement: Record<string, unknown>, settled: unknown = "1234") {
  return createSeller({
    challenge: v2Challenge({ accepts: [requirement] }),
    paid: (verdict) =>
      HttpResponse.json(
        { data: "metered" },
        {
          headers: settlementHeader(2, {
            success: true,
            transaction: TX_HASH,
            network: "eip155:84532",
            payer: verdict.payer,
            amount: settled,
          }),
        },
      ),
  });
}

describe.each(wrappers)("$name: upto", (wrapper) => {
  it("signs the maximum, says 'up to' before signing, and the receipt reports the settled amount beside it", async () => {
    const seller = uptoSeller(upto());
    server.use(seller.handler);
    const { signer, calls } = countingSigner();
    const seen: { snapshot?: PaymentSnapshot; settled?: PaymentReceipt } = {};
    const client = createX402Client({
      schemes: [uptoEvm({ signer })],
      policy: { maxAmountPerPayment: "$5" },
      onBeforePayment: (snapshot) => void (seen.snapshot = snapshot),
      onPaymentSettled: (receipt) => void (seen.settled = receipt),
    });
    const reply = await wrapper.send(client, { url });
    expect(reply.status).toBe(200);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.primaryType).toBe("PermitWitnessTransferFrom");
    expect(seen.snapshot).toMatchObject({
      scheme: "upto",
      amount: "5000000",
      upTo: true,
      displayAmount: "up to 5 USDC",
    });

    const payload = seller.payments[0].payload.permit2Authorization;
    expect(payload).toMatchObject({
      permitted: { token: USDC_BASE_SEPOLIA, amount: "5000000" },
      spender: "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002",
      witness: { to: PAY_TO, facilitator: FACILITATOR },
    });
    const receipt = getPaymentReceipt(reply.raw);
    expect(receipt).toMatchObject({
      scheme: "upto",
      amount: "5000000",
      upTo: true,
      displayAmount: "up to 5 USDC",
      settledAmount: "1234",
      settled: true,
    });
    expect(seen.settled).toEqual(receipt);
  });

  it.each([
    ["not a number", "lots"],
    ["a number, not a string", 1234],
    ["negative", "-5"],
  ])("a settlement amount that is %s is not reported as settled", async (_, settled) => {
    server.use(uptoSeller(upto(), settled).handler);
    const reply = await wrapper.send(
      createX402Client({
        schemes: [uptoEvm({ signer: countingSigner().signer })],
        policy: { maxAmountPerPayment: "$5" },
      }),
      { url },
    );
    expect(getPaymentReceipt(reply.raw)?.settledAmount).toBeUndefined();
  });

  it("the spend policy caps the maximum, whatever the server would settle", async () => {
    const seller = uptoSeller(upto());
    server.use(seller.handler);
    const { signer, calls } = countingSigner();
    const error = await rejection(wrapper.send(createX402Client({ schemes: [uptoEvm({ signer })] }), { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0].reason).toBe("5 USDC is over policy.maxAmountPerPayment ($1)");
    expect(calls).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });

  it.each([
    [
      "missing",
      { facilitatorAddress: undefined },
      "extra.facilitatorAddress (who may settle an upto payment) is missing",
    ],
    ["malformed", { facilitatorAddress: "0x1234" }, 'extra.facilitatorAddress "0x1234" is not an EVM address'],
    ["a number", { facilitatorAddress: 7 }, "extra.facilitatorAddress 7 is not an EVM address"],
    ["the zero address", { facilitatorAddress: `0x${"0".repeat(40)}` }, "extra.facilitatorAddress is the zero address"],
    [
      "mistyped (bad checksum)",
      { facilitatorAddress: "0x209693bc6afc0C5328bA36FaF03C514EF312287C" },
      /wrong EIP-55 checksum/,
    ],
  ])("a facilitator address that is %s: refused before signing", async (_, extra, reason) => {
    const seller = uptoSeller(upto(extra));
    server.use(seller.handler);
    const { signer, calls } = countingSigner();
    const error = await rejection(
      wrapper.send(createX402Client({ schemes: [uptoEvm({ signer })], policy: { maxAmountPerPayment: "$5" } }), {
        url,
      }),
    );
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected).toEqual([
      expect.objectContaining({
        code: "unsupported",
        reason: typeof reason === "string" ? reason : expect.stringMatching(reason),
      }),
    ]);
    expect(calls).toHaveLength(0);
  });

  it("a facilitator outside the scheme's facilitators: refused before signing; a listed one (any case) is paid", async () => {
    const other = "0x2222222222222222222222222222222222222222";
    const seller = uptoSeller(upto({ facilitatorAddress: other }));
    server.use(seller.handler);
    const { signer, calls } = countingSigner();
    const policy = { maxAmountPerPayment: "$5" };
    const error = await rejection(
      wrapper.send(createX402Client({ schemes: [uptoEvm({ signer, facilitators: [FACILITATOR] })], policy }), { url }),
    );
    expect(error.details.rejected[0].reason).toBe(`facilitator ${other} is not in the scheme's facilitators`);
    expect(calls).toHaveLength(0);

    const reply = await wrapper.send(
      createX402Client({
        schemes: [uptoEvm({ signer, facilitators: [FACILITATOR, other.toUpperCase().replace("0X", "0x")] })],
        policy,
      }),
      { url },
    );
    expect(reply.status).toBe(200);
  });

  it("protocol v1 has no upto: a v1 upto requirement is not paid by uptoEvm", async () => {
    const { signer, calls } = countingSigner();
    const v1 = {
      scheme: "upto",
      network: "base-sepolia",
      maxAmountRequired: "1000",
      resource: url,
      payTo: PAY_TO,
      asset: USDC_BASE_SEPOLIA,
      maxTimeoutSeconds: 60,
      extra: { facilitatorAddress: FACILITATOR },
    };
    const seller = createSeller({ challenge: { x402Version: 1, accepts: [v1] } });
    server.use(seller.handler);
    const error = await rejection(wrapper.send(createX402Client({ schemes: [uptoEvm({ signer })] }), { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(calls).toHaveLength(0);
  });
});
