/** EVM `exact` via EIP-3009 `transferWithAuthorization`, protocol v1 and v2. */
import { bytesToHex, getAddress, isAddress } from "viem";
import type { PaymentScheme } from "../client";
import { SigningError } from "../errors";
import type { PaymentRequirement } from "../protocol";
import { EVM_KNOWN_ASSETS, EVM_V1_NETWORKS, toEvmChainId } from "./networks";
import { isEvmAddress, toEvmSigner, type EvmSignerInput, type Hex } from "./signer";

export interface ExactEvmOptions {
  signer: EvmSignerInput;
  /** Network patterns served. Default `["eip155:*"]`; v1 names (`base-sepolia`) match by chain id. */
  networks?: readonly string[] | undefined;
  /** Protocol versions served. Default `[1, 2]`. */
  x402Versions?: readonly (1 | 2)[] | undefined;
  /** Clock in milliseconds. Default `Date.now`. */
  now?: (() => number) | undefined;
  /** Source of random bytes for nonces. Default WebCrypto. */
  randomBytes?: ((length: number) => Uint8Array) | undefined;
}

/** Seconds the authorisation is back-dated, so a facilitator whose clock is behind still accepts it. */
const CLOCK_SKEW_SECONDS = 600;
/** The facilitator needs `validBefore` at least this far in its future. */
const MIN_TIMEOUT_SECONDS = 6;

const transferWithAuthorization = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
] as const;

/** Pays `exact` requirements on EVM chains by signing an EIP-3009 authorisation. */
export function exactEvm(options: ExactEvmOptions): PaymentScheme {
  const signer = toEvmSigner(options.signer);
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? ((length: number) => crypto.getRandomValues(new Uint8Array(length)));

  return {
    scheme: "exact",
    networks: options.networks ?? ["eip155:*"],
    x402Versions: options.x402Versions ?? [1, 2],
    payer: signer.address,
    v1Networks: EVM_V1_NETWORKS,
    knownAssets: EVM_KNOWN_ASSETS,

    check(requirement) {
      if (toEvmChainId(requirement.caip2 ?? "") === undefined) return `network ${requirement.network} is not an EVM chain (eip155:<chain id>)`;
      for (const [name, value] of [["payTo", requirement.payTo], ["asset", requirement.asset]] as const) {
        if (!isEvmAddress(value)) return `${name} ${JSON.stringify(value)} is not an EVM address`;
        // Mixed case is an EIP-55 checksum (all lower or all upper case carries none); a wrong one is
        // a typo in the address, not a format.
        const hex = value.slice(2);
        if (hex !== hex.toUpperCase() && !isAddress(value, { strict: true })) return `${name} ${value} has a wrong EIP-55 checksum (a mistyped address)`;
      }
      const method = requirement.extra.assetTransferMethod;
      if (method !== undefined && method !== "eip3009") return `asset transfer method ${JSON.stringify(method)} is not supported (only eip3009)`;
      const { name, version } = requirement.extra;
      if (typeof name !== "string" || !name || typeof version !== "string" || !version) {
        return "extra.name and extra.version (the token's EIP-712 domain) are missing";
      }
      if (requirement.maxTimeoutSeconds <= MIN_TIMEOUT_SECONDS) {
        return `maxTimeoutSeconds ${requirement.maxTimeoutSeconds} is too short: facilitators need more than ${MIN_TIMEOUT_SECONDS}`;
      }
      return undefined;
    },

    async createPayload(requirement: PaymentRequirement) {
      const seconds = Math.floor(now() / 1000);
      const authorization = {
        from: signer.address,
        to: getAddress(requirement.payTo),
        value: requirement.amount,
        validAfter: String(Math.max(0, seconds - CLOCK_SKEW_SECONDS)),
        // In BigInt: a timeout near 2^53 (allowed with policy.maxTimeoutSeconds: false) would round as a float sum.
        validBefore: String(BigInt(seconds) + BigInt(requirement.maxTimeoutSeconds)),
        nonce: bytesToHex(randomBytes(32)),
      };
      const signature = await signer.signTypedData({
        domain: {
          name: requirement.extra.name,
          version: requirement.extra.version,
          chainId: toEvmChainId(requirement.caip2 ?? ""),
          verifyingContract: getAddress(requirement.asset),
        },
        types: { TransferWithAuthorization: transferWithAuthorization },
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

/** Wallets that return a 65-byte signature with v = 0/1 get v = 27/28; longer (smart-wallet) signatures pass through. */
export function normalizeSignature(signature: unknown): Hex {
  if (typeof signature !== "string" || !/^0x(?:[0-9a-fA-F]{2})+$/.test(signature)) {
    throw new SigningError("The wallet returned something that is not a hex signature.");
  }
  if (signature.length !== 132) return signature as Hex;
  const v = parseInt(signature.slice(130), 16);
  return (v < 27 ? `${signature.slice(0, 130)}${(v + 27).toString(16)}` : signature) as Hex;
}
