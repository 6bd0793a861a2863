/**
 * EVM `exact`: EIP-3009 `transferWithAuthorization` (protocol v1 and v2) or Permit2 (`assetTransferMethod: "permit2"`,
 * v2).
 */
import type { PaymentScheme } from "../contracts";
import { bytesToHex, checksumAddress, type PaymentRequirement } from "../protocol";
import { EVM_KNOWN_ASSETS, EVM_V1_NETWORKS, toEvmChainId } from "./networks";
import { EXACT_PERMIT2_PROXY, payWithPermit2 } from "./permit2";
import { EIP3009_AUTHORIZATION, checkEvmRequirement, schemeTools, type EvmSchemeOptions } from "./shared";
import { normalizeSignature } from "./signer";

export interface ExactEvmOptions extends EvmSchemeOptions {
  /** Network patterns served. Default `["eip155:*"]`; v1 names (`base-sepolia`) match by chain id. */
  networks?: readonly string[] | undefined;
  /** Protocol versions served. Default `[1, 2]`. */
  x402Versions?: readonly (1 | 2)[] | undefined;
}

/**
 * Pays `exact` requirements on EVM chains: an EIP-3009 authorisation, or a Permit2 transfer where the server asks for
 * one.
 */
export function exactEvm(options: ExactEvmOptions): PaymentScheme {
  const { signer, randomBytes, window } = schemeTools(options);
  const { settlement } = options;

  return {
    scheme: "exact",
    networks: options.networks ?? ["eip155:*"],
    x402Versions: options.x402Versions ?? [1, 2],
    payer: signer.address,
    ...(settlement && { checkSettlement: (query, signal) => settlement.check(query, signal) }),
    v1Networks: EVM_V1_NETWORKS,
    knownAssets: EVM_KNOWN_ASSETS,

    check(requirement) {
      const method = requirement.extra.assetTransferMethod;
      if (method === "permit2") {
        // Permit2 signs for Permit2's own domain: no token domain needed. A v1 server cannot ask for it.
        return requirement.x402Version === 1 ? "Permit2 is not part of protocol v1" : checkEvmRequirement(requirement);
      }
      if (method !== undefined && method !== "eip3009")
        return `asset transfer method ${JSON.stringify(method)} is not supported (only eip3009 and permit2)`;
      const { name, version } = requirement.extra;
      if (typeof name !== "string" || !name || typeof version !== "string" || !version) {
        return (
          checkEvmRequirement(requirement) ?? "extra.name and extra.version (the token's EIP-712 domain) are missing"
        );
      }
      return checkEvmRequirement(requirement);
    },

    async createPayload(requirement: PaymentRequirement, context) {
      const time = window(requirement);
      const nonce = randomBytes(32);
      if (requirement.extra.assetTransferMethod === "permit2") {
        const transfer = { time, nonce, spender: EXACT_PERMIT2_PROXY } as const;
        return payWithPermit2(signer, requirement, context, {
          scheme: "exactEvm",
          allowance: options.permit2,
          transfer,
        });
      }
      const authorization = {
        from: signer.address,
        to: checksumAddress(requirement.payTo),
        value: requirement.amount,
        validAfter: time.validAfter,
        validBefore: time.deadline,
        nonce: bytesToHex(nonce),
      };
      // The wallet signs the typed data itself, through its own signTypedData: a wrapper the user put
      // on it, or a server wallet's policy engine, sees the token, the payee and the amount.
      const signature = await signer.signTypedData({
        domain: {
          name: requirement.extra.name as string,
          version: requirement.extra.version as string,
          chainId: toEvmChainId(requirement.caip2!)!,
          verifyingContract: checksumAddress(requirement.asset),
        },
        types: { TransferWithAuthorization: EIP3009_AUTHORIZATION },
        primaryType: "TransferWithAuthorization",
        message: {
          ...authorization,
          value: BigInt(authorization.value),
          validAfter: BigInt(authorization.validAfter),
          validBefore: BigInt(authorization.validBefore),
        },
      });
      return { payload: { authorization, signature: normalizeSignature(signature) } };
    },
  };
}
