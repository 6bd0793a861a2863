/** A payment attempt's outcome as the ledger records it. */
import { newRecordId, type LedgerOutcome, type LedgerRecord } from "../ledger";
import type { PaymentRequirement } from "../protocol";
import type { PaymentOutcome, PaymentTerms } from "./types";

/** Error codes of a payment the server refused: nothing was charged. */
const REJECTED = ["PAYMENT_REJECTED", "PERMIT2_ALLOWANCE_REQUIRED", "PAYMENT_ID_CONFLICT"];

/** The ledger's record of an outcome; `payment`: what was signed, if anything was. */
export function ledgerRecord(outcome: PaymentOutcome, payment?: { readonly terms: PaymentTerms; readonly requirement: PaymentRequirement }): LedgerRecord {
  const terms = outcome.settled ? outcome.receipt : payment?.terms;
  let state: LedgerOutcome;
  if (outcome.settled) state = outcome.receipt.settled ? "settled" : "unknown";
  else if (outcome.error.code === "PAYMENT_PENDING") state = "pending";
  else state = outcome.error.code === "PAYMENT_OUTCOME_UNKNOWN" ? "unknown" : REJECTED.includes(outcome.error.code) ? "rejected" : "refused";
  const receipt = outcome.settled ? outcome.receipt : undefined;
  const pending = !outcome.settled && outcome.error.code === "PAYMENT_PENDING" ? outcome.error.details : undefined;
  return {
    id: newRecordId(),
    time: new Date().toISOString(),
    outcome: state,
    code: outcome.settled ? undefined : outcome.error.code,
    url: outcome.request.url,
    method: outcome.request.method,
    scheme: terms?.scheme,
    network: payment?.requirement.caip2 ?? terms?.network,
    asset: terms?.asset,
    amount: terms?.amount,
    settledAmount: receipt?.settledAmount ?? (receipt?.settled && !receipt.upTo ? receipt.amount : undefined),
    transaction: receipt?.transaction ?? (pending?.transaction || undefined),
    payer: terms?.payer,
    payee: terms?.payTo,
  };
}
