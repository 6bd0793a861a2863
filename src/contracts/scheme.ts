/** The scheme contract: a way to pay one `scheme` on the networks it serves, with one wallet. */
import {
  matchesPattern,
  patternSpecificity,
  type KnownAsset,
  type PaymentChallenge,
  type PaymentRequirement,
  type SchemePayload,
} from "../protocol";
import type { X402Request } from "./payment";

/** What a scheme gets besides the requirement when asked to build a payment. */
export interface PaymentContext {
  readonly challenge: PaymentChallenge;
  readonly request: X402Request;
  /** The request's signal, for the scheme's own reads (RPC); the wallet call is raced against it too. */
  readonly signal?: AbortSignal | undefined;
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
  /**
   * Looks a payment up on its chain (a pending settlement, an unknown outcome): did the money move?
   * Present when the scheme was given a way to (`exactEvm({ settlement: evmSettlement({ rpc }) })`,
   * `exactSvm({ settlement: svmSettlement() })`).
   */
  checkSettlement?(query: SettlementQuery, signal?: AbortSignal): Promise<SettlementStatus>;
}

/** A payment to look up on its chain: what an outcome's error, a ledger record or a receipt says of it. */
export interface SettlementQuery {
  readonly scheme: string;
  /** CAIP-2. */
  readonly network: string;
  /** The transaction the server named, if any. */
  readonly transaction: string | undefined;
  readonly asset: string;
  readonly payTo: string;
  readonly payer: string;
  /** Atomic; for `upto`, the most the server may settle. */
  readonly amount: string;
  /** The signed PaymentPayload when it is known (an error's `details.payload`): its authorization is looked up too. */
  readonly payload?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * What the chain says of a payment: `settled` (the money moved: `amount`, in base units, when it is
 * known), `failed` (it did not, and can no longer move through this payment), or `pending` (not yet:
 * it may still move). `reason` says why.
 */
export type SettlementStatus =
  | {
      readonly state: "settled";
      readonly transaction: string | undefined;
      readonly amount: string | undefined;
      readonly reason: string;
    }
  | { readonly state: "failed" | "pending"; readonly transaction: string | undefined; readonly reason: string };

/** The schemes that pay `scheme` on `network` (and `version`, when given), most specific network pattern first. */
export function schemesFor(
  schemes: readonly PaymentScheme[],
  scheme: string,
  network: string,
  version?: 1 | 2,
): PaymentScheme[] {
  // -1: does not match; else the specificity of its most specific matching network pattern.
  const rank = (candidate: PaymentScheme) =>
    candidate.scheme !== scheme || (version !== undefined && !candidate.x402Versions.includes(version))
      ? -1
      : Math.max(
          -1,
          ...candidate.networks.filter((pattern) => matchesPattern(pattern, network)).map(patternSpecificity),
        );
  // A stable sort: among equally specific schemes, the first registered is asked first.
  return schemes.filter((candidate) => rank(candidate) >= 0).sort((a, b) => rank(b) - rank(a));
}
