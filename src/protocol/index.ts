export { encodeBase64Json, decodeBase64Json, bytesToBase64, base64ToBytes, utf8, type DecodeResult } from "./base64";
export {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  PAYMENT_RESPONSE_HEADER,
  X_PAYMENT_HEADER,
  X_PAYMENT_RESPONSE_HEADER,
  PAYMENT_HEADERS,
  SETTLEMENT_HEADERS,
  MAX_HEADER_BYTES,
  paymentHeaderName,
} from "./headers";
export { isCaip2, matchesPattern, patternSpecificity, PERMIT2_ADDRESS } from "./networks";
export {
  findKnownAsset,
  sameAddress,
  parseUsd,
  isWithinUsd,
  formatUnits,
  formatUsd,
  parseAtomicAmount,
  type KnownAsset,
  type Money,
} from "./money";
export {
  parseChallenge,
  type PaymentChallenge,
  type PaymentRequirement,
  type InvalidRequirement,
} from "./challenge";
export { buildPaymentPayload, decodeSettlement, type SchemePayload } from "./payload";
export {
  ResourceInfoSchema,
  PaymentRequirementsV1Schema,
  PaymentRequirementsV2Schema,
  PaymentRequiredV1Schema,
  PaymentRequiredV2Schema,
  PaymentPayloadV1Schema,
  PaymentPayloadV2Schema,
  SettleResponseSchema,
  type ResourceInfo,
  type PaymentRequirementsV1,
  type PaymentRequirementsV2,
  type PaymentRequiredV1,
  type PaymentRequiredV2,
  type PaymentPayloadV1,
  type PaymentPayloadV2,
  type SettleResponse,
} from "./schemas";
