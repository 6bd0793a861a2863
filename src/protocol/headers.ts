/** Header names, as the reference sends them. HTTP header names are case-insensitive. */
export const PAYMENT_REQUIRED_HEADER = "PAYMENT-REQUIRED";
export const PAYMENT_SIGNATURE_HEADER = "PAYMENT-SIGNATURE";
export const PAYMENT_RESPONSE_HEADER = "PAYMENT-RESPONSE";
export const X_PAYMENT_HEADER = "X-PAYMENT";
export const X_PAYMENT_RESPONSE_HEADER = "X-PAYMENT-RESPONSE";

/** Headers that carry a signed payment, for either protocol version. */
export const PAYMENT_HEADERS = [PAYMENT_SIGNATURE_HEADER, X_PAYMENT_HEADER] as const;
/** Headers that carry a settlement result, v2 first. */
export const SETTLEMENT_HEADERS = [PAYMENT_RESPONSE_HEADER, X_PAYMENT_RESPONSE_HEADER] as const;

/** The request header that carries a payment for a protocol version. */
export function paymentHeaderName(x402Version: 1 | 2): string {
  return x402Version === 1 ? X_PAYMENT_HEADER : PAYMENT_SIGNATURE_HEADER;
}

/** Largest header value x402-pay will decode (64 KiB). */
export const MAX_HEADER_BYTES = 64 * 1024;
