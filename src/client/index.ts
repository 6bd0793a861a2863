export {
  createX402Client,
  assertX402Client,
  type X402Client,
  type X402ClientOptions,
  type PaymentOption,
  type PaymentSnapshot,
  type PreparedPayment,
  type BeforePaymentResult,
} from "./create";
export type { SettlementSource } from "./settlement";
export { createQuoteCache, routeOf, PROBE_WAIT_MS, type QuoteCache, type QuoteCacheOptions } from "./quotes";
export { checkOptions, checkPaymentId, every, fail, is, nonEmpty, show } from "./options";
export { resolvePolicy, type SpendPolicy, type ResolvedPolicy, type AssetCap } from "./policy";
export type {
  PaymentScheme,
  PaymentContext,
  X402Request,
  RequestGuard,
  PaymentReceipt,
  PaymentTerms,
  PaymentOutcome,
  X402Extension,
  ExtensionContext,
  EnrichContext,
  RequirementReview,
  SettlementContext,
  SettlementQuery,
  SettlementStatus,
} from "./types";
