/**
 * payment-identifier without HTTP: the id format (against the reference's own checks), the built-in
 * extension that attaches an id where a 402 declares the extension, the request options that carry a
 * caller's id or a payment to resend, and the payload merge rule they rely on.
 */
import { x402ResourceServer } from "@x402/core/server";
import {
  declarePaymentIdentifierExtension,
  extractPaymentIdentifier,
  isValidPaymentId,
  validatePaymentIdentifier,
  validatePaymentIdentifierRequirement,
} from "@x402/extensions/payment-identifier";
import { describe, expect, it, vi } from "vitest";
import {
  buildPaymentPayload,
  encodeBase64Json,
  generatePaymentId,
  isPaymentId,
  parseChallenge,
} from "../../src/entries/protocol";
import { createX402Client, type PaymentScheme } from "../../src";
import { readPaymentOptions, resendPayment } from "../../src/handshake";
import { paymentIdOf } from "../../src/protocol";
import { evmVectors } from "../support/vectors";
import { engineOf } from "../../src/client";
import { rejection, thrownBy } from "../support/throws";

const requirement = evmVectors.exact_eip3009.requirements;
const request = { url: "https://api.example.com/premium-data", method: "GET" };
const challengeOf = (extensions?: Record<string, unknown>, x402Version: 1 | 2 = 2) =>
  parseChallenge({
    header: encodeBase64Json(
      x402Version === 2
        ? { x402Version, resource: { url: request.url }, accepts: [requirement], ...(extensions && { extensions }) }
        : {
            x402Version,
            accepts: [
              {
                ...requirement,
                network: "base-sepolia",
                maxAmountRequired: "1000",
                resource: request.url,
                description: "",
                mimeType: "",
                maxTimeoutSeconds: 60,
              },
            ],
            ...(extensions && { extensions }),
          },
    ),
  });

/** A user-written scheme that signs nothing and counts its calls. */
function scheme(): PaymentScheme & { calls: number } {
  const s = {
    calls: 0,
    scheme: "exact",
    networks: ["eip155:*"],
    x402Versions: [1, 2] as (1 | 2)[],
    payer: "0x0000000000000000000000000000000000000001",
    v1Networks: { "base-sepolia": "eip155:84532" },
    knownAssets: [{ network: "eip155:84532", address: requirement.asset, decimals: 6, symbol: "USDC" }],
    check: () => undefined,
    createPayload: async () => {
      s.calls++;
      return { payload: { signature: "0xsigned" } };
    },
  };
  return s;
}

describe("payment ids", () => {
  it.each([
    ["pay_0123456789abcdef", true],
    ["a".repeat(16), true],
    [`${"A-b_C".repeat(25)}xyz`, true], // 128
    ["a".repeat(15), false],
    ["a".repeat(129), false],
    ["pay_0123456789abcde!", false],
    ["pay 0123456789abcdef", false],
    ["pay_0123456789abcdé", false],
    ["pay_0123456789abcdef\n", false],
    [42, false],
    [undefined, false],
  ])("isPaymentId(%j) is %s, as the reference's isValidPaymentId says", (id, valid) => {
    expect(isPaymentId(id)).toBe(valid);
    if (typeof id === "string") expect(isValidPaymentId(id)).toBe(valid);
  });

  it("a generated id is pay_ and 32 hex digits, valid to the reference, and new each time", () => {
    const ids = Array.from({ length: 200 }, generatePaymentId);
    for (const id of ids) {
      expect(id).toMatch(/^pay_[0-9a-f]{32}$/);
      expect(isValidPaymentId(id)).toBe(true);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("paymentIdOf reads extensions['payment-identifier'].info.id, and only a valid one", () => {
    const carrying = (info: unknown) => ({ x402Version: 2, extensions: { "payment-identifier": { info } } });
    expect(paymentIdOf(carrying({ required: false, id: "pay_0123456789abcdef" }))).toBe("pay_0123456789abcdef");
    expect(paymentIdOf(carrying({ required: false, id: "short" }))).toBeUndefined();
    expect(paymentIdOf(carrying({ required: false }))).toBeUndefined();
    expect(paymentIdOf(carrying(null))).toBeUndefined();
    expect(paymentIdOf({ x402Version: 1, scheme: "exact", network: "base", payload: {} })).toBeUndefined();
    expect(paymentIdOf(null)).toBeUndefined();
  });
});

describe("the built-in payment-identifier extension", () => {
  it.each([false, true])(
    "declared with required: %s, the payload echoes the declaration with an id added (valid to the reference)",
    async (required) => {
      const declaration = declarePaymentIdentifierExtension(required);
      const { payload } = await engineOf(createX402Client({ schemes: [scheme()] })).createPayment(
        challengeOf({ "payment-identifier": declaration }),
        request,
      );
      const sent = (payload.extensions as any)["payment-identifier"];
      expect(sent).toEqual({
        info: { required, id: expect.stringMatching(/^pay_[0-9a-f]{32}$/) },
        schema: declaration.schema,
      });
      // The declared object is not changed in place.
      expect(declaration.info).toEqual({ required });
      expect(validatePaymentIdentifier(sent)).toEqual({ valid: true });
      expect(validatePaymentIdentifierRequirement(payload as never, required)).toEqual({ valid: true });
      expect(extractPaymentIdentifier(payload as never)).toBe(sent.info.id);
    },
  );

  it("the reference resource server (2.27) finds the echo faithful", async () => {
    const extensions = { "payment-identifier": declarePaymentIdentifierExtension(true) };
    const { payload } = await engineOf(createX402Client({ schemes: [scheme()] })).createPayment(
      challengeOf(extensions),
      request,
    );
    const paymentRequired = { x402Version: 2, resource: { url: request.url }, accepts: [requirement], extensions };
    expect(new x402ResourceServer().validateExtensions(paymentRequired as never, payload as never)).toEqual({
      valid: true,
    });
  });

  it("a caller's id is used verbatim; every other payment gets a fresh one", async () => {
    const client = createX402Client({ schemes: [scheme()] });
    const challenge = challengeOf({ "payment-identifier": declarePaymentIdentifierExtension(false) });
    const mine = await engineOf(client).createPayment(challenge, { ...request, paymentId: "order-2024-000042-retry" });
    const first = await engineOf(client).createPayment(challenge, request);
    const second = await engineOf(client).createPayment(challenge, request);
    expect(paymentIdOf(mine.payload)).toBe("order-2024-000042-retry");
    expect(paymentIdOf(first.payload)).not.toBe(paymentIdOf(second.payload));
  });

  it("not declared: no id, and a caller's id is not sent either", async () => {
    const { payload } = await engineOf(createX402Client({ schemes: [scheme()] })).createPayment(
      challengeOf({ other: { info: {} } }),
      {
        ...request,
        paymentId: "order-2024-000042-retry",
      },
    );
    expect(payload.extensions).toEqual({ other: { info: {} } });
    const { payload: bare } = await engineOf(createX402Client({ schemes: [scheme()] })).createPayment(
      challengeOf(),
      request,
    );
    expect(bare).not.toHaveProperty("extensions");
  });

  it.each([
    { name: "no info", declaration: {} },
    { name: "required not a boolean", declaration: { info: { required: "yes" } } },
    { name: "not an object", declaration: "on" },
  ])(
    "a declaration the reference would not act on ($name) is echoed as declared, with no id",
    async ({ declaration }) => {
      const { payload } = await engineOf(createX402Client({ schemes: [scheme()] })).createPayment(
        challengeOf({ "payment-identifier": declaration }),
        request,
      );
      expect((payload.extensions as any)["payment-identifier"]).toEqual(declaration);
    },
  );

  it("v1: the payload is the four v1 fields, whatever the 402 carried", async () => {
    const challenge = challengeOf({ "payment-identifier": declarePaymentIdentifierExtension(true) }, 1);
    const { payload } = await engineOf(createX402Client({ schemes: [scheme()] })).createPayment(challenge, {
      ...request,
      paymentId: "order-2024-000042-retry",
    });
    expect(Object.keys(payload)).toEqual(["x402Version", "scheme", "network", "payload"]);
  });

  it("an extension registered under the key replaces the built-in ({ key } alone turns it off)", async () => {
    const challenge = challengeOf({ "payment-identifier": declarePaymentIdentifierExtension(false) });
    const off = await engineOf(
      createX402Client({ schemes: [scheme()], plugins: [{ key: "payment-identifier" }] }),
    ).createPayment(challenge, request);
    expect((off.payload.extensions as any)["payment-identifier"].info).toEqual({ required: false });
    const own = await engineOf(
      createX402Client({
        schemes: [scheme()],
        plugins: [{ key: "payment-identifier", enrichPayload: () => ({ info: { id: "mine_0123456789abcdef" } }) }],
      }),
    ).createPayment(challenge, request);
    expect(paymentIdOf(own.payload)).toBe("mine_0123456789abcdef");
    // client.plugins lists what was given; the built-in is not among them.
    expect(createX402Client({ schemes: [scheme()] }).plugins).toEqual([]);
  });

  it.each(["short", "pay_0123456789abcde!", 42])(
    "a malformed caller id (%j) is INVALID_CONFIG before anything is signed",
    async (paymentId) => {
      const s = scheme();
      const onPaymentFailed = vi.fn();
      const client = createX402Client({ schemes: [s], onPaymentFailed });
      const challenge = challengeOf({ "payment-identifier": declarePaymentIdentifierExtension(false) });
      const error = await rejection(
        engineOf(client).createPayment(challenge, { ...request, paymentId: paymentId as never }),
      );
      expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option: "x402.paymentId" } });
      expect(s.calls).toBe(0);
    },
  );
});

describe("per-request options (x402)", () => {
  const header = {
    name: "PAYMENT-SIGNATURE",
    value: encodeBase64Json({ x402Version: 2, payload: {}, accepted: requirement }),
  };
  const kept = { details: { paymentHeader: header, requirement, payer: "0x0000000000000000000000000000000000000001" } };

  it("nothing given, or every option, is read back", () => {
    const options = { paymentId: "order-2024-000042-retry", ...resendPayment(kept) };
    expect(readPaymentOptions(undefined)).toEqual({});
    expect(readPaymentOptions(options)).toBe(options);
    expect(readPaymentOptions({ paymentId: undefined })).toEqual({ paymentId: undefined });
  });

  it.each([
    {
      name: "not an object",
      value: "pay_0123456789abcdef",
      option: "x402",
      message: 'x402: "pay_0123456789abcdef" is not an object { paymentId?, maxAmount?, resend? }.',
    },
    {
      name: "an array",
      value: [],
      option: "x402",
      message: "x402: [] is not an object { paymentId?, maxAmount?, resend? }.",
    },
    {
      name: "an unknown option",
      value: { paymentID: "x" },
      option: "x402.paymentID",
      message: "x402.paymentID: is not an option (options: paymentId, maxAmount, resend, session).",
    },
    {
      name: "a short id",
      value: { paymentId: "pay_1" },
      option: "x402.paymentId",
      message: 'x402.paymentId: "pay_1" is not a payment id: 16 to 128 characters of a-z, A-Z, 0-9, _ and -.',
    },
    { name: "an id that is a number", value: { paymentId: 1234567890123456 }, option: "x402.paymentId" },
    {
      name: "a resend that is the error itself",
      value: { resend: kept },
      option: "x402.resend",
      message: "x402.resend: must come from resendPayment(error).",
    },
  ])("$name: INVALID_CONFIG naming $option", ({ value, option, message }) => {
    const error = thrownBy(() => readPaymentOptions(value));
    expect(error).toMatchObject({ code: "INVALID_CONFIG", details: { option } });
    if (message) expect(error.message).toBe(message);
  });

  it.each([
    { name: "no header", earlier: { details: { requirement, payer: "0x1" } } },
    {
      name: "another header",
      earlier: { details: { ...kept.details, paymentHeader: { ...header, name: "Authorization" } } },
    },
    {
      name: "a header that is no payload",
      earlier: { details: { ...kept.details, paymentHeader: { ...header, value: "not base64!" } } },
    },
    { name: "no requirement", earlier: { details: { ...kept.details, requirement: undefined } } },
    { name: "no payer", earlier: { details: { ...kept.details, payer: undefined } } },
    { name: "another error", earlier: new Error("x") },
    { name: "nothing", earlier: undefined },
  ])("resendPayment of $name: INVALID_CONFIG at once", ({ earlier }) => {
    expect(thrownBy(() => resendPayment(earlier as never))).toMatchObject({
      code: "INVALID_CONFIG",
      details: { option: "resendPayment" },
    });
  });

  it("resendPayment takes a header name in any case (X-PAYMENT for v1)", () => {
    expect(
      resendPayment({ details: { ...kept.details, paymentHeader: { ...header, name: "x-payment" } } }).resend,
    ).toBeTypeOf("function");
  });
});

describe("the payload merge: a declared list gives way only to one that keeps every entry", () => {
  const challenge = (info: Record<string, unknown>) => challengeOf({ ext: { info } });
  const merged = (info: Record<string, unknown>, added: Record<string, unknown>) =>
    (
      buildPaymentPayload(challenge(info), challenge(info).requirements[0]!, {
        payload: {},
        extensions: { ext: { info: added } },
      }).extensions as any
    ).ext.info;

  it.each([
    {
      name: "a longer list with every declared entry",
      declared: { s: ["b"] },
      added: { s: ["a", "b"] },
      sent: { s: ["a", "b"] },
    },
    {
      name: "a single declared value, kept in the list",
      declared: { s: "b" },
      added: { s: ["a", "b"] },
      sent: { s: ["a", "b"] },
    },
    {
      name: "a list that drops a declared entry",
      declared: { s: ["b", "c"] },
      added: { s: ["a", "b"] },
      sent: { s: ["b", "c"] },
    },
    {
      name: "a list in place of a declared object",
      declared: { s: { x: 1 } },
      added: { s: [{ x: 1 }] },
      sent: { s: { x: 1 } },
    },
    { name: "a single value in place of a list", declared: { s: ["b"] }, added: { s: "a" }, sent: { s: ["b"] } },
    { name: "a new field", declared: { a: "app" }, added: { s: ["a"] }, sent: { a: "app", s: ["a"] } },
  ])("$name", ({ declared, added, sent }) => {
    expect(merged(declared, added)).toEqual(sent);
  });
});
