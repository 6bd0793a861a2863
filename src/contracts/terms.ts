/** What a payment pays, as approvals, receipts and errors name it: the same fields for every payment and request. */
import { formatUnits, type KnownAsset, type PaymentRequirement } from "../protocol";
import type { EscrowTerms, PaymentFlow, PaymentTerms, X402Request } from "./payment";
import type { OpenPayment } from "./scheme";

/** What a payment of `requirement` pays, frozen: what the hooks see and a receipt starts from. */
export function termsOf(
  requirement: PaymentRequirement,
  request: X402Request,
  {
    payer,
    asset,
    session,
    flow,
    escrow,
  }: {
    payer: string;
    /** Its decimals and symbol, when known: the amount is then shown (`"0.001 USDC"`). */
    asset: KnownAsset | undefined;
    flow: PaymentFlow;
    escrow?: EscrowTerms | undefined;
    /** A stateful scheme's open payment: what it moves into its channel, and how. */
    session?: Pick<OpenPayment, "deposit" | "kind"> | undefined;
  },
): PaymentTerms {
  // An escrowed payment is a most too: the operator captures what it charges and voids the rest.
  const upTo = requirement.scheme === "upto" || escrow !== undefined;
  const displayAmount =
    asset && `${upTo ? "up to " : ""}${formatUnits(BigInt(requirement.amount), asset.decimals)} ${asset.symbol}`;
  return Object.freeze({
    x402Version: requirement.x402Version,
    url: request.url,
    method: request.method,
    requirement: requirement.raw,
    scheme: requirement.scheme,
    network: requirement.network,
    amount: requirement.amount,
    upTo,
    displayAmount,
    asset: requirement.asset,
    payTo: requirement.payTo,
    payer,
    ...(session?.deposit !== undefined && { deposit: session.deposit }),
    ...(session && { kind: session.kind }),
    flow,
    ...(escrow && { escrow }),
  });
}
