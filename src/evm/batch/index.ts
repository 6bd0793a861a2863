export {
  batchSettlementEvm,
  type BatchSettlementEvm,
  type BatchSettlementEvmOptions,
} from "./scheme";
export type { DepositContext, DepositSizing } from "./open";
export type { RefundOptions, RefundResult } from "./refund";
export type { ChannelTransaction, Withdrawal, WithdrawalOptions } from "./withdraw";
export { memoryChannelStore } from "./store";
export {
  BATCH_SETTLEMENT,
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR,
  PERMIT2_DEPOSIT_COLLECTOR,
  channelIdOf,
  type ChannelConfig,
} from "./wire";
