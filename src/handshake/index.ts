export { handlePaymentRequired, planRequest, resendPayment, type Transport, type ResendablePayment } from "./handshake";
export { readPaymentOptions, type PaymentRequestOptions } from "./options";
export { getPaymentReceipt } from "./receipts";
export { readBody, BODY_LIMITS } from "./body";
export { redirectHop, REDIRECT_STATUSES, type RedirectHop } from "./redirect";
export { browserOrigin, throwIfPreflightRefused } from "./browser";
