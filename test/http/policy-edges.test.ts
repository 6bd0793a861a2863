/**
 * The edges of the spend policy, through both wrappers, written from what a user relies on (README
 * "Spend policy"): what is refused is refused before any signature, with NO_PAYABLE_REQUIREMENT and
 * a reason for every requirement; what is allowed is paid and verified by the seller stub.
 */
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { InvalidConfigError, PaymentRefusedError } from "../../src/entries/errors";
import { createX402Client, getPaymentReceipt, type PaymentOption, type X402ClientOptions } from "../../src";
import { exactSvm } from "../../src/svm";
import {
  PATH,
  PAY_TO,
  SELLER,
  USDC_BASE,
  USDC_BASE_SEPOLIA,
  createSeller,
  payingClient,
  v1Challenge,
  v1Requirement,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { fakeRpc, svmRequirement } from "../support/svm";
import { countingSvmSigner } from "../support/wallets";
import { rejection, wrappers, type Wrapper } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();

const url = `${SELLER}${PATH}`;

/**
 * Serves `challenge`, sends with a counting EVM client, and returns the refusal; asserts nothing was signed or sent
 * twice.
 */
async function refused(
  wrapper: Wrapper,
  challenge: Record<string, unknown>,
  options: Partial<X402ClientOptions> = {},
  to = url,
) {
  const { origin, pathname } = new URL(to);
  const seller = createSeller({ origin, path: pathname, challenge });
  server.use(seller.handler);
  const { client, signs } = payingClient(options);
  const error = await rejection(wrapper.send(client, { url: to }));
  expect(error.code, String(error)).toBe("NO_PAYABLE_REQUIREMENT");
  expect(signs).toHaveLength(0);
  expect(seller.requests).toHaveLength(1);
  return error;
}

/** Serves `challenge`, sends with a counting EVM client, and asserts the payment was made and verified. */
async function paid(
  wrapper: Wrapper,
  challenge: Record<string, unknown>,
  options: Partial<X402ClientOptions> = {},
  to = url,
) {
  const { origin, pathname } = new URL(to);
  const seller = createSeller({ origin, path: pathname, challenge });
  server.use(seller.handler);
  const { client, signs } = payingClient(options);
  const reply = await wrapper.send(client, { url: to });
  expect(reply.status, reply.text).toBe(200);
  expect(signs).toHaveLength(1);
  expect(seller.verdicts).toEqual([expect.objectContaining({ ok: true })]);
  return { reply, seller };
}

const reasons = (error: { details: { rejected: { reason: string }[] } }) => error.details.rejected.map((r) => r.reason);

describe.each(wrappers)("$name: protocol v1 challenges get the same policy", (wrapper) => {
  it("the per-payment cap: over $1 is refused, exactly $1 is paid", async () => {
    const error = await refused(wrapper, v1Challenge({ accepts: [v1Requirement({ maxAmountRequired: "1000001" })] }));
    expect(error.details.rejected).toEqual([
      expect.objectContaining({
        index: 0,
        code: "policy",
        amount: "1000001",
        reason: expect.stringMatching(/1\.000001 USDC is over policy\.maxAmountPerPayment \(\$1\)/),
      }),
    ]);

    server.resetHandlers();
    const { seller } = await paid(wrapper, v1Challenge({ accepts: [v1Requirement({ maxAmountRequired: "1000000" })] }));
    expect(seller.payments[0]).toMatchObject({ x402Version: 1, network: "base-sepolia" });
  });

  it("a configured cap, and the cap on another chain's USDC (v1 name base)", async () => {
    await refused(wrapper, v1Challenge({ accepts: [v1Requirement({ maxAmountRequired: "10000" })] }), {
      policy: { maxAmountPerPayment: "$0.005" },
    });
    server.resetHandlers();
    const onBase = v1Requirement({
      network: "base",
      asset: USDC_BASE,
      maxAmountRequired: "2000000",
      extra: { name: "USD Coin", version: "2" },
    });
    const error = await refused(wrapper, v1Challenge({ accepts: [onBase] }));
    expect(reasons(error)).toEqual([expect.stringMatching(/2 USDC is over/)]);
  });

  it("the same-host check reads each requirement's resource: another host is refused, nothing signed", async () => {
    const error = await refused(
      wrapper,
      v1Challenge({ accepts: [v1Requirement({ resource: "https://evil.example/premium" })] }),
    );
    expect(error.details.rejected[0]).toMatchObject({
      code: "policy",
      reason: expect.stringContaining("evil.example"),
    });
  });

  it("a requirement for another host is skipped and the one for this host paid", async () => {
    const evil = v1Requirement({
      network: "base",
      asset: USDC_BASE,
      resource: "https://evil.example/premium",
      extra: { name: "USD Coin", version: "2" },
    });
    const { seller } = await paid(wrapper, v1Challenge({ accepts: [evil, v1Requirement()] }));
    expect(seller.payments[0]).toMatchObject({ x402Version: 1, network: "base-sepolia" });
  });

  it("policy.networks holds CAIP-2 ids, and they allow and refuse v1 names by the id they stand for", async () => {
    const onBase = v1Requirement({ network: "base", asset: USDC_BASE, extra: { name: "USD Coin", version: "2" } });
    const { seller } = await paid(wrapper, v1Challenge({ accepts: [onBase, v1Requirement()] }), {
      policy: { networks: ["eip155:84532"] },
    });
    expect(seller.payments[0]).toMatchObject({ x402Version: 1, network: "base-sepolia" });
    server.resetHandlers();
    const error = await refused(wrapper, v1Challenge({ accepts: [v1Requirement()] }), {
      policy: { networks: ["eip155:8453"] },
    });
    expect(reasons(error)).toEqual(["network eip155:84532 is not in policy.networks"]);
  });

  it("requireSameHostResource: false pays a v1 requirement whose resource names another host", async () => {
    await paid(wrapper, v1Challenge({ accepts: [v1Requirement({ resource: "https://cdn.example/premium" })] }), {
      policy: { requireSameHostResource: false },
    });
  });
});

describe.each(wrappers)("$name: an empty allow-list allows none", (wrapper) => {
  it.each([
    { option: "origins", policy: { origins: [] }, reason: `origin ${SELLER} is not in policy.origins` },
    { option: "networks", policy: { networks: [] }, reason: "network eip155:84532 is not in policy.networks" },
    { option: "payees", policy: { payees: [] }, reason: `payee ${PAY_TO} is not in policy.payees` },
  ])("policy.$option: []", async ({ policy, reason }) => {
    const error = await refused(wrapper, v2Challenge(), { policy });
    expect(reasons(error)).toEqual([reason]);
  });
});

describe.each(wrappers)("$name: policy.origins matches whole origins: scheme, host and port", (wrapper) => {
  it.each([
    // A wildcard stands for labels in front of the dot, never for the dot itself or what follows.
    { pattern: "https://*.example.com", origin: "https://a.example.com", allowed: true },
    { pattern: "https://*.example.com", origin: "https://a.b.example.com", allowed: true },
    { pattern: "https://*.example.com", origin: "https://evil-example.com", allowed: false },
    { pattern: "https://*.example.com", origin: "https://example.com.evil.com", allowed: false },
    { pattern: "https://*.example.com", origin: "https://a.example.com.evil.com", allowed: false },
    { pattern: "https://*.example.com", origin: "https://example.com", allowed: false },
    { pattern: "https://*.example.com", origin: "http://a.example.com", allowed: false },
    { pattern: "https://*.example.com", origin: "https://a.example.com:8443", allowed: false },
    { pattern: "https://*.example.com:8443", origin: "https://a.example.com:8443", allowed: true },
    { pattern: "https://*", origin: "https://api.example.com", allowed: true },
    { pattern: "https://*", origin: "https://api.example.com:8443", allowed: false },
    { pattern: "http://localhost:*", origin: "http://localhost:4021", allowed: true },
    // Ports: an origin without one is the default port, and only that.
    { pattern: "https://api.example.com", origin: "https://api.example.com:8443", allowed: false },
    { pattern: "https://api.example.com:8443", origin: "https://api.example.com", allowed: false },
    { pattern: "https://api.example.com:8443", origin: "https://api.example.com:8443", allowed: true },
    { pattern: "https://api.example.com:443", origin: "https://api.example.com", allowed: true },
    { pattern: "http://api.example.com", origin: "https://api.example.com", allowed: false },
    { pattern: "HTTPS://API.Example.COM", origin: "https://api.example.com", allowed: true },
  ])("$pattern vs $origin: allowed $allowed", async ({ pattern, origin, allowed }) => {
    const to = `${origin}${PATH}`;
    const challenge = v2Challenge({ resource: { url: to } });
    const options = { policy: { origins: [pattern] } };
    if (allowed) {
      await paid(wrapper, challenge, options, to);
    } else {
      const error = await refused(wrapper, challenge, options, to);
      expect(reasons(error)).toEqual([`origin ${origin} is not in policy.origins`]);
    }
  });
});

/**
 * `address` with the case of its first letter whose other case is also base58 swapped: another valid-looking address.
 */
function flipCase(address: string): string {
  const i = [...address].findIndex(
    (c) =>
      /[a-km-zA-HJ-NP-Z]/.test(c) &&
      /[1-9A-HJ-NP-Za-km-z]/.test(c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()),
  );
  const c = address[i]!;
  return address.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + address.slice(i + 1);
}

/** A Solana `exact` client with a recording signer; the stand-in RPC answers for devnet USDC. */
function solanaClient(options: Partial<X402ClientOptions> = {}) {
  const { signer, calls } = countingSvmSigner();
  return { client: createX402Client({ schemes: [exactSvm({ signer, rpc: fakeRpc() })], ...options }), signs: calls };
}

/** A seller of a Solana requirement that answers 200 to any payment (the stub verifies EVM signatures only). */
function solanaSeller(requirement: Record<string, unknown>) {
  const seller = createSeller({
    challenge: v2Challenge({ accepts: [requirement] }),
    intercept: (request) =>
      request.headers.has("payment-signature") ? HttpResponse.json({ data: "premium" }) : undefined,
  });
  server.use(seller.handler);
  return seller;
}

describe.each(wrappers)(
  "$name: policy.payees compares EVM addresses in any case, base58 addresses exactly",
  (wrapper) => {
    it.each([
      { name: "checksummed payee, lower-case payTo", payee: PAY_TO, payTo: PAY_TO.toLowerCase() },
      { name: "lower-case payee, checksummed payTo", payee: PAY_TO.toLowerCase(), payTo: PAY_TO },
      { name: "upper-case payee, checksummed payTo", payee: `0x${PAY_TO.slice(2).toUpperCase()}`, payTo: PAY_TO },
    ])("EVM: $name is paid", async ({ payee, payTo }) => {
      const { seller } = await paid(wrapper, v2Challenge({ accepts: [v2Requirement({ payTo })] }), {
        policy: { payees: [payee] },
      });
      expect(seller.payments[0].accepted.payTo).toBe(payTo);
    });

    it("Solana: the exact payee is paid", async () => {
      const requirement = svmRequirement();
      const seller = solanaSeller(requirement);
      const { client, signs } = solanaClient({ policy: { payees: [String(requirement.payTo)] } });
      const reply = await wrapper.send(client, { url });
      expect(reply.status).toBe(200);
      expect(signs).toHaveLength(1);
      expect(seller.payments[0].accepted).toStrictEqual(requirement);
    });

    it.each([
      { name: "one letter in the other case", payee: (a: string) => flipCase(a) },
      { name: "all lower case", payee: (a: string) => a.toLowerCase() },
      { name: "all upper case", payee: (a: string) => a.toUpperCase() },
    ])("Solana: a payee differing in $name is another address: refused, nothing signed", async ({ payee }) => {
      const requirement = svmRequirement();
      const payTo = String(requirement.payTo);
      expect(payee(payTo)).not.toBe(payTo);
      const seller = solanaSeller(requirement);
      const { client, signs } = solanaClient({ policy: { payees: [payee(payTo)] } });
      const error = await rejection(wrapper.send(client, { url }));
      expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
      expect(reasons(error)).toEqual([`payee ${payTo} is not in policy.payees`]);
      expect(signs).toHaveLength(0);
      expect(seller.requests).toHaveLength(1);
    });
  },
);

describe.each(wrappers)("$name: a stablecoin is known on its own network only", (wrapper) => {
  const mystery = "0x1111111111111111111111111111111111111111";
  it.each([
    {
      name: "Base USDC's address on Base Sepolia",
      challenge: v2Challenge({ accepts: [v2Requirement({ asset: USDC_BASE })] }),
      asset: USDC_BASE,
      network: "eip155:84532",
    },
    {
      name: "Base Sepolia USDC's address on Base",
      challenge: v2Challenge({ accepts: [v2Requirement({ network: "eip155:8453" })] }),
      asset: USDC_BASE_SEPOLIA,
      network: "eip155:8453",
    },
    {
      name: "v1: Base Sepolia USDC's address on base",
      challenge: v1Challenge({ accepts: [v1Requirement({ network: "base" })] }),
      asset: USDC_BASE_SEPOLIA,
      network: "eip155:8453",
    },
  ])("$name is an unknown asset: refused, nothing signed", async ({ challenge, asset, network }) => {
    const error = await refused(wrapper, challenge);
    expect(error.details.rejected).toEqual([
      expect.objectContaining({
        code: "policy",
        asset,
        reason: expect.stringMatching(new RegExp(`^asset ${asset} on ${network} is not a known stablecoin`)),
      }),
    ]);
  });

  it("with allowUnknownAssets it is paid uncapped and shown without a USD amount", async () => {
    const challenge = v2Challenge({ accepts: [v2Requirement({ asset: USDC_BASE, amount: "5000000" })] });
    const { reply } = await paid(wrapper, challenge, { policy: { allowUnknownAssets: true } });
    expect(getPaymentReceipt(reply.raw)).toMatchObject({
      asset: USDC_BASE,
      amount: "5000000",
      displayAmount: undefined,
    });
  });

  it("a policy.assets entry prices its token on its network only", async () => {
    const assets = [{ network: "eip155:8453", address: mystery, decimals: 6, symbol: "TST" }];
    const error = await refused(wrapper, v2Challenge({ accepts: [v2Requirement({ asset: mystery })] }), {
      policy: { assets },
    });
    expect(reasons(error)).toEqual([expect.stringMatching(/is not a known stablecoin/)]);
  });

  it("Solana: mainnet USDC's mint on devnet is unknown: refused, nothing signed", async () => {
    const mainnetUsdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    const seller = solanaSeller(svmRequirement({}, { asset: mainnetUsdc }));
    const { client, signs } = solanaClient();
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(reasons(error)).toEqual([
      expect.stringMatching(new RegExp(`^asset ${mainnetUsdc} on solana:EtWT\\w+ is not a known stablecoin`)),
    ]);
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });
});

describe.each(wrappers)("$name: selectRequirement must pick one of its options, unchanged", (wrapper) => {
  it.each([
    { name: "a copy of an option", pick: (options: readonly PaymentOption[]) => ({ ...options[0]! }) },
    {
      name: "an option whose requirement was changed",
      pick: (options: readonly PaymentOption[]) => ({
        ...options[0]!,
        requirement: { ...options[0]!.requirement, amount: "1" },
      }),
    },
    {
      name: "an option of an earlier request",
      pick: (() => {
        let first: PaymentOption | undefined;
        return (options: readonly PaymentOption[]) => (first ??= options[0]!);
      })(),
      earlier: true,
    },
  ])("returning $name → INVALID_CONFIG, nothing signed", async ({ pick, earlier }) => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient({ selectRequirement: pick });
    if (earlier) {
      // The first request is paid with the option it was given; the second gets that same object back.
      expect((await wrapper.send(client, { url })).status).toBe(200);
      signs.length = 0;
      seller.requests.length = 0;
    }
    const error = await rejection(wrapper.send(client, { url }));
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.details.option).toBe("selectRequirement");
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });

  it.each([
    {
      name: "changes an option in place",
      pick: (options: readonly PaymentOption[]) => {
        const option = options[0] as { requirement: unknown };
        option.requirement = { ...options[0]!.requirement, amount: "5000000" };
        return options[0];
      },
    },
    {
      name: "adds an option of its own to the list",
      pick: (options: readonly PaymentOption[]) => {
        const forged = { ...options[0]!, requirement: { ...options[0]!.requirement, amount: "5000000" } };
        (options as PaymentOption[]).push(forged);
        return forged;
      },
    },
  ])("a selector that $name cannot get past the policy: refused, nothing signed", async ({ pick }) => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient({ selectRequirement: pick });
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("PAYMENT_REFUSED");
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });

  it.each([
    {
      name: "throws",
      select: (thrown: unknown) => () => {
        throw thrown;
      },
    },
    { name: "rejects", select: (thrown: unknown) => () => Promise.reject(thrown) },
  ])("a selector that $name → PAYMENT_REFUSED with the thrown error as cause, nothing signed", async ({ select }) => {
    const seller = createSeller();
    server.use(seller.handler);
    const thrown = Object.assign(new Error("no budget left for this route"), { budgetId: "team-a" });
    const { client, signs } = payingClient({ selectRequirement: select(thrown) });
    const error = await rejection(wrapper.send(client, { url }));
    expect(error).toBeInstanceOf(PaymentRefusedError);
    expect(error.code).toBe("PAYMENT_REFUSED");
    expect(error.message).toMatch(/selectRequirement threw/);
    expect(error.cause).toBe(thrown);
    expect(error.walk()).toBe(thrown);
    expect(error.walk((e: unknown) => (e as { budgetId?: string }).budgetId === "team-a")).toBe(thrown);
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });
});

describe.each(wrappers)("$name: EVM exact is paid by EIP-3009 or Permit2 only", (wrapper) => {
  it.each(["erc7710", "Permit2", "permit", "eip2612"])(
    'extra.assetTransferMethod "%s" is refused before signing, never signed another way',
    async (method) => {
      const requirement = v2Requirement({ extra: { name: "USDC", version: "2", assetTransferMethod: method } });
      const error = await refused(wrapper, v2Challenge({ accepts: [requirement] }));
      expect(error.details.rejected).toEqual([
        expect.objectContaining({
          code: "unsupported",
          reason: `asset transfer method ${JSON.stringify(method)} is not supported (only eip3009 and permit2)`,
        }),
      ]);
    },
  );

  it("a refused method next to an eip3009 one: the eip3009 one is paid", async () => {
    const erc7710 = v2Requirement({ extra: { name: "USDC", version: "2", assetTransferMethod: "erc7710" } });
    const eip3009 = v2Requirement({
      amount: "20000",
      extra: { name: "USDC", version: "2", assetTransferMethod: "eip3009" },
    });
    const { seller } = await paid(wrapper, v2Challenge({ accepts: [erc7710, eip3009] }));
    expect(seller.payments[0].accepted).toStrictEqual(eip3009);
  });

  it("permit2 is paid with a Permit2 witness transfer, not an EIP-3009 authorisation", async () => {
    const permit2 = v2Requirement({ extra: { assetTransferMethod: "permit2" } });
    const { seller } = await paid(wrapper, v2Challenge({ accepts: [permit2] }));
    expect(seller.payments[0].accepted).toStrictEqual(permit2);
    expect(seller.payments[0].payload).toEqual({
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
      permit2Authorization: expect.objectContaining({ spender: "0x402085c248EeA27D92E8b30b2C58ed07f9E20001" }),
    });
  });
});

describe.each(wrappers)("$name: Permit2 is a protocol v2 method", (wrapper) => {
  it("a v1 requirement asking for permit2 is refused before signing, never signed as EIP-3009 or Permit2", async () => {
    const permit2 = v1Requirement({ extra: { name: "USDC", version: "2", assetTransferMethod: "permit2" } });
    const error = await refused(wrapper, v1Challenge({ accepts: [permit2] }));
    expect(error.details.rejected).toEqual([
      expect.objectContaining({ code: "unsupported", reason: "Permit2 is not part of protocol v1" }),
    ]);
  });

  it("beside it, the same v1 requirement asking for eip3009 is paid", async () => {
    const permit2 = v1Requirement({ extra: { name: "USDC", version: "2", assetTransferMethod: "permit2" } });
    const eip3009 = v1Requirement({ extra: { name: "USDC", version: "2", assetTransferMethod: "eip3009" } });
    const { seller } = await paid(wrapper, v1Challenge({ accepts: [permit2, eip3009] }));
    expect(seller.payments[0].payload).toEqual({
      signature: expect.any(String),
      authorization: expect.objectContaining({ value: "10000" }),
    });
  });
});

describe.each(wrappers)("$name: a payee that is nobody's is refused whatever the policy allows", (wrapper) => {
  const zero = "0x0000000000000000000000000000000000000000";
  it.each([
    { name: "default policy", policy: {} },
    {
      name: "the zero address listed in payees, no caps",
      policy: { payees: [zero], allowUnknownAssets: true, maxAmountPerPayment: false as const },
    },
  ])("EVM zero address payTo ($name): refused, nothing signed", async ({ policy }) => {
    const error = await refused(wrapper, v2Challenge({ accepts: [v2Requirement({ payTo: zero })] }), { policy });
    expect(error.details.rejected).toEqual([
      expect.objectContaining({ code: "policy", payTo: zero, reason: expect.stringMatching(/zero address/) }),
    ]);
  });

  it("a zero payTo is skipped and the next requirement paid", async () => {
    const { seller } = await paid(wrapper, v2Challenge({ accepts: [v2Requirement({ payTo: zero }), v2Requirement()] }));
    expect(seller.payments[0].accepted.payTo).toBe(PAY_TO);
  });

  it("Solana's all-zero key (32 ones) as payTo: refused, nothing signed", async () => {
    const nobody = "1".repeat(32);
    const seller = solanaSeller(svmRequirement({}, { payTo: nobody }));
    const { client, signs } = solanaClient({ policy: { payees: [nobody] } });
    const error = await rejection(wrapper.send(client, { url }));
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected).toEqual([
      expect.objectContaining({ code: "policy", payTo: nobody, reason: expect.stringMatching(/zero address/) }),
    ]);
    expect(signs).toHaveLength(0);
    expect(seller.requests).toHaveLength(1);
  });
});

/** `address` with the case of its first hex letter swapped: a mixed-case address whose EIP-55 checksum is wrong. */
function breakChecksum(address: string): string {
  const i = 2 + address.slice(2).search(/[a-fA-F]/);
  const c = address[i]!;
  return address.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + address.slice(i + 1);
}

describe.each(wrappers)("$name: EIP-55: a mixed-case address must carry a right checksum", (wrapper) => {
  it.each([
    { field: "payTo", address: breakChecksum(PAY_TO) },
    { field: "asset", address: breakChecksum(USDC_BASE_SEPOLIA) },
  ])("a $field with a wrong checksum is a mistyped address: refused, nothing signed", async ({ field, address }) => {
    expect(address.toLowerCase()).toBe((field === "payTo" ? PAY_TO : USDC_BASE_SEPOLIA).toLowerCase());
    const error = await refused(wrapper, v2Challenge({ accepts: [v2Requirement({ [field]: address })] }));
    expect(reasons(error)).toEqual([`${field} ${address} has a wrong EIP-55 checksum (a mistyped address)`]);
  });

  it("v1 too", async () => {
    const error = await refused(wrapper, v1Challenge({ accepts: [v1Requirement({ payTo: breakChecksum(PAY_TO) })] }));
    expect(reasons(error)).toEqual([expect.stringMatching(/wrong EIP-55 checksum/)]);
  });

  it("all lower case carries no checksum and is paid; a lower-case USDC is still priced as USDC", async () => {
    const requirement = v2Requirement({ payTo: PAY_TO.toLowerCase(), asset: USDC_BASE_SEPOLIA.toLowerCase() });
    const { reply, seller } = await paid(wrapper, v2Challenge({ accepts: [requirement] }));
    expect(seller.payments[0].accepted).toStrictEqual(requirement);
    expect(getPaymentReceipt(reply.raw)?.displayAmount).toBe("0.01 USDC");
  });

  it("all upper case carries no checksum either, and is paid", async () => {
    const upper = (a: string) => `0x${a.slice(2).toUpperCase()}`;
    const requirement = v2Requirement({ payTo: upper(PAY_TO), asset: upper(USDC_BASE_SEPOLIA) });
    const { seller } = await paid(wrapper, v2Challenge({ accepts: [requirement] }));
    expect(seller.payments[0].accepted).toStrictEqual(requirement);
  });
});

describe.each(wrappers)("$name: the same-host check reads the resource URL as the request would", (wrapper) => {
  it.each([
    ["protocol-relative", "//evil.example/premium"],
    ["absolute, upper-case scheme", "HTTPS://evil.example/premium"],
  ])("%s, on another host: refused", async (_, resource) => {
    const error = await refused(wrapper, v2Challenge({ resource: { url: resource } }));
    expect(reasons(error)).toEqual([expect.stringMatching(/resource on evil\.example/)]);
  });

  it.each([
    ["a path", "/premium"],
    ["an MCP tool", "mcp://tool/premium"],
  ])("%s names no other host: paid", async (_, resource) => {
    await paid(wrapper, v2Challenge({ resource: { url: resource } }));
  });
});

describe.each(wrappers)("$name: policy.maxTimeoutSeconds bounds how long a signed payment stays valid", (wrapper) => {
  const lasting = (seconds: number) => v2Challenge({ accepts: [v2Requirement({ maxTimeoutSeconds: seconds })] });

  it("default 900: a quarter of an hour is paid, a seller asking 960 s is refused", async () => {
    await paid(wrapper, lasting(900));
    server.resetHandlers();
    const error = await refused(wrapper, lasting(960));
    expect(reasons(error)).toEqual(["maxTimeoutSeconds 960 is over policy.maxTimeoutSeconds (900)"]);
  });

  it("an hour, as the default was: refused unless the policy allows it", async () => {
    const error = await refused(wrapper, lasting(3600));
    expect(reasons(error)).toEqual(["maxTimeoutSeconds 3600 is over policy.maxTimeoutSeconds (900)"]);
    server.resetHandlers();
    await paid(wrapper, lasting(3600), { policy: { maxTimeoutSeconds: 3600 } });
  });

  it("a configured limit", async () => {
    await paid(wrapper, lasting(120), { policy: { maxTimeoutSeconds: 120 } });
    server.resetHandlers();
    const error = await refused(wrapper, lasting(121), { policy: { maxTimeoutSeconds: 120 } });
    expect(reasons(error)).toEqual([expect.stringMatching(/policy\.maxTimeoutSeconds \(120\)/)]);
  });

  it("false: no limit (a week is paid)", async () => {
    await paid(wrapper, lasting(7 * 86400), { policy: { maxTimeoutSeconds: false } });
  });

  it("v1 too", async () => {
    const error = await refused(wrapper, v1Challenge({ accepts: [v1Requirement({ maxTimeoutSeconds: 86400 })] }));
    expect(reasons(error)).toEqual([expect.stringMatching(/policy\.maxTimeoutSeconds \(900\)/)]);
  });
});

describe.each(wrappers)("$name: policy.assetCaps caps one asset in base units", (wrapper) => {
  const mystery = "0x1111111111111111111111111111111111111111";
  const mysteryRequirement = (amount: string) =>
    v2Requirement({ asset: mystery, amount, extra: { name: "Mystery", version: "1" } });
  const onSepolia = (asset: string, maxAmount: string) => ({ network: "eip155:84532", asset, maxAmount });

  it("on a known asset, below the USD cap: over its entry is refused, up to it paid", async () => {
    const policy = { assetCaps: [onSepolia(USDC_BASE_SEPOLIA, "5000")] };
    const error = await refused(wrapper, v2Challenge({ accepts: [v2Requirement({ amount: "5001" })] }), { policy });
    expect(reasons(error)).toEqual([
      `5001 base units of ${USDC_BASE_SEPOLIA} is over its policy.assetCaps entry (5000)`,
    ]);
    server.resetHandlers();
    await paid(wrapper, v2Challenge({ accepts: [v2Requirement({ amount: "5000" })] }), { policy });
  });

  it("on a known asset the USD cap still applies on top", async () => {
    const policy = { assetCaps: [onSepolia(USDC_BASE_SEPOLIA, "5000000")] };
    const error = await refused(wrapper, v2Challenge({ accepts: [v2Requirement({ amount: "2000000" })] }), { policy });
    expect(reasons(error)).toEqual([expect.stringMatching(/2 USDC is over policy\.maxAmountPerPayment \(\$1\)/)]);
  });

  it("makes an unknown asset payable up to the entry, without allowUnknownAssets", async () => {
    const policy = { assetCaps: [onSepolia(mystery, "1000")] };
    await paid(wrapper, v2Challenge({ accepts: [mysteryRequirement("1000")] }), { policy });
    server.resetHandlers();
    const error = await refused(wrapper, v2Challenge({ accepts: [mysteryRequirement("1001")] }), { policy });
    expect(reasons(error)).toEqual([`1001 base units of ${mystery} is over its policy.assetCaps entry (1000)`]);
  });

  it("an entry holds with allowUnknownAssets too; allowUnknownAssets alone stays uncapped", async () => {
    const huge = (10n ** 30n).toString();
    const error = await refused(wrapper, v2Challenge({ accepts: [mysteryRequirement("1001")] }), {
      policy: { assetCaps: [onSepolia(mystery, "1000")], allowUnknownAssets: true },
    });
    expect(reasons(error)).toEqual([expect.stringMatching(/over its policy\.assetCaps entry \(1000\)/)]);
    server.resetHandlers();
    await paid(wrapper, v2Challenge({ accepts: [mysteryRequirement(huge)] }), { policy: { allowUnknownAssets: true } });
  });

  it("an entry matches its EVM asset in any case, and only on its own network", async () => {
    await paid(wrapper, v2Challenge({ accepts: [v2Requirement({ amount: "5000" })] }), {
      policy: { assetCaps: [onSepolia(USDC_BASE_SEPOLIA.toLowerCase(), "5000")] },
    });
    server.resetHandlers();
    const lower = await refused(wrapper, v2Challenge({ accepts: [v2Requirement({ amount: "5001" })] }), {
      policy: { assetCaps: [onSepolia(USDC_BASE_SEPOLIA.toLowerCase(), "5000")] },
    });
    expect(reasons(lower)).toEqual([expect.stringMatching(/over its policy\.assetCaps entry \(5000\)/)]);
    server.resetHandlers();
    const elsewhere = await refused(wrapper, v2Challenge({ accepts: [mysteryRequirement("1")] }), {
      policy: { assetCaps: [{ network: "eip155:8453", asset: mystery, maxAmount: "1000" }] },
    });
    expect(reasons(elsewhere)).toEqual([expect.stringMatching(/is not a known stablecoin/)]);
  });

  it("v1 requirements are capped by their CAIP-2 network", async () => {
    const policy = { assetCaps: [onSepolia(USDC_BASE_SEPOLIA, "5000")] };
    const error = await refused(wrapper, v1Challenge({ accepts: [v1Requirement({ maxAmountRequired: "5001" })] }), {
      policy,
    });
    expect(reasons(error)).toEqual([expect.stringMatching(/over its policy\.assetCaps entry \(5000\)/)]);
  });
});
