/**
 * The paid fetch tool the agent frameworks' doors adapt (x402-pay/ai-sdk, /langchain, /openai-agents): framework-free.
 */
export { createPaidFetch, type PaidFetch, type PaidFetchCall } from "./tool";
export { paidOf, type PaidFetchAnswer } from "./answer";
export { inputJsonSchema } from "./input";
export type {
  ApprovalRule,
  ApprovalStore,
  PaidFetchApproval,
  PaidFetchInput,
  PaidFetchMethod,
  PaidFetchToolOptions,
} from "./input";
