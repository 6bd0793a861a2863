/** A payment attempt's outcome as the ledger records it, and the plug-in that records every outcome. */
import {
  fail,
  show,
  type ChannelRefund,
  type Ledger,
  type LedgerOutcome,
  type LedgerRecord,
  type PaymentOutcome,
  type X402Plugin,
} from "../../contracts";
import { randomId } from "../../protocol";

/** Error codes of a payment the server refused: nothing was charged. */
const REJECTED = ["PAYMENT_REJECTED", "PERMIT2_ALLOWANCE_REQUIRED", "PAYMENT_ID_CONFLICT"];

/** The ledger's record of an outcome (`outcome.payment`: what was signed, if anything was). */
export function ledgerRecord(outcome: PaymentOutcome): LedgerRecord {
  const { payment } = outcome;
  const terms = outcome.settled ? outcome.receipt : payment?.terms;
  let state: LedgerOutcome;
  if (outcome.settled) state = outcome.receipt.settled ? "settled" : "unknown";
  else if (outcome.error.code === "PAYMENT_PENDING") state = "pending";
  else
    state =
      outcome.error.code === "PAYMENT_OUTCOME_UNKNOWN"
        ? "unknown"
        : REJECTED.includes(outcome.error.code)
          ? "rejected"
          : "refused";
  const receipt = outcome.settled ? outcome.receipt : undefined;
  const pending = !outcome.settled && outcome.error.code === "PAYMENT_PENDING" ? outcome.error.details : undefined;
  return {
    id: randomId(),
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
    ...(outcome.attempt && { attempt: outcome.attempt }),
    ...(terms?.flow && { flow: terms.flow }),
    ...(terms?.kind && { kind: terms.kind }),
    ...(terms?.deposit !== undefined && { deposit: terms.deposit }),
    ...(receipt?.channel && { channel: receipt.channel.id }),
    ...(terms?.escrow && { escrow: terms.escrow }),
  };
}

export interface LedgerPluginOptions {
  /**
   * Names the ledger among the client's plug-ins (`ledger <name>`), so that one client can record to two ledgers.
   * Default: the plug-in is named `ledger`.
   */
  readonly name?: string | undefined;
}

/** The plug-in name of a ledger named `name`: `ledger`, or `ledger <name>`. */
export function ledgerPluginName(name: unknown): string {
  if (name === undefined) return "ledger";
  if (typeof name !== "string" || !/^[\w./-]{1,64}$/.test(name))
    fail("ledger.name", `${show(name)} is not 1 to 64 characters of a-z, A-Z, 0-9, _, ., / and -`);
  return `ledger ${name}`;
}

/**
 * A ledger store as a plug-in: every payment attempt's outcome is appended once, before the call returns,
 * whatever the hooks do. The stores x402-pay makes are plug-ins already (`memoryLedger()`, `fileLedger`,
 * `redisLedger`); this makes one of your own one: `plugins: [recordOutcomes(myLedger)]`. `{ name }` tells two
 * ledgers of one client apart.
 */
export function recordOutcomes<L extends Ledger>(ledger: L, options: LedgerPluginOptions = {}): L & X402Plugin {
  if (typeof ledger?.append !== "function" || typeof ledger.records !== "function")
    fail("ledger", `${show(ledger)} is not a ledger { append, records }`);
  const name = ledgerPluginName(options?.name);
  // A ledger that fails cannot undo the payment, nor turn a paid response into an error: the client ignores what this
  // throws.
  return Object.assign(ledger, {
    name,
    onOutcome: (outcome: PaymentOutcome) => ledger.append(ledgerRecord(outcome)),
    onRefund: (refund: ChannelRefund) => ledger.append(refundRecord(refund)),
  });
}

/** The record of money come back from a channel: `kind: "refund"`, settled for what came back. */
export function refundRecord(refund: ChannelRefund): LedgerRecord {
  return {
    id: randomId(),
    time: new Date().toISOString(),
    outcome: "settled",
    url: refund.url,
    method: "GET",
    scheme: refund.scheme,
    network: refund.network,
    asset: refund.asset,
    amount: refund.amount,
    settledAmount: refund.amount,
    transaction: refund.transaction,
    payer: refund.payer,
    payee: refund.payTo,
    kind: "refund",
    channel: refund.channel,
  };
}
