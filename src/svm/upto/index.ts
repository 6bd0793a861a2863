/** Solana `upto`: a payment-channel open whose deposit is the ceiling (docs/solana.md). */
export { uptoSvm, type UptoSvmOptions } from "./scheme";
export { PAYMENT_CHANNELS_PROGRAM } from "./open";
