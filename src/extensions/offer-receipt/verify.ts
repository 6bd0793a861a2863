/**
 * Signed offers and receipts (the `offer-receipt` extension, draft): their shapes, and who signed them. EIP-712
 * signatures recover an EVM address (viem, loaded for them only). JWS signatures are checked with WebCrypto against the
 * key their `kid` names, for `did:key` and `did:jwk` keys of type Ed25519 (EdDSA) and P-256 (ES256). Not checked, each
 * refused with its reason: secp256k1 JWS keys (ES256K; WebCrypto has no such curve) and `did:web` (resolving it means
 * fetching a document from the signer's host).
 */
import type { recoverTypedDataAddress } from "viem/utils";
import * as z from "zod/mini";
import { base58ToBytes, base64ToBytes, bytesToBase64, bytesToHex, powerMod, utf8 } from "../../protocol";

export const OFFER_RECEIPT = "offer-receipt";

const text = z.string();
const unsignedInt = z.number().check(z.int(), z.nonnegative());

/** What an offer commits to (spec §4.2). `validUntil` is unix seconds; 0 means no limit. */
export const OfferPayloadSchema = z.looseObject({
  version: unsignedInt,
  resourceUrl: text,
  scheme: text,
  network: text,
  asset: text,
  payTo: text,
  amount: text,
  validUntil: z.optional(unsignedInt),
});
export type OfferPayload = z.infer<typeof OfferPayloadSchema>;

/** What a receipt attests. In EIP-712 form `transaction` is always present (`""` when withheld). */
export const ReceiptPayloadSchema = z.looseObject({
  version: unsignedInt,
  network: text,
  resourceUrl: text,
  payer: text,
  issuedAt: unsignedInt,
  transaction: z.optional(text),
});
export type ReceiptPayload = z.infer<typeof ReceiptPayloadSchema>;

const hexSignature = z.string().check(z.regex(/^0x(?:[0-9a-fA-F]{2})+$/));
const compactJws = z.string().check(z.regex(/^[\w-]+\.[\w-]+\.[\w-]+$/));

/** One signed offer as the 402 carries it: EIP-712 (payload beside the signature) or a compact JWS. */
export const SignedOfferSchema = z.union([
  z.looseObject({
    format: z.literal("eip712"),
    acceptIndex: z.optional(unsignedInt),
    payload: OfferPayloadSchema,
    signature: hexSignature,
  }),
  z.looseObject({ format: z.literal("jws"), acceptIndex: z.optional(unsignedInt), signature: compactJws }),
]);
export type SignedOffer = z.infer<typeof SignedOfferSchema>;

export const SignedReceiptSchema = z.union([
  z.looseObject({ format: z.literal("eip712"), payload: ReceiptPayloadSchema, signature: hexSignature }),
  z.looseObject({ format: z.literal("jws"), signature: compactJws }),
]);
export type SignedReceipt = z.infer<typeof SignedReceiptSchema>;

/** A signature checked: its format, who signed (an EVM address for EIP-712, the key's DID for JWS) and what. */
export interface Signed<T> {
  readonly format: "eip712" | "jws";
  readonly signer: string;
  readonly payload: T;
}

/** `{ ok: true, value }`, or why not. */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

const DOMAIN = { version: "1", chainId: 1 } as const;
const OFFER_FIELDS = [
  { name: "version", type: "uint256" },
  { name: "resourceUrl", type: "string" },
  { name: "scheme", type: "string" },
  { name: "network", type: "string" },
  { name: "asset", type: "string" },
  { name: "payTo", type: "string" },
  { name: "amount", type: "string" },
  { name: "validUntil", type: "uint256" },
];
const RECEIPT_FIELDS = [
  { name: "version", type: "uint256" },
  { name: "network", type: "string" },
  { name: "resourceUrl", type: "string" },
  { name: "payer", type: "string" },
  { name: "issuedAt", type: "uint256" },
  { name: "transaction", type: "string" },
];

/** Checks a signed offer's shape and signature. Never throws. */
export function verifyOffer(offer: unknown): Promise<Checked<Signed<OfferPayload>>> {
  return verify(offer, SignedOfferSchema, OfferPayloadSchema, (payload) => ({
    domain: { name: "x402 offer", ...DOMAIN },
    types: { Offer: OFFER_FIELDS },
    primaryType: "Offer",
    message: {
      ...pick(payload, OFFER_FIELDS),
      version: BigInt(payload.version),
      validUntil: BigInt(payload.validUntil ?? 0),
    },
  }));
}

/** Checks a signed receipt's shape and signature. Never throws. */
export function verifyReceipt(receipt: unknown): Promise<Checked<Signed<ReceiptPayload>>> {
  return verify(receipt, SignedReceiptSchema, ReceiptPayloadSchema, (payload) => ({
    domain: { name: "x402 receipt", ...DOMAIN },
    types: { Receipt: RECEIPT_FIELDS },
    primaryType: "Receipt",
    message: {
      ...pick(payload, RECEIPT_FIELDS),
      version: BigInt(payload.version),
      issuedAt: BigInt(payload.issuedAt),
      transaction: payload.transaction ?? "",
    },
  }));
}

type TypedData = Parameters<typeof recoverTypedDataAddress>[0];

async function verify<T>(
  value: unknown,
  envelope: z.ZodMiniType<{ format: "eip712"; payload: T; signature: string } | { format: "jws"; signature: string }>,
  payloadSchema: z.ZodMiniType<T>,
  typedData: (payload: T) => Omit<TypedData, "signature">,
): Promise<Checked<Signed<T>>> {
  const parsed = envelope.safeParse(value);
  if (!parsed.success) return { ok: false, reason: `malformed (${describe(parsed.error)})` };
  const signed = parsed.data;
  try {
    if (signed.format === "eip712") {
      // viem is loaded for EIP-712 only: JWS offers and receipts are checked without it.
      const viem = await import("viem/utils").catch((error: { code?: unknown }) => {
        if (error?.code === "ERR_MODULE_NOT_FOUND" || error?.code === "MODULE_NOT_FOUND") return undefined;
        throw error;
      });
      if (!viem) return { ok: false, reason: "checking an EIP-712 signature needs viem: npm install viem" };
      const signer = await viem.recoverTypedDataAddress({
        ...typedData(signed.payload),
        signature: signed.signature as `0x${string}`,
      } as TypedData);
      return { ok: true, value: { format: "eip712", signer, payload: signed.payload } };
    }
    const [header, body, signature] = signed.signature.split(".") as [string, string, string];
    const { alg, kid } = Object(JSON.parse(new TextDecoder().decode(base64UrlToBytes(header)))) as {
      alg?: unknown;
      kid?: unknown;
    };
    if (typeof kid !== "string") return { ok: false, reason: "the JWS header names no key (kid)" };
    const key = await importDidKey(kid, alg);
    if (!key.ok) return key;
    const valid = await crypto.subtle.verify(
      key.value.algorithm,
      key.value.key,
      base64UrlToBytes(signature) as Uint8Array<ArrayBuffer>,
      utf8.encode(`${header}.${body}`),
    );
    if (!valid) return { ok: false, reason: `the JWS signature does not verify with ${kid}` };
    const payload = payloadSchema.safeParse(JSON.parse(new TextDecoder().decode(base64UrlToBytes(body))));
    if (!payload.success) return { ok: false, reason: `malformed JWS payload (${describe(payload.error)})` };
    return { ok: true, value: { format: "jws", signer: kid.split("#")[0]!, payload: payload.data } };
  } catch (error) {
    return {
      ok: false,
      reason: `the signature cannot be checked (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

function pick<T extends object>(payload: T, fields: readonly { name: string }[]) {
  return Object.fromEntries(fields.map(({ name }) => [name, (payload as Record<string, unknown>)[name]]));
}

function describe(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.join(".") || "value"}: ${issue.message}` : "invalid";
}

/** base64url without padding → bytes (`atob` reads base64 without its padding: forgiving-base64). */
function base64UrlToBytes(text: string): Uint8Array {
  return base64ToBytes(text.replace(/-/g, "+").replace(/_/g, "/"));
}

interface VerifyKey {
  key: CryptoKey;
  algorithm: AlgorithmIdentifier | EcdsaParams;
}

// did:key multicodec prefixes (unsigned varint): Ed25519 public key 0xed, P-256 public key 0x1200.
const ED25519 = [0xed, 0x01];
const P256 = [0x80, 0x24];

/** The WebCrypto key a `did:key` or `did:jwk` names, for the JWS `alg` it must be used with. */
async function importDidKey(kid: string, alg: unknown): Promise<Checked<VerifyKey>> {
  const did = kid.split("#")[0]!;
  const [scheme, method, id] = did.split(":");
  if (scheme !== "did" || !id) return { ok: false, reason: `kid ${JSON.stringify(kid)} is not a DID` };
  let jwk: JsonWebKey;
  if (method === "jwk") {
    jwk = Object(JSON.parse(new TextDecoder().decode(base64UrlToBytes(id))));
  } else if (method === "key") {
    const bytes = id.startsWith("z") ? base58ToBytes(id.slice(1)) : undefined;
    if (bytes && ED25519.every((b, i) => bytes[i] === b) && bytes.length === 34) {
      jwk = { kty: "OKP", crv: "Ed25519", x: bytesToBase64Url(bytes.subarray(2)) };
    } else if (bytes && P256.every((b, i) => bytes[i] === b) && bytes.length === 35) {
      const point = decompressP256(bytes.subarray(2));
      if (!point) return { ok: false, reason: `${did} is not a P-256 point` };
      jwk = { kty: "EC", crv: "P-256", x: bytesToBase64Url(point.x), y: bytesToBase64Url(point.y) };
    } else {
      return {
        ok: false,
        reason:
          `${did} is not an Ed25519 or P-256 did:key (secp256k1 keys are not checked: WebCrypto has no such ` +
          `curve)`,
      };
    }
  } else {
    return {
      ok: false,
      reason:
        `DID method did:${method} is not resolved (only did:key and did:jwk; did:web would fetch from the ` +
        `signer's host)`,
    };
  }
  const expected =
    jwk.kty === "OKP" && jwk.crv === "Ed25519"
      ? "EdDSA"
      : jwk.kty === "EC" && jwk.crv === "P-256"
        ? "ES256"
        : undefined;
  if (!expected)
    return { ok: false, reason: `${did}: key type ${jwk.kty}/${jwk.crv} is not checked (only Ed25519 and P-256)` };
  if (alg !== expected)
    return { ok: false, reason: `the JWS algorithm ${JSON.stringify(alg)} does not fit ${did} (${expected})` };
  const algorithm = expected === "EdDSA" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
  const key = await crypto.subtle.importKey(
    "jwk",
    { kty: jwk.kty, crv: jwk.crv, x: jwk.x, ...(jwk.y && { y: jwk.y }) },
    algorithm,
    false,
    ["verify"],
  );
  return {
    ok: true,
    value: { key, algorithm: expected === "EdDSA" ? { name: "Ed25519" } : { name: "ECDSA", hash: "SHA-256" } },
  };
}

function bytesToBase64Url(bytes: Uint8Array): string {
  return bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// P-256: y² = x³ − 3x + b over p, where p ≡ 3 (mod 4), so a square root is a power (p + 1) / 4.
const P256_P = 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n;
const P256_B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

function decompressP256(compressed: Uint8Array): { x: Uint8Array; y: Uint8Array } | undefined {
  if (compressed.length !== 33 || (compressed[0] !== 2 && compressed[0] !== 3)) return undefined;
  const x = compressed.subarray(1);
  const xn = BigInt(bytesToHex(x));
  const rhs = mod(xn ** 3n - 3n * xn + P256_B);
  let y = powerMod(rhs, (P256_P + 1n) / 4n, P256_P);
  if (mod(y * y) !== rhs) return undefined;
  if ((y & 1n) !== BigInt(compressed[0]! & 1)) y = P256_P - y;
  const hex = y.toString(16).padStart(64, "0");
  return { x, y: Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16)) };
}

const mod = (n: bigint) => ((n % P256_P) + P256_P) % P256_P;
