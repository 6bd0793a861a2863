/**
 * `x402-pay/schemas`: the x402 wire shapes as zod/mini schemas, the single source of truth x402-pay's
 * own validators are generated from. Unknown fields are kept. An issue's `path` names the field and
 * its `message` says what the field must be; x402-pay's own errors join the two (`amount must be a
 * string`).
 *
 * The one import past protocol's door (protocol/index.ts re-exports only the types): a bundler
 * splits shared chunks by module, so were the schemas behind that door, every entry's chunk would
 * import zod.
 */
export {
  ResourceInfoSchema,
  PaymentRequirementsV1Schema,
  PaymentRequirementsV2Schema,
  PaymentRequiredV1Schema,
  PaymentRequiredV2Schema,
  PaymentPayloadV1Schema,
  PaymentPayloadV2Schema,
  SettleResponseSchema,
  SignInWithXDeclarationSchema,
  SignInWithXChainSchema,
  SignInWithXPayloadSchema,
  PaymentIdentifierDeclarationSchema,
  PaymentIdentifierPayloadSchema,
  BuilderCodeSchema,
  DiscoveryResourceSchema,
  DiscoveryPageSchema,
  DiscoverySearchPageSchema,
  type ResourceInfo,
  type DiscoveryResource,
  type PaymentRequirementsV1,
  type PaymentRequirementsV2,
  type PaymentRequiredV1,
  type PaymentRequiredV2,
  type PaymentPayloadV1,
  type PaymentPayloadV2,
  type SettleResponse,
  type SignInWithXDeclaration,
  type SignInWithXChain,
  type SignInWithXPayload,
  type PaymentIdentifierDeclaration,
  type PaymentIdentifierPayload,
  type BuilderCode,
} from "../protocol/schemas";
