export { handlePaymentRequired, planRequest } from "./handshake";
export type { Transport } from "./transport";
export { resendPayment, type ResendablePayment } from "./resend";
export { readPaymentOptions, type PaymentRequestOptions } from "./options";
export { getPaymentReceipt } from "./receipts";
export { readBody, BODY_LIMITS } from "./body";
export { followRedirects, redirectHop, type Hops, type RedirectRules } from "./redirect";
export { browserOrigin, sendFromPage, throwIfPreflightRefused, type PageSend } from "./browser";
