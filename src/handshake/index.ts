export { handlePaymentRequired, planRequest, resendPayment, type Transport, type ResendablePayment } from "./handshake";
export { readPaymentOptions, type PaymentRequestOptions } from "./options";
export { getPaymentReceipt } from "./receipts";
export { readBody, BODY_LIMITS } from "./body";
export { followRedirects, redirectHop, type Hops, type RedirectRules } from "./redirect";
export { browserOrigin, sendFromPage, throwIfPreflightRefused, type PageSend } from "./browser";
