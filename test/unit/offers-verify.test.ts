// Signed offers and receipts made by the reference's own issuers (@x402/extensions 2.27, run here as
// the counterpart, not copied), checked by x402-pay: EIP-712 recovers the signing address; JWS
// verifies against did:key (Ed25519, P-256) and did:jwk keys; anything tampered with or
// unverifiable is refused with a reason.
import { getBase58Decoder } from "@solana/kit";
import {
  createOfferEIP712,
  createOfferJWS,
  createReceiptEIP712,
  createReceiptJWS,
  type JWSSigner,
} from "@x402/extensions/offer-receipt";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { verifyOffer, verifyReceipt } from "../../src/extensions/offer-receipt/verify";

const ANVIL_KEY_1 = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const account = privateKeyToAccount(ANVIL_KEY_1);
const sign = (request: unknown) => account.signTypedData(request as never);

const RESOURCE = "https://api.example.com/premium";
const input = {
  acceptIndex: 0,
  scheme: "exact",
  network: "eip155:84532",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  payTo: account.address,
  amount: "10000",
};

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
const base58 = (bytes: Uint8Array) => getBase58Decoder().decode(bytes);

/** A JWS signer over a WebCrypto key, named by did:key or did:jwk, as a seller would configure the reference issuer. */
async function jwsSigner(curve: "Ed25519" | "P-256", naming: "did:key" | "did:jwk"): Promise<JWSSigner> {
  const algorithm = curve === "Ed25519" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
  const pair = (await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  let kid: string;
  if (naming === "did:jwk") {
    kid = `did:jwk:${base64url(Buffer.from(JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, ...(jwk.y && { y: jwk.y }) })))}`;
  } else if (curve === "Ed25519") {
    kid = `did:key:z${base58(Uint8Array.from([0xed, 0x01, ...Buffer.from(jwk.x!, "base64url")]))}`;
  } else {
    const y = Buffer.from(jwk.y!, "base64url");
    kid = `did:key:z${base58(Uint8Array.from([0x80, 0x24, 2 + (y[31]! & 1), ...Buffer.from(jwk.x!, "base64url")]))}`;
  }
  return {
    kid: `${kid}#key-1`,
    format: "jws",
    algorithm: curve === "Ed25519" ? "EdDSA" : "ES256",
    async sign(payload) {
      const params = curve === "Ed25519" ? { name: "Ed25519" } : { name: "ECDSA", hash: "SHA-256" };
      return base64url(
        new Uint8Array(await crypto.subtle.sign(params, pair.privateKey, payload as Uint8Array<ArrayBuffer>)),
      );
    },
  };
}

describe("EIP-712 offers and receipts", () => {
  it("recovers the address that signed an offer, with its payload", async () => {
    const offer = await createOfferEIP712(RESOURCE, input, sign as never);
    const checked = await verifyOffer(offer);
    expect(checked).toEqual({ ok: true, value: { format: "eip712", signer: account.address, payload: offer.payload } });
  });

  it("a changed field recovers another address; a broken signature or shape is refused", async () => {
    const offer = await createOfferEIP712(RESOURCE, input, sign as never);
    for (const change of [
      { amount: "10001" },
      { payTo: "0x0000000000000000000000000000000000000001" },
      { validUntil: offer.payload.validUntil + 1 },
    ]) {
      const checked = await verifyOffer({ ...offer, payload: { ...offer.payload, ...change } });
      expect(checked.ok && checked.value.signer).not.toBe(account.address);
    }
    expect(await verifyOffer({ ...offer, signature: "0x1234" })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("cannot be checked"),
    });
    expect(await verifyOffer({ ...offer, payload: { ...offer.payload, amount: 10000 } })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("malformed"),
    });
    expect(await verifyOffer({ format: "pgp", signature: "x" })).toMatchObject({ ok: false });
    expect(await verifyOffer(null)).toMatchObject({ ok: false });
  });

  it("recovers the signer of a receipt, with and without a transaction", async () => {
    for (const transaction of [`0x${"ab".repeat(32)}`, undefined]) {
      const receipt = await createReceiptEIP712(
        { resourceUrl: RESOURCE, payer: account.address, network: "eip155:84532", ...(transaction && { transaction }) },
        sign as never,
      );
      expect(await verifyReceipt(receipt)).toEqual({
        ok: true,
        value: { format: "eip712", signer: account.address, payload: receipt.payload },
      });
    }
  });
});

describe("JWS offers and receipts", () => {
  for (const [curve, naming] of [
    ["Ed25519", "did:key"],
    ["P-256", "did:key"],
    ["Ed25519", "did:jwk"],
    ["P-256", "did:jwk"],
  ] as const) {
    it(`${curve} named by ${naming}: verified, the signer is the DID; a tampered payload is refused`, async () => {
      const signer = await jwsSigner(curve, naming);
      const offer = await createOfferJWS(RESOURCE, input, signer);
      const checked = await verifyOffer(offer);
      expect(checked).toMatchObject({
        ok: true,
        value: {
          format: "jws",
          signer: signer.kid.split("#")[0],
          payload: {
            scheme: input.scheme,
            network: input.network,
            asset: input.asset,
            payTo: input.payTo,
            amount: input.amount,
            resourceUrl: RESOURCE,
            version: 1,
          },
        },
      });

      const [header, body, signature] = offer.signature.split(".");
      const payload = JSON.parse(Buffer.from(body!, "base64url").toString());
      const forged = `${header}.${base64url(Buffer.from(JSON.stringify({ ...payload, amount: "1" })))}.${signature}`;
      expect(await verifyOffer({ ...offer, signature: forged })).toMatchObject({
        ok: false,
        reason: expect.stringContaining("does not verify"),
      });

      const receipt = await createReceiptJWS(
        { resourceUrl: RESOURCE, payer: account.address, network: "eip155:84532" },
        signer,
      );
      expect(await verifyReceipt(receipt)).toMatchObject({
        ok: true,
        value: { format: "jws", payload: { payer: account.address } },
      });
    });
  }

  it("a key of another signer under the same kid does not verify", async () => {
    const [signer, other] = await Promise.all([jwsSigner("Ed25519", "did:key"), jwsSigner("Ed25519", "did:key")]);
    const offer = await createOfferJWS(RESOURCE, input, { ...other, kid: signer.kid });
    expect(await verifyOffer(offer)).toMatchObject({ ok: false, reason: expect.stringContaining("does not verify") });
  });

  it("what is not checked is refused with its reason: did:web, secp256k1, a mismatched alg, no kid", async () => {
    const signer = await jwsSigner("Ed25519", "did:key");
    const cases: [Partial<JWSSigner>, string][] = [
      [{ kid: "did:web:api.example.com#key-1" }, "did:web"],
      [{ kid: "did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme" }, "secp256k1"],
      [{ algorithm: "ES256" }, "does not fit"],
      [{ kid: "not-a-did" }, "not a DID"],
    ];
    for (const [change, reason] of cases) {
      const offer = await createOfferJWS(RESOURCE, input, { ...signer, ...change } as JWSSigner);
      expect(await verifyOffer(offer)).toMatchObject({ ok: false, reason: expect.stringContaining(reason) });
    }
  });
});

describe("the edges of what is checked", () => {
  /**
   * A JWS over `payload` and `header`, signed by a fresh Ed25519 key named by did:key unless the header says otherwise.
   */
  async function jws(payload: unknown, header: Record<string, unknown> = {}) {
    const signer = await jwsSigner("Ed25519", "did:key");
    const head = base64url(Buffer.from(JSON.stringify({ alg: "EdDSA", kid: signer.kid, ...header })));
    const body = base64url(Buffer.from(JSON.stringify(payload)));
    return {
      format: "jws",
      signature: `${head}.${body}.${await signer.sign(new TextEncoder().encode(`${head}.${body}`))}`,
    };
  }
  const offerPayload = { version: 1, resourceUrl: RESOURCE, ...input, validUntil: 0 };

  it("P-256 did:keys of both point parities verify (the compressed point is decompressed right)", async () => {
    const parities = new Set<number>();
    // 24 keys: each parity, and each way the square root found can need flipping, all but certainly come up.
    for (let i = 0; i < 24; i++) {
      const signer = await jwsSigner("P-256", "did:key");
      const parity = base58ToBytesForTest(signer.kid.slice("did:key:z".length, signer.kid.indexOf("#")))[2]!;
      const checked = await verifyOffer(await createOfferJWS(RESOURCE, input, signer));
      expect(checked.ok, `parity prefix ${parity}`).toBe(true);
      parities.add(parity);
    }
    expect([...parities].sort()).toEqual([2, 3]);
  });

  it("did:keys that are not Ed25519 or P-256 keys of the right length, or not a point, are refused with the reason", async () => {
    const ed = (await jwsSigner("Ed25519", "did:key")).kid.split("#")[0]!;
    const edBytes = base58ToBytesForTest(ed.slice("did:key:z".length));
    const cases: [string, string][] = [
      [`did:key:z${base58(edBytes.subarray(0, 33))}`, "is not an Ed25519 or P-256 did:key"],
      [
        `did:key:z${base58(Uint8Array.from([0xed, 0x00, ...edBytes.subarray(2)]))}`,
        "is not an Ed25519 or P-256 did:key",
      ],
      [`did:key:m${ed.slice("did:key:z".length)}`, "is not an Ed25519 or P-256 did:key"],
      [`did:key:z${base58(Uint8Array.from([0x80, 0x24, 4, ...new Uint8Array(32).fill(1)]))}`, "is not a P-256 point"],
      // x = 1 is not the x of any P-256 point (1 − 3 + b is no square mod p).
      [`did:key:z${base58(Uint8Array.from([0x80, 0x24, 2, ...new Uint8Array(31), 1]))}`, "is not a P-256 point"],
      [
        `did:jwk:${base64url(Buffer.from(JSON.stringify({ kty: "EC", crv: "secp256k1", x: "AA", y: "AA" })))}`,
        "key type EC/secp256k1 is not checked",
      ],
      [
        `did:jwk:${base64url(Buffer.from(JSON.stringify({ kty: "OKP", crv: "X25519", x: "AA" })))}`,
        "key type OKP/X25519 is not checked",
      ],
      ["did:key", "is not a DID"],
      ["dad:key:z6Mk", "is not a DID"],
    ];
    for (const [kid, reason] of cases) {
      expect(await verifyOffer(await jws(offerPayload, { kid })), kid).toMatchObject({
        ok: false,
        reason: expect.stringContaining(reason),
      });
    }
  });

  it("a JWS without a kid, or whose payload is not an offer, is refused even when its signature holds", async () => {
    expect(await verifyOffer(await jws(offerPayload, { kid: undefined }))).toMatchObject({
      ok: false,
      reason: "the JWS header names no key (kid)",
    });
    expect(await verifyOffer(await jws(offerPayload))).toMatchObject({ ok: true });
    expect(await verifyOffer(await jws({ ...offerPayload, amount: 5 }))).toMatchObject({
      ok: false,
      reason: "malformed JWS payload (amount: Invalid input)",
    });
  });

  it("signatures must be whole: hex of whole bytes, three base64url parts and nothing around them", async () => {
    const offer = await createOfferEIP712(RESOURCE, input, sign as never);
    for (const signature of [`${offer.signature}0`, `x${offer.signature}`, `${offer.signature} `]) {
      expect(await verifyOffer({ ...offer, signature }), signature.slice(0, 8)).toMatchObject({
        ok: false,
        reason: expect.stringContaining("malformed (signature"),
      });
    }
    const { signature } = await jws(offerPayload);
    for (const broken of [`!${signature}`, `${signature}!`]) {
      expect(await verifyOffer({ format: "jws", signature: broken })).toMatchObject({
        ok: false,
        reason: expect.stringContaining("malformed"),
      });
    }
    expect(await verifyOffer({ ...offer, payload: { ...offer.payload, scheme: 1 } })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^malformed \(/),
    });
    expect(await verifyOffer("offer")).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^malformed \(value: /),
    });
  });
});

/** Base58 (Bitcoin alphabet) → bytes, written here for the test from the alphabet's definition. */
function base58ToBytesForTest(text: string): Uint8Array {
  const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  let n = 0n;
  for (const char of text) n = n * 58n + BigInt(alphabet.indexOf(char));
  const hex = n.toString(16);
  const bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex");
  return Uint8Array.from([...new Array<number>(/^1*/.exec(text)![0].length).fill(0), ...bytes]);
}
