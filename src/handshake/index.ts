export { handlePaymentRequired, type Transport } from "./handshake";
export { getPaymentReceipt } from "./receipts";
export { readBody, BODY_LIMITS } from "./body";
export { redirectHop, browserOrigin, REDIRECT_STATUSES, type RedirectHop } from "./redirect";
