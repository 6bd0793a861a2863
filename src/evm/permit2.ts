/**
 * Payments through Permit2 (`PermitWitnessTransferFrom`): the buyer signs once for Uniswap's canonical
 * Permit2 contract, naming an x402 proxy as the only spender and the payee in a witness. Used by
 * `exact` with `assetTransferMethod: "permit2"` and by every `upto` payment.
 */
import type { PaymentContext } from "../contracts";
import { InvalidConfigError } from "../errors";
import { bytesToHex, PERMIT2_ADDRESS, checksumAddress, type PaymentRequirement } from "../protocol";
import type { Permit2Allowance } from "./sponsor";

export { PERMIT2_ADDRESS };
import { normalizeSignature, type EvmSigner, type Hex } from "./signer";
import { toEvmChainId } from "./networks";

/** The x402 proxies Permit2 lets spend: `exact` and `upto` (same address on every chain). */
export const EXACT_PERMIT2_PROXY = "0x402085c248EeA27D92E8b30b2C58ed07f9E20001";
export const UPTO_PERMIT2_PROXY = "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002";

/** The extensions a server declares when its facilitator can send the Permit2 approval for the payer. */
export const EIP2612_GAS_SPONSORING = "eip2612GasSponsoring";
export const ERC20_APPROVAL_GAS_SPONSORING = "erc20ApprovalGasSponsoring";

/**
 * A Permit2 payment with what the allowance needs: checked first through `allowance` (when given), the
 * Permit2 transfer signed, then a sponsored approval the server declared, if the allowance is short.
 * A server that offers to sponsor the approval cannot be paid without a chain to check it with: that
 * is refused before signing, never skipped (the reference skips it, and its buyers get a bare 412).
 */
export async function payWithPermit2(
  signer: EvmSigner,
  requirement: PaymentRequirement,
  context: PaymentContext,
  {
    scheme,
    allowance,
    transfer,
  }: { scheme: string; allowance: Permit2Allowance | undefined; transfer: Permit2Transfer },
) {
  return withPermit2Allowance(signer, requirement, context, {
    scheme,
    allowance,
    sign: async () => {
      const payload = await signPermit2(signer, requirement, transfer);
      return { payload, deadline: payload.permit2Authorization.deadline };
    },
  });
}

/**
 * Signs a Permit2 transfer of `requirement.amount` (`sign`) with what the allowance needs: read first through
 * `allowance`, and the approval the server offers to sponsor added when it is short (see `payWithPermit2`).
 */
export async function withPermit2Allowance<P extends Record<string, unknown>>(
  signer: EvmSigner,
  requirement: PaymentRequirement,
  { challenge, signal }: PaymentContext,
  {
    scheme,
    allowance,
    sign,
  }: { scheme: string; allowance: Permit2Allowance | undefined; sign: () => Promise<{ payload: P; deadline: string }> },
) {
  const declared = [EIP2612_GAS_SPONSORING, ERC20_APPROVAL_GAS_SPONSORING].filter(
    (key) => challenge.extensions && Object.hasOwn(challenge.extensions, key),
  );
  const sponsor = allowance ? await allowance.prepare(requirement, signer, declared, signal) : false;
  if (sponsor === false && declared.length > 0) {
    throw new InvalidConfigError(
      `The server sponsors the Permit2 approval (${declared.join(", ")}), which needs the allowance read first: give ` +
        `${scheme} a chain for ${requirement.caip2}, ${scheme}({ signer, permit2: permit2Allowance({ rpc }) }).`,
      { details: { option: "permit2" } },
    );
  }
  const { payload, deadline } = await sign();
  return { payload, extensions: sponsor ? await sponsor(deadline) : undefined };
}

const address = "address";
const uint256 = "uint256";
const field = (name: string, type: string) => ({ name, type });

/**
 * Permit2's `PermitTransferFrom` fields and its `TokenPermissions`: what every Permit2 transfer signs. A witness
 * transfer (`PermitWitnessTransferFrom`) adds its `witness` after them.
 */
export const PERMIT_TRANSFER_FIELDS = [
  field("permitted", "TokenPermissions"),
  field("spender", address),
  field("nonce", uint256),
  field("deadline", uint256),
];
export const TOKEN_PERMISSIONS = [field("token", address), field("amount", uint256)];

/**
 * What a Permit2 transfer is signed with besides the requirement: its validity, nonce, spender and (upto) facilitator.
 */
export interface Permit2Transfer {
  readonly time: { validAfter: string; deadline: string };
  readonly nonce: Uint8Array;
  /** The x402 proxy that alone may spend it. */
  readonly spender: Hex;
  /** upto: the one address allowed to settle it. */
  readonly facilitator?: Hex | undefined;
}

/** Signs a Permit2 witness transfer of `requirement.amount` of its asset to its payee, spendable only by `spender`. */
async function signPermit2(
  signer: EvmSigner,
  requirement: PaymentRequirement,
  { time, nonce: nonceBytes, spender, facilitator }: Permit2Transfer,
) {
  const witness = {
    to: checksumAddress(requirement.payTo),
    ...(facilitator && { facilitator: checksumAddress(facilitator) }),
    validAfter: time.validAfter,
  };
  const permit2Authorization = {
    from: signer.address,
    permitted: { token: checksumAddress(requirement.asset), amount: requirement.amount },
    spender,
    nonce: BigInt(bytesToHex(nonceBytes)).toString(),
    deadline: time.deadline,
    witness,
  };
  const signature = await signer.signTypedData({
    domain: { name: "Permit2", chainId: toEvmChainId(requirement.caip2!), verifyingContract: PERMIT2_ADDRESS },
    types: {
      PermitWitnessTransferFrom: [...PERMIT_TRANSFER_FIELDS, field("witness", "Witness")],
      TokenPermissions: TOKEN_PERMISSIONS,
      Witness: [
        field("to", address),
        ...(facilitator ? [field("facilitator", address)] : []),
        field("validAfter", uint256),
      ],
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
