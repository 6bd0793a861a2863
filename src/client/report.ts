/** Reporting how a payment attempt ended: reservations settled, then plug-ins and hooks told, once. */
import type { PaymentOutcome, Reservation, X402Plugin } from "../contracts";
import { MONEY_MAY_HAVE_MOVED } from "../errors";
import { observe } from "./call";
import { declares, type Setup } from "./setup";

/**
 * Settles the attempt's reservations (settled: what was settled; unknown or pending: the maximum; else
 * released), then tells the plug-ins (those with a key only where the 402 declared it), then the
 * outcome hooks. Never throws. With a plug-in that keeps the payment (a journal), money that may have moved stays
 * reserved, counted all the same: its entry names the reservations, and whoever learns the end (a resending of the
 * kept payment, recovery) commits or releases them. Such a plug-in hears the outcome last, and only once the
 * reservations and every other plug-in took it (a ledger wrote it): else its entry stays open, and recovery ends
 * what was left undone.
 */
export async function report(
  setup: Setup,
  outcome: PaymentOutcome,
  reservations: readonly Reservation[] = [],
): Promise<void> {
  const keepers = setup.plugins.filter((plugin) => plugin.resume);
  const ends = reservations.map((reservation) => () => {
    if (outcome.settled) return reservation.commit(outcome.receipt.settled ? outcome.receipt.settledAmount : undefined);
    // Money that may have moved stays counted until it is reconciled.
    if (MONEY_MAY_HAVE_MOVED.includes(outcome.error.code)) return keepers.length > 0 ? undefined : reservation.commit();
    return reservation.release();
  });
  const told = (plugin: X402Plugin) =>
    plugin.onOutcome && (plugin.key === undefined || declares(outcome.challenge, plugin.key));
  const tell = (plugins: readonly X402Plugin[]) =>
    plugins.filter(told).map((plugin) => () => plugin.onOutcome!(outcome));
  const whole = (await observe(ends)) && (await observe(tell(setup.plugins.filter((p) => !keepers.includes(p)))));
  if (whole) await observe(tell(keepers));
  const { onPaymentSettled, onPaymentFailed } = setup.hooks;
  await observe([outcome.settled ? () => onPaymentSettled?.(outcome.receipt) : () => onPaymentFailed?.(outcome.error)]);
}
