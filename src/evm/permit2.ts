/**
 * Payments through Permit2 (`PermitWitnessTransferFrom`): the buyer signs once for Uniswap's canonical
 * Permit2 contract, naming an x402 proxy as the only spender and the payee in a witness. Used by
 * `exact` with `assetTransferMethod: "permit2"` and by every `upto` payment.
 */
import { bytesToHex, getAddress } from "viem";
import { PERMIT2_ADDRESS, type PaymentRequirement } from "../protocol";

export { PERMIT2_ADDRESS };
import { normalizeSignature, type EvmSigner, type Hex } from "./signer";
import { toEvmChainId } from "./networks";

/** The x402 proxies Permit2 lets spend: `exact` and `upto` (same address on every chain). */
export const EXACT_PERMIT2_PROXY = "0x402085c248EeA27D92E8b30b2C58ed07f9E20001";
export const UPTO_PERMIT2_PROXY = "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002";

const address = "address";
const uint256 = "uint256";
const field = (name: string, type: string) => ({ name, type });

/**
 * Signs a Permit2 witness transfer of `requirement.amount` of its asset to its payee, spendable only by
 * `spender`. `facilitator` (upto) is the one address allowed to settle it.
 */
export async function signPermit2(
  signer: EvmSigner,
  requirement: PaymentRequirement,
  time: { validAfter: string; deadline: string },
  nonceBytes: Uint8Array,
  spender: Hex,
  facilitator?: Hex,
) {
  const witness = { to: getAddress(requirement.payTo), ...(facilitator && { facilitator: getAddress(facilitator) }), validAfter: time.validAfter };
  const permit2Authorization = {
    from: signer.address,
    permitted: { token: getAddress(requirement.asset), amount: requirement.amount },
    spender,
    nonce: BigInt(bytesToHex(nonceBytes)).toString(),
    deadline: time.deadline,
    witness,
  };
  const signature = await signer.signTypedData({
    domain: { name: "Permit2", chainId: toEvmChainId(requirement.caip2!), verifyingContract: PERMIT2_ADDRESS },
    types: {
      PermitWitnessTransferFrom: [
        field("permitted", "TokenPermissions"),
        field("spender", address),
        field("nonce", uint256),
        field("deadline", uint256),
        field("witness", "Witness"),
      ],
      TokenPermissions: [field("token", address), field("amount", uint256)],
      Witness: [field("to", address), ...(facilitator ? [field("facilitator", address)] : []), field("validAfter", uint256)],
    },
    primaryType: "PermitWitnessTransferFrom",
    message: {
      permitted: { token: permit2Authorization.permitted.token, amount: BigInt(requirement.amount) },
      spender,
      nonce: BigInt(permit2Authorization.nonce),
      deadline: BigInt(time.deadline),
      witness: { ...witness, validAfter: BigInt(time.validAfter) },
    },
  });
  return { signature: normalizeSignature(signature), permit2Authorization };
}
