/**
 * auth-capture (EVM): authCaptureEvm makes the reference client's payloads byte for byte (test/vectors/auth-capture.json,
 * scripts/auth-capture-vectors.mjs), refuses before signing what an escrow would refuse or what would leave the buyer
 * unprotected, and shows the escrow's terms (who captures, until when, for what fee) to the policy and the hooks.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { encodeAbiParameters, keccak256, recoverTypedDataAddress, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createX402Client, type PaymentSnapshot, type SpendPolicy } from "../../src";
import { engineOf } from "../../src/client";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { authCaptureEvm, evmSettlement, type AuthCaptureEvmOptions } from "../../src/evm";
import { ANVIL_KEY_0, VECTOR_NOW_MS, countingBytes } from "../support/vectors";

const file = JSON.parse(readFileSync(new URL("../vectors/auth-capture.json", import.meta.url), "utf8"));
const vectors: { name: string; requirements: Record<string, any>; payload: Record<string, any> }[] = file.vectors;
const base = vectors[0]!.requirements;
const account = privateKeyToAccount(ANVIL_KEY_0);
const request = { url: "https://api.example.com/held", method: "GET" };
const NOW = VECTOR_NOW_MS / 1000;

function setup(policy: SpendPolicy = {}, options: Partial<AuthCaptureEvmOptions> = {}) {
  const signed: unknown[] = [];
  const signer = {
    address: account.address,
    type: "local" as const,
    signTypedData: (typed: any) => {
      signed.push(typed);
      return account.signTypedData(typed);
    },
  };
  const scheme = authCaptureEvm({ signer, now: () => VECTOR_NOW_MS, randomBytes: countingBytes, ...options });
  const seen: PaymentSnapshot[] = [];
  const client = createX402Client({ schemes: [scheme], policy, onBeforePayment: (s) => void seen.push(s) });
  const pay = (requirements: Record<string, unknown>, extensions?: Record<string, unknown>) => {
    const required = { x402Version: 2, resource: { url: request.url }, accepts: [requirements], extensions };
    const challenge = parseChallenge({ header: encodeBase64Json(required) });
    return engineOf(client).createPayment(challenge, request);
  };
  return { scheme, pay, signed, seen };
}

const withExtra = (extra: Record<string, unknown>, over: Record<string, unknown> = {}) => ({
  ...base,
  ...over,
  extra: { ...base.extra, ...extra },
});

describe("authCaptureEvm reproduces the reference client's payloads", () => {
  it("the vectors cover both transfer methods, bound and unbound salts, and both escrow deployments", () => {
    const kinds = vectors.map((v) => [
      "authorization" in v.payload ? "eip3009" : "permit2",
      "saltNonce" in v.payload ? "bound" : "unbound",
    ]);
    expect(new Set(kinds.map(String))).toEqual(
      new Set(["eip3009,unbound", "eip3009,bound", "permit2,unbound", "permit2,bound"]),
    );
    expect(vectors.some((v) => v.payload.authorization?.to === "0x0E3dF9510de65469C4518D7843919c0b8C7A7757")).toBe(
      true,
    );
  });

  it("the committed vectors are what the installed reference makes now", () => {
    const script = new URL("../../scripts/auth-capture-vectors.mjs", import.meta.url);
    expect(() => execFileSync(process.execPath, [script.pathname, "--check"], { stdio: "pipe" })).not.toThrow();
  });

  it.each(vectors.map((v) => [v.name, v] as const))("%s: byte for byte", async (_, vector) => {
    const { pay } = setup();
    const payment = await pay(vector.requirements);
    expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(vector.payload));
    expect(payment.payload.accepted).toEqual(vector.requirements);
  });

  it("the nonce is the escrow's payer-agnostic PaymentInfo hash (recomputed here with viem), signed by the payer", async () => {
    const { pay } = setup();
    const payload = (await pay(base)).payload.payload as any;
    const extra = base.extra;
    const info = [
      extra.captureAuthorizer,
      "0x0000000000000000000000000000000000000000",
      base.payTo,
      base.asset,
      10_000n,
      BigInt(NOW + 60),
      BigInt(extra.captureDeadline),
      BigInt(extra.refundDeadline),
      extra.minFeeBps,
      extra.maxFeeBps,
      extra.feeRecipient,
      BigInt(payload.salt),
    ];
    const type =
      "PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount," +
      "uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps,uint16 maxFeeBps," +
      "address feeReceiver,uint256 salt)";
    const types = "bytes32,address,address,address,address,uint120,uint48,uint48,uint48,uint16,uint16,address,uint256";
    const struct = keccak256(
      encodeAbiParameters(
        types.split(",").map((t) => ({ type: t })),
        [keccak256(new TextEncoder().encode(type)), ...info],
      ),
    );
    const escrow = "0xf96815976523E00e65Be8f34cA5e64b4f41EB19c";
    const hash = keccak256(
      encodeAbiParameters([{ type: "uint256" }, { type: "address" }, { type: "bytes32" }], [84532n, escrow, struct]),
    );
    expect(payload.authorization.nonce).toBe(hash);
    const signer = await recoverTypedDataAddress({
      domain: { name: "USDC", version: "2", chainId: 84532, verifyingContract: base.asset as Hex },
      types: {
        ReceiveWithAuthorization: [
          { name: "from", type: "address" },
          { name: "to", type: "address" },
          { name: "value", type: "uint256" },
          { name: "validAfter", type: "uint256" },
          { name: "validBefore", type: "uint256" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      primaryType: "ReceiveWithAuthorization",
      message: { ...payload.authorization, value: 10_000n, validAfter: 0n, validBefore: BigInt(NOW + 60) },
      signature: payload.signature,
    });
    expect(signer).toBe(account.address);
  });

  it("a challenge offering to sponsor the Permit2 approval (for other schemes): the same payload, nothing added", async () => {
    const vector = vectors.find((v) => "permit2Authorization" in v.payload && !("saltNonce" in v.payload))!;
    const { scheme, signed } = setup();
    const client = createX402Client({ schemes: [scheme] });
    const sponsoring = { info: { description: "the facilitator sends the approval" }, schema: {} };
    const header = encodeBase64Json({
      x402Version: 2,
      resource: { url: request.url },
      accepts: [vector.requirements],
      extensions: { eip2612GasSponsoring: sponsoring, erc20ApprovalGasSponsoring: sponsoring },
    });
    const payment = await engineOf(client).createPayment(parseChallenge({ header }), request);
    expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(vector.payload));
    // Echoed as declared (as the reference client does), with no permit or approval signed into them.
    expect(payment.payload.extensions).toEqual({
      eip2612GasSponsoring: sponsoring,
      erc20ApprovalGasSponsoring: sponsoring,
    });
    expect(signed).toHaveLength(1);
  });

  it("the wallet is asked to sign typed data naming the collector, never a digest", async () => {
    const { pay, signed } = setup();
    await pay(withExtra({ assetTransferMethod: "permit2" }));
    expect(signed).toEqual([
      expect.objectContaining({
        primaryType: "PermitTransferFrom",
        message: expect.objectContaining({ spender: "0xD69831Aed5bfe262067ec4c751f4F830EcdD446e" }),
      }),
    ]);
  });
});

describe("authCaptureEvm refuses before signing", () => {
  const zero = "0x0000000000000000000000000000000000000000";
  it.each([
    ["a capture deadline in the past", { captureDeadline: NOW - 1 }, /captureDeadline \d+ is in the past/],
    [
      "a capture deadline before the authorization expires",
      { captureDeadline: NOW + 30 },
      /captureDeadline \d+ comes before the authorization expires/,
    ],
    [
      "a refund deadline before the capture deadline",
      { refundDeadline: NOW + 3599 },
      /refundDeadline \d+ comes before extra.captureDeadline/,
    ],
    ["an unknown escrow", { authCaptureEscrow: "0x13AC3b34322D12FE27D5e192D0c2b2266d4F29CB" }, /not a known escrow/],
    ["a missing capture authorizer", { captureAuthorizer: undefined }, /captureAuthorizer undefined is not an EVM/],
    ["a zero capture authorizer", { captureAuthorizer: zero }, /captureAuthorizer is the zero address/],
    ["a missing fee recipient", { feeRecipient: undefined }, /feeRecipient undefined is not an EVM address/],
    ["a zero fee recipient with a fee", { feeRecipient: zero }, /feeRecipient is the zero address, yet a fee/],
    ["fee bounds upside down", { minFeeBps: 200, maxFeeBps: 100 }, /minFeeBps 200 is above extra.maxFeeBps 100/],
    ["a fee over the whole", { maxFeeBps: 20_000 }, /maxFeeBps 20000 is not a whole number from 0 to 10000/],
    ["a fraction of a basis point", { minFeeBps: 1.5 }, /minFeeBps 1.5 is not a whole number/],
    ["a deadline as a string", { captureDeadline: String(NOW + 3600) }, /captureDeadline "\d+" is not a whole/],
    ["a deadline past uint48", { refundDeadline: 2 ** 48 }, /refundDeadline \d+ is not a whole number/],
    ["a missing token domain", { name: undefined }, /extra.name and extra.version/],
    ["an unknown transfer method", { assetTransferMethod: "erc7710" }, /"erc7710" is not supported/],
    ["a malformed receiver authorizer", { receiverAuthorizer: "0x1234" }, /receiverAuthorizer "0x1234" is not/],
    ["a charge with no one to sign it", { paymentFlow: "authorization" }, /needs extra.receiverAuthorizer/],
    ["a v1.0 immediate charge", { autoCapture: true }, /autoCapture is true, a charge of escrow v1.0/],
    ["a flow auth-capture cannot have", { paymentFlow: "upfront" }, /paymentFlow "upfront" is not one a auth-capture/],
  ])("%s", async (_, extra, why) => {
    const { pay, signed } = setup();
    const error = await pay(withExtra(extra)).catch((e) => e);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.details.rejected).toEqual([expect.objectContaining({ reason: expect.stringMatching(why) })]);
    expect(signed).toHaveLength(0);
  });

  it.each([
    ["autoCapture false (a hold, as facilitators accept)", { autoCapture: false }],
    [
      "receiverAuthorizer and policy null (absent, as the reference reads them)",
      { receiverAuthorizer: null, policy: null },
    ],
    ["assetTransferMethod null (absent: EIP-3009, as the reference signs it)", { assetTransferMethod: null }],
  ])("but pays %s, with the unbound salt", async (_, extra) => {
    const { pay } = setup();
    const payment = await pay(withExtra(extra));
    expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(vectors[0]!.payload));
  });

  it("but pays a capture deadline exactly when the authorization expires, and a refund deadline at it", async () => {
    const { pay } = setup();
    const payment = await pay(withExtra({ captureDeadline: NOW + 60, refundDeadline: NOW + 60 }));
    expect(payment.payload.payload).toMatchObject({ authorization: { validBefore: String(NOW + 60) } });
  });

  it("an amount past the escrow's uint120", async () => {
    const { pay, signed } = setup({
      assetCaps: [{ network: base.network, asset: base.asset, maxAmount: `1${"0".repeat(40)}` }],
    });
    const error = await pay({ ...base, amount: String(2n ** 120n) }).catch((e) => e);
    expect(error.details.rejected[0].reason).toMatch(/over the escrow's uint120/);
    expect(signed).toHaveLength(0);
  });

  it("a capturer not in the scheme's capturers", async () => {
    const { pay, signed } = setup({}, { capturers: ["0x90F79bf6EB2c4f870365E785982E1f101E93b906"] });
    const error = await pay(base).catch((e) => e);
    expect(error.details.rejected[0].reason).toMatch(/capturer 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 is not in/);
    expect(signed).toHaveLength(0);
    const allowed = setup({}, { capturers: ["0x70997970c51812dc3a010c7d01b50e0d17dc79c8"] });
    await expect(allowed.pay(base)).resolves.toBeDefined();
  });

  it("fee bounds over policy.maxFeeBps (a policy option, checked at construction)", async () => {
    const strict = setup({ maxFeeBps: 99 });
    const error = await strict.pay(base).catch((e) => e);
    expect(error.details.rejected).toEqual([
      expect.objectContaining({
        code: "policy",
        reason: "an escrow fee of up to 100 bps is over policy.maxFeeBps (99)",
      }),
    ]);
    expect(strict.signed).toHaveLength(0);
    await expect(setup({ maxFeeBps: 100 }).pay(base)).resolves.toBeDefined();
    const schemes = [setup().scheme];
    expect(() => createX402Client({ schemes, policy: { maxFeeBps: 10_001 } })).toThrow(/policy.maxFeeBps/);
    expect(() => createX402Client({ schemes, policy: { maxFeeBps: 0.5 } })).toThrow(/policy.maxFeeBps/);
  });
});

describe("what the buyer is shown", () => {
  it("the escrow's terms: contract, capturer, deadlines and fees, and the flow (escrow unless named)", async () => {
    const { pay, seen } = setup();
    await pay(base);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.flow).toBe("escrow");
    expect(seen[0]!.upTo).toBe(true);
    expect(seen[0]!.displayAmount).toBe("up to 0.01 USDC");
    expect(seen[0]!.escrow).toEqual({
      contract: "0xf96815976523E00e65Be8f34cA5e64b4f41EB19c",
      capturer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      captureDeadline: NOW + 3600,
      refundableUntil: NOW + 86_400,
      fees: { minBps: 0, maxBps: 100, recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" },
    });
  });

  it("a charge after delivery (paymentFlow authorization, with a receiver authorizer) is an authorization", async () => {
    const { pay, seen } = setup();
    await pay(
      withExtra({ paymentFlow: "authorization", receiverAuthorizer: "0x90F79bf6EB2c4f870365E785982E1f101E93b906" }),
    );
    expect(seen[0]!.flow).toBe("authorization");
    expect(seen[0]!.escrow?.refundableUntil).toBe(NOW + 86_400);
  });

  it("policy.flows can ask for refundable payments only, and refuse them", async () => {
    await expect(setup({ flows: ["escrow"] }).pay(base)).resolves.toBeDefined();
    const error = await setup({ flows: ["authorization", "upfront"] })
      .pay(base)
      .catch((e) => e);
    expect(error.details.rejected[0].reason).toBe("paymentFlow escrow is not in policy.flows");
  });
});

describe("the edges of what is payable", () => {
  const zero = "0x0000000000000000000000000000000000000000";
  const bigCap = {
    maxAmountPerPayment: false as const,
    assetCaps: [{ network: base.network, asset: base.asset, maxAmount: String(2n ** 121n) }],
  };
  it.each([
    ["an explicit eip3009 transfer method", { assetTransferMethod: "eip3009" }, {}],
    ["an empty escrow field (the default deployment)", { authCaptureEscrow: "" }, {}],
    ["a lower-case v1.1 escrow", { authCaptureEscrow: "0xf96815976523e00e65be8f34ca5e64b4f41eb19c" }, {}],
    ["an empty receiver authorizer (unbound salt)", { receiverAuthorizer: "" }, {}],
    ["equal fee bounds", { minFeeBps: 100, maxFeeBps: 100 }, {}],
    ["a fee of the whole", { maxFeeBps: 10_000 }, {}],
    ["no fee and no fee recipient", { feeRecipient: zero, minFeeBps: 0, maxFeeBps: 0 }, {}],
    ["a capture deadline just when the authorization expires", { captureDeadline: NOW + 60 }, {}],
    ["a refund deadline equal to the capture deadline", { refundDeadline: NOW + 3600 }, {}],
    ["the largest uint120 amount", {}, { amount: String(2n ** 120n - 1n) }],
  ])("%s is payable", async (_, extra, over) => {
    const { pay, signed } = setup(bigCap);
    await pay(withExtra(extra, over));
    expect(signed).toHaveLength(1);
  });

  it.each([
    ["a capture deadline of now", { captureDeadline: NOW }, `extra.captureDeadline ${NOW} is in the past`],
    [
      "a capture deadline a second before the authorization expires",
      { captureDeadline: NOW + 59 },
      `extra.captureDeadline ${NOW + 59} comes before the authorization expires (now + maxTimeoutSeconds = ` +
        `${NOW + 60}): the escrow would refuse it`,
    ],
    [
      "a refund deadline a second before the capture deadline",
      { refundDeadline: NOW + 3599 },
      `extra.refundDeadline ${NOW + 3599} comes before extra.captureDeadline ${NOW + 3600}`,
    ],
    ["a negative fee bound", { minFeeBps: -1 }, "extra.minFeeBps -1 is not a whole number from 0 to 10000"],
    [
      "a fee over the whole by one",
      { maxFeeBps: 10_001 },
      "extra.maxFeeBps 10001 is not a whole number from 0 to 10000",
    ],
    [
      "a token name that is not text",
      { name: 5 },
      "extra.name and extra.version (the token's EIP-712 domain) are missing",
    ],
    [
      "a missing token version",
      { version: undefined },
      "extra.name and extra.version (the token's EIP-712 domain) are missing",
    ],
    ["a malformed policy contract", { policy: "0x12" }, 'extra.policy "0x12" is not an EVM address'],
    ["an escrow named by a number", { authCaptureEscrow: 5 }, /extra.authCaptureEscrow 5 is not a known escrow/],
    [
      "an unknown escrow, naming those known",
      { authCaptureEscrow: "0x0000000000000000000000000000000000000001" },
      /\(v1.1 0xf96815976523E00e65Be8f34cA5e64b4f41EB19c, v1.0 0xBdEA0D1bcC5966192B070Fdf62aB4EF5b4420cff\)$/,
    ],
  ])("%s is refused, saying so", async (_, extra, why) => {
    const { pay, signed } = setup();
    const error = await pay(withExtra(extra)).catch((e) => e);
    expect(error.details.rejected[0].reason).toEqual(typeof why === "string" ? why : expect.stringMatching(why));
    expect(signed).toHaveLength(0);
  });

  it("the general EVM checks come first (a timeout facilitators cannot meet)", async () => {
    const error = await setup()
      .pay({ ...base, maxTimeoutSeconds: 6 })
      .catch((e) => e);
    expect(error.details.rejected[0].reason).toMatch(/maxTimeoutSeconds 6 is too short/);
  });

  it("the amount one past uint120 is refused", async () => {
    const error = await setup(bigCap)
      .pay({ ...base, amount: String(2n ** 120n) })
      .catch((e) => e);
    expect(error.details.rejected[0].reason).toBe(`amount ${2n ** 120n} is over the escrow's uint120`);
  });

  it("capturers: any listed one is allowed", async () => {
    const capturers = ["0x90F79bf6EB2c4f870365E785982E1f101E93b906", base.extra.captureAuthorizer];
    const { pay, signed } = setup({}, { capturers });
    await pay(base);
    expect(signed).toHaveLength(1);
  });

  it("policy.maxFeeBps takes 0 to 10000 whole basis points", () => {
    const schemes = [setup().scheme];
    for (const maxFeeBps of [0, 10_000])
      expect(() => createX402Client({ schemes, policy: { maxFeeBps } })).not.toThrow();
    expect(() => createX402Client({ schemes, policy: { maxFeeBps: -1 } })).toThrow(/policy.maxFeeBps/);
  });

  it("looks payments up only when given a settlement", () => {
    expect(setup().scheme.checkSettlement).toBeUndefined();
    const settlement = evmSettlement({ rpc: "http://127.0.0.1:1" });
    expect(setup({}, { settlement }).scheme.checkSettlement).toBeTypeOf("function");
  });
});
