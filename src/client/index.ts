export { createX402Client, engineOf, type X402Client, type X402ClientOptions, type Quote } from "./create";
export type { PreparedPayment } from "./pay";
export type { PaymentOption, BeforePaymentResult, ClientHooks } from "./setup";
export {
  checkOrigin,
  inOrigins,
  normalizeOrigin,
  type SpendPolicy,
  type ResolvedPolicy,
  type AssetCap,
} from "./policy";
export { ceilingCheck, ceilingGuard, ceilingOf, checkCeiling, type PaymentCeiling } from "./ceiling";
