import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { exactEvm, uptoEvm } from "../../src/evm";
import { ANVIL_ADDRESS_0, ANVIL_KEY_0, VECTOR_NOW_MS, countingBytes, evmFull, evmVectors } from "../support/vectors";
import { engineOf } from "../../src/client";

const account = privateKeyToAccount(ANVIL_KEY_0);
const scheme = () => exactEvm({ signer: account, now: () => VECTOR_NOW_MS, randomBytes: countingBytes });
const client = () => createX402Client({ schemes: [scheme()] });
const request = { url: "https://api.example.com/premium-data", method: "GET" };

describe("EVM exact (EIP-3009) reproduces the reference's golden vectors", () => {
  it("v2 scheme payload, byte for byte", async () => {
    const v = evmVectors.exact_eip3009;
    const challenge = parseChallenge({
      header: encodeBase64Json({ x402Version: 2, resource: { url: request.url }, accepts: [v.requirements] }),
    });
    const payment = await engineOf(client()).createPayment(challenge, request);
    expect(payment.payload.payload).toEqual(v.schemeResult.payload);
    expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(v.schemeResult.payload));
  });

  it("the full v2 PaymentPayload and its PAYMENT-SIGNATURE header, byte for byte", async () => {
    const paymentRequired = {
      x402Version: 2,
      resource: evmFull.A_paymentPayload.resource,
      accepts: [evmFull.A_paymentPayload.accepted],
    };
    const challenge = parseChallenge({ header: encodeBase64Json(paymentRequired) });
    const payment = await engineOf(client()).createPayment(challenge, request);
    expect(JSON.stringify(payment.payload)).toBe(evmFull.A_json);
    expect(payment.headerName).toBe("PAYMENT-SIGNATURE");
    expect(payment.headerValue).toBe(evmFull.A_headers["PAYMENT-SIGNATURE"]);
  });

  it("v1: X-PAYMENT with the same signature as v2", async () => {
    const v = evmVectors.v1_exact;
    const challenge = parseChallenge({
      header: null,
      body: JSON.stringify({ x402Version: 1, error: "X-PAYMENT header is required", accepts: [v.requirements] }),
    });
    const payment = await engineOf(createX402Client({ schemes: [scheme()] })).createPayment(challenge, {
      url: "https://api.example.com/x",
      method: "GET",
    });
    expect(payment.headerName).toBe("X-PAYMENT");
    expect(JSON.stringify(payment.payload)).toBe(JSON.stringify(v.schemeResult));
    expect((payment.payload.payload as { signature: string }).signature).toBe(
      evmVectors.exact_eip3009.schemeResult.payload.signature,
    );
  });

  it("signs as the account's address, verbatim", () => {
    expect(scheme().payer).toBe(ANVIL_ADDRESS_0);
  });
});

describe("EVM Permit2 reproduces the reference's golden vectors", () => {
  const pay = async (schemes: Parameters<typeof createX402Client>[0]["schemes"], requirements: object) => {
    const challenge = parseChallenge({
      header: encodeBase64Json({ x402Version: 2, resource: { url: request.url }, accepts: [requirements] }),
    });
    return engineOf(createX402Client({ schemes, policy: { maxAmountPerPayment: "$10" } })).createPayment(
      challenge,
      request,
    );
  };

  it("exact with assetTransferMethod permit2: the exact proxy as spender, byte for byte", async () => {
    const v = evmVectors.exact_permit2;
    const payment = await pay([scheme()], v.requirements);
    expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(v.schemeResult.payload));
  });

  it("upto: the upto proxy as spender and the facilitator in the witness, byte for byte", async () => {
    const v = evmVectors.upto_permit2;
    const payment = await pay(
      [uptoEvm({ signer: account, now: () => VECTOR_NOW_MS, randomBytes: countingBytes })],
      v.requirements,
    );
    expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(v.schemeResult.payload));
    expect(payment.payload.accepted).toStrictEqual(v.requirements);
  });
});

describe("what every EVM requirement must be, whatever the transfer method", () => {
  const evaluate = (over: object, schemes = [scheme(), uptoEvm({ signer: account })]) => {
    const challenge = parseChallenge({
      header: encodeBase64Json({
        x402Version: 2,
        resource: { url: request.url },
        accepts: [{ ...evmVectors.upto_permit2.requirements, ...over }],
      }),
    });
    return engineOf(createX402Client({ schemes, policy: { maxAmountPerPayment: "$10" } })).evaluate(challenge, request);
  };

  it("maxTimeoutSeconds must exceed the facilitators' 6 s margin", () => {
    expect(evaluate({ maxTimeoutSeconds: 6 }).rejected[0]?.reason).toBe(
      "maxTimeoutSeconds 6 is too short: facilitators need more than 6",
    );
    expect(evaluate({ maxTimeoutSeconds: 7 }).options).toHaveLength(1);
  });

  it("payTo and asset must be addresses, with a right checksum when mixed case", () => {
    expect(evaluate({ payTo: 12 }).rejected[0]?.reason).toMatch(/payTo/);
    expect(evaluate({ asset: "0x036cbd53842c5426634e7929541ec2318f3dCF7e" }).rejected[0]?.reason).toBe(
      "asset 0x036cbd53842c5426634e7929541ec2318f3dCF7e has a wrong EIP-55 checksum (a mistyped address)",
    );
    expect(evaluate({ asset: "0x036CBD53842C5426634E7929541EC2318F3DCF7E" }).options).toHaveLength(1);
  });
});
