export { memoryBudgetStore, type BudgetStore, type BudgetEntry, type BudgetUsage } from "./store";
export {
  resolveBudgets,
  checkBudgets,
  reserveBudgets,
  type Budget,
  type BudgetWindow,
  type BudgetScope,
  type BudgetPayment,
  type ResolvedBudget,
  type BudgetHold,
} from "./budget";
