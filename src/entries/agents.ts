// The types every agent door (x402-pay/ai-sdk, /langchain) names: the tool's options, input, answer and approval.
export type {
  ApprovalRule,
  ApprovalStore,
  PaidFetchAnswer,
  PaidFetchApproval,
  PaidFetchInput,
  PaidFetchMethod,
  PaidFetchToolOptions,
} from "../agents";
