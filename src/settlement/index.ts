export { checkSettlement, type SettlementSource } from "./check";
