export {
  schemesFor,
  type PaymentScheme,
  type PaymentContext,
  type OpenContext,
  type ResendContext,
  type OpenPayment,
  type OpenOutcome,
  type ChannelSnapshot,
  type ChannelPaymentKind,
  type SettlementQuery,
  type SettlementStatus,
  type SessionRequest,
  type SessionPayment,
} from "./scheme";
export { termsOf } from "./terms";
export { sendSessionRequest, toSessionPayment, type PayingStack, type PayingFetch, type PayingAxios } from "./session";
export { PAYMENT_FLOWS, type PaymentFlow } from "./payment";
export type {
  X402Request,
  RequestGuard,
  PaymentTerms,
  EscrowTerms,
  PaymentSnapshot,
  PaymentReceipt,
  PaymentOutcome,
  SignedPayment,
  ChannelRefund,
} from "./payment";
export {
  UNFINISHED,
  journalRefuses,
  parseJournalEntry,
  type JournalEntry,
  type JournalPutOptions,
  type JournalState,
  type JournalStore,
  type KeptPayment,
  type PaymentHeader,
} from "./journal";
export {
  PLUGIN_STEPS,
  type MaybePromise,
  type X402Plugin,
  type ExtensionContext,
  type EnrichContext,
  type SettlementContext,
  type RequirementReview,
  type ReserveContext,
  type ReservedAttempt,
  type Reservation,
  type ResumeContext,
} from "./plugin";
export type {
  BudgetEntry,
  BudgetUsage,
  BudgetStore,
  HoldChange,
  HoldAnswer,
  LedgerOutcome,
  LedgerRecord,
  Ledger,
  SignInStore,
  ChannelState,
  ChannelStore,
  ChannelHold,
} from "./stores";
export { backoff, channelLines, channelStateFrom, channelStateJson, checkChannelId, pause } from "./channels";
export { checkOptions, checkPaymentId, every, fail, is, isFunction, nonEmpty, show, type Check } from "./options";
