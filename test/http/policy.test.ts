/**
 * Spend policy and the payment hooks, through both wrappers: what is refused is refused before any
 * signature, with a typed error that says why for every requirement.
 */
import { describe, expect, it } from "vitest";
import { NoPayableRequirementError, PaymentRefusedError } from "../../src/entries/errors";
import { getPaymentReceipt, type PaymentSnapshot } from "../../src";
import {
  OTHER_PAY_TO,
  PATH,
  PAY_TO,
  SELLER,
  USDC_BASE,
  createSeller,
  payingClient,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { rejection, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();

const url = `${SELLER}${PATH}`;
const UNKNOWN_TOKEN = "0x1111111111111111111111111111111111111111";
const onBase = (over: Record<string, unknown> = {}) =>
  v2Requirement({ network: "eip155:8453", asset: USDC_BASE, extra: { name: "USD Coin", version: "2" }, ...over });

describe.each(wrappers)("$name: spend policy", (wrapper) => {
  it("refuses everything over the default $1 cap: NO_PAYABLE_REQUIREMENT lists each requirement with its reason, nothing signed", async () => {
    const accepts = [v2Requirement({ amount: "1000001" }), onBase({ amount: "5000000" })];
    const seller = createSeller({ challenge: v2Challenge({ accepts }) });
    server.use(seller.handler);
    const { client, signs } = payingClient();

    const error = await rejection(wrapper.send(client, { url }));

    expect(error).toBeInstanceOf(NoPayableRequirementError);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.phase).toBe("select");
    expect(error.details.rejected).toEqual([
      expect.objectContaining({
        index: 0,
        code: "policy",
        amount: "1000001",
        reason: expect.stringMatching(/1\.000001 USDC is over policy\.maxAmountPerPayment \(\$1\)/),
      }),
      expect.objectContaining({
        index: 1,
        code: "policy",
        amount: "5000000",
        reason: expect.stringMatching(/5 USDC is over/),
      }),
    ]);
    expect(error.message).toContain("#0");
    expect(error.message).toContain("#1");
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });

  it("pays exactly $1 (the cap is inclusive)", async () => {
    const seller = createSeller({ challenge: v2Challenge({ accepts: [v2Requirement({ amount: "1000000" })] }) });
    server.use(seller.handler);
    const reply = await wrapper.send(payingClient().client, { url });
    expect(reply.status).toBe(200);
    expect(seller.verdicts[0]?.ok).toBe(true);
  });

  it("a raised cap pays what the default refuses", async () => {
    const seller = createSeller({ challenge: v2Challenge({ accepts: [v2Requirement({ amount: "2500000" })] }) });
    server.use(seller.handler);
    const reply = await wrapper.send(payingClient({ policy: { maxAmountPerPayment: "$5" } }).client, { url });
    expect(reply.status).toBe(200);
  });

  it("refuses an unknown asset unless policy.allowUnknownAssets", async () => {
    const challenge = v2Challenge({
      accepts: [v2Requirement({ asset: UNKNOWN_TOKEN, extra: { name: "Mystery", version: "1" } })],
    });
    const refusing = createSeller({ challenge });
    server.use(refusing.handler);
    const { client, signs } = payingClient();

    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0]).toMatchObject({
      code: "policy",
      asset: UNKNOWN_TOKEN,
      reason: expect.stringContaining("not a known stablecoin"),
    });
    expect(signs).toHaveLength(0);

    server.resetHandlers();
    const allowing = createSeller({ challenge });
    server.use(allowing.handler);
    const reply = await wrapper.send(payingClient({ policy: { allowUnknownAssets: true } }).client, { url });
    expect(reply.status).toBe(200);
    expect(allowing.verdicts[0]?.ok).toBe(true);
    expect(getPaymentReceipt(reply.raw)?.asset).toBe(UNKNOWN_TOKEN);
  });

  it("policy.networks: pays only on allowed networks, skipping the others", async () => {
    const seller = createSeller({ challenge: v2Challenge({ accepts: [v2Requirement(), onBase()] }) });
    server.use(seller.handler);
    const reply = await wrapper.send(payingClient({ policy: { networks: ["eip155:8453"] } }).client, { url });

    expect(reply.status).toBe(200);
    expect(seller.payments[0].accepted.network).toBe("eip155:8453");
  });

  it("policy.networks: nothing allowed → each requirement refused with the network named", async () => {
    const seller = createSeller({ challenge: v2Challenge({ accepts: [v2Requirement(), onBase()] }) });
    server.use(seller.handler);
    const { client, signs } = payingClient({ policy: { networks: ["eip155:1", "solana:*"] } });

    const error = await rejection(wrapper.send(client, { url }));

    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected.map((r: { reason: string }) => r.reason)).toEqual([
      "network eip155:84532 is not in policy.networks",
      "network eip155:8453 is not in policy.networks",
    ]);
    expect(signs).toHaveLength(0);
  });

  it("policy.payees: pays only allowed payees (case-insensitive)", async () => {
    const seller = createSeller({
      challenge: v2Challenge({ accepts: [v2Requirement({ payTo: OTHER_PAY_TO }), v2Requirement()] }),
    });
    server.use(seller.handler);
    const reply = await wrapper.send(payingClient({ policy: { payees: [PAY_TO.toLowerCase()] } }).client, { url });

    expect(reply.status).toBe(200);
    expect(seller.payments[0].accepted.payTo).toBe(PAY_TO);
  });

  it("policy.payees: an unlisted payee is refused, nothing signed", async () => {
    const seller = createSeller({ challenge: v2Challenge({ accepts: [v2Requirement({ payTo: OTHER_PAY_TO })] }) });
    server.use(seller.handler);
    const { client, signs } = payingClient({ policy: { payees: [PAY_TO] } });

    const error = await rejection(wrapper.send(client, { url }));
    expect(error.details.rejected[0].reason).toBe(`payee ${OTHER_PAY_TO} is not in policy.payees`);
    expect(signs).toHaveLength(0);
  });

  it("a challenge whose resource is on another host is refused before signing", async () => {
    const seller = createSeller({ challenge: v2Challenge({ resource: { url: "https://evil.example/premium" } }) });
    server.use(seller.handler);
    const { client, signs } = payingClient();

    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected[0].reason).toContain("evil.example");
    expect(signs).toHaveLength(0);
  });
});

describe.each(wrappers)("$name: hooks", (wrapper) => {
  it("selectRequirement can choose the second option, which is then echoed and paid", async () => {
    const accepts = [v2Requirement(), onBase()];
    const seller = createSeller({ challenge: v2Challenge({ accepts }) });
    server.use(seller.handler);
    const offered: string[] = [];
    const { client } = payingClient({
      selectRequirement: (options, request) => {
        offered.push(...options.map((o) => o.requirement.network), request.url);
        return options[1];
      },
    });

    const reply = await wrapper.send(client, { url });

    expect(reply.status).toBe(200);
    expect(offered).toEqual(["eip155:84532", "eip155:8453", url]);
    expect(seller.payments[0].accepted).toStrictEqual(accepts[1]);
    expect(getPaymentReceipt(reply.raw)?.network).toBe("eip155:8453");
  });

  it("selectRequirement returning nothing refuses with PaymentRefusedError", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient({ selectRequirement: () => undefined });
    const error = await rejection(wrapper.send(client, { url }));
    expect(error).toBeInstanceOf(PaymentRefusedError);
    expect(signs).toHaveLength(0);
  });

  it("onBeforePayment sees a frozen snapshot: mutating it throws and does not change what is signed", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const seen: PaymentSnapshot[] = [];
    const mutationErrors: unknown[] = [];
    const { client, signs } = payingClient({
      onBeforePayment: (snapshot) => {
        seen.push(snapshot);
        for (const mutate of [
          () => ((snapshot as { amount: string }).amount = "1"),
          () => ((snapshot.requirement as Record<string, unknown>).payTo = OTHER_PAY_TO),
          () => ((snapshot.requirement as { extra: Record<string, unknown> }).extra.name = "Evil"),
          () => ((snapshot.resource as { url: string }).url = "https://evil.example/"),
        ]) {
          try {
            mutate();
          } catch (error) {
            mutationErrors.push(error);
          }
        }
        return true;
      },
    });

    const reply = await wrapper.send(client, { url });

    expect(reply.status).toBe(200);
    expect(mutationErrors).toHaveLength(4);
    for (const error of mutationErrors) expect(error).toBeInstanceOf(TypeError);
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(seen[0]).toMatchObject({
      url,
      method: "GET",
      x402Version: 2,
      scheme: "exact",
      network: "eip155:84532",
      amount: "10000",
      displayAmount: "0.01 USDC",
      payTo: PAY_TO,
      payer: expect.stringMatching(/^0x/),
      requirement: v2Requirement(),
    });
    expect(signs).toHaveLength(1);
    expect(seller.payments[0].accepted).toStrictEqual(v2Requirement());
  });

  it.each([
    { name: "false", hook: () => false, message: /onBeforePayment refused the payment\./ },
    {
      name: "{abort:true, reason}",
      hook: () => ({ abort: true as const, reason: "over budget" }),
      message: /over budget/,
    },
    {
      name: "a throw",
      hook: () => {
        throw new Error("hook exploded");
      },
      message: /onBeforePayment threw/,
    },
    { name: "a rejected promise", hook: () => Promise.reject(new Error("async no")), message: /onBeforePayment threw/ },
  ])(
    "onBeforePayment returning $name refuses with PaymentRefusedError and signs nothing",
    async ({ hook, message }) => {
      const seller = createSeller();
      server.use(seller.handler);
      const { client, signs } = payingClient({ onBeforePayment: hook });

      const error = await rejection(wrapper.send(client, { url }));

      expect(error).toBeInstanceOf(PaymentRefusedError);
      expect(error.code).toBe("PAYMENT_REFUSED");
      expect(error.message).toMatch(message);
      expect(signs).toHaveLength(0);
      expect(seller.requests).toHaveLength(1);
    },
  );

  it("onBeforePayment returning undefined or true approves", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const reply = await wrapper.send(payingClient({ onBeforePayment: () => undefined }).client, { url });
    expect(reply.status).toBe(200);
  });
});
