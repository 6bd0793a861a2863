export { handlePaymentRequired, type Transport } from "./handshake";
export { getPaymentReceipt, type PaymentReceipt } from "./receipts";
