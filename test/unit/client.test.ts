import { createWalletClient, custom, type TypedDataDefinition } from "viem";
import { baseSepolia } from "viem/chains";
import { describe, expect, it } from "vitest";
import { createX402Client, type PaymentScheme } from "../../src";
import { encodeBase64Json, parseChallenge, type PaymentRequirement } from "../../src/entries/protocol";
import { exactEvm, toEvmSigner } from "../../src/evm";
import { ANVIL_KEY_0, VECTOR_NOW_MS, countingBytes, evmVectors } from "../support/vectors";
import { account, countingSigner } from "../support/wallets";
import { engineOf } from "../../src/client";
import { schemesFor } from "../../src/contracts";

const base = evmVectors.exact_eip3009.requirements;
const request = { url: "https://api.example.com/premium-data", method: "GET" };
const challengeOf = (accepts: unknown[], extra: Record<string, unknown> = {}) =>
  parseChallenge({ header: encodeBase64Json({ x402Version: 2, resource: { url: request.url }, accepts, ...extra }) });

/** A scheme that records which requirement it was asked to pay. */
function recordingScheme(name: string, networks: string[], calls: string[]): PaymentScheme {
  return {
    scheme: "exact",
    networks,
    x402Versions: [2],
    payer: "0x0000000000000000000000000000000000000001",
    check: () => undefined,
    async createPayload(requirement: PaymentRequirement) {
      calls.push(`${name}:${requirement.network}`);
      return { payload: { by: name } };
    },
  };
}

describe("scheme registry", () => {
  it("the most specific matching scheme pays; a wildcard is not shadowed for other networks", async () => {
    const calls: string[] = [];
    const client = createX402Client({
      schemes: [recordingScheme("wildcard", ["eip155:*"], calls), recordingScheme("base", ["eip155:8453"], calls)],
      policy: { allowUnknownAssets: true },
    });
    await engineOf(client).createPayment(challengeOf([{ ...base, network: "eip155:8453" }]), request);
    await engineOf(client).createPayment(challengeOf([{ ...base, network: "eip155:1" }]), request);
    expect(calls).toEqual(["base:eip155:8453", "wildcard:eip155:1"]);
  });

  it("falls through to the next candidate when the most specific cannot pay", async () => {
    const calls: string[] = [];
    const picky = { ...recordingScheme("picky", ["eip155:8453"], calls), check: () => "cannot" };
    const client = createX402Client({
      schemes: [picky, recordingScheme("any", ["eip155:*"], calls)],
      policy: { allowUnknownAssets: true },
    });
    await engineOf(client).createPayment(challengeOf([{ ...base, network: "eip155:8453" }]), request);
    expect(calls).toEqual(["any:eip155:8453"]);
  });

  it("explains every dropped requirement", async () => {
    const client = createX402Client({ schemes: [exactEvm({ signer: account })] });
    const error = await engineOf(client)
      .createPayment(
        challengeOf([
          { ...base, scheme: "upto" },
          { ...base, network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" },
          { ...base, amount: "5000000" },
          { ...base, payTo: "0x1234" },
          { ...base, extra: {} },
          { ...base, amount: "1.5" },
        ]),
        request,
      )
      .catch((e) => e);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.rejected.map((r: { code: string; reason: string }) => `${r.code}: ${r.reason}`)).toEqual([
      'unsupported: no registered scheme pays "upto" on eip155:84532 (x402 v2)',
      'unsupported: no registered scheme pays "exact" on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1 (x402 v2)',
      "policy: 5 USDC is over policy.maxAmountPerPayment ($1)",
      'unsupported: payTo "0x1234" is not an EVM address',
      "unsupported: extra.name and extra.version (the token's EIP-712 domain) are missing",
      "invalid: amount must be a base-10 integer string within uint256",
    ]);
  });
});

describe("cancellation", () => {
  it("a signal that fires while a scheme starts is ABORTED, and the scheme's later failure is not left unhandled", async () => {
    const controller = new AbortController();
    // Aborts synchronously inside createPayload (as a read that hits an aborted signal does), then fails.
    const scheme = {
      ...recordingScheme("aborting", ["eip155:*"], []),
      createPayload: () => (controller.abort(), Promise.reject(new Error("read cancelled"))),
    };
    const client = createX402Client({ schemes: [scheme], policy: { allowUnknownAssets: true } });
    await expect(
      engineOf(client).createPayment(challengeOf([base]), { ...request, signal: controller.signal }),
    ).rejects.toMatchObject({ code: "ABORTED" });
    // An unhandled rejection would fail this file; give it the turn it needs to surface.
    await new Promise((resolve) => setTimeout(resolve, 10));
  });
});

describe("v1 network names", () => {
  const v1 = (network: string) =>
    parseChallenge({
      header: null,
      body: { x402Version: 1, accepts: [{ ...evmVectors.v1_exact.requirements, network }] },
    });

  it("are translated by the schemes that know them, and refused by name otherwise", async () => {
    const client = createX402Client({ schemes: [exactEvm({ signer: account })] });
    const paid = await engineOf(client).createPayment(v1("base-sepolia"), {
      url: "https://api.example.com/x",
      method: "GET",
    });
    expect(paid.requirement).toMatchObject({ network: "base-sepolia", caip2: "eip155:84532" });
    const { rejected } = engineOf(client).evaluate(v1("solana-devnet"), {
      url: "https://api.example.com/x",
      method: "GET",
    });
    expect(rejected).toMatchObject([{ code: "unsupported", reason: 'unknown v1 network name "solana-devnet"' }]);
  });
});

describe("spend policy", () => {
  const pay = (policy: Parameters<typeof createX402Client>[0]["policy"], accepts: unknown[], url = request.url) =>
    engineOf(createX402Client({ schemes: [exactEvm({ signer: account })], policy })).createPayment(
      challengeOf(accepts),
      { url, method: "GET" },
    );

  it("caps each payment at $1 by default, and at the configured amount", async () => {
    await expect(pay(undefined, [{ ...base, amount: "1000000" }])).resolves.toBeDefined();
    await expect(pay(undefined, [{ ...base, amount: "1000001" }])).rejects.toMatchObject({
      code: "NO_PAYABLE_REQUIREMENT",
    });
    await expect(pay({ maxAmountPerPayment: "$0.01" }, [{ ...base, amount: "10001" }])).rejects.toMatchObject({
      code: "NO_PAYABLE_REQUIREMENT",
    });
    await expect(pay({ maxAmountPerPayment: false }, [{ ...base, amount: "1000000000" }])).resolves.toBeDefined();
  });

  it("refuses unknown assets unless allowed or described", async () => {
    const unknown = { ...base, asset: "0x1111111111111111111111111111111111111111" };
    await expect(pay(undefined, [unknown])).rejects.toThrow(/not a known stablecoin/);
    await expect(pay({ allowUnknownAssets: true }, [unknown])).resolves.toBeDefined();
    const described = { network: "eip155:84532", address: unknown.asset, decimals: 6, symbol: "TST" };
    await expect(pay({ assets: [described] }, [{ ...unknown, amount: "2000000" }])).rejects.toThrow(/2 TST is over/);
  });

  it("applies the network, payee and origin allow-lists", async () => {
    await expect(pay({ networks: ["eip155:8453"] }, [base])).rejects.toThrow(/not in policy.networks/);
    await expect(pay({ payees: ["0x209693bc6afc0c5328ba36faf03c514ef312287c"] }, [base])).resolves.toBeDefined();
    await expect(pay({ payees: ["0x0000000000000000000000000000000000000002"] }, [base])).rejects.toThrow(
      /not in policy.payees/,
    );
    await expect(pay({ origins: ["https://*.example.com"] }, [base])).resolves.toBeDefined();
    await expect(pay({ origins: ["https://other.example"] }, [base])).rejects.toThrow(
      /origin https:\/\/api.example.com is not in policy.origins/,
    );
  });

  it("refuses a challenge for a resource on another host", async () => {
    await expect(pay(undefined, [base], "https://evil.example/premium-data")).rejects.toThrow(
      /resource on api.example.com/,
    );
    await expect(
      pay({ requireSameHostResource: false }, [base], "https://evil.example/premium-data"),
    ).resolves.toBeDefined();
  });

  it("rejects a malformed cap at creation", () => {
    expect(() =>
      createX402Client({ schemes: [exactEvm({ signer: account })], policy: { maxAmountPerPayment: "ten dollars" } }),
    ).toThrowError(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });
});

describe("hooks", () => {
  it("onBeforePayment sees a frozen snapshot and can refuse; nothing is signed", async () => {
    const { signer, calls: signs } = countingSigner();
    let seen: unknown;
    const client = createX402Client({
      schemes: [exactEvm({ signer })],
      onBeforePayment: (payment) => {
        seen = payment;
        return { abort: true, reason: "too pricey today" };
      },
    });
    await expect(engineOf(client).createPayment(challengeOf([base]), request)).rejects.toMatchObject({
      code: "PAYMENT_REFUSED",
      message: expect.stringContaining("too pricey today"),
    });
    expect(signs).toEqual([]);
    expect(seen).toMatchObject({
      amount: "10000",
      displayAmount: "0.01 USDC",
      payer: account.address,
      network: "eip155:84532",
    });
    expect(Object.isFrozen(seen)).toBe(true);
    expect(Object.isFrozen((seen as { requirement: object }).requirement)).toBe(true);
  });

  it("selectRequirement picks among the payable options", async () => {
    const client = createX402Client({
      schemes: [exactEvm({ signer: account })],
      selectRequirement: (options) => options.find((o) => o.requirement.amount === "20000"),
    });
    const payment = await engineOf(client).createPayment(challengeOf([base, { ...base, amount: "20000" }]), request);
    expect(payment.requirement.index).toBe(1);
  });

  it("the approved terms travel with the payment, frozen, for the receipt to start from", async () => {
    let seen: Record<string, unknown> = {};
    const client = createX402Client({
      schemes: [exactEvm({ signer: account })],
      onBeforePayment: (p) => void (seen = { ...p }),
    });
    const payment = await engineOf(client).createPayment(challengeOf([base]), request);
    const { resource: _resource, extensions: _extensions, ...terms } = seen;
    expect(payment.terms).toEqual(terms);
    expect(payment.terms).toMatchObject({
      amount: "10000",
      displayAmount: "0.01 USDC",
      payer: account.address,
      url: request.url,
    });
    expect(Object.isFrozen(payment.terms)).toBe(true);
  });
});

describe("EVM signers", () => {
  const vector = evmVectors.exact_eip3009;
  const sign = (signer: Parameters<typeof exactEvm>[0]["signer"]) =>
    engineOf(
      createX402Client({ schemes: [exactEvm({ signer, now: () => VECTOR_NOW_MS, randomBytes: countingBytes })] }),
    )
      .createPayment(challengeOf([vector.requirements]), request)
      .then((p) => (p.payload.payload as { signature: string }).signature);

  it("a viem WalletClient with a JSON-RPC account signs through its provider (eth_signTypedData_v4)", async () => {
    const methods: string[] = [];
    // An EIP-1193 provider standing in for a browser wallet: it answers eth_signTypedData_v4 with the test key.
    const provider = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        methods.push(method);
        if (method === "eth_signTypedData_v4") {
          const typedData = JSON.parse((params as string[])[1]!) as TypedDataDefinition & {
            types: Record<string, unknown>;
          };
          const { EIP712Domain: _, ...types } = typedData.types;
          return account.signTypedData({ ...typedData, types } as TypedDataDefinition);
        }
        if (method === "eth_chainId") return "0x14a34";
        throw new Error(`unexpected ${method}`);
      },
    };
    const wallet = createWalletClient({ account: account.address, chain: baseSepolia, transport: custom(provider) });
    expect(await sign(wallet)).toBe(vector.schemeResult.payload.signature);
    expect(methods).toContain("eth_signTypedData_v4");
  });

  it("a viem WalletClient with a local account, and a plain { address, signTypedData } object", async () => {
    const wallet = createWalletClient({
      account,
      chain: baseSepolia,
      transport: custom({ request: async () => null }),
    });
    expect(await sign(wallet)).toBe(vector.schemeResult.payload.signature);
    expect(await sign(countingSigner().signer)).toBe(vector.schemeResult.payload.signature);
  });

  it("turns v = 0/1 into 27/28 and passes smart-wallet signatures through", async () => {
    const sig = vector.schemeResult.payload.signature as string;
    const lowV = `${sig.slice(0, 130)}${(parseInt(sig.slice(130), 16) - 27).toString(16).padStart(2, "0")}`;
    expect(await sign(countingSigner(async () => lowV as `0x${string}`).signer)).toBe(sig);
    const long = `0x${"ab".repeat(200)}` as const;
    expect(await sign(countingSigner(async () => long).signer)).toBe(long);
  });

  it("rejects unusable signers with INVALID_CONFIG", () => {
    expect(() => toEvmSigner({} as never)).toThrowError(expect.objectContaining({ code: "INVALID_CONFIG" }));
    expect(() => toEvmSigner({ address: "0x12", signTypedData: async () => "0x" } as never)).toThrowError(
      expect.objectContaining({ code: "INVALID_CONFIG" }),
    );
    const noAccount = createWalletClient({ chain: baseSepolia, transport: custom({ request: async () => null }) });
    expect(() => toEvmSigner(noAccount as never)).toThrowError(/has no account/);
  });

  it("a wallet error never leaks key material", async () => {
    const secret = ANVIL_KEY_0.slice(2);
    const error = await sign(
      countingSigner(async () => {
        throw new Error(`could not sign with ${ANVIL_KEY_0} (raw ${secret})`);
      }).signer,
    ).catch((e) => e);
    expect(error.code).toBe("SIGNING_FAILED");
    const everything = `${error.message} ${String(error)} ${error.cause?.message} ${JSON.stringify(error.details)} ${error.stack}`;
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(secret.toUpperCase());
  });
});

describe("extension steps around the built-in payment-identifier", () => {
  const paying = (extensions: unknown[]) =>
    createX402Client({ schemes: [exactEvm({ signer: account })], plugins: extensions as never });
  const declared = { "payment-identifier": { info: { required: false } } };

  it("registering another extension keeps the built-in payment-identifier; only one under its key replaces it", async () => {
    const other = { key: "something-else", onOutcome: () => undefined };
    const payment = await engineOf(paying([other])).createPayment(
      challengeOf([base], { extensions: declared }),
      request,
    );
    expect(payment.payload.extensions).toMatchObject({
      "payment-identifier": { info: { required: false, id: expect.stringMatching(/^pay_/) } },
    });
    const replaced = await engineOf(paying([{ key: "payment-identifier" }])).createPayment(
      challengeOf([base], { extensions: declared }),
      request,
    );
    expect(payment.payload.extensions).not.toEqual(replaced.payload.extensions);
    expect(replaced.payload.extensions).toEqual(declared);
  });

  it("enrichPayload runs only for declared keys, unless the extension asks for undeclared ones", async () => {
    const enrich = (key: string, enrichUndeclared?: boolean) => ({
      key,
      enrichUndeclared,
      enrichPayload: () => ({ info: { mine: true } }),
    });
    const payment = await engineOf(paying([enrich("quiet"), enrich("loud", true)])).createPayment(
      challengeOf([base]),
      request,
    );
    expect(Object.keys(payment.payload.extensions as object)).toEqual(["loud"]);
  });

  it("a review that returns nothing refuses nothing; one that throws stops the payment, naming its step", async () => {
    const silent = { key: "offer-receipt", reviewRequirements: () => undefined };
    const challenge = challengeOf([base], { extensions: { "offer-receipt": {} } });
    await expect(engineOf(paying([silent])).createPayment(challenge, request)).resolves.toBeDefined();
    const throwing = { key: "offer-receipt", reviewRequirements: () => Promise.reject(new Error("boom")) };
    const error = await engineOf(paying([throwing]))
      .createPayment(challenge, request)
      .catch((e) => e);
    expect(error.message).toContain("the offer-receipt extension's review of the requirements");
  });

  it("describeSettlement: an undefined reading leaves no key at all", async () => {
    const client = createX402Client({
      schemes: [exactEvm({ signer: account })],
      plugins: [{ key: "k", describeSettlement: () => undefined }],
    });
    const challenge = parseChallenge({
      header: encodeBase64Json({ x402Version: 2, accepts: [base], extensions: { k: {} } }),
    });
    const described = await engineOf(client).describeSettlement(challenge, request, { success: true });
    expect(Object.keys(described)).toEqual([]);
  });
});

describe("exactEvm's EIP-3009 needs the token's EIP-712 domain: extra.name and extra.version, each a non-empty string", () => {
  const missing = "extra.name and extra.version (the token's EIP-712 domain) are missing";
  const verdict = (extra: Record<string, unknown>) => {
    const client = createX402Client({ schemes: [exactEvm({ signer: account })] });
    const { options, rejected } = engineOf(client).evaluate(challengeOf([{ ...base, extra }]), request);
    return options.length > 0 ? "payable" : rejected.map((r) => r.reason).join("; ");
  };

  it.each([
    { name: "name missing", extra: { version: "2" } },
    { name: "name empty", extra: { name: "", version: "2" } },
    { name: "name not a string", extra: { name: 5, version: "2" } },
    { name: "version missing", extra: { name: "USDC" } },
    { name: "version empty", extra: { name: "USDC", version: "" } },
    { name: "version not a string", extra: { name: "USDC", version: 2 } },
  ])("$name: refused before signing", ({ extra }) => {
    expect(verdict(extra)).toBe(missing);
    expect(verdict({ ...extra, assetTransferMethod: "eip3009" })).toBe(missing);
  });

  it("both given: paid; Permit2 signs for Permit2's own domain and needs neither", () => {
    expect(verdict({ name: "USDC", version: "2" })).toBe("payable");
    expect(verdict({ assetTransferMethod: "permit2" })).toBe("payable");
  });
});

describe("plug-ins sharing a name: refused with a hint that fits what they are", () => {
  const scheme = exactEvm({ signer: account });
  const named = (name?: string) => (name === undefined ? { onOutcome() {} } : { name, onOutcome() {} });
  const refusal = (a?: string, b?: string) => {
    try {
      createX402Client({ schemes: [scheme], plugins: [named(a), named(b)] });
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it("plug-ins without names are not 'named undefined': taken", () => {
    expect(refusal()).toBeUndefined();
    expect(refusal("audit")).toBeUndefined();
  });

  it.each([
    ["ledger mine", "give each ledger its own name (memoryLedger({ name }), fileLedger(path, { name }), "],
    ["budget team", "give each budget its own name (budget({ name }))."],
    ["audit", "give each its own name (the plug-in's `name`), or keep one."],
    // Only the built-in kinds' own prefixes choose their hint.
    ["my ledger ", "give each its own name (the plug-in's `name`), or keep one."],
    ["team budget ", "give each its own name (the plug-in's `name`), or keep one."],
  ])("two named %j: %s", (name, hint) => {
    const message = refusal(name, name);
    expect(message).toContain(`plugins: two plug-ins are named ${JSON.stringify(name)}: ${hint}`);
  });
});

describe("schemesFor: the schemes that pay a scheme name on a network", () => {
  const fake = (scheme: string, networks: string[], x402Versions: (1 | 2)[] = [1, 2]) =>
    ({ scheme, networks, x402Versions }) as unknown as PaymentScheme;

  it("only schemes of that name, the most specific network pattern first, then in the order given", () => {
    const exactAny = fake("exact", ["eip155:*"]);
    const uptoBase = fake("upto", ["eip155:8453"]);
    const exactBase = fake("exact", ["eip155:8453"]);
    const exactAgain = fake("exact", ["eip155:*"]);
    expect(schemesFor([exactAny, uptoBase, exactBase, exactAgain], "exact", "eip155:8453")).toEqual([
      exactBase,
      exactAny,
      exactAgain,
    ]);
    expect(schemesFor([exactAny, uptoBase], "upto", "eip155:1")).toEqual([]);
  });

  it("with a version, only schemes that speak it", () => {
    const v2Only = fake("exact", ["eip155:*"], [2]);
    const both = fake("exact", ["eip155:*"]);
    expect(schemesFor([v2Only, both], "exact", "eip155:8453", 1)).toEqual([both]);
    expect(schemesFor([v2Only, both], "exact", "eip155:8453")).toEqual([v2Only, both]);
  });
});
