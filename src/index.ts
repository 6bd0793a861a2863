// The root entry: what a user of the wrappers needs. The client and its types, the plug-ins, receipts
// and errors' base. Error classes are in `x402-pay/errors`, protocol helpers in `x402-pay/protocol`.
export { createX402Client } from "./client";
// How a scheme sends the requests its state builds (a refund): through the stack you pay with.
export type { PayingStack, PayingFetch, PayingAxios } from "./contracts";
// Plug-ins, each in its own folder: a bundle holds only those it imports.
export {
  signInWithX,
  type SignInWithXOptions,
  type EvmMessageSignerInput,
  type MessageWalletClientLike,
  type SolanaMessageSignerInput,
  type SignableMessageLike,
  type KitMessagePartialSignerLike,
  type KitMessageModifyingSignerLike,
} from "./extensions/sign-in-with-x";
// The wallets sign-in takes, structurally (the same declarations as x402-pay/evm's and x402-pay/svm's).
export type { EvmMessageSigner, Hex } from "./evm";
export type { WalletStandardWalletLike, WalletStandardAccountLike } from "./svm";
export { builderCode } from "./extensions/builder-code";
export {
  budget,
  memoryBudgetStore,
  type BudgetOptions,
  type BudgetWindow,
  type BudgetScope,
  type BudgetPayment,
} from "./extensions/budget";
export {
  memoryLedger,
  recordOutcomes,
  spendBy,
  unreconciled,
  reconcile,
  reconcileOnChain,
  type ChainReconciliation,
  type LedgerPluginOptions,
  type SpendGrouping,
  type SpendRow,
  type SpendQuery,
} from "./extensions/ledger";
export { quoteCache, type QuoteCacheOptions, type QuoteCache } from "./extensions/quote-cache";
export {
  paymentJournal,
  memoryJournalStore,
  recoverPayments,
  type PaymentJournal,
  type PaymentJournalOptions,
  type RecoveredPayment,
  type RecoveryOptions,
  type PaidFetch,
} from "./extensions/journal";
export { checkSettlement, type SettlementSource } from "./settlement";
export { handlePaymentRequired, resendPayment, getPaymentReceipt } from "./handshake";
export { X402Error, isX402Error } from "./errors";
// The types every entry shares (the client, the contracts and stores, the handshake's options, the wire shapes, and
// the error classes and their details, by type: to throw one or test `instanceof`, import it from `x402-pay/errors`).
export type * from "./entries/types";
