/**
 * sign-in-with-x for tests: the golden vectors (scripts/siwx-vectors.mjs), wallets that count the
 * messages they sign, and a fake seller that checks a proof as the reference server does, written
 * independently of src/: the reference's own message builder, viem's verifyMessage, and Node's
 * Ed25519 over the base58 signature decoded by @solana/kit.
 */
import { readFileSync } from "node:fs";
import { createPublicKey, verify } from "node:crypto";
import { getBase58Encoder } from "@solana/kit";
import { createSIWxMessage } from "@x402/extensions/sign-in-with-x";
import { http, HttpResponse } from "msw";
import { verifyMessage, type Hex } from "viem";
import { SignInWithXPayloadSchema, problemOf } from "../../src/protocol/schemas";
import { account } from "./wallets";
import { buyer } from "./svm";
import {
  TX_HASH,
  challengeResponse,
  decodeHeader,
  seeRequest,
  settlementHeader,
  v2Challenge,
  v2Requirement,
  verifyPayment,
  type Seen,
} from "./seller";

export const siwxVectors: {
  evmAddress: string;
  solanaAddress: string;
  vectors: {
    name: string;
    url: string;
    chain: { chainId: string; type: string };
    info: Record<string, any>;
    address: string;
    message: string;
    signature: string;
    header: string;
  }[];
} = JSON.parse(readFileSync(new URL("../vectors/siwx-vectors.json", import.meta.url), "utf8"));

export const SIGN_IN = "sign-in-with-x";

// ---------------------------------------------------------------- wallets

/** Anvil #0 as a viem account whose messages are recorded; `sign` answers in its place. */
export function countingEvmWallet(
  sign: (message: string) => Promise<Hex> = (message) => account.signMessage({ message }),
) {
  const messages: string[] = [];
  return {
    messages,
    wallet: {
      address: account.address,
      signMessage: ({ message }: { message: string }) => (messages.push(message), sign(message)),
    },
  };
}

/** The fixed Solana buyer as a kit message signer whose messages are recorded. */
export function countingSolanaWallet() {
  const messages: string[] = [];
  return {
    messages,
    wallet: {
      address: buyer.address,
      signMessages: (batch: Parameters<typeof buyer.signMessages>[0]) => {
        for (const m of batch) messages.push(new TextDecoder().decode(m.content));
        return buyer.signMessages(batch);
      },
    },
  };
}

// ---------------------------------------------------------------- verifying a proof

/** Ed25519 verification with Node's crypto: the raw 32-byte public key wrapped as a JWK. */
export function verifyEd25519(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  const key = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey).toString("base64url") },
    format: "jwk",
  });
  return verify(null, message, key, signature);
}

export type ProofVerdict = { ok: true; address: string; proof: any } | { ok: false; reason: string; proof?: any };

/**
 * What the reference server checks of a SIGN-IN-WITH-X header (wire.md §6.5, 2.27): the domain as
 * declared, the uri on the origin, issued within 5 minutes and not ahead, not expired, and the
 * signature over the message it rebuilds from the proof.
 */
export async function verifyProof(header: string, expected: { domain: string; origin: string }): Promise<ProofVerdict> {
  let proof: any;
  try {
    proof = decodeHeader(header);
  } catch {
    return { ok: false, reason: "invalid_siwx_header" };
  }
  // What x402-pay sends is the shape the schema x402-pay publishes states (wire.md §6.2).
  const shape = problemOf(SignInWithXPayloadSchema, proof);
  if (shape) return { ok: false, reason: `invalid_siwx_payload: ${shape}`, proof };
  if (proof.domain !== expected.domain) return { ok: false, reason: "invalid_siwx_domain_mismatch", proof };
  if (new URL(proof.uri).origin !== expected.origin) return { ok: false, reason: "invalid_siwx_uri_mismatch", proof };
  const age = Date.now() - Date.parse(proof.issuedAt);
  if (!(age >= 0 && age <= 5 * 60_000)) return { ok: false, reason: "invalid_siwx_issued_at", proof };
  if (proof.expirationTime && Date.parse(proof.expirationTime) < Date.now())
    return { ok: false, reason: "invalid_siwx_expired", proof };
  let message: string;
  try {
    message = createSIWxMessage(proof, proof.address);
  } catch {
    return { ok: false, reason: "invalid_siwx_message", proof };
  }
  let valid = false;
  if (proof.chainId.startsWith("eip155:") && proof.type === "eip191") {
    valid = await verifyMessage({ address: proof.address, message, signature: proof.signature }).catch(() => false);
  } else if (proof.chainId.startsWith("solana:") && proof.type === "ed25519") {
    const base58 = getBase58Encoder();
    valid = verifyEd25519(
      new TextEncoder().encode(message),
      new Uint8Array(base58.encode(proof.signature)),
      new Uint8Array(base58.encode(proof.address)),
    );
  }
  return valid ? { ok: true, address: proof.address, proof } : { ok: false, reason: "invalid_siwx_signature", proof };
}

// ---------------------------------------------------------------- the seller

export interface SiwxSellerOptions {
  /** Default `https://seller.example`. */
  origin?: string;
  path?: string;
  /** `[]` for an auth-only route. Default: one `exact` requirement on Base Sepolia. */
  accepts?: Record<string, unknown>[];
  /** The declared `domain`: the host (as the reference server 2.27), the hostname (2.10), or any text. Default host. */
  domain?: "host" | "hostname" | string;
  /** Changes the declaration before it is sent (a hostile or broken server). */
  declare?: (declaration: { info: Record<string, unknown>; supportedChains: Record<string, unknown>[] }) => void;
  /** Addresses (lower-case 0x, or base58) that paid for this path before, as the server's storage holds them. */
  paid?: Set<string>;
}

/**
 * An msw seller of one route that declares sign-in-with-x on every 402, grants a valid proof on an
 * auth-only route or to an address that paid (remembered from its own settlements), and takes
 * EIP-3009 payments.
 */
export function createSiwxSeller(options: SiwxSellerOptions = {}) {
  const origin = options.origin ?? "https://seller.example";
  const path = options.path ?? "/premium";
  const accepts = options.accepts ?? [v2Requirement()];
  const paid = options.paid ?? new Set<string>();
  const url = new URL(`${origin}${path}`);
  const requests: Seen[] = [];
  const proofs: ProofVerdict[] = [];
  const declared: string[] = [];

  const challenge = () => {
    const domain =
      options.domain === undefined || options.domain === "host"
        ? url.host
        : options.domain === "hostname"
          ? url.hostname
          : options.domain;
    const resource = url.href;
    const networks = [...new Set(accepts.map((r) => String(r.network)))];
    const declaration = {
      info: {
        domain,
        uri: resource,
        version: "1",
        nonce: Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex"),
        issuedAt: new Date().toISOString(),
        resources: [resource],
      },
      supportedChains: (networks.length > 0 ? networks : ["eip155:84532"]).map((chainId) => ({
        chainId,
        type: chainId.startsWith("solana:") ? "ed25519" : "eip191",
      })),
      schema: { type: "object" },
    };
    options.declare?.(declaration);
    declared.push(domain);
    return v2Challenge({
      resource: { url: resource, description: "", mimeType: "" },
      accepts,
      extensions: { [SIGN_IN]: declaration },
    });
  };

  const handler = http.all(url.href, async ({ request }) => {
    requests.push(await seeRequest(request));
    const proofHeader = request.headers.get(SIGN_IN);
    if (proofHeader) {
      const verdict = await verifyProof(proofHeader, { domain: declared.at(-1)!, origin });
      proofs.push(verdict);
      const key = verdict.ok && (verdict.address.startsWith("0x") ? verdict.address.toLowerCase() : verdict.address);
      if (verdict.ok && (accepts.length === 0 || paid.has(key as string)))
        return HttpResponse.json({ data: "premium", signedIn: verdict.address });
      return challengeResponse(challenge());
    }
    const payment = request.headers.get("PAYMENT-SIGNATURE");
    if (payment) {
      const current = v2Challenge({ accepts });
      const verdict = await verifyPayment(current, payment);
      if (!verdict.ok) return challengeResponse({ ...challenge(), error: verdict.reason });
      paid.add(verdict.payer.toLowerCase());
      return HttpResponse.json(
        { data: "premium" },
        {
          headers: settlementHeader(2, {
            success: true,
            transaction: TX_HASH,
            network: verdict.requirement.network,
            payer: verdict.payer,
          }),
        },
      );
    }
    return challengeResponse(challenge());
  });

  return {
    handler,
    requests,
    proofs,
    paid,
    url: url.href,
    /** How many requests carried a payment, and how many a sign-in proof. */
    get counts() {
      return {
        payments: requests.filter((r) => r.headers["payment-signature"]).length,
        signIns: requests.filter((r) => r.headers[SIGN_IN]).length,
      };
    },
  };
}
