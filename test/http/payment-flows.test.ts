/**
 * Payment flows (`extra.paymentFlow`): how the seller takes the money is read for every requirement, believed only as
 * far as the scheme's payments can have it, shown to hooks, receipts and the ledger, refused by `policy.flows`, and
 * preferred in the order after delivery, escrow, before delivery.
 */
import { describe, expect, it } from "vitest";
import { getPaymentReceipt, memoryLedger, type PaymentSnapshot, type X402ClientOptions } from "../../src";
import { uptoEvm } from "../../src/evm";
import { useMswServer } from "../support/msw";
import {
  PATH,
  SELLER,
  countingSigner,
  createSeller,
  payingClient,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { fetchWrapper, rejection } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const flowed = (paymentFlow: unknown, over: Record<string, unknown> = {}) =>
  v2Requirement({ ...over, extra: { ...(v2Requirement().extra as object), paymentFlow } });

/** Pays `accepts` with a counting exact client; what `onBeforePayment` saw, the receipt and the ledger. */
async function pay(accepts: unknown[], options: Partial<X402ClientOptions> = {}) {
  const seller = createSeller({ challenge: v2Challenge({ accepts }) });
  server.use(seller.handler);
  const seen: PaymentSnapshot[] = [];
  const ledger = memoryLedger();
  const { client, signs } = payingClient({ onBeforePayment: (s) => void seen.push(s), plugins: [ledger], ...options });
  const send = fetchWrapper.send(client, { url });
  return { send, seen, ledger, signs, seller };
}

describe("payment flows", () => {
  it.each([
    ["absent: paid after delivery", undefined, "authorization"],
    ["named upfront: taken before delivery", "upfront", "upfront"],
    ["named authorization", "authorization", "authorization"],
    ["null, as the reference reads it: absent", null, "authorization"],
  ])("%s: hooks, the receipt and the ledger say so", async (_, named, flow) => {
    const { send, seen, ledger } = await pay([named === undefined ? v2Requirement() : flowed(named)]);
    const reply = await send;
    expect(seen.map((s) => s.flow)).toEqual([flow]);
    expect(getPaymentReceipt(reply.raw)?.flow).toBe(flow);
    expect(ledger.list.map((r) => r.flow)).toEqual([flow]);
  });

  it.each([
    ["escrow", /paymentFlow "escrow" is not one a exact payment can have \(authorization, upfront\)/],
    ["later", /paymentFlow "later" is not one/],
    [7, /paymentFlow 7 is not one/],
  ])(
    "a flow the scheme's payments cannot have (%s) is not believed: not payable, nothing signed",
    async (named, why) => {
      const { send, signs } = await pay([flowed(named)]);
      const error = await rejection(send);
      expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
      expect(error.details.rejected).toEqual([
        expect.objectContaining({ code: "unsupported", reason: expect.stringMatching(why) }),
      ]);
      expect(signs).toHaveLength(0);
    },
  );

  it("upto settles after delivery only: an upto requirement naming upfront is not payable", async () => {
    const { signer } = countingSigner();
    const extra = { name: "USDC", version: "2", assetTransferMethod: "permit2", paymentFlow: "upfront" };
    const facilitatorAddress = "0x1111111111111111111111111111111111111111";
    const requirement = v2Requirement({ scheme: "upto", extra: { ...extra, facilitatorAddress } });
    const { send } = await pay([requirement], { schemes: [uptoEvm({ signer })] });
    const error = await rejection(send);
    expect(error.details.rejected).toEqual([
      expect.objectContaining({
        code: "unsupported",
        reason: 'paymentFlow "upfront" is not one a upto payment can have (authorization)',
      }),
    ]);
  });

  it("policy.flows refuses the flows it does not list, with the reason", async () => {
    const policy = { flows: ["escrow", "authorization"] as const };
    const refused = await pay([flowed("upfront")], { policy });
    const error = await rejection(refused.send);
    expect(error.details.rejected[0]).toMatchObject({
      code: "policy",
      reason: "paymentFlow upfront is not in policy.flows",
    });
    expect(refused.signs).toHaveLength(0);
    const allowed = await pay([v2Requirement()], { policy });
    expect((await allowed.send).status).toBe(200);
  });

  it("of several offers, the one that takes the money after delivery is paid, whatever the seller's order", async () => {
    const { send, seen } = await pay([flowed("upfront", { amount: "100" }), v2Requirement({ amount: "200" })]);
    await send;
    expect(seen.map((s) => [s.flow, s.amount])).toEqual([["authorization", "200"]]);
  });

  it("a policy with a flow that does not exist is a configuration error", async () => {
    const error = await rejection(
      pay([v2Requirement()], { policy: { flows: ["refundable" as never] } }).then((p) => p.send),
    );
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.message).toMatch(/policy\.flows/);
  });
});
