export {
  createX402Client,
  type X402Client,
  type X402ClientOptions,
  type PaymentOption,
  type PaymentSnapshot,
  type PreparedPayment,
  type BeforePaymentResult,
} from "./create";
export { resolvePolicy, type SpendPolicy, type ResolvedPolicy } from "./policy";
export type { PaymentScheme, PaymentContext, RequestInfo } from "./types";
