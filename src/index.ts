// The root entry: what a user of the wrappers needs. The client and its types, the plug-ins, receipts
// and errors' base. Error classes are in `x402-pay/errors`, protocol helpers in `x402-pay/protocol`.
export {
  createX402Client,
  type X402Client,
  type X402ClientOptions,
  type Quote,
  type PaymentOption,
  type BeforePaymentResult,
  type SpendPolicy,
  type ResolvedPolicy,
  type AssetCap,
  type PaymentCeiling,
} from "./client";
export type {
  PaymentScheme,
  PaymentContext,
  SettlementQuery,
  SettlementStatus,
  X402Request,
  RequestGuard,
  PaymentTerms,
  EscrowTerms,
  PaymentSnapshot,
  PaymentReceipt,
  PaymentOutcome,
  SignedPayment,
  X402Plugin,
  ExtensionContext,
  EnrichContext,
  SettlementContext,
  RequirementReview,
  ReserveContext,
  Reservation,
  BudgetStore,
  BudgetEntry,
  BudgetUsage,
  HoldChange,
  HoldAnswer,
  ChannelRefund,
  Ledger,
  LedgerRecord,
  LedgerOutcome,
  SignInStore,
  SessionRequest,
  SessionPayment,
  PayingStack,
  PayingFetch,
  PayingAxios,
} from "./contracts";
// Plug-ins, each in its own folder: a bundle holds only those it imports.
export { signInWithX, type SignInWithXOptions } from "./extensions/sign-in-with-x";
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
export { quoteCache, type QuoteCacheOptions } from "./extensions/quote-cache";
export { checkSettlement, type SettlementSource } from "./settlement";
export {
  handlePaymentRequired,
  resendPayment,
  getPaymentReceipt,
  type Transport,
  type PaymentRequestOptions,
  type ResendablePayment,
} from "./handshake";
export { X402Error, isX402Error, type AnyX402Error, type X402ErrorCode, type ErrorPhase } from "./errors";
export type {
  PaymentRequiredV1,
  PaymentRequiredV2,
  PaymentRequirementsV1,
  PaymentRequirementsV2,
  PaymentPayloadV1,
  PaymentPayloadV2,
  SettleResponse,
  ResourceInfo,
} from "./protocol";
