export { createX402Client, engineOf, type X402Client, type X402ClientOptions, type Quote, type Engine } from "./create";
export type { PreparedPayment } from "./pay";
export type { PaymentOption, BeforePaymentResult, ClientHooks } from "./setup";
export { resolvePolicy, type SpendPolicy, type ResolvedPolicy, type AssetCap } from "./policy";
