/**
 * sign-in-with-x without HTTP: the message text byte for byte against the reference's golden vectors
 * (and against its builder on generated fields), the refusals before signing, chain choice, the
 * store of paid routes, and the wallets.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createSIWxMessage } from "@x402/extensions/sign-in-with-x";
import fc from "fast-check";
import { createWalletClient, custom, verifyMessage } from "viem";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createX402Client, memoryLedger, signInWithX, type X402Plugin } from "../../src";
import { encodeBase64Json, parseChallenge, type PaymentChallenge } from "../../src/entries/protocol";
import { eip1193Signer, exactEvm } from "../../src/evm";
import { CLOCK_SKEW_SECONDS, MAX_AGE_SECONDS } from "../../src/extensions/sign-in-with-x";
import {
  checkDeclaration,
  chooseChain,
  type Declaration,
  type SignInWallet,
} from "../../src/extensions/sign-in-with-x/challenge";
import { formatMessage, messageProblem } from "../../src/extensions/sign-in-with-x/message";
import { memoryStore, paidKey } from "../../src/extensions/sign-in-with-x/store";
import { toSolanaMessageSigner } from "../../src/extensions/sign-in-with-x/wallets";
import { SIGN_IN, countingEvmWallet, countingSolanaWallet, siwxVectors, verifyEd25519 } from "../support/siwx";
import { buyer } from "../support/svm";
import { account, countingSigner } from "../support/wallets";
import { getBase58Decoder, getBase58Encoder } from "@solana/kit";

const { vectors } = siwxVectors;
const family = (chainId: string) => (chainId.startsWith("solana:") ? "solana" : "evm");

afterEach(() => vi.restoreAllMocks());

// ---------------------------------------------------------------- messages

describe("messages: byte for byte the reference's (golden vectors)", () => {
  it.each(vectors.map((v) => [v.name, v] as const))("%s", (_, v) => {
    const fields = { ...v.info, chainId: v.chain.chainId } as never;
    expect(messageProblem(family(v.chain.chainId), fields)).toBeUndefined();
    expect(formatMessage(family(v.chain.chainId), fields, v.address)).toBe(v.message);
  });

  it("the vectors hold the rules wire.md §6.3 states", () => {
    const [spec, server, noPort, all, emptyResources, emptyStatement, solana, solanaServer, , solanaEmpty] =
      vectors.map((v) => v.message);
    expect(spec).toContain(`${siwxVectors.evmAddress}\n\nSign in to access premium data\n\nURI: `);
    expect(server).toContain(`${siwxVectors.evmAddress}\n\n\nURI: `); // no statement: two blank lines
    expect(noPort).not.toContain("Resources:");
    expect(all).toMatch(/Not Before: .*\nRequest ID: req-42\nResources:\n- https.*\n- ipfs:/);
    expect(emptyResources!.endsWith("\nResources:")).toBe(true);
    expect(emptyStatement).toContain(`${siwxVectors.evmAddress}\n\n\n\nURI: `); // "" is three
    expect(solana).toContain("Chain ID: 5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp\n");
    expect(solanaServer).toContain(`${siwxVectors.solanaAddress}\n\nURI: `); // one blank line
    expect(solanaEmpty).not.toMatch(/Resources|\n\n\n/);
    for (const message of vectors.map((v) => v.message)) expect(message.endsWith("\n")).toBe(false);
  });

  it("are what the installed reference makes (scripts/siwx-vectors.mjs --check)", () => {
    const root = fileURLToPath(new URL("../../", import.meta.url));
    expect(
      execFileSync(process.execPath, ["scripts/siwx-vectors.mjs", "--check"], { cwd: root, encoding: "utf8" }),
    ).toMatch(/is what the reference makes/);
  });

  it("the reference's signatures verify over those messages (EIP-191 and Ed25519)", async () => {
    const base58 = getBase58Encoder();
    for (const v of vectors) {
      if (v.chain.type === "eip191")
        expect(
          await verifyMessage({ address: v.address as never, message: v.message, signature: v.signature as never }),
        ).toBe(true);
      else
        expect(
          verifyEd25519(
            new TextEncoder().encode(v.message),
            new Uint8Array(base58.encode(v.signature)),
            new Uint8Array(base58.encode(v.address)),
          ),
        ).toBe(true);
    }
  });
});

describe("messages that cannot be built", () => {
  const base = vectors[0]!;
  const fields = (over: Record<string, unknown>, chainId = base.chain.chainId) =>
    ({ ...base.info, chainId, ...over }) as never;

  it.each([
    ["a uri with a space", { uri: "https://api.example.com/a b" }, /uri/],
    ["a uri with braces in the query", { uri: "https://api.example.com/x?q={a}" }, /uri/],
    ["a statement with %", { statement: "100% sure" }, /statement/],
    ["a statement with a line break", { statement: "one\ntwo" }, /statement/],
    ["a request id with a space", { requestId: "a b" }, /requestId/],
    ["a resource that is no URI", { resources: ["not a uri"] }, /resources\[0\]/],
    ["version 2", { version: "2" }, /version 1 only/],
  ])("EVM: %s", (_, over, problem) => {
    expect(messageProblem("evm", fields(over))).toMatch(problem);
  });

  it("EVM: a chain id that is no number, or beyond what a message prints exactly", () => {
    expect(messageProblem("evm", fields({}, "eip155:0x1"))).toMatch(/not an EVM chain id/);
    expect(messageProblem("evm", fields({}, "eip155:1234567890123456"))).toMatch(/not an EVM chain id/);
    expect(messageProblem("evm", fields({}, "eip155:0123"))).toBeUndefined();
    // Leading zeros are dropped, as the reference's parseInt does.
    expect(formatMessage("evm", fields({}, "eip155:0123"), account.address)).toContain("\nChain ID: 123\n");
  });

  it("Solana: only a line break stops a message (the reference builds anything else)", () => {
    const solana = (over: Record<string, unknown>) => fields(over, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
    expect(messageProblem("solana", solana({ statement: "100% sure {ok}" }))).toBeUndefined();
    expect(messageProblem("solana", solana({ statement: "one\r\ntwo" }))).toMatch(/statement contains a line break/);
    // A carriage return alone breaks a line in a wallet's display as well.
    expect(messageProblem("solana", solana({ statement: "one\rURI: https://evil.example" }))).toMatch(
      /statement contains a line break/,
    );
    expect(messageProblem("solana", solana({ requestId: "r\r1" }))).toMatch(/requestId contains a line break/);
    expect(messageProblem("solana", solana({ resources: ["a", "b\nc"] }))).toMatch(/resources\[1\]/);
    expect(messageProblem("solana", fields({}, "solana:"))).toMatch(/not a Solana CAIP-2/);
  });

  it("EVM: buildable exactly when the reference's EIP-4361 builder accepts, and then the same text (generated fields)", () => {
    // One field at a time: characters the grammar allows, or those with one character it may not.
    const chars = (good: string, bad: string) => {
      const allowed = fc.string({ unit: fc.constantFrom(...good), maxLength: 10 });
      return fc.oneof(
        allowed,
        fc.tuple(allowed, fc.constantFrom(...bad), allowed).map((parts) => parts.join("")),
      );
    };
    const uri = fc
      .tuple(
        fc.constantFrom("https://api.example.com", "http://127.0.0.1:4021", "urn:", "ipfs://x"),
        chars("aZ09-._~!$&'()*+,;=:@/?#%", '[]{} |"<>^`\\'),
      )
      .map(([a, b]) => a + b);
    const field = fc.oneof(
      fc.record({ uri }),
      fc.record({ statement: chars(" aZ09!#$&'()*+,-./:;=?@[]_~", '"%<>\\^`{|}é\n') }),
      fc.record({ requestId: chars("aZ09-._~!$&'()*+,;=:@%", "/ ?#[") }),
      fc.record({ resources: fc.array(uri, { maxLength: 3 }) }),
      fc.record({ version: fc.constantFrom("1", "2", "") }),
    );
    let built = 0;
    fc.assert(
      fc.property(field, (over) => {
        const info = { ...base.info, ...over, chainId: "eip155:8453" };
        let reference: string | undefined;
        try {
          reference = createSIWxMessage(info as never, account.address);
        } catch {
          reference = undefined;
        }
        const ours = messageProblem("evm", info as never)
          ? undefined
          : formatMessage("evm", info as never, account.address);
        expect(ours).toBe(reference);
        if (ours) built++;
      }),
      { numRuns: 400 },
    );
    expect(built).toBeGreaterThan(80);
    expect(built).toBeLessThan(320);
  });
});

// ---------------------------------------------------------------- refusals

describe("refusals before signing", () => {
  const url = "http://127.0.0.1:4021/weather?city=Paris";
  const now = Date.parse("2025-02-27T16:00:00.000Z");
  const request = { url, method: "GET" };
  const declaration = (
    info: Record<string, unknown> = {},
    supportedChains: unknown = [{ chainId: "eip155:84532", type: "eip191" }],
  ) => ({
    info: {
      domain: "127.0.0.1:4021",
      uri: url,
      version: "1",
      nonce: "0f1e2d3c4b5a6978",
      issuedAt: "2025-02-27T16:00:00.000Z",
      ...info,
    },
    supportedChains,
  });
  const refusal = (d: unknown, at = now, req = request) => {
    try {
      checkDeclaration(d, req, at);
    } catch (error) {
      return error as { code: string; details: { reason: string; url: string }; message: string };
    }
    return undefined;
  };
  const at = (iso: string) => Date.parse(iso);

  it("accepts the domain with or without the port of the request's own host", () => {
    expect(refusal(declaration())).toBeUndefined();
    expect(refusal(declaration({ domain: "127.0.0.1" }))).toBeUndefined();
    expect(
      refusal(declaration({ domain: "API.example.com", uri: "https://api.example.com/x" }), now, {
        url: "https://api.example.com/x",
        method: "GET",
      }),
    ).toBeUndefined();
    // The default port, written or not.
    expect(
      refusal(declaration({ domain: "api.example.com:443", uri: "https://api.example.com/x" }), now, {
        url: "https://api.example.com/x",
        method: "GET",
      }),
    ).toBeUndefined();
  });

  it.each([
    ["another host", "evil.example"],
    ["another port of the same host", "127.0.0.1:4022"],
    ["a subdomain", "a.127.0.0.1"],
    ["the host inside a longer name", "127.0.0.1.evil.example"],
    ["the host under www", "www.127.0.0.1"],
    ["the host with a trailing dot", "127.0.0.1."],
    ["a scheme in front", "http://127.0.0.1:4021"],
    ["nothing", ""],
  ])("refuses a domain naming %s (the phishing guard)", (_, domain) => {
    const error = refusal(declaration({ domain }));
    expect(error).toMatchObject({ code: "SIGN_IN_REFUSED", details: { reason: "domain_mismatch", url } });
    expect(error!.message).toMatch(/Nothing was signed or paid\.$/);
  });

  it.each([
    ["another origin", "https://evil.example/weather"],
    ["another scheme", "https://127.0.0.1:4021/weather"],
    ["another port", "http://127.0.0.1:4022/weather"],
    ["no URL", "weather"],
  ])("refuses a uri on %s", (_, uri) => {
    expect(refusal(declaration({ uri }))).toMatchObject({ details: { reason: "uri_mismatch" } });
  });

  it("issuedAt: up to 60 s ahead is clock skew, more is refused; older than 5 minutes (plus skew) is refused", () => {
    expect(CLOCK_SKEW_SECONDS).toBe(60);
    expect(MAX_AGE_SECONDS).toBe(300);
    expect(refusal(declaration(), now - 60_000)).toBeUndefined();
    expect(refusal(declaration(), now - 61_000)).toMatchObject({ details: { reason: "issued_in_future" } });
    expect(refusal(declaration(), now + 360_000)).toBeUndefined();
    expect(refusal(declaration(), now + 361_000)).toMatchObject({ details: { reason: "issued_too_long_ago" } });
  });

  it("expirationTime already past (beyond skew) and notBefore still ahead are refused", () => {
    expect(refusal(declaration({ expirationTime: "2025-02-27T15:59:01.000Z" }))).toBeUndefined();
    expect(refusal(declaration({ expirationTime: "2025-02-27T15:58:59.000Z" }))).toMatchObject({
      details: { reason: "expired" },
    });
    expect(refusal(declaration({ notBefore: "2025-02-27T16:01:00.000Z" }))).toBeUndefined();
    expect(refusal(declaration({ notBefore: "2025-02-27T16:01:01.000Z" }))).toMatchObject({
      details: { reason: "not_yet_valid" },
    });
    expect(at("2025-02-27T16:00:00+01:00")).toBe(now - 3_600_000);
    expect(refusal(declaration({ issuedAt: "2025-02-27T17:00:00+01:00" }))).toBeUndefined();
  });

  it("each refusal says what was wrong, in a sentence naming the value", () => {
    const said = (d: unknown, at = now, req = request) => refusal(d, at, req)!.message;
    expect(said(declaration({ uri: "https://evil.example/w" }))).toBe(
      "Sign-in refused: the challenge's uri https://evil.example/w is not on http://127.0.0.1:4021. Nothing was signed or paid.",
    );
    expect(said(declaration({ nonce: "x-1234567" }))).toContain(
      "the nonce x-1234567 is not 8 or more letters and digits (EIP-4361)",
    );
    expect(said(declaration({ issuedAt: "yesterday" }))).toContain(
      "its issuedAt yesterday is not an RFC 3339 date-time",
    );
    expect(said(declaration(), now - 61_000)).toContain(
      "issued at 2025-02-27T16:00:00.000Z, ahead of this clock by more than 60 s",
    );
    expect(said(declaration(), now + 361_000)).toContain("more than 5 minutes ago (a stale or replayed 402)");
    expect(said(declaration({ expirationTime: "2025-02-27T15:58:00.000Z" }))).toContain(
      "the challenge expired at 2025-02-27T15:58:00.000Z",
    );
    expect(said(declaration({ notBefore: "2025-02-27T16:05:00.000Z" }))).toContain(
      "the challenge is not valid before 2025-02-27T16:05:00.000Z",
    );
    expect(said({ info: [] })).toContain("the sign-in-with-x declaration has no valid info");
    // A nonce that only ends in 8 letters and digits is still weak.
    expect(refusal(declaration({ nonce: "-a1b2c3d4e5" }))).toMatchObject({ details: { reason: "weak_nonce" } });
    // An expiry exactly at the edge of the skew is still valid.
    expect(refusal(declaration({ expirationTime: "2025-02-27T15:59:00.000Z" }))).toBeUndefined();
  });

  it("the default port of http is 80, written or not", () => {
    const plain = { url: "http://api.example.com/x", method: "GET" };
    expect(refusal(declaration({ domain: "api.example.com:80", uri: plain.url }), now, plain)).toBeUndefined();
    expect(refusal(declaration({ domain: "api.example.com:443", uri: plain.url }), now, plain)).toMatchObject({
      details: { reason: "domain_mismatch" },
    });
  });

  it.each([["a1b2c3d"], ["a1b2c3d4-e5f6"], ["a1b2 c3d4e5"], [""]])(
    "refuses the nonce %j (EIP-4361: 8 or more letters and digits)",
    (nonce) => {
      expect(refusal(declaration({ nonce }))).toMatchObject({ details: { reason: "weak_nonce" } });
    },
  );

  it.each([
    ["no declaration", undefined],
    ["no info", { supportedChains: [] }],
    ["a domain that is no string", declaration({ domain: 1 })],
    ["no nonce", declaration({ nonce: undefined })],
    ["a statement that is no string", declaration({ statement: 5 })],
    ["resources that are not strings", declaration({ resources: [1] })],
    ["no supportedChains", declaration({}, null)],
    ["an issuedAt that is no RFC 3339 date-time", declaration({ issuedAt: "Thu, 27 Feb 2025 16:00:00 GMT" })],
    ["an impossible date", declaration({ issuedAt: "2025-02-30T16:00:00Z" })],
    ["an expirationTime that is no date", declaration({ expirationTime: "soon" })],
  ])("refuses a malformed declaration: %s", (_, d) => {
    expect(refusal(d)).toMatchObject({ code: "SIGN_IN_REFUSED", details: { reason: "malformed" } });
  });

  it.each([
    ["info", undefined],
    ["info", "x"],
    ["info", { supportedChains: [] }],
    ["info", { info: [], supportedChains: [] }],
    ["domain", declaration({ domain: 1 })],
    ["issuedAt", declaration({ issuedAt: null })],
    ["statement", declaration({ statement: 5 })],
    ["requestId", declaration({ requestId: null })],
    ["resources", declaration({ resources: "https://x" })],
    ["resources", declaration({ resources: ["https://x", 2] })],
    ["supportedChains", declaration({}, null)],
    ["supportedChains", declaration({}, { 0: {} })],
    // The first problem, in the schema's order, is the one named.
    ["uri", declaration({ uri: 1, nonce: 2 }, null)],
  ])("names the field the declaration's first problem is in: %s", (field, d) => {
    expect(refusal(d)?.message).toBe(
      `Sign-in refused: the sign-in-with-x declaration has no valid ${field}. Nothing was signed or paid.`,
    );
  });

  it("keeps only well-formed supportedChains entries", () => {
    const kept = { chainId: "eip155:1", type: "eip191", signatureScheme: 7 };
    const checked = checkDeclaration(
      declaration({}, [kept, { chainId: 1 }, null, "x", [], { chainId: "eip155:2" }, { type: "eip191" }]),
      request,
      now,
    );
    expect(checked.chains).toEqual([kept]);
  });
});

// ---------------------------------------------------------------- chain choice

describe("chain choice", () => {
  const info = {
    domain: "api.example.com",
    uri: "https://api.example.com/x",
    version: "1",
    nonce: "abcdefgh12",
    issuedAt: "2025-02-27T16:00:00Z",
  };
  const evm: SignInWallet = { family: "evm", address: account.address, sign: async () => "0x" };
  const sol: SignInWallet = { family: "solana", address: buyer.address, sign: async () => "" };
  const choose = (
    chains: { chainId: string; type: string }[],
    wallets: SignInWallet[],
    preferred: string[] = [],
    over = {},
  ) => chooseChain({ info: { ...info, ...over }, chains } as Declaration, wallets, preferred);
  const chosen = (choice: ReturnType<typeof choose>) => ("chain" in choice ? choice.chain.chainId : choice.reasons);

  it("skips a non-EVM chain the server marked eip191 (the reference picks it, then fails)", () => {
    const chains = [
      { chainId: "stellar:testnet", type: "eip191" },
      { chainId: "eip155:8453", type: "eip191" },
    ];
    expect(chosen(choose(chains, [evm]))).toBe("eip155:8453");
  });

  it("prefers the payment's network, then the server's order", () => {
    const chains = [
      { chainId: "eip155:1", type: "eip191" },
      { chainId: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", type: "ed25519" },
      { chainId: "eip155:8453", type: "eip191" },
    ];
    expect(chosen(choose(chains, [evm, sol]))).toBe("eip155:1");
    expect(chosen(choose(chains, [evm, sol], ["eip155:8453"]))).toBe("eip155:8453");
    expect(chosen(choose(chains, [evm, sol], ["solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "eip155:8453"]))).toBe(
      "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    );
    expect(chosen(choose(chains, [sol], ["eip155:8453"]))).toBe("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
  });

  it("never a chain whose message cannot be built, nor one of the wrong type", () => {
    const chains = [
      { chainId: "eip155:8453", type: "eip191" },
      { chainId: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", type: "ed25519" },
    ];
    // A uri the EIP-4361 grammar refuses: the Solana message can still be built.
    expect(chosen(choose(chains, [evm, sol], [], { uri: "https://api.example.com/x?q={a}" }))).toBe(
      "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    );
    expect(chosen(choose([{ chainId: "eip155:8453", type: "ed25519" }], [evm]))).toEqual([
      "eip155:8453: its type is ed25519, not eip191",
    ]);
  });

  it("says why, chain by chain, when none will do", () => {
    const chains = [
      { chainId: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", type: "ed25519" },
      { chainId: "cosmos:hub", type: "eip191" },
    ];
    expect(chosen(choose(chains, [evm]))).toEqual([
      "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1: no Solana wallet that may sign in is registered",
      "cosmos:hub: x402-pay signs in on eip155 and solana chains only",
    ]);
    expect(
      chosen(
        choose(
          [
            { chainId: "constructor:x", type: "eip191" },
            { chainId: "__proto__:x", type: "eip191" },
          ],
          [evm],
        ),
      ),
    ).toEqual([
      "constructor:x: x402-pay signs in on eip155 and solana chains only",
      "__proto__:x: x402-pay signs in on eip155 and solana chains only",
    ]);
  });

  it("the message names the chosen wallet and chain", () => {
    const choice = choose([{ chainId: "eip155:8453", type: "eip191" }], [evm]);
    expect("message" in choice && choice.message).toMatch(
      /^api\.example\.com wants you to sign in with your Ethereum account:\n0xf39F.*\n[\s\S]*Chain ID: 8453\n/,
    );
  });
});

// ---------------------------------------------------------------- the extension on its own

/** A parsed challenge for `url` declaring sign-in with `info` on `chains`, with `accepts`. */
function challengeOf(
  url: string,
  info: Record<string, unknown>,
  chains: unknown[],
  accepts: unknown[] = [],
): PaymentChallenge {
  return parseChallenge({
    header: encodeBase64Json({
      x402Version: 2,
      resource: { url },
      accepts,
      extensions: { [SIGN_IN]: { info, supportedChains: chains } },
    }),
  });
}

async function headersFrom(extension: X402Plugin, challenge: PaymentChallenge, url: string) {
  return extension.beforePayment!({
    declaration: challenge.extensions![SIGN_IN],
    challenge,
    request: { url, method: "GET" },
  });
}

describe("the header: byte for byte the reference's (golden vectors)", () => {
  it.each(vectors.map((v) => [v.name, v] as const))("%s", async (_, v) => {
    vi.spyOn(Date, "now").mockReturnValue(Date.parse(v.info.issuedAt));
    const extension = signInWithX(v.chain.type === "eip191" ? { evm: account } : { solana: buyer });
    const headers = await headersFrom(extension, challengeOf(v.url, v.info, [v.chain]), v.url);
    expect(headers).toEqual({ [SIGN_IN]: v.header });
  });

  it("a WalletClient whose account is written in lower case signs the checksummed message", async () => {
    const v = vectors[1]!;
    vi.spyOn(Date, "now").mockReturnValue(Date.parse(v.info.issuedAt));
    const requests: unknown[] = [];
    const wallet = createWalletClient({
      account: account.address.toLowerCase() as `0x${string}`,
      transport: custom({
        async request({ method, params }) {
          requests.push({ method, params });
          if (method !== "personal_sign") throw new Error(`unexpected ${method}`);
          return account.signMessage({ message: { raw: params[0] } });
        },
      }),
    });
    const headers = await headersFrom(signInWithX({ evm: wallet }), challengeOf(v.url, v.info, [v.chain]), v.url);
    expect(headers).toEqual({ [SIGN_IN]: v.header });
    expect(requests).toEqual([
      { method: "personal_sign", params: [expect.stringMatching(/^0x/), account.address.toLowerCase()] },
    ]);
  });
});

describe("signInWithX: when to sign in", () => {
  const url = "https://api.example.com/premium-data";
  const info = () => ({
    domain: "api.example.com",
    uri: url,
    version: "1",
    nonce: "a1b2c3d4e5f67890",
    issuedAt: new Date().toISOString(),
    resources: [url],
  });
  const requirement = {
    scheme: "exact",
    network: "eip155:8453",
    amount: "1000",
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
    maxTimeoutSeconds: 60,
    extra: { name: "USD Coin", version: "2" },
  };
  const paidRoute = () => challengeOf(url, info(), [{ chainId: "eip155:8453", type: "eip191" }], [requirement]);
  const settled = (payer: string, receiptUrl = url) =>
    ({
      settled: true,
      receipt: { url: receiptUrl, payer, network: "eip155:8453", settled: true },
      challenge: paidRoute(),
      request: { url, method: "GET" },
    }) as never;

  it("a first visit to a paid route: no sign-in, nothing signed", async () => {
    const { wallet, messages } = countingEvmWallet();
    expect(await headersFrom(signInWithX({ evm: wallet }), paidRoute(), url)).toBeUndefined();
    expect(messages).toEqual([]);
  });

  it("after a settled payment by this wallet (any query), it signs in on that path; not on another path or origin", async () => {
    const { wallet, messages } = countingEvmWallet();
    const extension = signInWithX({ evm: wallet });
    await extension.onOutcome!(settled(account.address.toLowerCase(), `${url}?page=2`));
    expect(await headersFrom(extension, paidRoute(), url)).toEqual({ [SIGN_IN]: expect.any(String) });
    expect(messages).toHaveLength(1);
    const other = "https://api.example.com/other";
    expect(
      await headersFrom(
        extension,
        challengeOf(other, { ...info(), uri: other }, [{ chainId: "eip155:8453", type: "eip191" }], [requirement]),
        other,
      ),
    ).toBeUndefined();
    const elsewhere = "https://api.example.org/premium-data";
    expect(
      await headersFrom(
        extension,
        challengeOf(
          elsewhere,
          { ...info(), domain: "api.example.org", uri: elsewhere },
          [{ chainId: "eip155:8453", type: "eip191" }],
          [requirement],
        ),
        elsewhere,
      ),
    ).toBeUndefined();
    expect(messages).toHaveLength(1);
  });

  it("is not fooled by another wallet's payment, nor by an outcome that did not settle", async () => {
    const { wallet, messages } = countingEvmWallet();
    const extension = signInWithX({ evm: wallet });
    await extension.onOutcome!(settled("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"));
    await extension.onOutcome!({
      settled: true,
      receipt: { url, payer: account.address, network: "eip155:8453", settled: false },
    } as never);
    await extension.onOutcome!({
      settled: false,
      error: {},
      challenge: undefined,
      request: { url, method: "GET" },
    } as never);
    expect(await headersFrom(extension, paidRoute(), url)).toBeUndefined();
    expect(messages).toEqual([]);
  });

  it("an auth-only route (accepts: []) signs in at once", async () => {
    const { wallet, messages } = countingEvmWallet();
    const challenge = challengeOf(url, info(), [{ chainId: "eip155:8453", type: "eip191" }]);
    expect(await headersFrom(signInWithX({ evm: wallet }), challenge, url)).toEqual({ [SIGN_IN]: expect.any(String) });
    expect(messages).toHaveLength(1);
  });

  it("an auth-only route no wallet can sign in on is refused, saying why", async () => {
    const { wallet, messages } = countingEvmWallet();
    const challenge = challengeOf(url, info(), [
      { chainId: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", type: "ed25519" },
    ]);
    await expect(headersFrom(signInWithX({ evm: wallet }), challenge, url)).rejects.toMatchObject({
      code: "SIGN_IN_REFUSED",
      details: { reason: "unsupported_chain" },
      message: expect.stringMatching(/no Solana wallet/),
    });
    expect(messages).toEqual([]);
  });

  it("supportedChains: [] offers no chain: an auth-only route is refused, a paid one pays; nothing is signed", async () => {
    const { wallet, messages } = countingEvmWallet();
    const extension = signInWithX({ evm: wallet });
    await expect(headersFrom(extension, challengeOf(url, info(), []), url)).rejects.toMatchObject({
      code: "SIGN_IN_REFUSED",
      details: { reason: "unsupported_chain" },
    });
    await extension.onOutcome!(settled(account.address));
    expect(await headersFrom(extension, challengeOf(url, info(), [], [requirement]), url)).toBeUndefined();
    expect(messages).toEqual([]);
  });

  it("a paid route whose chains no wallet can sign in on pays instead (no refusal)", async () => {
    const { wallet, messages } = countingEvmWallet();
    const extension = signInWithX({ evm: wallet });
    await extension.onOutcome!(settled(account.address));
    const challenge = challengeOf(
      url,
      info(),
      [{ chainId: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", type: "ed25519" }],
      [requirement],
    );
    expect(await headersFrom(extension, challenge, url)).toBeUndefined();
    expect(messages).toEqual([]);
  });

  it("a route whose every requirement is malformed is not auth-only: a wallet that never paid does not sign in", async () => {
    const { wallet, messages } = countingEvmWallet();
    const challenge = challengeOf(url, info(), [{ chainId: "eip155:8453", type: "eip191" }], [{ scheme: "exact" }]);
    expect(challenge.invalid).toHaveLength(1);
    expect(await headersFrom(signInWithX({ evm: wallet }), challenge, url)).toBeUndefined();
    expect(messages).toEqual([]);
  });

  it("only the wallet that paid signs in: another registered wallet does not, even on a chain only it could sign", async () => {
    const evm = countingEvmWallet();
    const solana = countingSolanaWallet();
    const extension = signInWithX({ evm: evm.wallet, solana: solana.wallet });
    await extension.onOutcome!(settled(account.address));
    const onSolanaOnly = challengeOf(
      url,
      info(),
      [{ chainId: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", type: "ed25519" }],
      [requirement],
    );
    expect(await headersFrom(extension, onSolanaOnly, url)).toBeUndefined();
    expect([evm.messages, solana.messages]).toEqual([[], []]);
  });

  it("a payment the ledger holds as unknown, rejected or refused does not count as paid; a settled one does", async () => {
    for (const outcome of ["unknown", "rejected", "refused"] as const) {
      const ledger = memoryLedger();
      await ledger.append({
        id: "1",
        time: new Date().toISOString(),
        outcome,
        url,
        method: "GET",
        payer: account.address,
        network: "eip155:8453",
      });
      const { wallet, messages } = countingEvmWallet();
      expect(await headersFrom(signInWithX({ evm: wallet, store: ledger }), paidRoute(), url)).toBeUndefined();
      expect(messages).toEqual([]);
    }
    const ledger = memoryLedger();
    await ledger.append({
      id: "1",
      time: new Date().toISOString(),
      outcome: "settled",
      url,
      method: "GET",
      payer: account.address,
      network: "eip155:8453",
    });
    expect(
      await headersFrom(signInWithX({ evm: countingEvmWallet().wallet, store: ledger }), paidRoute(), url),
    ).toEqual({ [SIGN_IN]: expect.any(String) });
  });

  it("the proof names a signatureScheme only when it is one the reference knows", async () => {
    const schemeIn = async (signatureScheme: unknown) => {
      const chain = { chainId: "eip155:8453", type: "eip191", signatureScheme };
      const headers = await headersFrom(signInWithX({ evm: account }), challengeOf(url, info(), [chain]), url);
      return JSON.parse(Buffer.from(headers![SIGN_IN]!, "base64").toString("utf8")).signatureScheme;
    };
    expect(await schemeIn("eip1271")).toBe("eip1271");
    expect(await schemeIn("eip191")).toBe("eip191");
    expect(await schemeIn("evil")).toBeUndefined();
  });

  it("a refused challenge on a route paid before throws before the wallet is asked", async () => {
    const { wallet, messages } = countingEvmWallet();
    const extension = signInWithX({ evm: wallet });
    await extension.onOutcome!(settled(account.address));
    const challenge = challengeOf(
      url,
      { ...info(), domain: "evil.example" },
      [{ chainId: "eip155:8453", type: "eip191" }],
      [requirement],
    );
    await expect(headersFrom(extension, challenge, url)).rejects.toMatchObject({
      code: "SIGN_IN_REFUSED",
      details: { reason: "domain_mismatch" },
    });
    expect(messages).toEqual([]);
  });

  it("with both wallets, only the one that paid signs in, on the chain it paid on", async () => {
    const evm = countingEvmWallet();
    const solana = countingSolanaWallet();
    const store = memoryStore();
    await store.set(paidKey(url, buyer.address), "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
    const extension = signInWithX({ evm: evm.wallet, solana: solana.wallet, store });
    const chains = [
      { chainId: "eip155:8453", type: "eip191" },
      { chainId: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", type: "ed25519" },
    ];
    const headers = await headersFrom(extension, challengeOf(url, info(), chains, [requirement]), url);
    const proof = JSON.parse(Buffer.from(headers![SIGN_IN]!, "base64").toString());
    expect([proof.chainId, proof.type, proof.address]).toEqual([
      "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
      "ed25519",
      buyer.address,
    ]);
    expect([evm.messages.length, solana.messages.length]).toEqual([0, 1]);
  });
});

describe("the store of paid routes", () => {
  it("keys are origin, path and payer: no query, 0x addresses in lower case, base58 as it is", () => {
    expect(paidKey("https://API.example.com:443/a/b?x=1#f", "0xF39FD6E51AAD88F6F4CE6AB8827279CFFFB92266")).toBe(
      "https://api.example.com/a/b 0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    );
    expect(paidKey("http://127.0.0.1:4021/", buyer.address)).toBe(`http://127.0.0.1:4021/ ${buyer.address}`);
  });

  it("the memory store is bounded: past its limit the least recently paid route is forgotten", async () => {
    const store = memoryStore(2);
    await store.set("a", "1");
    await store.set("b", "1");
    await store.set("a", "2"); // paid again: now the most recent
    await store.set("c", "1");
    expect([await store.get("a"), await store.get("b"), await store.get("c")]).toEqual(["2", undefined, "1"]);
  });

  it("a pluggable async store is read and written; one that fails counts as knowing nothing (the request pays)", async () => {
    const url = "https://api.example.com/premium-data";
    const map = new Map<string, string>();
    const store = {
      get: async (key: string) => map.get(key) ?? null,
      set: async (key: string, value: string) => void map.set(key, value),
    };
    const extension = signInWithX({ evm: account, store });
    await extension.onOutcome!({
      settled: true,
      receipt: { url, payer: account.address, network: "eip155:8453", settled: true },
    } as never);
    expect([...map]).toEqual([[`${url} ${account.address.toLowerCase()}`, "eip155:8453"]]);

    const broken = signInWithX({
      evm: account,
      store: { get: () => Promise.reject(new Error("redis down")), set: () => undefined },
    });
    const challenge = challengeOf(
      url,
      {
        domain: "api.example.com",
        uri: url,
        version: "1",
        nonce: "a1b2c3d4e5f67890",
        issuedAt: new Date().toISOString(),
      },
      [{ chainId: "eip155:8453", type: "eip191" }],
      [
        {
          scheme: "exact",
          network: "eip155:8453",
          amount: "1",
          asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
          payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
          maxTimeoutSeconds: 60,
        },
      ],
    );
    expect(await headersFrom(broken, challenge, url)).toBeUndefined();
  });
});

// ---------------------------------------------------------------- configuration and wallets

describe("signInWithX: configuration", () => {
  it.each([
    ["no options", undefined, /needs its wallets/],
    ["no wallet", {}, /at least one wallet/],
    ["an unknown option", { evm: account, wallet: account }, /wallet is not an option/],
    ["a store without set", { evm: account, store: { get: () => undefined } }, /store must have/],
    ["an EVM wallet that cannot sign messages", { evm: countingSigner().signer }, /EVM wallet must sign messages/],
    ["a WalletClient without an account", { evm: { signMessage: async () => "0x" } }, /has no account/],
    [
      "an EVM address that is not one",
      { evm: { address: "0x1234", signMessage: async () => "0x" } },
      /not a 20-byte hex address/,
    ],
    [
      "a Solana wallet that cannot sign messages",
      { solana: { address: buyer.address, signTransactions: async () => [] } },
      /Solana wallet must sign messages/,
    ],
    [
      "a Solana address that is not one",
      { solana: { address: "0x1234", signMessages: async () => [] } },
      /not a base58 address/,
    ],
  ])("%s: INVALID_CONFIG", (_, options, message) => {
    expect(() => signInWithX(options as never)).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringMatching(message) }),
    );
  });

  it("plugs into the client's one seam", () => {
    const extension = signInWithX({ evm: account });
    const client = createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [extension] });
    expect(client.plugins).toEqual([extension]);
    expect(extension.key).toBe("sign-in-with-x");
  });
});

describe("wallets", () => {
  const message = "api.example.com wants you to sign in";

  it("eip1193Signer's signer is an EVM wallet that may sign in", async () => {
    const provider = {
      request: async (args: { method: string }) =>
        args.method === "eth_accounts" ? [account.address.toLowerCase()] : undefined,
    };
    expect(signInWithX({ evm: await eip1193Signer(provider) }).key).toBe(SIGN_IN);
  });

  it("a wallet answering with no hex signature is a SigningError", async () => {
    const url = "https://api.example.com/x";
    const challenge = challengeOf(
      url,
      {
        domain: "api.example.com",
        uri: url,
        version: "1",
        nonce: "a1b2c3d4e5f67890",
        issuedAt: new Date().toISOString(),
      },
      [{ chainId: "eip155:8453", type: "eip191" }],
    );
    const extension = signInWithX({ evm: { address: account.address, signMessage: async () => "signed!" as never } });
    await expect(headersFrom(extension, challenge, url)).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      message: expect.stringMatching(/not a hex signature/),
    });
  });

  it("a kit key pair signer signs the bytes with Ed25519; the signature in base58", async () => {
    const signer = toSolanaMessageSigner(buyer);
    const signature = await signer.sign(message);
    expect(signer.address).toBe(buyer.address);
    expect(
      verifyEd25519(
        new TextEncoder().encode(message),
        new Uint8Array(getBase58Encoder().encode(signature)),
        new Uint8Array(getBase58Encoder().encode(buyer.address)),
      ),
    ).toBe(true);
  });

  it("a kit modifying signer may not change the message", async () => {
    const modifying = {
      address: buyer.address,
      modifyAndSignMessages: async (messages: readonly { content: Uint8Array }[]) => {
        const content = new TextEncoder().encode(`prefix ${new TextDecoder().decode(messages[0]!.content)}`);
        const [signatures] = await buyer.signMessages([{ content, signatures: {} }]);
        return [{ content, signatures: signatures! }];
      },
    };
    await expect(toSolanaMessageSigner(modifying).sign(message)).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      message: expect.stringMatching(/changed the sign-in message/),
    });
    const honest = {
      address: buyer.address,
      modifyAndSignMessages: async (messages: readonly { content: Uint8Array }[]) =>
        buyer.signMessages(messages as never).then(([s]) => [{ content: messages[0]!.content, signatures: s! }]),
    };
    expect(await toSolanaMessageSigner(honest).sign(message)).toMatch(/^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
  });

  it.each([
    ["one byte changed (same length)", (content: Uint8Array) => content.map((b, i) => (i === 0 ? b ^ 1 : b))],
    ["bytes added after the message", (content: Uint8Array) => new Uint8Array([...content, 10, 65])],
    ["bytes dropped from its end", (content: Uint8Array) => content.subarray(0, content.length - 1)],
  ])("a kit modifying signer whose signed message has %s is refused", async (_, change) => {
    const modifying = {
      address: buyer.address,
      modifyAndSignMessages: async (messages: readonly { content: Uint8Array }[]) => {
        const content = change(messages[0]!.content);
        const [signatures] = await buyer.signMessages([{ content, signatures: {} }]);
        return [{ content, signatures: signatures! }];
      },
    };
    await expect(toSolanaMessageSigner(modifying).sign(message)).rejects.toMatchObject({
      message: expect.stringMatching(/changed the sign-in message/),
    });
  });

  it("a Solana address is 32 to 44 base58 characters: a 64-byte secret key given as the address is refused, and not repeated", () => {
    const secret = getBase58Decoder().decode(new Uint8Array(64).fill(9));
    const signer = (address: string) => () => toSolanaMessageSigner({ address, signMessages: async () => [] });
    for (const address of [secret, "1".repeat(45), "1".repeat(31)]) {
      expect(signer(address)).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG", message: expect.not.stringContaining(address) }),
      );
    }
    expect(signer("1".repeat(32))().address).toBe("1".repeat(32));
    expect(signer("1".repeat(44))().address).toBe("1".repeat(44));
  });

  it("a wallet-standard wallet signs with its first account that has solana:signMessage; none connected: no address", async () => {
    const accounts: { address: string; features?: string[] }[] = [];
    const inputs: unknown[] = [];
    const wallet = {
      accounts,
      features: {
        "solana:signMessage": {
          version: "1.1.0",
          signMessage: async (input: { account: unknown; message: Uint8Array }) => {
            inputs.push(input);
            const [signatures] = await buyer.signMessages([{ content: input.message, signatures: {} }]);
            return [{ signedMessage: input.message, signature: signatures![buyer.address] }];
          },
        },
      },
    };
    const signer = toSolanaMessageSigner(wallet);
    expect(signer.address).toBeUndefined();
    await expect(signer.sign("x")).rejects.toMatchObject({ code: "SIGNING_FAILED" });
    accounts.push(
      { address: "11111111111111111111111111111111", features: ["solana:signTransaction"] },
      { address: buyer.address, features: ["solana:signMessage"] },
    );
    expect(signer.address).toBe(buyer.address);
    const signature = await signer.sign(message);
    expect(inputs).toEqual([{ account: accounts[1], message: new TextEncoder().encode(message) }]);
    expect(
      verifyEd25519(
        new TextEncoder().encode(message),
        new Uint8Array(getBase58Encoder().encode(signature)),
        new Uint8Array(getBase58Encoder().encode(buyer.address)),
      ),
    ).toBe(true);
  });

  it("a wallet returning no 64-byte signature is a SigningError", async () => {
    const short = { address: buyer.address, signMessages: async () => [{ [buyer.address]: new Uint8Array(63) }] };
    await expect(toSolanaMessageSigner(short).sign("x")).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      message: expect.stringMatching(/64-byte/),
    });
  });
});
