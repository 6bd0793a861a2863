/**
 * Two occurrences in one input, wherever one is handled: a challenge with the same requirement twice is paid once;
 * each of several requirements is judged on its own (the first refused does not stand for the rest, the first allowed
 * does not let the rest in); each refusal is named.
 */
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { useMswServer } from "../support/msw";
import {
  OTHER,
  OTHER_PAY_TO,
  PATH,
  PAY_TO,
  SELLER,
  createSeller,
  encodeHeader,
  payingClient,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { rejection, wrappers } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

describe.each(wrappers)("$name: repeats in one challenge", (wrapper) => {
  it("the same requirement twice: paid once, one signature, one paid request", async () => {
    const seller = createSeller({ challenge: v2Challenge({ accepts: [v2Requirement(), v2Requirement()] }) });
    server.use(seller.handler);
    const { client, signs } = payingClient();
    expect((await wrapper.send(client, { url })).status).toBe(200);
    expect(signs).toHaveLength(1);
    expect(seller.payments).toHaveLength(1);
    expect(seller.verdicts).toEqual([expect.objectContaining({ ok: true })]);
  });

  it.each([
    ["the allowed payee second", [OTHER_PAY_TO, PAY_TO]],
    ["the allowed payee first", [PAY_TO, OTHER_PAY_TO]],
  ])("two payees, policy.payees naming one, %s: the allowed one is paid", async (_, order) => {
    const accepts = order.map((payTo) => v2Requirement({ payTo }));
    const seller = createSeller({ challenge: v2Challenge({ accepts }) });
    server.use(seller.handler);
    const { client, signs } = payingClient({ policy: { payees: [PAY_TO] } });
    expect((await wrapper.send(client, { url })).status).toBe(200);
    expect(signs).toHaveLength(1);
    expect(seller.payments[0].accepted.payTo).toBe(PAY_TO);
  });

  it("two requirements, each refused for its own reason: both named, nothing signed", async () => {
    const accepts = [v2Requirement({ payTo: OTHER_PAY_TO }), v2Requirement({ amount: "1000001" })];
    const seller = createSeller({ challenge: v2Challenge({ accepts }) });
    server.use(seller.handler);
    const { client, signs } = payingClient({ policy: { payees: [PAY_TO] } });
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected.map((r: { reason: string }) => r.reason)).toEqual([
      `payee ${OTHER_PAY_TO} is not in policy.payees`,
      "1.000001 USDC is over policy.maxAmountPerPayment ($1)",
    ]);
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });

  it("two requirements over the cap, then one within it: the one within it is paid", async () => {
    const accepts = [v2Requirement({ amount: "2000000" }), v2Requirement({ amount: "1500000" }), v2Requirement()];
    const seller = createSeller({ challenge: v2Challenge({ accepts }) });
    server.use(seller.handler);
    const { client, signs } = payingClient();
    expect((await wrapper.send(client, { url })).status).toBe(200);
    expect(signs).toHaveLength(1);
    expect(seller.payments[0].accepted.amount).toBe(v2Requirement().amount);
  });

  it.each([
    ["policy.payees", { payees: [OTHER_PAY_TO, PAY_TO] }],
    ["policy.networks", { networks: ["eip155:8453", "eip155:84532"] }],
    ["policy.origins", { origins: [OTHER, SELLER] }],
  ])("%s with the matching entry second: paid", async (_, policy) => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient({ policy });
    expect((await wrapper.send(client, { url })).status).toBe(200);
    expect(signs).toHaveLength(1);
  });

  it("a 402 carrying two PAYMENT-REQUIRED headers (two challenges): neither is paid, nothing signed", async () => {
    const seller = createSeller({
      intercept: () => {
        const headers = new Headers();
        headers.append("PAYMENT-REQUIRED", encodeHeader(v2Challenge()));
        headers.append(
          "PAYMENT-REQUIRED",
          encodeHeader(v2Challenge({ accepts: [v2Requirement({ payTo: OTHER_PAY_TO })] })),
        );
        return HttpResponse.json({}, { status: 402, headers });
      },
    });
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("INVALID_CHALLENGE");
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });
});
