/**
 * `x402-pay/schemas`: the x402 wire shapes as zod/mini schemas, the very objects x402-pay validates
 * with. Unknown fields are kept. An issue's `path` names the field and its `message` says what the
 * field must be; x402-pay's own errors join the two (`amount must be a string`).
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
  type ResourceInfo,
  type PaymentRequirementsV1,
  type PaymentRequirementsV2,
  type PaymentRequiredV1,
  type PaymentRequiredV2,
  type PaymentPayloadV1,
  type PaymentPayloadV2,
  type SettleResponse,
} from "../protocol";
