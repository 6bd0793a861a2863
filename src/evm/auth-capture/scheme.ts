/**
 * EVM `auth-capture`: the buyer authorizes a payment into an escrow (commerce-payments' AuthCaptureEscrow); the
 * seller's operator captures what it charges, voids the rest back to the buyer, and can refund what it captured
 * until the refund deadline. The wallet signs an EIP-3009 `ReceiveWithAuthorization` to the escrow's collector (or a
 * Permit2 transfer it may spend) whose nonce is the payment's hash: every term is bound by the signature.
 */
import type { EscrowTerms, PaymentScheme } from "../../contracts";
import { show } from "../../contracts";
import { bytesToHex, checksumAddress, sameAddress, type PaymentRequirement } from "../../protocol";
import { EVM_KNOWN_ASSETS, toEvmChainId } from "../networks";
import { PERMIT2_ADDRESS, PERMIT_TRANSFER_FIELDS, TOKEN_PERMISSIONS, withPermit2Allowance } from "../permit2";
import {
  EIP3009_AUTHORIZATION,
  checkAddress,
  checkEvmRequirement,
  schemeTools,
  type EvmSchemeOptions,
} from "../shared";
import type { SettlementRule } from "../settlement";
import { normalizeSignature, type EvmSigner, type Hex } from "../signer";
import {
  AUTH_CAPTURE,
  AUTH_CAPTURE_DEPLOYMENTS,
  ZERO_ADDRESS,
  deploymentOf,
  optionalAddress,
  payerAgnosticHash,
  saltOf,
  type PaymentInfo,
} from "./wire";

export interface AuthCaptureEvmOptions extends EvmSchemeOptions {
  /**
   * Operators allowed to capture (`extra.captureAuthorizer`): who takes the money out of the escrow, and alone can
   * refund it. Default: any the seller names.
   */
  capturers?: readonly string[] | undefined;
}

/** The largest value of a `uintN` field of the escrow's PaymentInfo. */
const UINT48_MAX = 2 ** 48 - 1;
const UINT120_MAX = 2n ** 120n - 1n;
const BPS = 10_000;

/**
 * How an auth-capture payment shows on chain: through one of the escrows, from the payer into it and from it to the
 * payee; any amount up to the hold (captured in part, the rest voided).
 */
const ESCROW_SETTLEMENT: SettlementRule = Object.freeze({
  amount: "at-most",
  escrows: AUTH_CAPTURE_DEPLOYMENTS.map((deployment) => deployment.escrow),
});

/** Pays `auth-capture` requirements on EVM chains (protocol v2) into the escrow deployment the seller names. */
export function authCaptureEvm(options: AuthCaptureEvmOptions): PaymentScheme {
  const { signer, randomBytes } = schemeTools(options);
  const now = options.now ?? Date.now;
  const { settlement, capturers } = options;

  return {
    scheme: AUTH_CAPTURE,
    networks: options.networks ?? ["eip155:*"],
    x402Versions: [2],
    // Held before delivery and captured after (the default), or charged after delivery with a refund window.
    flows: ["escrow", "authorization"],
    payer: signer.address,
    ...(settlement && { checkSettlement: (query, signal) => settlement.check(query, signal, ESCROW_SETTLEMENT) }),
    knownAssets: EVM_KNOWN_ASSETS,

    check(requirement) {
      return checkAuthCapture(requirement, Math.floor(now() / 1000)) ?? checkCapturer(requirement, capturers);
    },

    escrow(requirement): EscrowTerms {
      const { extra } = requirement;
      return {
        contract: deploymentOf(extra.authCaptureEscrow)!.escrow,
        capturer: checksumAddress(extra.captureAuthorizer as string),
        captureDeadline: extra.captureDeadline as number,
        refundableUntil: extra.refundDeadline as number,
        fees: {
          minBps: extra.minFeeBps as number,
          maxBps: extra.maxFeeBps as number,
          recipient: checksumAddress(extra.feeRecipient as string),
        },
      };
    },

    async createPayload(requirement: PaymentRequirement, context) {
      const { extra } = requirement;
      const chainId = toEvmChainId(requirement.caip2!)!;
      const deployment = deploymentOf(extra.authCaptureEscrow)!;
      const expiry = BigInt(Math.floor(now() / 1000)) + BigInt(requirement.maxTimeoutSeconds);
      const saltNonce = bytesToHex(randomBytes(32)) as Hex;
      const { salt, bound } = saltOf(
        saltNonce,
        optionalAddress(extra.receiverAuthorizer),
        optionalAddress(extra.policy),
      );
      const info: PaymentInfo = {
        operator: extra.captureAuthorizer as Hex,
        payer: signer.address,
        receiver: requirement.payTo as Hex,
        token: requirement.asset as Hex,
        maxAmount: BigInt(requirement.amount),
        preApprovalExpiry: expiry,
        authorizationExpiry: BigInt(extra.captureDeadline as number),
        refundExpiry: BigInt(extra.refundDeadline as number),
        minFeeBps: extra.minFeeBps as number,
        maxFeeBps: extra.maxFeeBps as number,
        feeReceiver: extra.feeRecipient as Hex,
        salt,
      };
      // The payment's hash, payer zeroed: the collector recomputes it from the terms, so the signature binds them all.
      const nonce = payerAgnosticHash(info, chainId, deployment.escrow);
      const saltFields = bound ? { salt, saltNonce } : { salt };

      const signing = { signer, requirement, info, chainId, nonce, saltFields };
      // The escrow's Permit2 collector takes no sponsored approval (the reference sends none): the allowance is read,
      // and a short one refused before signing, whatever approval the challenge offers to sponsor for other schemes.
      const unsponsored = { ...context, challenge: { ...context.challenge, extensions: undefined } };
      return extra.assetTransferMethod === "permit2"
        ? withPermit2Allowance(signer, requirement, unsponsored, {
            scheme: "authCaptureEvm",
            allowance: options.permit2,
            sign: () => signPermit2(signing, deployment.permit2Collector),
          })
        : { payload: await signEip3009(signing, deployment.eip3009Collector) };
    },
  };
}

/** What either transfer method signs: the payment, its nonce (the payer-agnostic hash) and its salt fields. */
interface Signing {
  readonly signer: EvmSigner;
  readonly requirement: PaymentRequirement;
  readonly info: PaymentInfo;
  readonly chainId: number;
  readonly nonce: Hex;
  readonly saltFields: { salt: Hex; saltNonce?: Hex };
}

/** A Permit2 transfer only `spender` (the Permit2 collector) may take, with no witness: the nonce binds the terms. */
async function signPermit2({ signer, requirement, info, chainId, nonce, saltFields }: Signing, spender: Hex) {
  const deadline = info.preApprovalExpiry;
  const signature = await signer.signTypedData({
    domain: { name: "Permit2", chainId, verifyingContract: PERMIT2_ADDRESS },
    types: { PermitTransferFrom: PERMIT_TRANSFER_FIELDS, TokenPermissions: TOKEN_PERMISSIONS },
    primaryType: "PermitTransferFrom",
    message: {
      permitted: { token: checksumAddress(requirement.asset), amount: info.maxAmount },
      spender,
      nonce: BigInt(nonce),
      deadline,
    },
  });
  const permit2Authorization = {
    from: signer.address,
    permitted: { token: requirement.asset, amount: requirement.amount },
    spender,
    nonce: BigInt(nonce).toString(),
    deadline: String(deadline),
  };
  return {
    payload: { permit2Authorization, signature: normalizeSignature(signature), ...saltFields },
    deadline: String(deadline),
  };
}

/**
 * An EIP-3009 `ReceiveWithAuthorization` to `collector`: Receive, not Transfer, so only the collector can submit it and
 * no one can move the money but into the escrow.
 */
async function signEip3009({ signer, requirement, info, chainId, nonce, saltFields }: Signing, collector: Hex) {
  const authorization = {
    from: signer.address,
    to: collector,
    value: requirement.amount,
    validAfter: "0",
    validBefore: String(info.preApprovalExpiry),
    nonce,
  };
  const signature = await signer.signTypedData({
    domain: {
      name: requirement.extra.name as string,
      version: requirement.extra.version as string,
      chainId,
      verifyingContract: checksumAddress(requirement.asset),
    },
    types: { ReceiveWithAuthorization: EIP3009_AUTHORIZATION },
    primaryType: "ReceiveWithAuthorization",
    message: { ...authorization, value: info.maxAmount, validAfter: 0n, validBefore: info.preApprovalExpiry },
  });
  return { authorization, signature: normalizeSignature(signature), ...saltFields };
}

/** Why an auth-capture requirement cannot be paid safely at `seconds` (unix time), else `undefined`. */
function checkAuthCapture(requirement: PaymentRequirement, seconds: number): string | undefined {
  const { extra } = requirement;
  const general = checkEvmRequirement(requirement);
  if (general) return general;
  const method = extra.assetTransferMethod;
  if (method !== undefined && method !== null && method !== "eip3009" && method !== "permit2")
    return `asset transfer method ${show(method)} is not supported (only eip3009 and permit2)`;
  const { name, version } = extra;
  if (typeof name !== "string" || !name || typeof version !== "string" || !version)
    return "extra.name and extra.version (the token's EIP-712 domain) are missing";
  if (!deploymentOf(extra.authCaptureEscrow)) {
    const known = AUTH_CAPTURE_DEPLOYMENTS.map((d) => `v${d.version} ${d.escrow}`).join(", ");
    return `extra.authCaptureEscrow ${show(extra.authCaptureEscrow)} is not a known escrow deployment (${known})`;
  }
  const reason =
    checkAddress("extra.captureAuthorizer", extra.captureAuthorizer) ??
    checkAddress("extra.feeRecipient", extra.feeRecipient) ??
    optional("extra.receiverAuthorizer", extra.receiverAuthorizer) ??
    optional("extra.policy", extra.policy) ??
    checkWhole("extra.minFeeBps", extra.minFeeBps, BPS) ??
    checkWhole("extra.maxFeeBps", extra.maxFeeBps, BPS) ??
    checkWhole("extra.captureDeadline", extra.captureDeadline, UINT48_MAX) ??
    checkWhole("extra.refundDeadline", extra.refundDeadline, UINT48_MAX);
  if (reason) return reason;
  const { captureDeadline, refundDeadline, minFeeBps, maxFeeBps } = extra as Record<string, number>;
  if (sameAddress(extra.captureAuthorizer as string, ZERO_ADDRESS))
    return "extra.captureAuthorizer is the zero address: no one could capture or refund";
  if (minFeeBps! > maxFeeBps!) return `extra.minFeeBps ${minFeeBps} is above extra.maxFeeBps ${maxFeeBps}`;
  if (maxFeeBps! > 0 && sameAddress(extra.feeRecipient as string, ZERO_ADDRESS))
    return "extra.feeRecipient is the zero address, yet a fee is allowed (extra.maxFeeBps above 0)";
  if (BigInt(requirement.amount) > UINT120_MAX) return `amount ${requirement.amount} is over the escrow's uint120`;
  const expiry = seconds + requirement.maxTimeoutSeconds;
  if (captureDeadline! <= seconds) return `extra.captureDeadline ${captureDeadline} is in the past`;
  if (captureDeadline! < expiry) {
    return (
      `extra.captureDeadline ${captureDeadline} comes before the authorization expires (now + maxTimeoutSeconds = ` +
      `${expiry}): the escrow would refuse it`
    );
  }
  if (refundDeadline! < captureDeadline!)
    return `extra.refundDeadline ${refundDeadline} comes before extra.captureDeadline ${captureDeadline}`;
  if (extra.paymentFlow === "authorization" && optionalAddress(extra.receiverAuthorizer) === ZERO_ADDRESS)
    return 'paymentFlow "authorization" needs extra.receiverAuthorizer (who signs the charge), and it is missing';
  // v1.0's immediate charge; `false` (a hold, as now) is what facilitators still accept.
  if (extra.autoCapture === true)
    return "extra.autoCapture is true, a charge of escrow v1.0 servers that facilitators now refuse";
  return undefined;
}

/** Why the requirement's operator is not one the buyer allows, else `undefined`. */
function checkCapturer(requirement: PaymentRequirement, capturers: readonly string[] | undefined) {
  const operator = requirement.extra.captureAuthorizer as string;
  return capturers && !capturers.some((c) => sameAddress(c, operator))
    ? `capturer ${operator} is not in the scheme's capturers`
    : undefined;
}

/** An address field that may be absent (or empty, or null), and must be an address when present. */
const optional = (name: string, value: unknown) =>
  value === undefined || value === null || value === "" ? undefined : checkAddress(name, value);

/** Why `value` is not a whole number from 0 to `max`, else `undefined`. */
function checkWhole(name: string, value: unknown, max: number): string | undefined {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= max
    ? undefined
    : `${name} ${show(value)} is not a whole number from 0 to ${max}`;
}
