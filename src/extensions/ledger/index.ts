export {
  memoryLedger,
  spendBy,
  unreconciled,
  reconcile,
  reconcileOnChain,
  type ChainReconciliation,
  type SpendGrouping,
  type SpendRow,
  type SpendQuery,
} from "./ledger";
export { recordOutcomes, type LedgerPluginOptions } from "./record";
export { settledAttempt } from "./ledger";
