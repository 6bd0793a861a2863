/**
 * `x402-pay/offers`: signed offers and receipts (the draft `offer-and-receipt` extension), off by
 * default. `offerReceipt()` checks the offers a 402 carries before anything is chosen: each offer is
 * matched to the `accepts` entry with the same fields (its `acceptIndex` is only a hint), must be for
 * this resource and still valid, and must verify; a requirement whose offer fails is dropped with the
 * reason. With `requireSigner`, only requirements with a valid offer from that signer are paid. The
 * signed receipt of a settlement is checked the same way and attached to the payment receipt.
 */
import type { PaymentRequirement, PaymentChallenge } from "../../protocol";
import type { RequirementReview, X402Plugin } from "../../contracts";
import {
  OFFER_RECEIPT,
  verifyOffer,
  verifyReceipt,
  type OfferPayload,
  type ReceiptPayload,
  type Signed,
} from "./verify";

export interface OfferReceiptOptions {
  /**
   * Pay only requirements that carry a valid offer signed by: `"payTo"`, the requirement's own
   * receiving address (an EIP-712 offer recovering to it), or one of the listed signers (EVM
   * addresses, or the DIDs of JWS keys). Default: none required; an offer that fails still drops
   * the requirement it names. Without it, an EIP-712 offer proves only that some key signed those
   * terms: a field changed on the way recovers another address, which nothing then refuses.
   */
  requireSigner?: "payTo" | readonly string[] | undefined;
  /** The clock offers' `validUntil` is read against, in ms. Default `Date.now`. */
  now?: (() => number) | undefined;
}

/** What the offers of one challenge say about each requirement, by index in `accepts`. */
export interface OfferReview {
  /** The verified offer of each requirement that has one. */
  readonly offers: ReadonlyMap<number, Signed<OfferPayload>>;
  /** Requirements to drop, with the reason. */
  readonly refused: readonly RequirementReview[];
}

/** Checks every offer of `challenge` against its requirements (exported for callers who select by hand). */
export async function reviewOffers(
  challenge: PaymentChallenge,
  resourceUrl: string,
  options: OfferReceiptOptions = {},
): Promise<OfferReview> {
  const info = Object(Object(challenge.extensions?.[OFFER_RECEIPT]).info) as { offers?: unknown };
  const listed = Array.isArray(info.offers) ? info.offers : [];
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000);
  const offers = new Map<number, Signed<OfferPayload>>();
  const refused = new Map<number, RequirementReview>();
  const refuse = (index: number, code: RequirementReview["code"], reason: string) => {
    if (!refused.has(index)) refused.set(index, { index, code, reason });
  };

  for (const offer of listed) {
    const hint = Object(offer).acceptIndex;
    const checked = await verifyOffer(offer);
    if (!checked.ok) {
      // An offer that does not verify vouches for nothing; the entry it names is not paid.
      if (Number.isSafeInteger(hint)) refuse(hint, "invalid", `its signed offer is refused: ${checked.reason}`);
      continue;
    }
    const { payload } = checked.value;
    const requirement = matchRequirement(challenge.requirements, payload, hint);
    if (!requirement) {
      if (Number.isSafeInteger(hint))
        refuse(hint, "invalid", "its signed offer commits to other terms (scheme, network, asset, payTo or amount)");
      continue;
    }
    if (payload.resourceUrl !== resourceUrl) {
      refuse(requirement.index, "invalid", `its signed offer is for ${payload.resourceUrl}, not ${resourceUrl}`);
    } else if (payload.validUntil && payload.validUntil < nowSeconds) {
      refuse(
        requirement.index,
        "invalid",
        `its signed offer expired at ${new Date(payload.validUntil * 1000).toISOString()}`,
      );
    } else if (!offers.has(requirement.index) || acceptedSigner(options, requirement, checked.value.signer)) {
      offers.set(requirement.index, checked.value);
    }
  }

  if (options.requireSigner) {
    for (const requirement of challenge.requirements) {
      const offer = offers.get(requirement.index);
      if (!offer)
        refuse(
          requirement.index,
          "policy",
          "it carries no valid signed offer, and offerReceipt({ requireSigner }) asks for one",
        );
      else if (!acceptedSigner(options, requirement, offer.signer)) {
        refuse(
          requirement.index,
          "policy",
          `its offer is signed by ${offer.signer}, not by ` +
            `${options.requireSigner === "payTo" ? "its payTo" : "an accepted signer"} (signed by another key, or ` +
            `changed after signing)`,
        );
      }
    }
  }
  for (const index of refused.keys()) offers.delete(index);
  return { offers, refused: [...refused.values()] };
}

/** The requirement an offer commits to: the hinted entry if its fields match, else the first that does. */
function matchRequirement(
  requirements: readonly PaymentRequirement[],
  offer: OfferPayload,
  hint: unknown,
): PaymentRequirement | undefined {
  const matches = (r: PaymentRequirement) =>
    (r.caip2 ?? r.network) === offer.network &&
    r.scheme === offer.scheme &&
    r.asset === offer.asset &&
    r.payTo === offer.payTo &&
    r.amount === offer.amount;
  const hinted = requirements.find((r) => r.index === hint);
  return hinted && matches(hinted) ? hinted : requirements.find(matches);
}

function acceptedSigner(
  { requireSigner }: OfferReceiptOptions,
  requirement: PaymentRequirement,
  signer: string,
): boolean {
  const same = (a: string, b: string) => (a.startsWith("0x") ? a.toLowerCase() === b.toLowerCase() : a === b);
  if (!requireSigner) return true;
  return requireSigner === "payTo"
    ? same(signer, requirement.payTo)
    : requireSigner.some((accepted) => same(accepted, signer));
}

/** The checked receipt attached to a payment receipt (`receipt.extensions["offer-receipt"]`). */
export type CheckedReceipt =
  | { readonly verified: true; readonly receipt: Signed<ReceiptPayload> }
  | { readonly verified: false; readonly reason: string };

/**
 * The `offer-receipt` extension, as a plug-in: `createX402Client({ schemes, plugins: [offerReceipt()] })`.
 * Requirements whose offers fail are refused before the spend policy sees them; the settlement's
 * signed receipt is checked and attached to the payment receipt.
 */
export function offerReceipt(options: OfferReceiptOptions = {}): X402Plugin {
  return {
    name: "offer-receipt",
    key: OFFER_RECEIPT,
    async reviewRequirements({ challenge, request }) {
      return (await reviewOffers(challenge, challenge.resource?.url ?? request.url, options)).refused;
    },
    async describeSettlement({ settlement }): Promise<CheckedReceipt | undefined> {
      const receipt = Object(Object(settlement.extensions?.[OFFER_RECEIPT]).info).receipt;
      if (receipt === undefined) return undefined;
      const checked = await verifyReceipt(receipt);
      return checked.ok ? { verified: true, receipt: checked.value } : { verified: false, reason: checked.reason };
    },
  };
}
