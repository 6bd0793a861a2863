/** What `exact` and `upto` on EVM share: their options, the clock, and the checks every requirement must pass. */
import { checksumAddress, randomBytes as defaultRandomBytes, type PaymentRequirement } from "../protocol";
import { toEvmChainId } from "./networks";
import { isEvmAddress, toEvmSigner, type EvmSigner, type EvmSignerInput } from "./signer";
import type { EvmSettlement } from "./settlement";
import type { Permit2Allowance } from "./sponsor";

export interface EvmSchemeOptions {
  signer: EvmSignerInput;
  /** Network patterns served. Default `["eip155:*"]`. */
  networks?: readonly string[] | undefined;
  /** Clock in milliseconds. Default `Date.now`. */
  now?: (() => number) | undefined;
  /** Source of random bytes for nonces. Default WebCrypto. */
  randomBytes?: ((length: number) => Uint8Array) | undefined;
  /**
   * Checks the payer's Permit2 allowance before a Permit2 payment, and signs the approval a server
   * offers to sponsor when it is short: `permit2Allowance({ rpc })`. Without it, a server that
   * declares a sponsored approval is refused before signing (INVALID_CONFIG naming this option).
   */
  permit2?: Permit2Allowance | undefined;
  /**
   * Where `checkSettlement(client, …)` looks this scheme's payments up (a pending settlement, an unknown
   * outcome): `evmSettlement({ rpc })`. Never read while paying.
   */
  settlement?: EvmSettlement | undefined;
}

/**
 * The fields of an EIP-3009 authorisation, the same for `TransferWithAuthorization` (exact) and
 * `ReceiveWithAuthorization` (batch-settlement deposits).
 */
export const EIP3009_AUTHORIZATION = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
] as const;

/** Seconds an authorisation is back-dated, so a facilitator whose clock is behind still accepts it. */
const CLOCK_SKEW_SECONDS = 600;
/** The facilitator needs the deadline at least this far in its future. */
const MIN_TIMEOUT_SECONDS = 6;

/** The signer, and the validity window and nonce source of a payment signed now. */
export function schemeTools(options: EvmSchemeOptions) {
  const signer: EvmSigner = toEvmSigner(options.signer);
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  /**
   * `validAfter` back-dated for clock skew; the deadline in BigInt (a timeout near 2^53 would round as a float sum).
   */
  const window = (requirement: PaymentRequirement) => {
    const seconds = Math.floor(now() / 1000);
    return {
      validAfter: String(Math.max(0, seconds - CLOCK_SKEW_SECONDS)),
      deadline: String(BigInt(seconds) + BigInt(requirement.maxTimeoutSeconds)),
    };
  };
  return { signer, randomBytes, window };
}

/** Why an EVM requirement cannot be paid whatever the transfer method, else `undefined`. */
export function checkEvmRequirement(requirement: PaymentRequirement): string | undefined {
  if (toEvmChainId(requirement.caip2 ?? "") === undefined)
    return `network ${requirement.network} is not an EVM chain (eip155:<chain id>)`;
  const reason = checkAddress("payTo", requirement.payTo) ?? checkAddress("asset", requirement.asset);
  if (reason) return reason;
  if (requirement.maxTimeoutSeconds <= MIN_TIMEOUT_SECONDS) {
    return (
      `maxTimeoutSeconds ${requirement.maxTimeoutSeconds} is too short: facilitators need more than ` +
      `${MIN_TIMEOUT_SECONDS}`
    );
  }
  return undefined;
}

/** Why `value` (named `name`) is not an EVM address the server meant, else `undefined`. */
export function checkAddress(name: string, value: unknown): string | undefined {
  if (typeof value !== "string" || !isEvmAddress(value))
    return `${name} ${JSON.stringify(value)} is not an EVM address`;
  // Mixed case is an EIP-55 checksum (all lower or all upper case carries none); a wrong one is
  // a typo in the address, not a format.
  const hex = value.slice(2);
  if (hex !== hex.toLowerCase() && hex !== hex.toUpperCase() && checksumAddress(value) !== value)
    return `${name} ${value} has a wrong EIP-55 checksum (a mistyped address)`;
  return undefined;
}
