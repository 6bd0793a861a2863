import type { KnownAsset, PaymentChallenge, PaymentRequirement, SchemePayload } from "../protocol";

/** The request being paid for, as the handshake sees it. */
export interface RequestInfo {
  readonly url: string;
  readonly method: string;
}

/** What a scheme gets besides the requirement when asked to build a payment. */
export interface PaymentContext {
  readonly challenge: PaymentChallenge;
  readonly request: RequestInfo;
}

/**
 * A way to pay: one scheme (`exact`, `upto`) on the networks it serves, with one wallet.
 * Schemes are values; `exactEvm({ signer })` returns one.
 */
export interface PaymentScheme {
  /** The `scheme` field this pays, e.g. `"exact"`. */
  readonly scheme: string;
  /** Network patterns served, CAIP-2 with `*` wildcards: `["eip155:*"]`. v1 names are matched by their CAIP-2 id. */
  readonly networks: readonly string[];
  /** Protocol versions served. */
  readonly x402Versions: readonly (1 | 2)[];
  /** The address that pays. */
  readonly payer: string;
  /** Protocol v1 network names this family knows, to CAIP-2 (`{ "base-sepolia": "eip155:84532" }`). */
  readonly v1Networks?: Readonly<Record<string, string>>;
  /** Stablecoins of this family whose decimals are known, so the spend policy can price them. */
  readonly knownAssets?: readonly KnownAsset[];
  /** Why this scheme cannot pay a requirement it matches (bad address, missing domain...), else `undefined`. */
  check(requirement: PaymentRequirement): string | undefined;
  /** Signs and returns the scheme payload. Called only after `check` passed, policy and hooks approved. */
  createPayload(requirement: PaymentRequirement, context: PaymentContext): Promise<SchemePayload>;
}
