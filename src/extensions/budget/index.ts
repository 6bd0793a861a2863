export { budget, type BudgetOptions, type BudgetWindow, type BudgetScope, type BudgetPayment } from "./budget";
export { memoryBudgetStore } from "./store";
