export { handlePaymentRequired, type Transport } from "./handshake";
export { getPaymentReceipt } from "./receipts";
export { readBody, bodySource, BODY_LIMITS } from "./body";
export { redirectHop, REDIRECT_STATUSES, type RedirectHop } from "./redirect";
export { browserOrigin, throwIfPreflightRefused } from "./browser";
