import type { SettleResponse } from "../protocol";

/** What was paid for a response: the requirement, the payer, and the server's settlement. */
export interface PaymentReceipt {
  readonly x402Version: 1 | 2;
  /** The requirement paid, verbatim as offered. */
  readonly requirement: Readonly<Record<string, unknown>>;
  readonly scheme: string;
  readonly network: string;
  /** Atomic amount authorised. */
  readonly amount: string;
  readonly asset: string;
  readonly payTo: string;
  readonly payer: string;
  /** The decoded PAYMENT-RESPONSE (or X-PAYMENT-RESPONSE); `undefined` if the server sent none readable. */
  readonly settlement: SettleResponse | undefined;
  /** Settlement transaction, when the server reported one. */
  readonly transaction: string | undefined;
}

// One store per realm, shared by every copy of this module (ESM and CJS builds, bundles).
const storeKey = Symbol.for("x402-pay.receipts");
const store: WeakMap<object, PaymentReceipt> = ((globalThis as Record<symbol, unknown>)[storeKey] ??= new WeakMap()) as WeakMap<
  object,
  PaymentReceipt
>;

/** The receipt of a response that x402-pay paid for, or `undefined` if it paid nothing for it. */
export function getPaymentReceipt(response: object): PaymentReceipt | undefined {
  return store.get(response);
}

export function recordReceipt(response: object, receipt: PaymentReceipt): void {
  store.set(response, Object.freeze(receipt));
}
