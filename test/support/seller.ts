/**
 * A fake x402 seller for HTTP-level tests: msw handlers that answer 402 with a challenge until a
 * valid payment arrives, then verify the EIP-3009 signature with viem and answer 200 with a
 * settlement header. Everything here is written independently of the code under test (own base64,
 * own deep-equal, viem for signatures), so a bug in src/ cannot hide itself.
 */
import { isDeepStrictEqual } from "node:util";
import { http, HttpResponse } from "msw";
import { getAddress, isAddressEqual, recoverTypedDataAddress, type Hex } from "viem";
import { createX402Client, type X402ClientOptions } from "../../src";
import { exactEvm } from "../../src/evm";
import { transferWithAuthorizationFields } from "./vectors";
import { countingSigner } from "./wallets";

// The buyer's wallets live in ./wallets; re-exported here, where the HTTP tests have always found them.
export { account, countingSigner } from "./wallets";

export const SELLER = "https://seller.example";
export const OTHER = "https://other.example";
export const PATH = "/premium";

export const USDC_BASE_SEPOLIA = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
export const USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
export const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
export const OTHER_PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
export const TX_HASH = `0x${"ab".repeat(32)}`;

const V1_CHAIN_IDS: Record<string, number> = { "base-sepolia": 84532, base: 8453 };

// ---------------------------------------------------------------- wire builders

/** Standard base64 of UTF-8 JSON, like the reference server. */
export const encodeHeader = (value: unknown): string => Buffer.from(JSON.stringify(value), "utf8").toString("base64");
export const decodeHeader = (value: string): any => JSON.parse(Buffer.from(value, "base64").toString("utf8"));

export function v2Requirement(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    scheme: "exact",
    network: "eip155:84532",
    amount: "10000",
    asset: USDC_BASE_SEPOLIA,
    payTo: PAY_TO,
    maxTimeoutSeconds: 60,
    extra: { name: "USDC", version: "2" },
    ...over,
  };
}

export function v1Requirement(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    scheme: "exact",
    network: "base-sepolia",
    maxAmountRequired: "10000",
    resource: `${SELLER}${PATH}`,
    description: "premium data",
    mimeType: "application/json",
    payTo: PAY_TO,
    maxTimeoutSeconds: 60,
    asset: USDC_BASE_SEPOLIA,
    extra: { name: "USDC", version: "2" },
    ...over,
  };
}

export function v2Challenge(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    x402Version: 2,
    error: "Payment required",
    resource: { url: `${SELLER}${PATH}`, description: "", mimeType: "" },
    accepts: [v2Requirement()],
    ...over,
  };
}

export function v1Challenge(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { x402Version: 1, error: "X-PAYMENT header is required", accepts: [v1Requirement()], ...over };
}

/**
 * A 402 carrying a challenge: v2 in the PAYMENT-REQUIRED header (body `{}`), v1 (or `delivery: "body"`) as the JSON
 * body.
 */
export function challengeResponse(
  challenge: Record<string, unknown>,
  delivery: "header" | "body" = challenge.x402Version === 1 ? "body" : "header",
) {
  if (delivery === "body") return HttpResponse.json(challenge, { status: 402 });
  return HttpResponse.json({}, { status: 402, headers: { "PAYMENT-REQUIRED": encodeHeader(challenge) } });
}

/** A raw PAYMENT-REQUIRED header value in a 402 (for malformed-header tests). */
export function rawHeaderResponse(value: string) {
  return HttpResponse.json({}, { status: 402, headers: { "PAYMENT-REQUIRED": value } });
}

/** The settlement header for a protocol version: `{ "PAYMENT-RESPONSE": b64 }` or `{ "X-PAYMENT-RESPONSE": b64 }`. */
export function settlementHeader(version: 1 | 2, settle: Record<string, unknown>): Record<string, string> {
  return { [version === 1 ? "X-PAYMENT-RESPONSE" : "PAYMENT-RESPONSE"]: encodeHeader(settle) };
}

// ---------------------------------------------------------------- signature check

type Verdict =
  | { ok: true; payer: string; requirement: Record<string, unknown>; payload: any }
  | { ok: false; reason: string; payload?: any };

/** What a facilitator's /verify checks for EIP-3009 `exact`, with viem doing the cryptography. */
export async function verifyPayment(challenge: Record<string, unknown>, headerValue: string): Promise<Verdict> {
  let payload: any;
  try {
    payload = decodeHeader(headerValue);
  } catch {
    return { ok: false, reason: "invalid_payment_header" };
  }
  const accepts = challenge.accepts as Record<string, unknown>[];
  let requirement: Record<string, unknown> | undefined;
  let chainId: number;
  let amount: string;
  if (challenge.x402Version === 2) {
    if (payload.x402Version !== 2) return { ok: false, reason: "wrong_x402_version", payload };
    requirement = accepts.find((r) => isDeepStrictEqual(r, payload.accepted));
    if (!requirement) return { ok: false, reason: "No matching payment requirements", payload };
    chainId = Number(String(requirement.network).split(":")[1]);
    amount = String(requirement.amount);
  } else {
    if (payload.x402Version !== 1) return { ok: false, reason: "wrong_x402_version", payload };
    requirement = accepts.find((r) => r.scheme === payload.scheme && r.network === payload.network);
    if (!requirement) return { ok: false, reason: "No matching payment requirements", payload };
    chainId = V1_CHAIN_IDS[String(requirement.network)] ?? 0;
    amount = String(requirement.maxAmountRequired);
  }
  if (payload.payload?.permit2Authorization) return verifyPermit2(requirement, chainId, amount, payload);
  const a = payload.payload?.authorization;
  const signature = payload.payload?.signature as Hex;
  if (!a || typeof signature !== "string") return { ok: false, reason: "invalid_exact_evm_payload", payload };
  const extra = requirement.extra as { name: string; version: string };
  const recovered = await recoverTypedDataAddress({
    domain: {
      name: extra.name,
      version: extra.version,
      chainId,
      verifyingContract: getAddress(String(requirement.asset)),
    },
    types: {
      TransferWithAuthorization: transferWithAuthorizationFields,
    },
    primaryType: "TransferWithAuthorization",
    message: {
      from: a.from,
      to: a.to,
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce,
    },
    signature,
  });
  if (!isAddressEqual(recovered, a.from)) return { ok: false, reason: "invalid_exact_evm_payload_signature", payload };
  if (!isAddressEqual(a.to, String(requirement.payTo) as Hex))
    return { ok: false, reason: "invalid_exact_evm_payload_recipient_mismatch", payload };
  if (a.value !== amount) return { ok: false, reason: "invalid_exact_evm_payload_authorization_value", payload };
  const now = Math.floor(Date.now() / 1000);
  if (Number(a.validBefore) < now + 6)
    return { ok: false, reason: "invalid_exact_evm_payload_authorization_valid_before", payload };
  if (Number(a.validAfter) > now)
    return { ok: false, reason: "invalid_exact_evm_payload_authorization_valid_after", payload };
  return { ok: true, payer: a.from, requirement, payload };
}

/** The spenders a facilitator accepts in a Permit2 payload, per scheme (the x402 proxies). */
const PERMIT2_SPENDERS: Record<string, string> = {
  exact: "0x402085c248EeA27D92E8b30b2C58ed07f9E20001",
  upto: "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002",
};

/** What a facilitator's /verify checks of a Permit2 witness transfer (exact or upto); no chain state. */
async function verifyPermit2(
  requirement: Record<string, unknown>,
  chainId: number,
  amount: string,
  payload: any,
): Promise<Verdict> {
  const p = payload.payload.permit2Authorization;
  const upto = requirement.scheme === "upto";
  const witnessFields = upto
    ? [
        { name: "to", type: "address" },
        { name: "facilitator", type: "address" },
        { name: "validAfter", type: "uint256" },
      ]
    : [
        { name: "to", type: "address" },
        { name: "validAfter", type: "uint256" },
      ];
  const recovered = await recoverTypedDataAddress(<any>{
    domain: { name: "Permit2", chainId, verifyingContract: "0x000000000022D473030F116dDEE9F6B43aC78BA3" },
    types: {
      PermitWitnessTransferFrom: [
        { name: "permitted", type: "TokenPermissions" },
        { name: "spender", type: "address" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
        { name: "witness", type: "Witness" },
      ],
      TokenPermissions: [
        { name: "token", type: "address" },
        { name: "amount", type: "uint256" },
      ],
      Witness: witnessFields,
    },
    primaryType: "PermitWitnessTransferFrom",
    message: {
      permitted: { token: p.permitted.token, amount: BigInt(p.permitted.amount) },
      spender: p.spender,
      nonce: BigInt(p.nonce),
      deadline: BigInt(p.deadline),
      witness: upto
        ? { to: p.witness.to, facilitator: p.witness.facilitator, validAfter: BigInt(p.witness.validAfter) }
        : { to: p.witness.to, validAfter: BigInt(p.witness.validAfter) },
    },
    signature: payload.payload.signature,
  });
  if (!isAddressEqual(recovered, p.from)) return { ok: false, reason: "invalid_permit2_signature", payload };
  if (!isAddressEqual(p.spender, PERMIT2_SPENDERS[String(requirement.scheme)] as Hex))
    return { ok: false, reason: "invalid_permit2_spender", payload };
  if (!isAddressEqual(p.witness.to, String(requirement.payTo) as Hex))
    return { ok: false, reason: "invalid_permit2_recipient_mismatch", payload };
  if (!isAddressEqual(p.permitted.token, String(requirement.asset) as Hex))
    return { ok: false, reason: "invalid_permit2_token_mismatch", payload };
  if (p.permitted.amount !== amount) return { ok: false, reason: "permit2_amount_mismatch", payload };
  const now = Math.floor(Date.now() / 1000);
  if (Number(p.deadline) < now + 6) return { ok: false, reason: "permit2_deadline_expired", payload };
  if (Number(p.witness.validAfter) > now) return { ok: false, reason: "permit2_not_yet_valid", payload };
  return { ok: true, payer: p.from, requirement, payload };
}

// ---------------------------------------------------------------- the seller

/** One request as the server saw it. Header names are lower case. */
export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

export interface SellerOptions {
  origin?: string;
  path?: string;
  /** The PaymentRequired the seller offers. Default: a v2 challenge for 0.01 USDC on Base Sepolia. */
  challenge?: Record<string, unknown>;
  /** Where the challenge goes. Default: header for v2, body for v1. */
  delivery?: "header" | "body";
  /** The response to a verified payment. Default: 200 JSON with a success settlement header. */
  paid?: (verdict: Extract<Verdict, { ok: true }>, request: Request) => Response | Promise<Response>;
  /** Overrides every answer: return a Response to answer with it, undefined for the default behaviour. */
  intercept?: (request: Request, index: number) => Response | undefined | Promise<Response | undefined>;
}

export async function seeRequest(request: Request): Promise<Seen> {
  return {
    method: request.method,
    url: request.url,
    headers: Object.fromEntries([...request.headers].map(([k, v]) => [k.toLowerCase(), v])),
    body: new Uint8Array(await request.clone().arrayBuffer()),
  };
}

/** An msw handler playing an x402 seller, plus what it saw. */
export function createSeller(options: SellerOptions = {}) {
  const origin = options.origin ?? SELLER;
  const path = options.path ?? PATH;
  const challenge = options.challenge ?? v2Challenge();
  const version = challenge.x402Version === 1 ? 1 : 2;
  const requests: Seen[] = [];
  const verdicts: Verdict[] = [];

  const handler = http.all(`${origin}${path}`, async ({ request }) => {
    const index = requests.length;
    requests.push(await seeRequest(request));
    const custom = await options.intercept?.(request, index);
    if (custom) return custom;
    const header = request.headers.get(version === 1 ? "X-PAYMENT" : "PAYMENT-SIGNATURE");
    if (!header) return challengeResponse(challenge, options.delivery);
    const verdict = await verifyPayment(challenge, header);
    verdicts.push(verdict);
    if (!verdict.ok) return challengeResponse({ ...challenge, error: verdict.reason }, options.delivery);
    if (options.paid) return options.paid(verdict, request);
    return HttpResponse.json(
      { data: "premium" },
      {
        status: 200,
        headers: settlementHeader(version, {
          success: true,
          transaction: TX_HASH,
          network: verdict.requirement.network,
          payer: verdict.payer,
        }),
      },
    );
  });

  return {
    handler,
    requests,
    verdicts,
    /** The decoded payment payloads the seller received. */
    get payments(): any[] {
      return requests
        .map((r) => r.headers["payment-signature"] ?? r.headers["x-payment"])
        .filter((v): v is string => typeof v === "string")
        .map(decodeHeader);
    },
  };
}

// ---------------------------------------------------------------- the buyer

/** A client paying `exact` on every EVM chain with a counting signer. */
export function payingClient(options: Partial<X402ClientOptions> = {}) {
  const { calls, signer } = countingSigner();
  return { client: createX402Client({ schemes: [exactEvm({ signer })], ...options }), signs: calls };
}

/**
 * A seller that answers the paid request with a redirect to `location` (the unpaid one with its 402),
 * and landing pages at `${SELLER}/landing` and `${OTHER}/landing` that record what reached them.
 * `handlers` go to `server.use`.
 */
export function redirectingSeller(location: string, status = 307, headers: Record<string, string> = {}) {
  const seller = createSeller({
    intercept: (request) =>
      request.headers.has("payment-signature")
        ? new HttpResponse(null, { status, headers: { Location: location, ...headers } })
        : undefined,
  });
  const landed: Seen[] = [];
  const landing = (origin: string) =>
    http.all(`${origin}/landing`, async ({ request }) => {
      landed.push(await seeRequest(request));
      return HttpResponse.json({ landed: true });
    });
  return { seller, landed, handlers: [seller.handler, landing(SELLER), landing(OTHER)] };
}
