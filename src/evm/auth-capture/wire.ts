/**
 * auth-capture's wire facts: the escrow deployments (one address on every chain), the `PaymentInfo` the escrow keys a
 * payment by, its payer-agnostic hash (the nonce the wallet signs) and the salt that makes each payment its own.
 */
import { checksumAddress, sameAddress } from "../../protocol";
import type { Hex } from "../signer";
import { keccakHex, typeHash, word } from "../words";

export const AUTH_CAPTURE = "auth-capture";

/** An escrow deployment: the escrow, and the collectors it takes a payment through. */
export interface AuthCaptureDeployment {
  readonly version: "1.0" | "1.1";
  /** The AuthCaptureEscrow contract: holds what was authorized until the operator captures, voids or refunds. */
  readonly escrow: Hex;
  /** Takes an EIP-3009 payment: the wallet's `ReceiveWithAuthorization` names it as `to`. */
  readonly eip3009Collector: Hex;
  /** Takes a Permit2 payment: the wallet's `PermitTransferFrom` names it as spender. */
  readonly permit2Collector: Hex;
}

/** The deployments a seller may name (`extra.authCaptureEscrow`), the same on every chain; the first is the default. */
export const AUTH_CAPTURE_DEPLOYMENTS: readonly AuthCaptureDeployment[] = Object.freeze([
  Object.freeze({
    version: "1.1",
    escrow: "0xf96815976523E00e65Be8f34cA5e64b4f41EB19c",
    eip3009Collector: "0x8612dfdc421f80336cd14E8EF9cb1E765dB5ab88",
    permit2Collector: "0xD69831Aed5bfe262067ec4c751f4F830EcdD446e",
  }),
  Object.freeze({
    version: "1.0",
    escrow: "0xBdEA0D1bcC5966192B070Fdf62aB4EF5b4420cff",
    eip3009Collector: "0x0E3dF9510de65469C4518D7843919c0b8C7A7757",
    permit2Collector: "0x992476B9Ee81d52a5BdA0622C333938D0Af0aB26",
  }),
] as const satisfies readonly AuthCaptureDeployment[]);

/** The deployment `extra.authCaptureEscrow` names (absent or empty: the default), or `undefined` for an unknown one. */
export function deploymentOf(escrow: unknown): AuthCaptureDeployment | undefined {
  if (escrow === undefined || escrow === "") return AUTH_CAPTURE_DEPLOYMENTS[0];
  if (typeof escrow !== "string") return undefined;
  return AUTH_CAPTURE_DEPLOYMENTS.find((deployment) => sameAddress(deployment.escrow, escrow));
}

/** The escrow's `PaymentInfo`: who may capture, who pays whom in which token, how much at most, until when, fees. */
export interface PaymentInfo {
  readonly operator: Hex;
  readonly payer: Hex;
  readonly receiver: Hex;
  readonly token: Hex;
  readonly maxAmount: bigint;
  readonly preApprovalExpiry: bigint;
  readonly authorizationExpiry: bigint;
  readonly refundExpiry: bigint;
  readonly minFeeBps: number;
  readonly maxFeeBps: number;
  readonly feeReceiver: Hex;
  readonly salt: Hex;
}

const PAYMENT_INFO_TYPE =
  "PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount," +
  "uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps,uint16 maxFeeBps," +
  "address feeReceiver,uint256 salt)";
const SALT_BINDING_TYPE = "x402AuthCaptureSaltBinding(address receiverAuthorizer,address policy,uint256 saltNonce)";
export const ZERO_ADDRESS: Hex = `0x${"0".repeat(40)}`;

/**
 * The escrow's hash of a payment on `chainId`: keccak256(abi.encode(chainId, escrow, keccak256(abi.encode(typeHash,
 * info)))), plain ABI encoding (not EIP-712). With the payer zeroed it is the nonce the wallet signs, which binds every
 * other term: the collector recomputes it on chain, so a payment taken on other terms fails.
 */
export function paymentInfoHash(info: PaymentInfo, chainId: number, escrow: Hex): Hex {
  const fields = [
    info.operator,
    info.payer,
    info.receiver,
    info.token,
    info.maxAmount,
    info.preApprovalExpiry,
    info.authorizationExpiry,
    info.refundExpiry,
    info.minFeeBps,
    info.maxFeeBps,
    info.feeReceiver,
    info.salt,
  ];
  const struct = keccakHex(typeHash(PAYMENT_INFO_TYPE) + fields.map(word).join(""));
  return `0x${keccakHex(word(chainId) + word(escrow) + struct)}`;
}

/** The nonce the wallet signs: the payment's hash with the payer zeroed (the collector fills in who signed). */
export const payerAgnosticHash = (info: PaymentInfo, chainId: number, escrow: Hex) =>
  paymentInfoHash({ ...info, payer: ZERO_ADDRESS }, chainId, escrow);

/**
 * The payment's salt from `saltNonce` (32 random bytes): the nonce itself, or, when the seller names a receiver
 * authorizer or a policy, a hash binding them (the facilitator checks it, so neither can be swapped after signing).
 */
export function saltOf(saltNonce: Hex, receiverAuthorizer: Hex, policy: Hex): { salt: Hex; bound: boolean } {
  if (receiverAuthorizer === ZERO_ADDRESS && policy === ZERO_ADDRESS) return { salt: saltNonce, bound: false };
  const words = typeHash(SALT_BINDING_TYPE) + word(receiverAuthorizer) + word(policy) + word(saltNonce);
  return { salt: `0x${keccakHex(words)}`, bound: true };
}

/** An address field of `extra` that may be absent: the zero address then, checksummed otherwise. */
export const optionalAddress = (value: unknown): Hex =>
  typeof value === "string" && value !== "" ? (checksumAddress(value) as Hex) : ZERO_ADDRESS;
