/**
 * builder-code: the server's declaration echoed as sent, the caller's service codes added within the
 * spec's limits, checked against the reference's own server validation and facilitator encoding.
 */
import { x402ResourceServer } from "@x402/core/server";
import {
  BuilderCodeFacilitatorExtension,
  declareBuilderCodeExtension,
  parseBuilderCodeSuffixFromCalldata,
} from "@x402/extensions/builder-code";
import { describe, expect, it } from "vitest";
import { builderCode, createX402Client, type PaymentScheme } from "../../src";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { evmVectors } from "../support/vectors";
import { engineOf } from "../../src/client";

const requirement = evmVectors.exact_eip3009.requirements;
const request = { url: "https://api.example.com/premium-data", method: "GET" };
const paymentRequired = (extensions?: Record<string, unknown>) => ({
  x402Version: 2,
  resource: { url: request.url },
  accepts: [requirement],
  ...(extensions && { extensions }),
});

const scheme: PaymentScheme = {
  scheme: "exact",
  networks: ["eip155:*"],
  x402Versions: [1, 2],
  payer: "0x0000000000000000000000000000000000000001",
  v1Networks: { "base-sepolia": "eip155:84532" },
  knownAssets: [{ network: "eip155:84532", address: requirement.asset, decimals: 6, symbol: "USDC" }],
  check: () => undefined,
  createPayload: async () => ({ payload: { signature: "0xsigned" } }),
};

/** The payload x402-pay sends for a 402 with these extensions, from a client with these service codes. */
async function payloadFor(extensions: Record<string, unknown> | undefined, codes?: string | string[]) {
  const client = createX402Client({ schemes: [scheme], plugins: codes === undefined ? [] : [builderCode(codes)] });
  const challenge = parseChallenge({ header: encodeBase64Json(paymentRequired(extensions)) });
  return (await engineOf(client).createPayment(challenge, request)).payload as Record<string, any>;
}

/** What the reference facilitator writes into the settlement calldata for this payload, decoded. */
function attribution(payload: Record<string, unknown>) {
  const suffix = new BuilderCodeFacilitatorExtension({ builderCode: "bc_facilitator" }).buildDataSuffix({
    paymentPayload: payload as never,
    paymentRequirements: requirement as never,
  });
  return suffix && parseBuilderCodeSuffixFromCalldata(`0xa9059cbb${suffix.slice(2)}`);
}

const referenceServer = new x402ResourceServer();

describe("builder-code", () => {
  it("declared by the server and no codes of ours: echoed exactly as declared", async () => {
    const declaration = declareBuilderCodeExtension("bc_weather", ["bc_server_sdk"]);
    const payload = await payloadFor({ "builder-code": declaration });
    expect(JSON.stringify(payload.extensions["builder-code"])).toBe(JSON.stringify(declaration));
    expect(
      referenceServer.validateExtensions(paymentRequired({ "builder-code": declaration }) as never, payload as never),
    ).toEqual({ valid: true });
    expect(attribution(payload)).toEqual({ a: "bc_weather", w: "bc_facilitator", s: ["bc_server_sdk"] });
  });

  it("declared, with codes of ours: ours first, then the server's, its app code and schema unchanged", async () => {
    const declaration = declareBuilderCodeExtension("bc_weather", ["bc_server_sdk", "bc_shared"]);
    const payload = await payloadFor({ "builder-code": declaration }, ["bc_agent", "bc_shared"]);
    expect(payload.extensions["builder-code"]).toEqual({
      info: { a: "bc_weather", s: ["bc_agent", "bc_shared", "bc_server_sdk"] },
      schema: declaration.schema,
    });
    expect(
      referenceServer.validateExtensions(paymentRequired({ "builder-code": declaration }) as never, payload as never),
    ).toEqual({ valid: true });
    expect(attribution(payload)).toEqual({
      a: "bc_weather",
      w: "bc_facilitator",
      s: ["bc_agent", "bc_shared", "bc_server_sdk"],
    });
  });

  it("a single code, given as a string, beside a server's single code given as a string", async () => {
    const payload = await payloadFor({ "builder-code": { info: { a: "bc_weather", s: "bc_server_sdk" } } }, "bc_agent");
    expect(payload.extensions["builder-code"].info).toEqual({ a: "bc_weather", s: ["bc_agent", "bc_server_sdk"] });
  });

  it.each([{ s: [7, "bc_server"] }, { s: { bc_server: true } }, { s: ["BC_Server"] }, { s: "bc-server" }])(
    "a declaration whose s is malformed (%o) goes back exactly as declared, without our codes (mixing ours into it would change what the seller checks)",
    async (info) => {
      const declaration = { info: { a: "bc_weather", ...info } };
      const payload = await payloadFor({ "builder-code": declaration }, ["bc_agent"]);
      expect(payload.extensions["builder-code"]).toEqual(declaration);
      expect(
        referenceServer.validateExtensions(paymentRequired({ "builder-code": declaration }) as never, payload as never),
      ).toEqual({ valid: true });
    },
  );

  it("not declared: our codes alone, and never an app code (the reference seller takes it)", async () => {
    const payload = await payloadFor(undefined, ["bc_agent", "bc_mcp"]);
    expect(payload.extensions).toEqual({ "builder-code": { info: { s: ["bc_agent", "bc_mcp"] } } });
    expect(referenceServer.validateExtensions(paymentRequired() as never, payload as never)).toEqual({ valid: true });
    expect(attribution(payload)).toEqual({ w: "bc_facilitator", s: ["bc_agent", "bc_mcp"] });
  });

  it("no codes given ([]): nothing added", async () => {
    expect(await payloadFor(undefined, [])).not.toHaveProperty("extensions");
  });

  it("5 of ours beside 5 of the server's fit; beside a server that declared 6 (past its reservation), ours are left out so the payment still passes", async () => {
    const ours = ["bc_c1", "bc_c2", "bc_c3", "bc_c4", "bc_c5"];
    const five = declareBuilderCodeExtension("bc_weather", ["bc_s1", "bc_s2", "bc_s3", "bc_s4", "bc_s5"]);
    const fits = await payloadFor({ "builder-code": five }, ours);
    expect(fits.extensions["builder-code"].info.s).toHaveLength(10);
    expect(
      referenceServer.validateExtensions(paymentRequired({ "builder-code": five }) as never, fits as never),
    ).toEqual({ valid: true });

    const six = { ...five, info: { a: "bc_weather", s: [...five.info.s!, "bc_s6"] } };
    const crowded = await payloadFor({ "builder-code": six }, ours);
    expect(crowded.extensions["builder-code"]).toEqual(six);
    expect(
      referenceServer.validateExtensions(paymentRequired({ "builder-code": six }) as never, crowded as never),
    ).toEqual({ valid: true });
  });

  it("v1: nothing added", async () => {
    const client = createX402Client({ schemes: [scheme], plugins: [builderCode("bc_agent")] });
    const v1 = {
      ...requirement,
      network: "base-sepolia",
      maxAmountRequired: "1000",
      resource: request.url,
      description: "",
      mimeType: "",
      maxTimeoutSeconds: 60,
    };
    const challenge = parseChallenge({ header: encodeBase64Json({ x402Version: 1, accepts: [v1] }) });
    const { payload } = await engineOf(client).createPayment(challenge, request);
    expect(Object.keys(payload)).toEqual(["x402Version", "scheme", "network", "payload"]);
  });

  it.each([
    {
      codes: "BC_Agent",
      message: 'builderCode: "BC_Agent" is not a builder code: 1 to 32 characters of a-z, 0-9 and _.',
    },
    {
      codes: ["bc_agent", ""],
      message: 'builderCode: "" is not a builder code: 1 to 32 characters of a-z, 0-9 and _.',
    },
    {
      codes: ["a".repeat(33)],
      message: `builderCode: "${"a".repeat(33)}" is not a builder code: 1 to 32 characters of a-z, 0-9 and _.`,
    },
    {
      codes: ["bc-agent"],
      message: 'builderCode: "bc-agent" is not a builder code: 1 to 32 characters of a-z, 0-9 and _.',
    },
    { codes: [7], message: "builderCode: 7 is not a builder code: 1 to 32 characters of a-z, 0-9 and _." },
    {
      codes: ["c1", "c2", "c3", "c4", "c5", "c6"],
      message: "builderCode: 6 service codes, more than the 5 a client may add.",
    },
  ])("$codes: INVALID_CONFIG", ({ codes, message }) => {
    expect(() => builderCode(codes as never)).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", message, details: { option: "builderCode" } }),
    );
  });

  it("32 characters and the same code twice are fine (sent once)", async () => {
    const payload = await payloadFor(undefined, ["a".repeat(32), "a".repeat(32)]);
    expect(payload.extensions["builder-code"].info.s).toEqual(["a".repeat(32)]);
  });
});
