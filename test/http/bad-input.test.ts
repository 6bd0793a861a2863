/**
 * Hostile and broken input, through both wrappers: every malformed challenge gets a typed X402Error
 * with a stable code and no signature; lenient base64 forms are accepted; no error ever carries key
 * material.
 */
import { getBase58Decoder } from "@solana/kit";
import { HttpResponse } from "msw";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { PaymentRejectedError } from "../../src/entries/errors";
import { createX402Client, isX402Error } from "../../src";
import { exactEvm } from "../../src/evm";
import { exactSvm } from "../../src/svm";
import {
  PATH,
  SELLER,
  challengeResponse,
  countingSigner,
  createSeller,
  encodeHeader,
  payingClient,
  rawHeaderResponse,
  settlementHeader,
  v1Challenge,
  v1Requirement,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { fakeRpc, svmRequirement } from "../support/svm";
import { ANVIL_KEY_0 } from "../support/vectors";
import { countingSvmSigner } from "../support/wallets";
import { axiosWrapper, fetchWrapper, rejection, wrappers, type Wrapper } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();

const url = `${SELLER}${PATH}`;
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/**
 * Serves `answer` to the unpaid request, sends through `wrapper`, and returns the error; asserts nothing was signed or
 * retried.
 */
async function failWith(wrapper: Wrapper, answer: () => Response, axiosAdapter?: "fetch") {
  const seller = createSeller({ intercept: () => answer() });
  server.use(seller.handler);
  const { client, signs } = payingClient();
  const error = await rejection(wrapper.send(client, { url, axiosAdapter }));
  expect(isX402Error(error), String(error)).toBe(true);
  expect(signs).toHaveLength(0);
  expect(seller.requests).toHaveLength(1);
  return error;
}

const envelopeCases: { name: string; answer: () => Response; message: RegExp; axiosAdapter?: "fetch" }[] = [
  {
    name: "undecodable base64 header",
    answer: () => rawHeaderResponse("%%% not base64 %%%"),
    message: /is not base64/,
  },
  {
    name: "base64 of non-JSON",
    answer: () => rawHeaderResponse(b64("this is { not json")),
    message: /does not decode to JSON/,
  },
  {
    name: "base64 of invalid UTF-8",
    answer: () => rawHeaderResponse(Buffer.from([0xff, 0xfe, 0x7b]).toString("base64")),
    message: /UTF-8/,
  },
  { name: "a JSON array", answer: () => rawHeaderResponse(b64("[1,2]")), message: /not a JSON object/ },
  {
    name: "x402Version 3",
    answer: () => challengeResponse(v2Challenge({ x402Version: 3 })),
    message: /Unsupported x402Version 3/,
  },
  {
    name: 'x402Version "2" (a string)',
    answer: () => challengeResponse(v2Challenge({ x402Version: "2" })),
    message: /Unsupported x402Version "2"/,
  },
  {
    name: "missing x402Version",
    answer: () => rawHeaderResponse(encodeHeader({ accepts: [v2Requirement()] })),
    message: /Unsupported x402Version undefined/,
  },
  {
    name: "missing accepts",
    answer: () => rawHeaderResponse(encodeHeader({ x402Version: 2, resource: { url } })),
    message: /accepts/,
  },
  {
    name: "accepts not an array",
    answer: () => challengeResponse(v2Challenge({ accepts: { 0: v2Requirement() } })),
    message: /accepts must be an array/,
  },
  {
    name: "empty resource.url",
    answer: () => challengeResponse(v2Challenge({ resource: { url: "" } })),
    message: /resource\.url/,
  },
  {
    name: "v1 body with a wrong version",
    answer: () => HttpResponse.json({ ...v1Challenge(), x402Version: 7 }, { status: 402 }),
    message: /Unsupported x402Version 7/,
  },
  {
    name: "a PAYMENT-REQUIRED header over 64 KiB",
    answer: () => rawHeaderResponse(encodeHeader(v2Challenge({ resource: { url, description: "x".repeat(70_000) } }))),
    message: /over the 65536-byte limit/,
    // Node's own HTTP parser refuses response headers over 16 KiB before axios's http adapter (or
    // anything above it) sees them; axios's fetch adapter reaches the wrapper.
    axiosAdapter: "fetch",
  },
];

describe.each(wrappers)("$name: a malformed challenge envelope → INVALID_CHALLENGE, nothing signed", (wrapper) => {
  it.each(envelopeCases)("$name", async ({ answer, message, axiosAdapter }) => {
    const error = await failWith(wrapper, answer, axiosAdapter);
    expect(error.code).toBe("INVALID_CHALLENGE");
    expect(error.name).toBe("InvalidChallengeError");
    expect(error.phase).toBe("challenge");
    expect(error.message).toMatch(message);
  });
});

describe("axios on the Node http adapter: a header over Node's 16 KiB limit", () => {
  it("fails in Node's parser as an AxiosError, before anything is signed", async () => {
    const seller = createSeller({ intercept: () => rawHeaderResponse("A".repeat(20_000)) });
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const error = await rejection(axiosWrapper.send(client, { url }));
    expect(isX402Error(error)).toBe(false);
    expect(String(error)).toMatch(/Header overflow/);
    expect(signs).toHaveLength(0);
  });
});

describe.each(wrappers)("$name: no challenge at all → CHALLENGE_NOT_FOUND", (wrapper) => {
  it("an HTML paywall", async () => {
    const error = await failWith(wrapper, () =>
      HttpResponse.html("<!doctype html><html><body>Pay with your wallet</body></html>", { status: 402 }),
    );
    expect(error.code).toBe("CHALLENGE_NOT_FOUND");
    expect(error.name).toBe("ChallengeNotFoundError");
    expect(error.message).toMatch(/HTML/);
  });

  it("an empty 402", async () => {
    const error = await failWith(wrapper, () => new HttpResponse(null, { status: 402 }));
    expect(error.code).toBe("CHALLENGE_NOT_FOUND");
    expect(error.message).toMatch(/Access-Control-Expose-Headers/);
  });

  it("a JSON 402 that is not x402", async () => {
    const error = await failWith(wrapper, () => HttpResponse.json({ message: "pay up" }, { status: 402 }));
    expect(error.code).toBe("CHALLENGE_NOT_FOUND");
  });
});

const requirementCases: {
  name: string;
  version: 1 | 2;
  requirement: Record<string, unknown>;
  code: string;
  reason: RegExp;
}[] = [
  {
    name: 'amount "0.01"',
    version: 2,
    requirement: v2Requirement({ amount: "0.01" }),
    code: "invalid",
    reason: /amount must be a base-10 integer string within uint256/,
  },
  {
    name: 'amount "-1"',
    version: 2,
    requirement: v2Requirement({ amount: "-1" }),
    code: "invalid",
    reason: /amount must be a base-10 integer/,
  },
  {
    name: "amount in hex",
    version: 2,
    requirement: v2Requirement({ amount: "0x2710" }),
    code: "invalid",
    reason: /amount must be a base-10 integer/,
  },
  {
    name: "amount above uint256",
    version: 2,
    requirement: v2Requirement({ amount: (1n << 256n).toString() }),
    code: "invalid",
    reason: /within uint256/,
  },
  {
    name: "amount as a number",
    version: 2,
    requirement: v2Requirement({ amount: 10000 }),
    code: "invalid",
    reason: /amount must be a string/,
  },
  {
    name: "empty amount",
    version: 2,
    requirement: v2Requirement({ amount: "" }),
    code: "invalid",
    reason: /amount must be a base-10 integer/,
  },
  {
    name: 'v1 maxAmountRequired "0.01"',
    version: 1,
    requirement: v1Requirement({ maxAmountRequired: "0.01" }),
    code: "invalid",
    reason: /maxAmountRequired must be a base-10 integer/,
  },
  {
    name: 'network "base" in v2',
    version: 2,
    requirement: v2Requirement({ network: "base" }),
    code: "invalid",
    reason: /network must be a CAIP-2 id/,
  },
  {
    name: 'network "eip155:"',
    version: 2,
    requirement: v2Requirement({ network: "eip155:" }),
    code: "invalid",
    reason: /network must be a CAIP-2 id/,
  },
  {
    name: 'network "eip155:0x14a34"',
    version: 2,
    requirement: v2Requirement({ network: "eip155:0x14a34" }),
    code: "unsupported",
    reason: /not an EVM chain/,
  },
  {
    name: "unknown v1 network name",
    version: 1,
    requirement: v1Requirement({ network: "base-goerli" }),
    code: "unsupported",
    reason: /unknown v1 network name "base-goerli"/,
  },
  {
    name: "payTo too short",
    version: 2,
    requirement: v2Requirement({ payTo: "0x1234" }),
    code: "unsupported",
    reason: /payTo "0x1234" is not an EVM address/,
  },
  {
    name: "payTo not hex",
    version: 2,
    requirement: v2Requirement({ payTo: "0xZZ9693Bc6afc0C5328bA36FaF03C514EF312287C" }),
    code: "unsupported",
    reason: /payTo .* is not an EVM address/,
  },
  {
    name: "maxTimeoutSeconds 0",
    version: 2,
    requirement: v2Requirement({ maxTimeoutSeconds: 0 }),
    code: "invalid",
    reason: /maxTimeoutSeconds must be a positive integer/,
  },
  {
    name: 'maxTimeoutSeconds "60"',
    version: 2,
    requirement: v2Requirement({ maxTimeoutSeconds: "60" }),
    code: "invalid",
    reason: /maxTimeoutSeconds must be a number/,
  },
  {
    name: "maxTimeoutSeconds 1.5",
    version: 2,
    requirement: v2Requirement({ maxTimeoutSeconds: 1.5 }),
    code: "invalid",
    reason: /maxTimeoutSeconds must be a positive integer/,
  },
  {
    name: "maxTimeoutSeconds -5",
    version: 2,
    requirement: v2Requirement({ maxTimeoutSeconds: -5 }),
    code: "invalid",
    reason: /maxTimeoutSeconds must be a positive integer/,
  },
  {
    name: "missing EIP-712 domain in extra",
    version: 2,
    requirement: v2Requirement({ extra: {} }),
    code: "unsupported",
    reason: /extra\.name and extra\.version/,
  },
  {
    name: "a requirement that is not an object",
    version: 2,
    requirement: "exact" as unknown as Record<string, unknown>,
    code: "invalid",
    reason: /./,
  },
];

describe.each(wrappers)(
  "$name: a bad requirement → NO_PAYABLE_REQUIREMENT with its reason, nothing signed",
  (wrapper) => {
    it.each(requirementCases)("$name", async ({ version, requirement, code, reason }) => {
      const challenge =
        version === 1 ? v1Challenge({ accepts: [requirement] }) : v2Challenge({ accepts: [requirement] });
      const error = await failWith(wrapper, () => challengeResponse(challenge));
      expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
      expect(error.details.rejected).toHaveLength(1);
      expect(error.details.rejected[0]).toMatchObject({ index: 0, code });
      expect(error.details.rejected[0].reason).toMatch(reason);
      expect(error.message).toContain(error.details.rejected[0].reason);
    });

    it("every bad requirement is listed, in order, each with its own reason", async () => {
      const accepts = [
        v2Requirement({ amount: "0.01" }),
        v2Requirement({ network: "base" }),
        v2Requirement({ maxTimeoutSeconds: 0 }),
      ];
      const error = await failWith(wrapper, () => challengeResponse(v2Challenge({ accepts })));
      expect(error.details.rejected.map((r: { index: number; reason: string }) => [r.index, r.reason])).toEqual([
        [0, expect.stringMatching(/amount/)],
        [1, expect.stringMatching(/network/)],
        [2, expect.stringMatching(/maxTimeoutSeconds/)],
      ]);
    });

    it("an empty accepts list is refused without signing", async () => {
      const error = await failWith(wrapper, () => challengeResponse(v2Challenge({ accepts: [] })));
      expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
      expect(error.details.rejected).toEqual([]);
    });

    it("a bad requirement next to a good one: the good one is paid, verbatim", async () => {
      const good = v2Requirement();
      const seller = createSeller({ challenge: v2Challenge({ accepts: [v2Requirement({ amount: "-1" }), good] }) });
      server.use(seller.handler);
      const reply = await wrapper.send(payingClient().client, { url });
      expect(reply.status).toBe(200);
      expect(seller.payments[0].accepted).toStrictEqual(good);
    });
  },
);

/** A v2 challenge whose standard base64 has `+` or `/` and `=` padding, so the lenient forms differ from it. */
function awkwardHeader(): string {
  for (let pad = 0; pad < 64; pad++) {
    const header = encodeHeader(v2Challenge({ resource: { url, description: `${"a".repeat(pad)}~~~???>>>` } }));
    if (/[+/]/.test(header) && header.endsWith("=")) return header;
  }
  throw new Error("no awkward header found");
}

describe.each(wrappers)("$name: lenient base64 challenges are accepted", (wrapper) => {
  const standard = awkwardHeader();
  it.each([
    { name: "URL-safe, padded", header: standard.replace(/\+/g, "-").replace(/\//g, "_") },
    { name: "URL-safe, unpadded", header: standard.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") },
    { name: "standard, unpadded", header: standard.replace(/=+$/, "") },
  ])("$name", async ({ header }) => {
    expect(header).not.toBe(standard);
    const seller = createSeller({
      intercept: (request) => (request.headers.has("payment-signature") ? undefined : rawHeaderResponse(header)),
    });
    server.use(seller.handler);
    const reply = await wrapper.send(payingClient().client, { url });
    expect(reply.status).toBe(200);
    expect(seller.verdicts[0]?.ok).toBe(true);
    expect(seller.payments[0].resource.description).toMatch(/~~~\?\?\?>>>$/);
  });
});

describe.each(wrappers)("$name: no error text carries key material", (wrapper) => {
  const key = ANVIL_KEY_0;
  const bare = key.slice(2);
  it.each([
    { name: "an Error with the 0x key", thrown: () => new Error(`wallet failed; key=${key} (do not log)`) },
    { name: "an Error with the bare key, upper case", thrown: () => new Error(`bad key ${bare.toUpperCase()}`) },
    { name: "a thrown string", thrown: () => `raw ${key}` },
    {
      name: "an Error whose cause holds the key",
      thrown: () => new Error("outer", { cause: new Error(`inner ${key}`) }),
    },
  ])("a signer throwing $name", async ({ thrown }) => {
    const seller = createSeller();
    server.use(seller.handler);
    const { signer, calls } = countingSigner(async () => {
      throw thrown();
    });
    const client = createX402Client({ schemes: [exactEvm({ signer })] });

    const error = await rejection(wrapper.send(client, { url }));

    expect(calls).toHaveLength(1);
    expect(error.code).toBe("SIGNING_FAILED");
    expect(seller.requests).toHaveLength(1);
    const texts = [
      error.message,
      error.shortMessage,
      String(error),
      error.stack ?? "",
      JSON.stringify(error.details),
      JSON.stringify(error),
      error.cause?.message ?? "",
      String(error.cause),
      error.cause?.stack ?? "",
      String(error.cause?.cause ?? ""),
    ];
    for (const text of texts) {
      expect(text.toLowerCase()).not.toContain(bare.toLowerCase());
    }
  });
});

describe("the seller stub itself", () => {
  it("refuses a forged signature, so the tests above would catch a wrong one", async () => {
    // Sign with a different key but claim to be the same payer: the stub must say no.
    const impostor = privateKeyToAccount(`0x${"11".repeat(32)}`);
    const { signer } = countingSigner((r) => impostor.signTypedData(r as never));
    const seller = createSeller();
    server.use(seller.handler);
    const client = createX402Client({ schemes: [exactEvm({ signer })] });
    const error = await rejection(fetchWrapper.send(client, { url }));
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.reason).toBe("invalid_exact_evm_payload_signature");
  });
});

/** A Solana key file's secret key (seed, then public key: 64 bytes), from a freshly generated Ed25519 pair. */
async function generatedSolanaSecretKey(): Promise<Uint8Array> {
  const pair = (await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const publicKey = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return Uint8Array.from([...pkcs8.slice(-32), ...publicKey]);
}

/** Every text a caller could print or log of an error and of each error in its cause chain. */
function everyText(error: unknown): string[] {
  const texts: string[] = [];
  for (
    let e = error, depth = 0;
    e !== undefined && e !== null && depth < 20;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    texts.push(String(e));
    try {
      texts.push(JSON.stringify(e) ?? "");
    } catch {
      // A cycle: the other texts still count.
    }
    if (typeof e === "object") {
      for (const key of Object.getOwnPropertyNames(e)) {
        const value = (e as Record<string, unknown>)[key];
        if (key === "cause") continue;
        if (Array.isArray(value)) texts.push(...value.map(String));
        texts.push(typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)));
      }
    }
  }
  return texts;
}

class WalletError extends Error {
  readonly code = -32603;
  override readonly name = "WalletError";
}

describe.each(wrappers)(
  "$name: a Solana wallet's error never carries its secret key into the thrown error",
  (wrapper) => {
    const keyForms: { name: string; text: (secret: Uint8Array) => string }[] = [
      { name: "base58 (64 bytes)", text: (secret) => getBase58Decoder().decode(secret) },
      { name: "a key file's JSON byte array", text: (secret) => JSON.stringify([...secret]) },
      { name: "a pretty-printed JSON byte array", text: (secret) => JSON.stringify([...secret], null, 2) },
      { name: "a Uint8Array's toString", text: (secret) => secret.toString() },
    ];
    const placements: { name: string; thrown: (key: string) => unknown }[] = [
      { name: "message", thrown: (key) => new WalletError(`cannot sign: keypair ${key} is locked`) },
      {
        name: "a nested cause",
        thrown: (key) => new WalletError("signing failed", { cause: new Error(`loaded ${key}`) }),
      },
      {
        name: "an own string field",
        thrown: (key) => Object.assign(new WalletError("signing failed"), { details: `secretKey: ${key}` }),
      },
      {
        name: "a string array field",
        thrown: (key) =>
          Object.assign(new WalletError("signing failed"), { metaMessages: ["wallet:", `secret ${key}`] }),
      },
      { name: "a thrown string", thrown: (key) => `keypair ${key}` },
      // Text that is no own field of the error: a getter (DOMException's message), or held by errors it holds.
      { name: "a DOMException's message", thrown: (key) => new DOMException(`cannot import ${key}`, "DataError") },
      {
        name: "an AggregateError's errors",
        thrown: (key) => new AggregateError([new Error(`wallet 1: ${key}`)], "every wallet failed"),
      },
    ];
    const cases = keyForms.flatMap((form) =>
      placements.map((place) => ({ form: form.name, place: place.name, text: form.text, thrown: place.thrown })),
    );

    it.each(cases)("$form in $place", async ({ text, thrown }) => {
      const secret = await generatedSolanaSecretKey();
      const key = text(secret);
      const seller = createSeller({ challenge: v2Challenge({ accepts: [svmRequirement()] }) });
      server.use(seller.handler);
      const { signer, calls } = countingSvmSigner(async () => {
        throw thrown(key);
      });
      const client = createX402Client({ schemes: [exactSvm({ signer, rpc: fakeRpc() })] });

      const error = await rejection(wrapper.send(client, { url }));

      expect(calls).toHaveLength(1);
      expect(error.code).toBe("SIGNING_FAILED");
      expect(seller.requests).toHaveLength(1);
      const base58 = getBase58Decoder().decode(secret);
      // A run of the key's bytes as any list would print them, and any long piece of its base58 form.
      const bytes = [...secret.slice(8, 24)].join(",");
      for (const t of everyText(error)) {
        expect(t).not.toContain(base58.slice(10, 40));
        expect(t.replace(/\s+|\\n/g, "")).not.toContain(bytes);
      }
    });
  },
);

describe.each(wrappers)("$name: redaction keeps the wallet's error and x402-pay's own words", (wrapper) => {
  it("the wallet's error object stays reachable: same object, class and fields, through cause and walk()", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const inner = new Error(`device said: ${ANVIL_KEY_0}`);
    const original = new WalletError("ledger: signing failed", { cause: inner });
    const { signer } = countingSigner(async () => {
      throw original;
    });
    const error = await rejection(wrapper.send(createX402Client({ schemes: [exactEvm({ signer })] }), { url }));

    expect(error.code).toBe("SIGNING_FAILED");
    expect(error.cause).toBe(original);
    expect(error.cause).toBeInstanceOf(WalletError);
    expect(error.cause.code).toBe(-32603);
    expect(error.cause.message).toBe("ledger: signing failed");
    expect(error.walk()).toBe(inner);
    expect(error.walk((e: unknown) => e instanceof WalletError)).toBe(original);
    expect(inner.message).not.toContain(ANVIL_KEY_0.slice(2));
  });

  const hash = `0x${"5d".repeat(32)}`;
  const nonce = `0x${"a7".repeat(32)}`;
  const solanaSignature = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";

  it.each([
    { name: "an EVM transaction hash", errorMessage: `transaction ${hash} reverted`, shown: hash },
    { name: "an EIP-3009 nonce", errorMessage: `authorization nonce ${nonce} already used`, shown: nonce },
    {
      name: "a Solana transaction signature",
      errorMessage: `transaction ${solanaSignature} failed`,
      shown: solanaSignature,
    },
  ])(
    "a failed settlement naming $name keeps it readable in the message and details",
    async ({ errorMessage, shown }) => {
      // No transaction named: a refusal (a failure naming one is a pending settlement: test/http/pending.test.ts).
      const settlement = {
        success: false,
        errorReason: "transaction_failed",
        transaction: "",
        network: "eip155:84532",
        errorMessage,
      };
      const seller = createSeller({
        paid: () => HttpResponse.json({}, { status: 402, headers: settlementHeader(2, settlement) }),
      });
      server.use(seller.handler);
      const error = await rejection(wrapper.send(payingClient().client, { url }));

      expect(error).toBeInstanceOf(PaymentRejectedError);
      expect(error.message).toContain(shown);
      expect(error.details.settlement).toMatchObject({ transaction: "", errorMessage });
    },
  );

  it("a server reason naming a transaction hash keeps it in the message and in reason", async () => {
    const reason = `settlement of ${hash} failed`;
    const seller = createSeller({
      intercept: (request) =>
        request.headers.has("payment-signature") ? challengeResponse(v2Challenge({ error: reason })) : undefined,
    });
    server.use(seller.handler);
    const error = await rejection(wrapper.send(payingClient().client, { url }));

    expect(error.code).toBe("PAYMENT_REJECTED");
    expect(error.reason).toBe(reason);
    expect(error.details.reason).toBe(reason);
    expect(error.message).toContain(hash);
  });
});
