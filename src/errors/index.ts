export { X402Error, isX402Error, redactSecrets, type ErrorPhase, type X402ErrorCode, type X402ErrorOptions } from "./base";
export {
  InvalidConfigError,
  InvalidChallengeError,
  ChallengeNotFoundError,
  NoPayableRequirementError,
  PaymentRefusedError,
  UserRejectedError,
  SigningError,
  RpcError,
  UnpayableRequirementError,
  PaymentAlreadyAttemptedError,
  BodyNotReplayableError,
  PaymentAbortedError,
  PaymentNotSentError,
  PaymentRejectedError,
  Permit2AllowanceError,
  PERMIT2_APPROVAL_HINT,
  PaymentOutcomeUnknownError,
  requestDetails,
  clip,
  type AnyX402Error,
  type X402ErrorClass,
  type RequestDetails,
  type PaymentDetails,
  type RejectedDetails,
  type Permit2AllowanceDetails,
  type OutcomeUnknownDetails,
  type RejectedRequirement,
} from "./classes";
export { throwIfAborted, raceAbort } from "./abort";
export { toWalletError } from "./wallet";
export { describeRejection } from "./reasons";
