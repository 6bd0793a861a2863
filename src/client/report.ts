/** Reporting how a payment attempt ended: reservations settled, then plug-ins and hooks told, once. */
import type { PaymentOutcome, Reservation } from "../contracts";
import { MONEY_MAY_HAVE_MOVED } from "../errors";
import { observe } from "./call";
import { declares, type Setup } from "./setup";

/**
 * Settles the attempt's reservations (settled: what was settled; unknown or pending: the maximum; else
 * released), then tells the plug-ins (those with a key only where the 402 declared it), then the
 * outcome hooks. Never throws. With a plug-in that keeps the payment (a journal), money that may have moved stays
 * reserved, counted all the same: its entry names the reservations, and whoever learns the end (a resending of the
 * kept payment, recovery) commits or releases them.
 */
export async function report(
  setup: Setup,
  outcome: PaymentOutcome,
  reservations: readonly Reservation[] = [],
): Promise<void> {
  const kept = setup.plugins.some((plugin) => plugin.resume);
  for (const reservation of reservations) {
    if (outcome.settled) await reservation.commit(outcome.receipt.settled ? outcome.receipt.settledAmount : undefined);
    // Money that may have moved stays counted until it is reconciled.
    else if (MONEY_MAY_HAVE_MOVED.includes(outcome.error.code)) {
      if (!kept) await reservation.commit();
    } else await reservation.release();
  }
  const { onPaymentSettled, onPaymentFailed } = setup.hooks;
  await observe([
    ...setup.plugins
      .filter((plugin) => plugin.onOutcome && (plugin.key === undefined || declares(outcome.challenge, plugin.key)))
      .map((plugin) => () => plugin.onOutcome!(outcome)),
    outcome.settled ? () => onPaymentSettled?.(outcome.receipt) : () => onPaymentFailed?.(outcome.error),
  ]);
}
