/** The scheme contract: a way to pay one `scheme` on the networks it serves, with one wallet. */
import {
  matchesPattern,
  patternSpecificity,
  type KnownAsset,
  type PaymentChallenge,
  type PaymentRequirement,
  type SchemePayload,
  type SettleResponse,
} from "../protocol";
import type { ChannelRefund, EscrowTerms, PaymentFlow, PaymentOutcome, PaymentTerms, X402Request } from "./payment";

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
  /**
   * The payment flows this scheme's payments can have (`extra.paymentFlow`), the first its default when a requirement
   * names none; a requirement naming another is not payable. Default `["authorization", "upfront"]`.
   */
  readonly flows?: readonly PaymentFlow[] | undefined;
  /**
   * What a payment of `requirement` through an escrow gives the buyer (auth-capture): shown to the policy (its
   * `maxFeeBps`), hooks and receipts. Called only after `check` passed.
   */
  escrow?(requirement: PaymentRequirement): EscrowTerms | undefined;
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
  /**
   * For a scheme whose payments depend on state it keeps (batch-settlement's channel): opens one payment, before
   * budgets, hooks and the wallet see it, so that they see what it moves (a deposit). The client then signs through
   * the open payment, not `createPayload`, tells it the server's answer, and closes it once.
   */
  open?(requirement: PaymentRequirement, context: OpenContext): Promise<OpenPayment>;
  /**
   * For a scheme whose payments depend on state it keeps: a payment an earlier attempt signed (`payload`, kept by a
   * journal) about to be sent again as it is, held as `open` holds a new one and told the answer, then closed. Throws
   * a typed error when it must not be sent (its state gave its amount to another payment); `undefined`: send it as
   * it is, nothing held.
   */
  resend?(
    payload: Readonly<Record<string, unknown>>,
    context: ResendContext,
  ): Promise<Pick<OpenPayment, "accepted" | "refused" | "close"> | undefined>;
  /**
   * How a payment this scheme signed ended, once, before the plug-ins and hooks are told (the outcome they see): for
   * what a scheme keeps between payments. `exactSvm` reads a mint again after a refused payment. What it throws is
   * ignored.
   */
  onOutcome?(outcome: PaymentOutcome): void | Promise<void>;
}

/** What `resend` is told: the request sending the kept payment, and what it pays. */
export interface ResendContext {
  readonly request: X402Request;
  readonly signal?: AbortSignal | undefined;
  /** The requirement the payment answered, as offered. */
  readonly requirement: PaymentRequirement;
  /** The attempt that signed it (a journal entry's `id`), when known. */
  readonly attempt?: string | undefined;
}

/** What `open` is told besides the payment context. */
export interface OpenContext extends PaymentContext {
  /**
   * The most the spend policy lets one payment move from the wallet in this asset (base units): a deposit is sized
   * within it. `undefined`: the policy sets no cap on this asset.
   */
  readonly limit: bigint | undefined;
  /** The attempt's id (`ReserveContext.attempt`): a channel names it as the signer of its voucher. */
  readonly attempt?: string | undefined;
}

/** What a payment does to its channel: opens it with a deposit, tops it up, or pays by voucher alone. */
export type ChannelPaymentKind = "deposit" | "top-up" | "voucher";

/** What a channel looks like after a payment, as its receipt shows it. Amounts in base units. */
export interface ChannelSnapshot {
  readonly id: string;
  /** Held in the channel: deposits less refunds and withdrawals. */
  readonly balance: string;
  /** Charged in all by the server (cumulative), as checked against our own vouchers. */
  readonly charged: string;
}

/** What the server's answer to an open payment came to. */
export interface OpenOutcome {
  /** What this call was charged (base units): what budgets count as spent and receipts show. */
  readonly charge: string;
  readonly channel?: ChannelSnapshot | undefined;
  /** Money that came back to the wallet (a session request's refund): the client's plug-ins are told of it. */
  readonly refund?: ChannelRefund | undefined;
}

/**
 * One payment of a scheme that keeps state, from before approval until its answer is read. `close` is called
 * once, whatever happened; until then the state is held for this payment alone (a lock across processes).
 */
export interface OpenPayment {
  /** Money this payment moves from the wallet beyond its price (base units): a deposit or top-up of a channel. */
  readonly deposit?: string | undefined;
  /** What the payment does to its channel: opens it with a deposit, tops it up, or pays by voucher alone. */
  readonly kind: ChannelPaymentKind;
  /** The id of the channel that pays, by which budgets hold what it holds. */
  readonly channel: string;
  /** Signs, once the policy, the budgets and the hooks approved. */
  createPayload(): Promise<SchemePayload>;
  /**
   * The server accepted the payment and reported `settlement`: checks it and keeps the state. Never throws: an account
   * that does not hold up is kept at our worst case and stops further payments on that state.
   */
  accepted(settlement: SettleResponse | undefined): Promise<OpenOutcome>;
  /**
   * The server refused the payment with a 402 (`challenge`, when readable; `reason`, its code): `true` when the state
   * was corrected from it, checked against the chain and our own signatures, so that paying once more can succeed.
   * Throws a typed error when the server's account does not hold up.
   */
  refused(challenge: PaymentChallenge | undefined, reason: string | undefined): Promise<boolean>;
  /** The payment is over: what it holds is let go. */
  close(): Promise<void>;
}

/**
 * A request a scheme's state builds itself, beside the payments it makes (a batch-settlement refund, the look at a
 * seller's terms a withdrawal needs). It is sent through the caller's own paying stack (`x402: { session }` on a
 * wrapped fetch or axios instance: see `sendSessionRequest`), so it takes the same handshake as a payment: one
 * envelope, one header table, one bounded read of the 402, one correction round. It moves no money from the wallet,
 * so no policy, budget or approval is asked; what comes back is told to the client's plug-ins.
 */
export interface SessionRequest {
  /**
   * The seller's terms came (its 402): the payment to send, or `undefined` when the terms were all that was needed
   * (the 402 is then the answer). Asked once more after a refusal the payment corrected its state from.
   */
  prepare(challenge: PaymentChallenge, request: X402Request): Promise<SessionPayment | undefined>;
}

/**
 * What a session request sends, signed and in the envelope every payment takes (`toSessionPayment` builds it from the
 * scheme's payload), and how the scheme reads the seller's answer.
 */
export interface SessionPayment extends Pick<OpenPayment, "accepted" | "refused"> {
  /** The payment header's name and value (`PAYMENT-SIGNATURE`, the base64 envelope). */
  readonly headerName: string;
  readonly headerValue: string;
  /** The envelope (a PaymentPayload). */
  readonly payload: Readonly<Record<string, unknown>>;
  /** The requirement answered (`accepted` in the envelope), as the 402 offered it. */
  readonly requirement: PaymentRequirement;
  /** What the request pays, as errors and receipts name it. */
  readonly terms: PaymentTerms;
  /** The address that signed. */
  readonly payer: string;
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
  /**
   * The attempt that signed it (a journal entry's `id`), when known: a batch-settlement voucher is found by it in its
   * channel's state.
   */
  readonly attempt?: string | undefined;
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
  const rank = (candidate: PaymentScheme) => {
    let best = -1;
    if (candidate.scheme !== scheme || (version !== undefined && !candidate.x402Versions.includes(version)))
      return best;
    for (const pattern of candidate.networks)
      if (matchesPattern(pattern, network)) best = Math.max(best, patternSpecificity(pattern));
    return best;
  };
  const ranked = schemes.map((candidate) => ({ candidate, rank: rank(candidate) })).filter((r) => r.rank >= 0);
  // A stable sort: among equally specific schemes, the first registered is asked first.
  return ranked.sort((a, b) => b.rank - a.rank).map((r) => r.candidate);
}
