/**
 * The client's contract with the code plugged into it: user-written schemes and extensions, the
 * selection and approval hooks, and what every error it throws says about the request. Also the
 * policy's construction rules that only show at the edges (bounds, defaults, origin forms).
 * Schemes here are user-written ones, as the PaymentScheme interface allows.
 */
import { describe, expect, it, vi } from "vitest";
import { InvalidConfigError } from "../../src/entries/errors";
import { createX402Client, type PaymentScheme, type X402Plugin } from "../../src";
import { encodeBase64Json, parseChallenge, type PaymentRequirement } from "../../src/entries/protocol";
import { evmVectors } from "../support/vectors";
import { engineOf } from "../../src/client";
import { budget } from "../../src";
import { rejection, thrownBy } from "../support/throws";

const base = evmVectors.exact_eip3009.requirements;
const request = { url: "https://api.example.com/premium-data", method: "POST" };
const where = { url: request.url, method: request.method };
const challengeOf = (accepts: unknown[], extra: Record<string, unknown> = {}) =>
  parseChallenge({ header: encodeBase64Json({ x402Version: 2, resource: { url: request.url }, accepts, ...extra }) });

/** A user-written scheme paying `exact` on `networks`; `createPayload` may be replaced. */
function scheme(networks: string[] = ["eip155:*"], over: Partial<PaymentScheme> = {}): PaymentScheme {
  return {
    scheme: "exact",
    networks,
    x402Versions: [1, 2],
    payer: "0x0000000000000000000000000000000000000001",
    check: () => undefined,
    createPayload: async () => ({ payload: { signature: "0xsigned" } }),
    knownAssets: [{ network: base.network, address: base.asset, decimals: 6, symbol: "USDC" }],
    ...over,
  };
}

describe("schemes and extensions are checked at construction", () => {
  it.each([
    { name: "null", entry: null },
    { name: "no createPayload", entry: { ...scheme(), createPayload: undefined } },
    { name: "no check", entry: { ...scheme(), check: undefined } },
    { name: "networks not a list", entry: { ...scheme(), networks: "eip155:*" } },
  ])("a scheme with $name: INVALID_CONFIG for schemes", ({ entry }) => {
    const error = thrownBy(() => createX402Client({ schemes: [entry as never] }));
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect(error.details.option).toBe("schemes");
    expect(error.message).toMatch(/is not a payment scheme such as exactEvm/);
  });

  it("a null plug-in: INVALID_CONFIG for plugins", () => {
    const error = thrownBy(() => createX402Client({ schemes: [scheme()], plugins: [null as never] }));
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect(error.details.option).toBe("plugins");
  });

  it("options given as undefined count as not given", () => {
    const client = createX402Client({
      schemes: [scheme()],
      policy: { origins: undefined, maxAmountPerPayment: undefined },
      plugins: undefined,
      selectRequirement: undefined,
      onBeforePayment: undefined,
      onPaymentSettled: undefined,
      onPaymentFailed: undefined,
    });
    expect(client.policy).toMatchObject({ origins: undefined, maxAmountPerPayment: 10n ** 18n });
    expect(client.plugins).toEqual([]);
  });

  it("a scheme for every network (`*`) is asked to pay", async () => {
    const calls: string[] = [];
    const any = scheme(["*"], {
      createPayload: async (r: PaymentRequirement) => (calls.push(r.network), { payload: {} }),
    });
    await engineOf(createX402Client({ schemes: [any] })).createPayment(challengeOf([base]), request);
    expect(calls).toEqual(["eip155:84532"]);
  });
});

describe("every error of createPayment names the request", () => {
  it("nothing payable: NO_PAYABLE_REQUIREMENT with url and method; an origin refusal is coded policy", async () => {
    const client = createX402Client({ schemes: [scheme()], policy: { origins: ["https://other.example"] } });
    const error = await rejection(engineOf(client).createPayment(challengeOf([base]), request));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details).toMatchObject(where);
    expect(error.details.rejected).toEqual([
      expect.objectContaining({ index: 0, code: "policy", reason: expect.stringContaining("policy.origins") }),
    ]);
  });

  it("a selector choosing none: PAYMENT_REFUSED saying so, with url and method", async () => {
    const client = createX402Client({ schemes: [scheme()], selectRequirement: () => undefined });
    const error = await rejection(engineOf(client).createPayment(challengeOf([base]), request));
    expect(error).toMatchObject({
      code: "PAYMENT_REFUSED",
      message: "selectRequirement chose none of the payable requirements.",
      details: where,
    });
  });

  it("a selector returning a copy: INVALID_CONFIG saying what it must return", async () => {
    const client = createX402Client({ schemes: [scheme()], selectRequirement: (options) => ({ ...options[0]! }) });
    const error = await rejection(engineOf(client).createPayment(challengeOf([base]), request));
    expect(error).toMatchObject({
      code: "INVALID_CONFIG",
      message: "selectRequirement must return one of the options it was given, unchanged.",
    });
  });

  it("a scheme that fails: SIGNING_FAILED naming the payment, with url and method", async () => {
    const failing = scheme(["eip155:*"], { createPayload: () => Promise.reject(new Error("device locked")) });
    const error = await rejection(
      engineOf(createX402Client({ schemes: [failing] })).createPayment(challengeOf([base]), request),
    );
    expect(error).toMatchObject({
      code: "SIGNING_FAILED",
      message: "Signing the exact payment on eip155:84532 failed: nothing was paid.",
      details: where,
    });
  });

  it.each([
    { verdict: false, message: "onBeforePayment refused the payment." },
    { verdict: { abort: true }, message: "onBeforePayment refused the payment." },
    {
      verdict: { abort: true, reason: "over today's budget" },
      message: "onBeforePayment refused the payment: over today's budget.",
    },
  ])("onBeforePayment returning $verdict: PAYMENT_REFUSED with url and method", async ({ verdict, message }) => {
    const client = createX402Client({ schemes: [scheme()], onBeforePayment: () => verdict as never });
    const error = await rejection(engineOf(client).createPayment(challengeOf([base]), request));
    expect(error).toMatchObject({ code: "PAYMENT_REFUSED", message, details: where });
  });

  it("onBeforePayment throwing: PAYMENT_REFUSED with its error as cause, url and method", async () => {
    const thrown = new Error("approval service down");
    const client = createX402Client({ schemes: [scheme()], onBeforePayment: () => Promise.reject(thrown) });
    const error = await rejection(engineOf(client).createPayment(challengeOf([base]), request));
    expect(error).toMatchObject({ code: "PAYMENT_REFUSED", cause: thrown, details: where });
  });

  it.each([null, 0, "", { abort: false }])("onBeforePayment returning %j approves", async (verdict) => {
    const client = createX402Client({ schemes: [scheme()], onBeforePayment: () => verdict as never });
    await expect(engineOf(client).createPayment(challengeOf([base]), request)).resolves.toMatchObject({
      x402Version: 2,
    });
  });
});

describe("extensions around a payment", () => {
  const declared = { "sign-in-with-x": { domain: "api.example.com" }, marker: "v1" };
  const withExtensions = (extra: Record<string, unknown> = declared) => challengeOf([base], { extensions: extra });

  it("the first extension offering headers is tried; one offering none (undefined or {}) is passed over", async () => {
    const offering = (key: string, headers: Record<string, string> | undefined): X402Plugin => ({
      key,
      beforePayment: () => headers,
    });
    const client = createX402Client({
      schemes: [scheme()],
      plugins: [
        offering("sign-in-with-x", undefined),
        offering("sign-in-with-x", {}),
        offering("marker", { "x-proof": "p" }),
        offering("marker", { "x-late": "l" }),
      ],
    });
    expect(await engineOf(client).beforePayment(withExtensions(), request)).toEqual({ "x-proof": "p" });
  });

  it("none offering headers: no retry", async () => {
    const client = createX402Client({ schemes: [scheme()], plugins: [{ key: "marker", beforePayment: () => ({}) }] });
    expect(await engineOf(client).beforePayment(withExtensions(), request)).toBeUndefined();
  });

  it("an extension whose headers step throws: SIGNING_FAILED naming the extension, with url and method", async () => {
    const client = createX402Client({
      schemes: [scheme()],
      plugins: [{ key: "sign-in-with-x", beforePayment: () => Promise.reject(new Error("no wallet")) }],
    });
    const error = await rejection(engineOf(client).beforePayment(withExtensions(), request));
    expect(error).toMatchObject({
      code: "SIGNING_FAILED",
      message: "Signing the sign-in-with-x extension's headers failed: nothing was paid.",
      details: where,
    });
  });

  it("an extension whose data step throws: SIGNING_FAILED naming the extension", async () => {
    const client = createX402Client({
      schemes: [scheme()],
      plugins: [{ key: "marker", enrichPayload: () => Promise.reject(new Error("no id")) }],
    });
    const error = await rejection(engineOf(client).createPayment(withExtensions(), request));
    expect(error).toMatchObject({
      code: "SIGNING_FAILED",
      message: "Signing the marker extension's data failed: nothing was paid.",
    });
  });

  it("what the scheme adds to extensions is sent; an extension adding nothing leaves the declaration as the server wrote it", async () => {
    const adding = scheme(["eip155:*"], {
      createPayload: async () => ({ payload: {}, extensions: { gas: { permit: "0xsig" } } }),
    });
    const client = createX402Client({
      schemes: [adding],
      plugins: [{ key: "marker", enrichPayload: () => undefined }],
    });
    const { payload } = await engineOf(client).createPayment(withExtensions(), request);
    expect(payload.extensions).toEqual({ ...declared, gas: { permit: "0xsig" } });
  });

  it("a scheme's info is added to the declared info: every declared field stays as the server wrote it (spec v2 §5.1.2)", async () => {
    // The reference seller (2.27) refuses a payment whose echo drops or changes a declared field
    // (extension_echo_mismatch).
    const gas = { info: { description: "sponsored", version: "1" }, schema: { type: "object" } };
    const adding = scheme(["eip155:*"], {
      createPayload: async () => ({ payload: {}, extensions: { gas: { info: { from: "0xabc", version: "2" } } } }),
    });
    const { payload } = await engineOf(createX402Client({ schemes: [adding] })).createPayment(
      withExtensions({ gas }),
      request,
    );
    const sent = (payload.extensions as Record<string, unknown>).gas;
    expect(JSON.stringify(sent)).toBe(
      JSON.stringify({ info: { description: "sponsored", version: "1", from: "0xabc" }, schema: { type: "object" } }),
    );
  });

  it("an outcome without a challenge (the 402 could not be read) still reaches onPaymentFailed", async () => {
    const onPaymentFailed = vi.fn();
    const onOutcome = vi.fn();
    const client = createX402Client({ schemes: [scheme()], plugins: [{ key: "marker", onOutcome }], onPaymentFailed });
    const error = new InvalidConfigError("x");
    await engineOf(client).report({ settled: false, error, challenge: undefined, request } as never);
    expect(onPaymentFailed).toHaveBeenCalledWith(error);
    expect(onOutcome).not.toHaveBeenCalled();
  });
});

describe("policy construction at the edges", () => {
  const withPolicy = (policy: unknown) => () => createX402Client({ schemes: [scheme()], policy: policy as never });
  const asset = (decimals: number) => [
    { network: "eip155:8453", address: "0x1111111111111111111111111111111111111111", decimals, symbol: "TST" },
  ];

  it.each([0, 36])("policy.assets decimals %i is accepted", (decimals) => {
    expect(withPolicy({ assets: asset(decimals) })().policy.assets).toEqual(asset(decimals));
  });

  it.each([-1, 37])("policy.assets decimals %i is refused", (decimals) => {
    expect(thrownBy(withPolicy({ assets: asset(decimals) }))).toMatchObject({
      code: "INVALID_CONFIG",
      details: { option: "policy.assets" },
    });
  });

  it("defaults: no extra assets, no asset caps, the $1 cap, same-host check on, unknown assets refused", () => {
    expect(createX402Client({ schemes: [scheme()] }).policy).toEqual({
      maxAmountPerPayment: 10n ** 18n,
      allowUnknownAssets: false,
      assets: [],
      assetCaps: [],
      maxTimeoutSeconds: 900,
      networks: undefined,
      payees: undefined,
      origins: undefined,
      requireSameHostResource: true,
    });
  });

  it("policy.networks takes `*` (any network)", () => {
    expect(withPolicy({ networks: ["*"] })().policy.networks).toEqual(["*"]);
  });

  it.each(["Base eip155:8453", "eip155:8453 "])(
    "policy.networks entry %j with anything around the id is refused",
    (network) => {
      expect(thrownBy(withPolicy({ networks: [network] }))).toMatchObject({
        code: "INVALID_CONFIG",
        details: { option: "policy.networks" },
      });
    },
  );

  it("origins: a default port is dropped per scheme, any other kept; IPv6 hosts accepted", () => {
    const origins = [
      "http://api.example.com:80",
      "https://api.example.com:443",
      "http://api.example.com:443",
      "https://api.example.com:80",
      "http://[::1]:4021",
      "https://[FE80::1]",
    ];
    expect(withPolicy({ origins })().policy.origins).toEqual([
      "http://api.example.com",
      "https://api.example.com",
      "http://api.example.com:443",
      "https://api.example.com:80",
      "http://[::1]:4021",
      "https://[fe80::1]",
    ]);
  });

  it.each([
    ["text before the scheme", "xhttps://api.example.com"],
    ["an object that prints as an origin", { toString: (): string => "https://api.example.com" }],
  ])("origins: %s is refused", (_, origin) => {
    expect(thrownBy(withPolicy({ origins: [origin] }))).toMatchObject({
      code: "INVALID_CONFIG",
      details: { option: "policy.origins" },
    });
  });
});

describe("the zero payee", () => {
  it("a key that only ends in ones (the Vote program's id) is not Solana's zero key", () => {
    const payTo = "Vote111111111111111111111111111111111111111";
    const client = createX402Client({ schemes: [scheme()] });
    expect(engineOf(client).evaluate(challengeOf([{ ...base, payTo }]), request).options).toHaveLength(1);
    expect(
      engineOf(client).evaluate(challengeOf([{ ...base, payTo: "1".repeat(32) }]), request).rejected[0]!.reason,
    ).toMatch(/is the zero address/);
  });

  it("only the exact zero forms are nobody's: a longer value that starts with one is left to the scheme to judge", () => {
    const client = createX402Client({ schemes: [scheme()] });
    for (const payTo of [`0x${"0".repeat(40)}1`, "1".repeat(33)]) {
      expect(engineOf(client).evaluate(challengeOf([{ ...base, payTo }]), request).options).toHaveLength(1);
    }
  });
});

describe("the same-host check", () => {
  const evaluate = (resourceUrl: string, url: string) =>
    engineOf(createX402Client({ schemes: [scheme()] })).evaluate(
      parseChallenge({ header: encodeBase64Json({ x402Version: 2, resource: { url: resourceUrl }, accepts: [base] }) }),
      { url, method: "GET" },
    );

  it("applies to plain http too: a resource on another host is refused", () => {
    const { options, rejected } = evaluate("http://evil.example/premium", "http://localhost:4021/premium");
    expect(options).toEqual([]);
    expect(rejected[0]!.reason).toBe(
      "the challenge is for a resource on evil.example, not localhost (policy.requireSameHostResource)",
    );
  });

  it("a resource URL that is no URL is refused, naming it", () => {
    const { options, rejected } = evaluate("https://[nope", "https://api.example.com/premium");
    expect(options).toEqual([]);
    expect(rejected[0]!.reason).toBe('resource URL "https://[nope" is not a valid URL');
  });

  it("a resource named by another scheme (an MCP tool) names no host to compare", () => {
    expect(evaluate("mcp://tool/weather", "https://api.example.com/premium").options).toHaveLength(1);
    // A scheme that merely ends in "http:" is another scheme too.
    expect(evaluate("xhttps://other.example/weather", "https://api.example.com/premium").options).toHaveLength(1);
  });
});

describe("quote: would the client pay, without paying", () => {
  it("runs the extensions' reviews before the policy, and signs, reserves and asks nothing", async () => {
    const createPayload = vi.fn(async () => ({ payload: { signature: "0xsigned" } }));
    const onBeforePayment = vi.fn(() => true);
    const offers: X402Plugin = {
      key: "offer-receipt",
      reviewRequirements: () => [{ index: 1, code: "invalid", reason: "the offer's signature does not verify" }],
    };
    const client = createX402Client({
      schemes: [scheme(undefined, { createPayload })],
      plugins: [offers, budget({ limit: "$0.0015" })],
      onBeforePayment,
    });
    const cheap = { ...base, amount: "1000" };
    const challenge = challengeOf([cheap, cheap, { ...base, amount: "2000" }], { extensions: { "offer-receipt": {} } });
    const { options, rejected } = await client.quote(challenge, request);
    expect(options.map((o) => o.requirement.index)).toEqual([0]);
    expect(rejected.map((r) => [r.index, r.code])).toEqual([
      [1, "invalid"],
      [2, "policy"],
    ]);
    expect(rejected[1]!.reason).toMatch(/budget/i);
    expect(createPayload).not.toHaveBeenCalled();
    expect(onBeforePayment).not.toHaveBeenCalled();
    // Nothing was reserved: the whole budget is still there for the payment the quote named.
    await engineOf(client).createPayment(challenge, request);
    expect(createPayload).toHaveBeenCalledTimes(1);
  });
});

describe("a request's guard", () => {
  it("approve alone (no check): asked after onBeforePayment with the same frozen terms; false refuses under its name", async () => {
    const order: string[] = [];
    const client = createX402Client({ schemes: [scheme()], onBeforePayment: () => void order.push("onBeforePayment") });
    const challenge = challengeOf([base]);
    let seen: any;
    const approve = (payment: unknown) => {
      order.push("guard");
      seen = payment;
      return true;
    };
    await engineOf(client).createPayment(challenge, { ...request, guard: { approve } });
    expect(order).toEqual(["onBeforePayment", "guard"]);
    expect(Object.isFrozen(seen)).toBe(true);
    expect(seen).toMatchObject({ amount: base.amount, payTo: base.payTo, url: request.url });
    const refused = await rejection(
      engineOf(client).createPayment(challenge, {
        ...request,
        guard: { name: "the tool guard", approve: () => false },
      }),
    );
    expect(refused.code).toBe("PAYMENT_REFUSED");
    expect(refused.message).toBe("the tool guard refused the payment.");
    const unnamed = await rejection(
      engineOf(client).createPayment(challenge, {
        ...request,
        guard: { approve: () => ({ abort: true, reason: "no" }) },
      }),
    );
    expect(unnamed.message).toBe("the request's guard refused the payment: no.");
  });

  it("check alone: its reason is a policy rejection, after the policy's own and before the budget's", async () => {
    const client = createX402Client({ schemes: [scheme()], policy: { payees: [base.payTo] } });
    const { options, rejected } = await client.quote(
      challengeOf([base, { ...base, payTo: "0x0000000000000000000000000000000000000002" }]),
      {
        ...request,
        guard: { check: (r) => (r.index === 0 ? "not this one" : undefined) },
      },
    );
    expect(options).toEqual([]);
    expect(rejected.map((r) => [r.index, r.code, r.reason])).toEqual([
      [0, "policy", "not this one"],
      [1, "policy", "payee 0x0000000000000000000000000000000000000002 is not in policy.payees"],
    ]);
  });
});
