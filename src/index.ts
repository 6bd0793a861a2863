export {
  createX402Client,
  resolvePolicy,
  type X402Client,
  type X402ClientOptions,
  type PaymentOption,
  type PaymentSnapshot,
  type PreparedPayment,
  type BeforePaymentResult,
  type SpendPolicy,
  type ResolvedPolicy,
  type PaymentScheme,
  type PaymentContext,
  type RequestInfo,
} from "./client";
export { handlePaymentRequired, getPaymentReceipt, type Transport, type PaymentReceipt } from "./handshake";
export {
  X402Error,
  isX402Error,
  InvalidConfigError,
  InvalidChallengeError,
  ChallengeNotFoundError,
  NoPayableRequirementError,
  PaymentRefusedError,
  SigningError,
  PaymentAlreadyAttemptedError,
  BodyNotReplayableError,
  PaymentRejectedError,
  PaymentOutcomeUnknownError,
  redactSecrets,
  type ErrorPhase,
  type RejectedRequirement,
} from "./errors";
export * from "./protocol";
