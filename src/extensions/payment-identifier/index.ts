export { paymentIdentifier } from "./payment-identifier";
