export {
  memoryLedger,
  spendBy,
  unreconciled,
  reconcile,
  newRecordId,
  type Ledger,
  type LedgerRecord,
  type LedgerOutcome,
  type SpendGrouping,
  type SpendRow,
  type SpendQuery,
} from "./ledger";
