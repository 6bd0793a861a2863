export { paymentJournal, type PaymentJournal, type PaymentJournalOptions } from "./journal";
export { memoryJournalStore } from "./memory";
export { recoverPayments, type PaidFetch, type RecoveredPayment, type RecoveryOptions } from "./recover";
