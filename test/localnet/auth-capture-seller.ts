// A local `auth-capture` seller (escrow flow) for the interop tests. No reference auth-capture server or
// facilitator ships on npm (2.27 has only the client), so this one stands in for both: it answers 402 with an
// auth-capture v2 requirement, and on the paid retry checks the collect payload the way the reference facilitator
// does where it matters, then, as the capture authorizer (localnet/auth-capture.ts's operator), authorizes the full
// amount on chain before the handler runs, captures its price after (with a fee), voids the rest back to the buyer,
// and answers 200 with PAYMENT-RESPONSE.
//
//   const seller = await startAuthCaptureSeller({ rpcUrl, price: 10_000n, charge: 6_000n, feeBps: 50 });
//   GET `${seller.url}/weather`  -> 402, PAYMENT-REQUIRED { x402Version: 2, resource, accepts: [seller.requirement] }
//   paid retry (PAYMENT-SIGNATURE) -> 200 { weather: "sunny", temperature: 21 }, PAYMENT-RESPONSE
//       { success: true, transaction: <capture tx>, network: "eip155:84532", payer, amount: <captured> }
//       (with `charge: 0n` nothing is captured: the whole hold is voided, transaction = the void, amount "0")
//   a capture or void failing after the handler -> 500 (the hold stays: the operator voids, or the buyer
//       reclaims after captureDeadline).
//   refused payment -> 402 with the requirement again and `error` (an `invalid_auth_capture_evm_*` code or the
//       escrow's revert name); nothing is taken.
//   seller.payments: what it did per paid request (PaymentInfo, transactions); read the chain with
//       authCaptureAt(rpcUrl).paymentState(payment.paymentInfo) and .balance(USDC, address).
//
// The requirement's deadlines are fixed when the seller starts (now + captureDeadlineSeconds / refundDeadlineSeconds),
// so the requirement a buyer signs stays equal to the seller's and `accepted` is compared whole. Needs TestUSDC, the
// escrow (installAuthCapture) and, for `assetTransferMethod: "permit2"`, Permit2 plus the buyer's approval of it.

import type { IncomingMessage, ServerResponse } from "node:http";
import { isDeepStrictEqual } from "node:util";
import { getAddress, recoverTypedDataAddress, zeroAddress, type Address, type Hash, type Hex } from "viem";
import { randomAddress } from "./accounts.js";
import {
  AUTH_CAPTURE_ESCROW,
  AuthCaptureRevert,
  ERC3009_PAYMENT_COLLECTOR,
  PERMIT2_PAYMENT_COLLECTOR,
  authCaptureOperator,
  collectedPayment,
  payerAgnosticHash,
  type AuthCaptureMethod,
  type AuthCaptureOperator,
  type PaymentInfo,
} from "./auth-capture.js";
import { BASE_SEPOLIA_CHAIN_ID } from "./anvil.js";
import { listenOnLoopback } from "./listen.js";
import { PERMIT2 } from "./permit2.js";
import { USDC_BASE_SEPOLIA } from "./token.js";

export const AUTH_CAPTURE_NETWORK = `eip155:${BASE_SEPOLIA_CHAIN_ID}` as const;
/** The reference facilitator's margin: a signature must stay valid this long past now. */
const SAFETY_MARGIN_SECONDS = 6;

export interface AuthCaptureSellerOptions {
  rpcUrl: string;
  /** Receives the captured amounts less fees; default a fresh random address. */
  payTo?: Address;
  /** The capture authorizer; default authCaptureOperator(rpcUrl) (Anvil account #3). */
  operator?: AuthCaptureOperator;
  /** The requirement's `amount`: what the buyer authorizes and the seller holds. Default 10000 (0.01 USDC). */
  price?: bigint;
  /** What it captures after the handler, at most `price`; 0 voids the whole hold. Default `price`. */
  charge?: bigint;
  /** The fee on each capture, in basis points of `charge` (rounded down). Default `minFeeBps`. */
  feeBps?: number;
  /** Default 0 and 100. */
  minFeeBps?: number;
  maxFeeBps?: number;
  /** Default a fresh random address. */
  feeRecipient?: Address;
  /** `"permit2"` adds `assetTransferMethod: "permit2"` to the requirement; default EIP-3009 (field absent). */
  assetTransferMethod?: AuthCaptureMethod;
  /** captureDeadline = seller start + this. Default 3600. */
  captureDeadlineSeconds?: number;
  /** refundDeadline = seller start + this. Default 86400. */
  refundDeadlineSeconds?: number;
  /** The requirement's maxTimeoutSeconds (preApprovalExpiry = signing time + it). Default 60. */
  maxTimeoutSeconds?: number;
  /** Void what is left of the hold after the capture. Default true. */
  voidRest?: boolean;
}

/** What the seller did for one paid request. */
export interface AuthCaptureSellerPayment {
  paymentInfo: PaymentInfo;
  method: AuthCaptureMethod;
  authorizeTransaction: Hash;
  /** Absent when `charge` is 0. */
  captureTransaction?: Hash;
  voidTransaction?: Hash;
  captured: bigint;
  fee: bigint;
}

export interface AuthCaptureSeller {
  /** `http://127.0.0.1:<port>`; the paid route is `${url}/weather`. */
  url: string;
  payTo: Address;
  feeRecipient: Address;
  operator: AuthCaptureOperator;
  /** The requirement it answers with (and expects back as `accepted`). */
  requirement: AuthCaptureRequirement;
  payments: AuthCaptureSellerPayment[];
  stop(): Promise<void>;
}

export interface AuthCaptureRequirement {
  scheme: "auth-capture";
  network: `${string}:${string}`;
  amount: string;
  asset: Address;
  payTo: Address;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

export async function startAuthCaptureSeller(options: AuthCaptureSellerOptions): Promise<AuthCaptureSeller> {
  const now = Math.floor(Date.now() / 1000);
  const price = options.price ?? 10_000n;
  const charge = options.charge ?? price;
  const minFeeBps = options.minFeeBps ?? 0;
  const feeBps = options.feeBps ?? minFeeBps;
  const method = options.assetTransferMethod ?? "eip3009";
  const operator = options.operator ?? authCaptureOperator(options.rpcUrl);
  const payTo = options.payTo ?? randomAddress();
  const feeRecipient = options.feeRecipient ?? randomAddress();
  const requirement: AuthCaptureRequirement = {
    scheme: "auth-capture",
    network: AUTH_CAPTURE_NETWORK,
    amount: String(price),
    asset: USDC_BASE_SEPOLIA,
    payTo,
    maxTimeoutSeconds: options.maxTimeoutSeconds ?? 60,
    extra: {
      name: "USDC",
      version: "2",
      captureAuthorizer: operator.address,
      captureDeadline: now + (options.captureDeadlineSeconds ?? 3600),
      refundDeadline: now + (options.refundDeadlineSeconds ?? 86_400),
      feeRecipient,
      minFeeBps,
      maxFeeBps: options.maxFeeBps ?? 100,
      paymentFlow: "escrow",
      captureMode: "sync",
      authCaptureEscrow: AUTH_CAPTURE_ESCROW,
      ...(method === "permit2" && { assetTransferMethod: "permit2" }),
    },
  };
  const payments: AuthCaptureSellerPayment[] = [];

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/weather") return reply(response, 404, { error: "not found" });
    const resource = { url: `http://${request.headers.host}${url.pathname}`, mimeType: "application/json" };
    const refuse = (error?: string) =>
      reply(
        response,
        402,
        {},
        { "PAYMENT-REQUIRED": encode({ x402Version: 2, error, resource, accepts: [requirement] }) },
      );
    const header = request.headers["payment-signature"];
    if (typeof header !== "string") return refuse();

    let payment: ReturnType<typeof collectedPayment>;
    try {
      const paid = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
      if (paid.x402Version !== 2 || !isDeepStrictEqual(paid.accepted, requirement))
        return refuse("invalid_auth_capture_evm_requirements_mismatch");
      const problem = await check(paid.payload, requirement, method);
      if (problem) return refuse(problem);
      payment = collectedPayment(requirement, paid.payload);
    } catch {
      return refuse("invalid_auth_capture_evm_payload_format");
    }

    // Before the handler: hold the full amount.
    let authorizeTransaction: Hash;
    try {
      authorizeTransaction = await operator.authorize(payment.paymentInfo, price, method, payment.signature);
    } catch (error) {
      return refuse(error instanceof AuthCaptureRevert ? error.errorName : "authorize_failed");
    }
    const body = { weather: "sunny", temperature: 21 };
    // After the handler: take the price, the rest back to the buyer.
    const fee = (charge * BigInt(feeBps)) / 10_000n;
    const captureTransaction =
      charge > 0n ? await operator.capture(payment.paymentInfo, charge, fee, feeRecipient) : undefined;
    const voidTransaction =
      charge === 0n || (options.voidRest !== false && charge < price)
        ? await operator.void(payment.paymentInfo)
        : undefined;
    payments.push({
      paymentInfo: payment.paymentInfo,
      method,
      authorizeTransaction,
      ...(captureTransaction && { captureTransaction }),
      ...(voidTransaction && { voidTransaction }),
      captured: charge,
      fee,
    });
    const settled = {
      success: true,
      transaction: captureTransaction ?? voidTransaction,
      network: AUTH_CAPTURE_NETWORK,
      payer: payment.paymentInfo.payer,
      amount: String(charge),
    };
    reply(response, 200, body, { "PAYMENT-RESPONSE": encode(settled) });
  };

  const server = await listenOnLoopback((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) reply(response, 500, { error: String(error) });
    });
  });
  return { url: server.url, payTo, feeRecipient, operator, requirement, payments, stop: server.stop };
}

/**
 * What the reference facilitator checks of a collect payload before it settles, where it matters here: the shape
 * for the method, the collector, the amount, the token, the times, no salt binding (this seller names no receiver
 * authorizer), the nonce recomputed from the terms, and the signature by `from`. Returns an error code, or nothing.
 */
async function check(
  payload: Record<string, unknown>,
  requirement: AuthCaptureRequirement,
  method: AuthCaptureMethod,
): Promise<string | undefined> {
  const signed = (method === "permit2" ? payload.permit2Authorization : payload.authorization) as
    | Record<string, unknown>
    | undefined;
  if (!signed || typeof payload.signature !== "string" || typeof payload.salt !== "string")
    return "invalid_auth_capture_evm_payload_method_mismatch";
  if (payload.saltNonce !== undefined) return "invalid_auth_capture_evm_payload_format";
  const now = Math.floor(Date.now() / 1000);
  const chainId = BASE_SEPOLIA_CHAIN_ID;
  const { paymentInfo, nonce } = collectedPayment(requirement, payload);
  if (paymentInfo.preApprovalExpiry <= now + SAFETY_MARGIN_SECONDS)
    return "invalid_auth_capture_evm_pre_approval_expired";
  if (paymentInfo.preApprovalExpiry > paymentInfo.authorizationExpiry)
    return "invalid_auth_capture_evm_pre_approval_after_capture_deadline";
  if (nonce.toLowerCase() !== payerAgnosticHash(paymentInfo, chainId)) return "invalid_auth_capture_evm_nonce_mismatch";
  const signature = payload.signature as Hex;
  let signer: Address;
  if (method === "permit2") {
    const permitted = signed.permitted as Record<string, string>;
    if (getAddress(String(signed.spender)) !== PERMIT2_PAYMENT_COLLECTOR) return "invalid_auth_capture_evm_spender";
    if (getAddress(permitted.token as string) !== getAddress(requirement.asset))
      return "invalid_auth_capture_evm_token_mismatch";
    if (permitted.amount !== requirement.amount) return "invalid_auth_capture_evm_amount_mismatch";
    signer = await recoverTypedDataAddress({
      domain: { name: "Permit2", chainId, verifyingContract: PERMIT2 },
      types: {
        PermitTransferFrom: [
          { name: "permitted", type: "TokenPermissions" },
          { name: "spender", type: "address" },
          { name: "nonce", type: "uint256" },
          { name: "deadline", type: "uint256" },
        ],
        TokenPermissions: [
          { name: "token", type: "address" },
          { name: "amount", type: "uint256" },
        ],
      },
      primaryType: "PermitTransferFrom",
      message: {
        permitted: { token: getAddress(permitted.token as string), amount: BigInt(permitted.amount as string) },
        spender: PERMIT2_PAYMENT_COLLECTOR,
        nonce: BigInt(signed.nonce as string),
        deadline: BigInt(signed.deadline as string),
      },
      signature,
    }).catch(() => zeroAddress); // not a signature at all
  } else {
    if (getAddress(String(signed.to)) !== ERC3009_PAYMENT_COLLECTOR) return "invalid_auth_capture_evm_recipient";
    if (signed.value !== requirement.amount) return "invalid_auth_capture_evm_amount_mismatch";
    if (BigInt(signed.validAfter as string) > BigInt(now)) return "invalid_auth_capture_evm_not_yet_valid";
    signer = await recoverTypedDataAddress({
      domain: { name: "USDC", version: "2", chainId, verifyingContract: getAddress(requirement.asset) },
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
      message: {
        from: getAddress(String(signed.from)),
        to: ERC3009_PAYMENT_COLLECTOR,
        value: BigInt(signed.value as string),
        validAfter: BigInt(signed.validAfter as string),
        validBefore: BigInt(signed.validBefore as string),
        nonce: signed.nonce as Hex,
      },
      signature,
    }).catch(() => zeroAddress); // not a signature at all
  }
  if (signer !== getAddress(String(signed.from))) return "invalid_auth_capture_evm_signature";
  return undefined;
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}

function reply(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}
