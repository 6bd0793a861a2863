export { encodeBase64Json, decodeBase64Json, bytesToBase64, base64ToBytes, utf8, type DecodeResult } from "./base64";
export {
  checksumAddress,
  bytesToBase58,
  base58ToBytes,
  concatBytes,
  sameBytes,
  bytesToHex,
  BASE58_ALPHABET,
  powerMod,
  randomBytes,
} from "./address";
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
export { originOf } from "./url";
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
  parseRequirement,
  type PaymentChallenge,
  type PaymentRequirement,
  type InvalidRequirement,
} from "./challenge";
export { buildPaymentPayload, decodeSettlement, SETTLEMENT_PENDING, type SchemePayload } from "./payload";
export {
  PAYMENT_IDENTIFIER,
  isPaymentId,
  generatePaymentId,
  randomId,
  paymentIdOf,
  BUILDER_CODE,
  isBuilderCode,
  declaredServiceCodes,
  MAX_CLIENT_SERVICE_CODES,
  MAX_ECHOED_SERVICE_CODES,
} from "./extensions";
// The generated validators the other modules read extension shapes with (the sentence of zod's first issue, or
// undefined).
export {
  problemOfDiscoveryPage,
  problemOfDiscoveryResource,
  problemOfDiscoverySearchPage,
  problemOfPaymentIdentifierDeclaration,
  problemOfSignInWithXChain,
  problemOfSignInWithXDeclaration,
} from "./validators.generated";
// Types only: the zod schemas themselves are reached through `x402-pay/schemas` alone (src/schemas
// imports ./schemas directly), so no other entry, nor a chunk it shares, imports zod. The wrappers
// validate with the functions generated from the schemas (./validators.generated).
export type {
  ResourceInfo,
  PaymentRequirementsV1,
  PaymentRequirementsV2,
  PaymentRequiredV1,
  PaymentRequiredV2,
  PaymentPayloadV1,
  PaymentPayloadV2,
  SettleResponse,
  SignInWithXDeclaration,
  SignInWithXChain,
  SignInWithXPayload,
  PaymentIdentifierDeclaration,
  PaymentIdentifierPayload,
} from "./schemas";
export { isObject } from "./wire";
