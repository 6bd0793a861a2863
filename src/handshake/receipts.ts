import type { PaymentReceipt } from "../contracts";

// One store per realm, shared by every copy of this module (ESM and CJS builds, bundles).
const storeKey = Symbol.for("x402-pay.receipts");
const store: WeakMap<object, PaymentReceipt> = ((globalThis as Record<symbol, unknown>)[storeKey] ??=
  new WeakMap()) as WeakMap<object, PaymentReceipt>;

/** The receipt of a response that x402-pay paid for (or of a clone of it), or `undefined` if it paid nothing for it. */
export function getPaymentReceipt(response: object): PaymentReceipt | undefined {
  return store.get(response);
}

/** Records the receipt; a response with a `clone()` (fetch's) passes it on to its clones. */
export function recordReceipt(response: object, receipt: PaymentReceipt): void {
  store.set(response, Object.freeze(receipt));
  const clone = (response as { clone?: unknown }).clone;
  if (typeof clone === "function") {
    Object.defineProperty(response, "clone", {
      configurable: true,
      writable: true,
      value(this: object) {
        const copy = clone.call(this) as object;
        recordReceipt(copy, receipt);
        return copy;
      },
    });
  }
}
