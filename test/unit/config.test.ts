/**
 * Configuration mistakes fail where they are made: at createX402Client or at wrapping, with
 * INVALID_CONFIG, `details.option` naming the option, and a message that says what to write
 * instead. Nothing waits for the first 402 to find out.
 */
import { x402Client as ReferenceX402Client } from "@x402/core/client";
import axios from "axios";
import { describe, expect, it } from "vitest";
import { InvalidConfigError, NoPayableRequirementError } from "../../src/entries/errors";
import { createX402Client, type X402Client, type X402ClientOptions } from "../../src";
import { parseChallenge } from "../../src/entries/protocol";
import { wrapAxiosWithPayment } from "../../src/axios";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { exactSvm } from "../../src/svm";
import { buyer } from "../support/svm";
import { account } from "../support/wallets";
import { engineOf } from "../../src/client";
import { thrownBy } from "../support/throws";

const evm = exactEvm({ signer: account });

/** Asserts `make` throws INVALID_CONFIG for `option`, with a message matching `message`. */
function expectConfigError(make: () => unknown, option: string, message: RegExp) {
  const error = thrownBy(make);
  expect(error).toBeInstanceOf(InvalidConfigError);
  expect(error.code).toBe("INVALID_CONFIG");
  expect(error.phase).toBe("config");
  expect(error.details.option).toBe(option);
  expect(error.message).toMatch(message);
  return error;
}

const withPolicy =
  (policy: unknown, schemes = [evm]) =>
  () =>
    createX402Client({ schemes, policy: policy as never });
const withOptions = (options: Record<string, unknown>) => () =>
  createX402Client({ schemes: [evm], ...options } as X402ClientOptions);

describe("createX402Client: policy mistakes", () => {
  it.each([
    {
      name: "an unknown key (a typo)",
      policy: { maxAmount: "$1" },
      option: "policy.maxAmount",
      message: /^policy\.maxAmount: is not an option \(options: maxAmountPerPayment, /s,
    },
    {
      name: "an unknown key (singular)",
      policy: { origin: ["https://api.example.com"] },
      option: "policy.origin",
      message: /origins/,
    },
  ])("$name", ({ policy, option, message }) => {
    expectConfigError(withPolicy(policy), option, message);
  });

  it.each([
    { name: "a string", policy: "strict" },
    { name: "null", policy: null },
  ])("a policy that is $name, not an object", ({ policy }) => {
    expectConfigError(withPolicy(policy), "policy", /^policy: must be an object/);
  });

  it.each([
    { name: "base", caip2: "eip155:8453", schemes: [evm] },
    { name: "base-sepolia", caip2: "eip155:84532", schemes: [evm] },
    { name: "solana-devnet", caip2: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", schemes: [exactSvm({ signer: buyer })] },
  ])("policy.networks with the v1 name $name: the message names $caip2", ({ name, caip2, schemes }) => {
    const error = expectConfigError(
      withPolicy({ networks: [name] }, schemes),
      "policy.networks",
      /protocol v1 network name/,
    );
    expect(error.message).toContain(`use its CAIP-2 id, ${caip2}`);
  });

  it.each([["eip155"], [8453], ["eip155:84532/usdc"]])("policy.networks entry %j is no CAIP-2 pattern", (network) => {
    expectConfigError(withPolicy({ networks: [network] }), "policy.networks", /CAIP-2|not a string/);
  });

  it.each([
    ["without a scheme", "api.example.com"],
    ["without a scheme, wildcard", "*.example.com"],
    ["with a path", "https://api.example.com/premium"],
    ["with a trailing slash", "https://api.example.com/"],
    ["with a query", "https://api.example.com?x=1"],
    ["with another scheme", "ftp://api.example.com"],
    ["with a user", "https://user@api.example.com"],
    ["empty", ""],
  ])("policy.origins entry %s (%j)", (_, origin) => {
    expectConfigError(
      withPolicy({ origins: [origin] }),
      "policy.origins",
      /is not an origin such as https:\/\/api.example.com/,
    );
  });

  it.each([
    ["the number 1", 1],
    ["the number 0.1", 0.1],
    ["a bigint", 1n],
    ["words", "ten dollars"],
    ["a negative amount", "-$1"],
    ["an exponent", "1e3"],
    ["true", true],
  ])("policy.maxAmountPerPayment as %s is refused: money is a string", (_, cap) => {
    expectConfigError(
      withPolicy({ maxAmountPerPayment: cap }),
      "policy.maxAmountPerPayment",
      /is not a USD amount as a string such as "\$0\.10", or false/,
    );
  });

  it.each([
    ["0", 0],
    ["-1", -1],
    ["1.5", 1.5],
    ['"3600" (a string)', "3600"],
    ["true", true],
    ["Infinity", Infinity],
  ])("policy.maxTimeoutSeconds %s", (_, seconds) => {
    expectConfigError(
      withPolicy({ maxTimeoutSeconds: seconds }),
      "policy.maxTimeoutSeconds",
      /whole number of seconds above 0, or false/,
    );
  });

  it.each([
    ["allowUnknownAssets", "yes"],
    ["requireSameHostResource", 0],
  ])("policy.%s must be a boolean", (option, value) => {
    expectConfigError(withPolicy({ [option]: value }), `policy.${option}`, /is not true or false/);
  });

  it.each([
    [
      "not an array",
      { network: "eip155:8453", asset: "0x1111111111111111111111111111111111111111", maxAmount: "1000" },
      /must be a list/,
    ],
    [
      "maxAmount as a number",
      [{ network: "eip155:8453", asset: "0x1111111111111111111111111111111111111111", maxAmount: 2000000 }],
      /maxAmount in base units/,
    ],
    [
      "maxAmount in dollars",
      [{ network: "eip155:8453", asset: "0x1111111111111111111111111111111111111111", maxAmount: "$2" }],
      /maxAmount in base units/,
    ],
    [
      "maxAmount with decimals",
      [{ network: "eip155:8453", asset: "0x1111111111111111111111111111111111111111", maxAmount: "2.5" }],
      /maxAmount in base units/,
    ],
    [
      "maxAmount negative",
      [{ network: "eip155:8453", asset: "0x1111111111111111111111111111111111111111", maxAmount: "-1" }],
      /maxAmount in base units/,
    ],
    [
      "maxAmount as a bigint",
      [{ network: "eip155:8453", asset: "0x1111111111111111111111111111111111111111", maxAmount: 2000000n }],
      /"maxAmount":"2000000n"\} is not \{ network \(CAIP-2\), asset, maxAmount in base units/,
    ],
    [
      "maxAmount missing",
      [{ network: "eip155:8453", asset: "0x1111111111111111111111111111111111111111" }],
      /maxAmount in base units/,
    ],
    [
      "a v1 network name",
      [{ network: "base", asset: "0x1111111111111111111111111111111111111111", maxAmount: "1000" }],
      /is not \{ network \(CAIP-2\), asset, maxAmount/,
    ],
    [
      "a network pattern",
      [{ network: "eip155:*", asset: "0x1111111111111111111111111111111111111111", maxAmount: "1000" }],
      /is not \{ network \(CAIP-2\)/,
    ],
    ["no asset", [{ network: "eip155:8453", maxAmount: "1000" }], /is not \{ network \(CAIP-2\), asset/],
    ["a null entry", [null], /is not \{ network \(CAIP-2\)/],
  ])("policy.assetCaps %s", (_, assetCaps, message) => {
    expectConfigError(withPolicy({ assetCaps }), "policy.assetCaps", message);
  });

  it.each([
    [
      "decimals as a string",
      [{ network: "eip155:8453", address: "0x1111111111111111111111111111111111111111", decimals: "6", symbol: "TST" }],
    ],
    [
      "a v1 network name",
      [{ network: "base", address: "0x1111111111111111111111111111111111111111", decimals: 6, symbol: "TST" }],
    ],
  ])("policy.assets %s", (_, assets) => {
    expectConfigError(
      withPolicy({ assets }),
      "policy.assets",
      /is not \{ network \(CAIP-2\), address, decimals \(0 to 36\), symbol \}/,
    );
  });

  it.each([[[""]], [[42]], ["0x209693Bc6afc0C5328bA36FaF03C514EF312287C"]])("policy.payees %j", (payees) => {
    expectConfigError(withPolicy({ payees }), "policy.payees", /is not an address|must be a list/);
  });

  it("well-formed options are accepted and normalised", () => {
    const client = createX402Client({
      schemes: [evm],
      policy: {
        maxAmountPerPayment: "$0.10",
        maxTimeoutSeconds: false,
        networks: ["eip155:*", "eip155:8453"],
        origins: ["HTTPS://API.Example.com:443", "http://localhost:4021", "https://*.example.com"],
        assetCaps: [{ network: "eip155:8453", asset: "0x1111111111111111111111111111111111111111", maxAmount: "1000" }],
        payees: ["0x209693Bc6afc0C5328bA36FaF03C514EF312287C"],
      },
    });
    expect(client.policy.origins).toEqual([
      "https://api.example.com",
      "http://localhost:4021",
      "https://*.example.com",
    ]);
    expect(client.policy.maxTimeoutSeconds).toBe(false);
    expectConfigError(
      withPolicy({ maxTimeoutSeconds: null }),
      "policy.maxTimeoutSeconds",
      /null is not a whole number/,
    );
    expect(createX402Client({ schemes: [evm] }).policy.maxTimeoutSeconds).toBe(900);
  });
});

describe("createX402Client: option mistakes", () => {
  it.each([
    {
      name: "a policy option given at the top level",
      options: { maxAmountPerPayment: "$5" },
      option: "maxAmountPerPayment",
    },
    { name: "a misspelt hook", options: { onBeforePay: () => true }, option: "onBeforePay" },
    { name: "a plural", options: { policies: {} }, option: "policies" },
  ])("$name", ({ options, option }) => {
    const error = expectConfigError(withOptions(options), option, /is not an option \(options: schemes, policy, /);
    expect(error.message).toMatch(new RegExp(`^${option}: `));
  });

  it.each([
    ["selectRequirement", {}],
    ["onBeforePayment", "yes"],
    ["onPaymentSettled", 1],
    ["onPaymentFailed", true],
  ])("%s that is not a function", (hook, value) => {
    expectConfigError(withOptions({ [hook]: value }), hook, /is not a function/);
  });

  it.each([
    ["no options", undefined],
    ["no schemes", {}],
    ["an empty scheme list", { schemes: [] }],
  ])("%s", (_, options) => {
    expectConfigError(() => createX402Client(options as never), "schemes", /needs at least one scheme/);
  });

  it("a scheme list holding something else", () => {
    expectConfigError(() => createX402Client({ schemes: [{}] as never }), "schemes", /not a payment scheme/);
  });

  it.each([
    "beforePayment",
    "reviewRequirements",
    "checkRequirement",
    "reserve",
    "enrichPayload",
    "onSigned",
    "resume",
    "reservationOf",
    "describeSettlement",
    "onOutcome",
    "prepay",
    "learn",
    "forget",
  ])("a plug-in whose %s is not a function", (step) => {
    // Otherwise found only at a paid request (enrichPayload: after the wallet signed), or never (onOutcome's errors are
    // ignored).
    const plugin = { key: "payment-identifier", [step]: { id: "order-42" } };
    const steps =
      "beforePayment?, reviewRequirements?, checkRequirement?, reserve?, enrichPayload?, onSigned?, resume?, reservationOf?, " +
      "describeSettlement?, onOutcome?, onRefund?, prepay?, learn?, forget?";
    const error = expectConfigError(
      withOptions({ plugins: [plugin] }),
      "plugins",
      new RegExp(`is not a plug-in \\{ name\\?, key\\?, ${steps.replace(/\?/g, "\\?")} \\}`),
    );
    expect(error.message).toContain(`{"key":"payment-identifier","${step}":{"id":"order-42"}}`);
  });

  it("a plug-in with an empty key, or one that is no object", () => {
    expectConfigError(withOptions({ plugins: [{ key: "", enrichPayload: () => ({}) }] }), "plugins", /not a plug-in/);
    expectConfigError(withOptions({ plugins: ["budget"] }), "plugins", /not a plug-in/);
  });

  it("a plug-in without a key serves every payment (a budget, a ledger): accepted", () => {
    expect(() => withOptions({ plugins: [{ onOutcome: () => {} }] })()).not.toThrow();
  });
});

describe("the wrappers take x402-pay's client only", () => {
  const wraps: [string, (client: X402Client) => unknown][] = [
    ["wrapFetchWithPayment", (client) => wrapFetchWithPayment(globalThis.fetch, client)],
    ["wrapAxiosWithPayment", (client) => wrapAxiosWithPayment(axios.create(), client)],
  ];

  it.each(wraps)("%s given @x402/core's x402Client: INVALID_CONFIG that says what to pass", (_, wrap) => {
    const reference = new ReferenceX402Client();
    const error = expectConfigError(() => wrap(reference as never), "client", /not an @x402\/core x402Client/);
    expect(error.message).toContain("createX402Client({ schemes: [exactEvm({ signer })] })");
  });

  it.each(wraps)("%s given something else: INVALID_CONFIG", (_, wrap) => {
    for (const client of [undefined, {}, { createPayment: () => undefined }]) {
      expectConfigError(() => wrap(client as never), "client", /take a client from createX402Client/);
    }
  });
});

describe("NoPayableRequirementError over many requirements", () => {
  const request = { url: "https://api.example.com/premium", method: "GET" };
  const requirement = (i: number) => ({
    scheme: "exact",
    network: "eip155:84532",
    amount: String(2_000_000 + i),
    // The first few carry an asset string far too long to quote whole.
    asset: i < 3 ? `0x${"ab".repeat(5000)}` : "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
    maxTimeoutSeconds: 60,
    extra: { name: "USDC", version: "2" },
  });

  it("500 requirements: a short message naming the first few and counting the rest; details list all 500", async () => {
    const accepts = Array.from({ length: 500 }, (_, i) => requirement(i));
    // Over the header's size limit: a JSON body, as a server with this many options would send.
    const challenge = parseChallenge({
      header: null,
      body: { x402Version: 2, resource: { url: request.url }, accepts },
    });
    const error = await engineOf(createX402Client({ schemes: [evm] }))
      .createPayment(challenge, request)
      .catch((e) => e);

    expect(error).toBeInstanceOf(NoPayableRequirementError);
    expect(error.message.length).toBeLessThan(1500);
    expect(error.message).toMatch(/^Nothing payable: #0 exact on eip155:84532 /);
    expect(error.message).toContain("#1 ");
    expect(error.message).toContain("#2 ");
    expect(error.message).not.toContain("#3 ");
    expect(error.message).toMatch(/; and 497 more\.$/);
    expect(error.details.rejected).toHaveLength(500);
    expect(error.rejected).toBe(error.details.rejected);
    expect(error.details.rejected.map((r: { index: number }) => r.index)).toEqual(accepts.map((_, i) => i));
    expect(error.details.rejected[0].asset).toBe(accepts[0]!.asset);
    expect(error.details.rejected[499]).toMatchObject({
      code: "policy",
      amount: "2000499",
      reason: expect.stringMatching(/over policy\.maxAmountPerPayment/),
    });
  });
});
