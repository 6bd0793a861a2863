/**
 * EVM `upto`: the buyer signs a Permit2 transfer of at most `amount`; the server settles what the
 * request actually used, through the one facilitator the signature names. Protocol v2 only.
 */
import type { PaymentScheme } from "../contracts";
import type { PaymentRequirement } from "../protocol";
import { EVM_KNOWN_ASSETS } from "./networks";
import { UPTO_PERMIT2_PROXY, payWithPermit2 } from "./permit2";
import { checkAddress, checkEvmRequirement, schemeTools, type EvmSchemeOptions } from "./shared";
import { sameAddress } from "../protocol";
import type { SettlementRule } from "./settlement";
import type { Hex } from "./signer";

export interface UptoEvmOptions extends EvmSchemeOptions {
  /**
   * Facilitators allowed to settle (`extra.facilitatorAddress`), e.g. those your facilitator's
   * `/supported` lists. Default: any the server names (it can settle only to the server's `payTo`).
   */
  facilitators?: readonly string[] | undefined;
}

/** Pays `upto` requirements on EVM chains with a Permit2 witness transfer bound to the server's facilitator. */
export function uptoEvm(options: UptoEvmOptions): PaymentScheme {
  const { signer, randomBytes, window } = schemeTools(options);
  const { settlement } = options;
  const facilitators = options.facilitators;

  return {
    scheme: "upto",
    networks: options.networks ?? ["eip155:*"],
    x402Versions: [2],
    // The seller settles what it charges after delivery.
    flows: ["authorization"],
    payer: signer.address,
    // The seller settles what it charges, at most what was signed.
    ...(settlement && { checkSettlement: (query, signal) => settlement.check(query, signal, UPTO_SETTLEMENT) }),
    knownAssets: EVM_KNOWN_ASSETS,

    check(requirement) {
      const facilitator = requirement.extra.facilitatorAddress;
      return (
        checkEvmRequirement(requirement) ??
        (facilitator === undefined
          ? "extra.facilitatorAddress (who may settle an upto payment) is missing"
          : checkAddress("extra.facilitatorAddress", facilitator)) ??
        (/^0x0{40}$/.test(facilitator as string) ? "extra.facilitatorAddress is the zero address" : undefined) ??
        (facilitators && !facilitators.some((f) => sameAddress(f, facilitator as string))
          ? `facilitator ${facilitator as string} is not in the scheme's facilitators`
          : undefined)
      );
    },

    async createPayload(requirement: PaymentRequirement, context) {
      const facilitator = requirement.extra.facilitatorAddress as Hex;
      const transfer = {
        time: window(requirement),
        nonce: randomBytes(32),
        spender: UPTO_PERMIT2_PROXY,
        facilitator,
      } as const;
      return payWithPermit2(signer, requirement, context, { scheme: "uptoEvm", allowance: options.permit2, transfer });
    },
  };
}

/** How an `upto` payment shows on chain: straight to the payee, any amount up to what was signed. */
const UPTO_SETTLEMENT: SettlementRule = Object.freeze({ amount: "at-most" });
