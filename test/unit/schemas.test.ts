/**
 * `x402-pay/schemas`: the exported zod/mini schemas accept the golden vectors and every payload
 * x402-pay sends, refuse malformed messages with the very sentences x402-pay's errors carry, keep the
 * leniencies real servers need, and are the objects the wrappers themselves validate with.
 */
import { HttpResponse } from "msw";
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import type * as z from "zod/mini";
import { createX402Client, type X402Client, type X402Plugin } from "../../src";
import { decodeBase64Json, encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { exactEvm, uptoEvm } from "../../src/evm";
import {
  PaymentPayloadV1Schema,
  PaymentPayloadV2Schema,
  PaymentRequiredV1Schema,
  PaymentRequiredV2Schema,
  PaymentRequirementsV1Schema,
  PaymentRequirementsV2Schema,
  ResourceInfoSchema,
  SettleResponseSchema,
  type PaymentPayloadV2,
  type PaymentRequiredV2,
  type PaymentRequirementsV1,
  type PaymentRequirementsV2,
  type ResourceInfo,
  type SettleResponse,
} from "../../src/schemas";
import { exactSvm } from "../../src/svm";
import { useMswServer } from "../support/msw";
import { PATH, SELLER, createSeller, v1Challenge, v1Requirement, v2Challenge, v2Requirement } from "../support/seller";
import { fakeRpc, svmRequirement } from "../support/svm";
import { evmFull, evmVectors } from "../support/vectors";
import { countingSigner, countingSvmSigner } from "../support/wallets";
import { wrappers } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

/** The first issue as x402-pay words it: the field's path, then what it must be. */
function sentence(schema: z.ZodMiniType, value: unknown): string | undefined {
  const issue = schema.safeParse(value).error?.issues[0];
  return issue && [issue.path.join("."), issue.message].filter(Boolean).join(" ");
}

describe("the golden vectors (made with the reference @x402/evm) are well-formed", () => {
  const v2Cases = [
    "exact_eip3009",
    "exact_permit2",
    "exact_permit2_eip2612",
    "exact_permit2_erc20approval",
    "upto_permit2",
  ] as const;

  it.each(v2Cases)(
    "%s: its requirement is a v2 requirement, its scheme result with `accepted` a v2 payload",
    (name) => {
      const { requirements, schemeResult } = evmVectors[name];
      expect(PaymentRequirementsV2Schema.safeParse(requirements).error).toBeUndefined();
      expect(PaymentPayloadV2Schema.safeParse({ ...schemeResult, accepted: requirements }).error).toBeUndefined();
    },
  );

  it("v1 exact: a v1 requirement and a v1 payload", () => {
    expect(PaymentRequirementsV1Schema.safeParse(evmVectors.v1_exact.requirements).error).toBeUndefined();
    expect(PaymentPayloadV1Schema.safeParse(evmVectors.v1_exact.schemeResult).error).toBeUndefined();
  });

  it("the full v2 payloads, and the PAYMENT-SIGNATURE header the reference sends", () => {
    expect(PaymentPayloadV2Schema.safeParse(evmFull.A_paymentPayload).error).toBeUndefined();
    expect(PaymentPayloadV2Schema.safeParse(evmFull.B_paymentPayload).error).toBeUndefined();
    const decoded = decodeBase64Json(evmFull.A_headers["PAYMENT-SIGNATURE"]);
    expect(decoded.ok && PaymentPayloadV2Schema.safeParse(decoded.value).data).toEqual(evmFull.A_paymentPayload);
  });

  it("a v1 payload is no v2 payload, and the other way round", () => {
    expect(sentence(PaymentPayloadV2Schema, evmVectors.v1_exact.schemeResult)).toBe("x402Version must be 2");
    expect(PaymentPayloadV1Schema.safeParse(evmFull.A_paymentPayload).success).toBe(false);
  });
});

/**
 * Sends one request through `wrapper` to a seller offering `challenge`, answers the paid request with 200, and returns
 * the decoded payment.
 */
async function emitted(
  wrapper: (typeof wrappers)[number],
  client: X402Client,
  challenge: Record<string, unknown>,
): Promise<unknown> {
  const seller = createSeller({
    challenge,
    intercept: (request) =>
      request.headers.has("payment-signature") || request.headers.has("x-payment")
        ? HttpResponse.json({ data: "premium" })
        : undefined,
  });
  server.use(seller.handler);
  expect((await wrapper.send(client, { url })).status).toBe(200);
  expect(seller.payments).toHaveLength(1);
  return seller.payments[0];
}

const evmClient = () => createX402Client({ schemes: [exactEvm({ signer: countingSigner().signer })] });

describe.each(wrappers)("$name: every payload x402-pay sends is well-formed", (wrapper) => {
  it("v2 exact (EIP-3009), `resource` and the declared extensions echoed, an extension's data added", async () => {
    const tag: X402Plugin = { key: "tag", enrichPayload: () => ({ info: { id: "pay_0123456789abcdef" } }) };
    const client = createX402Client({ schemes: [exactEvm({ signer: countingSigner().signer })], plugins: [tag] });
    const declared = {
      tag: { info: { required: false }, schema: { type: "object" } },
      bazaar: { info: { input: { method: "GET" } } },
    };
    const payment = await emitted(wrapper, client, v2Challenge({ extensions: declared }));
    const parsed = PaymentPayloadV2Schema.parse(payment);
    expect(parsed.accepted).toEqual(v2Requirement());
    expect(parsed.extensions).toEqual({
      ...declared,
      tag: { ...declared.tag, info: { required: false, id: "pay_0123456789abcdef" } },
    });
  });

  it("v2 exact (Permit2)", async () => {
    const requirement = v2Requirement({ extra: { name: "USDC", version: "2", assetTransferMethod: "permit2" } });
    const payment = await emitted(wrapper, evmClient(), v2Challenge({ accepts: [requirement] }));
    expect(PaymentPayloadV2Schema.parse(payment).payload).toHaveProperty("permit2Authorization");
  });

  it("v2 upto", async () => {
    const requirement = v2Requirement({
      scheme: "upto",
      extra: {
        name: "USDC",
        version: "2",
        assetTransferMethod: "permit2",
        facilitatorAddress: "0x1111111111111111111111111111111111111111",
      },
    });
    const client = createX402Client({ schemes: [uptoEvm({ signer: countingSigner().signer })] });
    expect(
      PaymentPayloadV2Schema.parse(await emitted(wrapper, client, v2Challenge({ accepts: [requirement] }))).accepted,
    ).toEqual(requirement);
  });

  it("v2 exact on Solana", async () => {
    const client = createX402Client({ schemes: [exactSvm({ signer: countingSvmSigner().signer, rpc: fakeRpc() })] });
    const payment = await emitted(wrapper, client, v2Challenge({ accepts: [svmRequirement()] }));
    expect(PaymentPayloadV2Schema.parse(payment).payload).toHaveProperty("transaction");
  });

  it("v1 exact: the four fields of a v1 payload", async () => {
    const payment = await emitted(wrapper, evmClient(), v1Challenge());
    expect(PaymentPayloadV1Schema.parse(payment)).toMatchObject({
      x402Version: 1,
      scheme: "exact",
      network: "base-sepolia",
    });
    expect(PaymentPayloadV2Schema.safeParse(payment).success).toBe(false);
  });
});

describe("a malformed message is refused with the sentence x402-pay's errors carry", () => {
  const requirementCases: [string, Record<string, unknown>, string][] = [
    ["amount 0.01", { amount: "0.01" }, "amount must be a base-10 integer string within uint256"],
    [
      "amount above uint256",
      { amount: (1n << 256n).toString() },
      "amount must be a base-10 integer string within uint256",
    ],
    ["amount as a number", { amount: 10000 }, "amount must be a string"],
    ["no amount", { amount: undefined }, "amount must be a string"],
    ["empty scheme", { scheme: "" }, "scheme must not be empty"],
    ["a v1 network name", { network: "base-sepolia" }, "network must be a CAIP-2 id such as eip155:8453"],
    ["empty asset", { asset: "" }, "asset must not be empty"],
    ["payTo as a number", { payTo: 1 }, "payTo must be a string"],
    ["maxTimeoutSeconds as text", { maxTimeoutSeconds: "60" }, "maxTimeoutSeconds must be a number"],
    ["maxTimeoutSeconds 0", { maxTimeoutSeconds: 0 }, "maxTimeoutSeconds must be a positive integer"],
    ["maxTimeoutSeconds 1.5", { maxTimeoutSeconds: 1.5 }, "maxTimeoutSeconds must be a positive integer"],
    ["maxTimeoutSeconds above 2^53", { maxTimeoutSeconds: 2 ** 53 }, "maxTimeoutSeconds must be a positive integer"],
    ["extra a string", { extra: "USDC" }, "extra must be an object"],
    ["extra an array", { extra: [] }, "extra must be an object"],
    [
      "the first of two problems",
      { network: "base", amount: "0.01" },
      "network must be a CAIP-2 id such as eip155:8453",
    ],
  ];

  it.each(requirementCases)("v2 requirement, %s: the schema and parseChallenge say the same", (_, over, expected) => {
    const requirement = v2Requirement(over);
    expect(sentence(PaymentRequirementsV2Schema, requirement)).toBe(expected);
    const challenge = parseChallenge({ header: encodeBase64Json(v2Challenge({ accepts: [requirement] })) });
    expect(challenge.invalid.map((i) => i.reason)).toEqual([expected]);
  });

  it.each([
    [
      "maxAmountRequired 0.01",
      { maxAmountRequired: "0.01" },
      "maxAmountRequired must be a base-10 integer string within uint256",
    ],
    ["empty network", { network: "" }, "network must not be empty"],
    ["resource a number", { resource: 42 }, "resource must be a string"],
  ])("v1 requirement, %s", (_, over, expected) => {
    const requirement = v1Requirement(over);
    expect(sentence(PaymentRequirementsV1Schema, requirement)).toBe(expected);
    expect(
      parseChallenge({ header: null, body: v1Challenge({ accepts: [requirement] }) }).invalid.map((i) => i.reason),
    ).toEqual([expected]);
  });

  it.each([null, "exact", [v2Requirement()]])("a requirement that is %j: must be a JSON object", (requirement) => {
    expect(sentence(PaymentRequirementsV2Schema, requirement)).toBe("must be a JSON object");
  });

  it.each([
    ["accepts an object", { accepts: { 0: v2Requirement() } }, "accepts must be an array"],
    ["no accepts", { accepts: undefined }, "accepts must be an array"],
    ["error a number", { error: 402 }, "error must be a string"],
    ["extensions a string", { extensions: "none" }, "extensions must be an object"],
    ["resource null", { resource: null }, "resource must be an object"],
    ["resource.url empty", { resource: { url: "" } }, "resource.url must not be empty"],
    ["resource.url missing", { resource: {} }, "resource.url must be a string"],
  ])("v2 challenge, %s: the schema and the INVALID_CHALLENGE message say the same", (_, over, expected) => {
    const challenge = v2Challenge(over);
    expect(sentence(PaymentRequiredV2Schema, challenge)).toBe(expected);
    expect(() => parseChallenge({ header: encodeBase64Json(challenge) })).toThrowError(
      `The x402 v2 challenge is malformed: ${expected}.`,
    );
  });

  it("v1 challenge: accepts must be an array", () => {
    const challenge = v1Challenge({ accepts: "exact" });
    expect(sentence(PaymentRequiredV1Schema, challenge)).toBe("accepts must be an array");
    expect(() => parseChallenge({ header: null, body: challenge })).toThrowError(
      "The x402 v1 challenge is malformed: accepts must be an array.",
    );
  });

  it.each([
    [{ transaction: "0xab" }, "success must be a boolean"],
    [{ success: "true" }, "success must be a boolean"],
    [{ success: true, payer: 42 }, "payer must be a string"],
    [{ success: true, extensions: [] }, "extensions must be an object"],
  ])("settlement %j", (settlement, expected) => {
    expect(sentence(SettleResponseSchema, settlement)).toBe(expected);
  });
});

describe("the leniencies real servers need", () => {
  it("unknown fields are kept, at every level", () => {
    const requirement = v2Requirement({ extra: { name: "USDC", version: "2", future: [1] }, futureField: true });
    const challenge = v2Challenge({
      accepts: [requirement],
      resource: { url, serviceName: "weather" },
      futureTopLevel: { a: 1 },
    });
    expect(PaymentRequiredV2Schema.parse(challenge)).toEqual(challenge);
    expect(PaymentRequirementsV2Schema.parse(requirement)).toEqual(requirement);
  });

  it("null stands for absent: error, extra, extensions, a settlement's text fields", () => {
    expect(PaymentRequiredV2Schema.safeParse(v2Challenge({ error: null, extensions: null })).success).toBe(true);
    expect(PaymentRequiredV1Schema.safeParse(v1Challenge({ error: null, extensions: null })).success).toBe(true);
    expect(PaymentRequirementsV2Schema.safeParse(v2Requirement({ extra: null })).success).toBe(true);
    const settlement = {
      success: false,
      errorReason: "insufficient_funds",
      errorMessage: null,
      payer: null,
      transaction: null,
      network: null,
      amount: null,
      extensions: null,
    };
    expect(SettleResponseSchema.safeParse(settlement).success).toBe(true);
  });

  it("a v2 challenge without resource, one with an empty accepts (sign-in only routes), a v1 requirement's descriptive fields unchecked", () => {
    expect(PaymentRequiredV2Schema.safeParse(v2Challenge({ resource: undefined, accepts: [] })).success).toBe(true);
    expect(
      PaymentRequirementsV1Schema.safeParse(v1Requirement({ description: null, mimeType: 5, outputSchema: null }))
        .success,
    ).toBe(true);
    expect(ResourceInfoSchema.safeParse({ url, description: null, mimeType: 5 }).success).toBe(true);
  });

  it("x402Version picks the schema: a v1 challenge is no v2 challenge", () => {
    expect(PaymentRequiredV2Schema.safeParse(v1Challenge()).success).toBe(false);
    expect(PaymentRequiredV1Schema.safeParse(v2Challenge()).success).toBe(false);
  });
});

describe("one source of truth", () => {
  it("parseChallenge validates with the functions generated from the exported schemas, not with zod (test/unit/wire-validators.test.ts holds the two to the same verdicts)", () => {
    const bad = v2Requirement({ amount: "0.01" });
    const expected = sentence(PaymentRequirementsV2Schema, bad);
    const challenge = vi.spyOn(PaymentRequiredV2Schema, "safeParse");
    const requirement = vi.spyOn(PaymentRequirementsV2Schema, "safeParse");
    try {
      const parsed = parseChallenge({ header: encodeBase64Json(v2Challenge({ accepts: [v2Requirement(), bad] })) });
      expect(parsed.invalid.map((i) => i.reason)).toEqual([expected]);
      expect(challenge).not.toHaveBeenCalled();
      expect(requirement).not.toHaveBeenCalled();
    } finally {
      challenge.mockRestore();
      requirement.mockRestore();
    }
  });

  it("the exported types are the schemas' own", () => {
    expectTypeOf<PaymentRequirementsV2>().toEqualTypeOf<ReturnType<typeof PaymentRequirementsV2Schema.parse>>();
    expectTypeOf<PaymentRequirementsV2["amount"]>().toEqualTypeOf<string>();
    expectTypeOf<PaymentRequirementsV2["extra"]>().toEqualTypeOf<Record<string, unknown> | null | undefined>();
    expectTypeOf<PaymentRequirementsV1["maxAmountRequired"]>().toEqualTypeOf<string>();
    expectTypeOf<PaymentRequiredV2["x402Version"]>().toEqualTypeOf<2>();
    expectTypeOf<PaymentRequiredV2["accepts"]>().toEqualTypeOf<unknown[]>();
    expectTypeOf<PaymentPayloadV2["accepted"]>().toEqualTypeOf<PaymentRequirementsV2>();
    expectTypeOf<ResourceInfo["url"]>().toEqualTypeOf<string>();
    // A settlement as decodeSettlement returns it: a text field sent as null is absent.
    expectTypeOf<SettleResponse["payer"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SettleResponse["success"]>().toEqualTypeOf<boolean>();
  });
});
