// localnet: the interop harness and the demo's world: a local anvil chain with a USDC stand-in, the unmodified
// reference facilitator, and reference sellers (v2 @x402/express, v1 x402-express), all on 127.0.0.1. With `permit2:
// true`, also Permit2 and the x402 exact / upto proxies (our Solidity, contracts/) at their canonical addresses, and
// the reference upto scheme. With `batchSettlement`, also the batch-settlement contract and its deposit collectors
// (our Solidity too), the reference batch-settlement scheme in the facilitator and `/batch/*` seller routes.
//
//   const stack = await startInteropStack({ v1: true });
//   const buyer = await fundedBuyer(stack.usdc);
//   ... pay `${stack.seller.url}/weather` with buyer.account ...
//   await stack.stop();
//  `startExtensionSeller` serves the extension cases (sign-in-with-x, payment-identifier, offer-and-receipt) with the
// reference's server parts, and `startFaultProxy` cuts a paid answer after the seller settled it.
//  `auth-capture`: installAuthCapture places our escrow and collectors (contracts/AuthCaptureEscrow.sol) at the
// canonical v1.1 addresses, authCaptureOperator acts as the capture authorizer, and startAuthCaptureSeller is a
// local escrow-flow seller (no reference auth-capture server ships on npm); see localnet/auth-capture*.ts.
//  The Solana side (LiteSVM-backed RPC, devnet USDC + Token-2022 mints, facilitator serving Solana and EVM, sellers)
// has its own door, localnet/svm/index.ts. It is not re-exported here: it loads litesvm, @solana/kit and @x402/svm,
// about 0.4 s of import time that EVM-only tests need not pay.

export {
  BATCH_SETTLEMENT,
  ERC3009_DEPOSIT_COLLECTOR,
  PERMIT2_DEPOSIT_COLLECTOR,
  batchSettlementAbi,
  batchSettlementAt,
  installBatchSettlement,
  type BatchSettlementReader,
  type ChannelConfig,
  type ChannelOnChain,
  type ReceiverOnChain,
  type WithdrawalOnChain,
} from "./batch.js";
export {
  AUTH_CAPTURE_ESCROW,
  AUTH_CAPTURE_OPERATOR_KEY,
  AuthCaptureRevert,
  ERC3009_PAYMENT_COLLECTOR,
  OPERATOR_REFUND_COLLECTOR,
  PERMIT2_PAYMENT_COLLECTOR,
  authCaptureAt,
  authCaptureEscrowAbi,
  authCaptureOperator,
  collectedPayment,
  installAuthCapture,
  payerAgnosticHash,
  paymentInfoHash,
  type AuthCaptureMethod,
  type AuthCaptureOperator,
  type AuthCaptureOperatorOptions,
  type AuthCaptureReader,
  type AuthCaptureTerms,
  type CollectedPayment,
  type PaymentInfo,
  type PaymentStateOnChain,
} from "./auth-capture.js";
export {
  AUTH_CAPTURE_NETWORK,
  startAuthCaptureSeller,
  type AuthCaptureRequirement,
  type AuthCaptureSeller,
  type AuthCaptureSellerOptions,
  type AuthCaptureSellerPayment,
} from "./auth-capture-seller.js";
export { ANVIL_TEST_KEYS, FACILITATOR_KEY, newBuyer, randomAddress, type Buyer } from "./accounts.js";
export {
  BASE_SEPOLIA_CHAIN_ID,
  anvilBinaryPath,
  catchUpChainClock,
  localChain,
  rpc,
  startAnvil,
  type Anvil,
  type StartAnvilOptions,
} from "./anvil.js";
export {
  FACILITATOR_V1_NETWORK,
  FACILITATOR_V2_NETWORK,
  startFacilitator,
  type Facilitator,
  type StartFacilitatorOptions,
} from "./facilitator.js";
export {
  EXACT_PERMIT2_PROXY,
  PERMIT2,
  UPTO_PERMIT2_PROXY,
  approvePermit2,
  exactPermit2ProxyAbi,
  installPermit2,
  isPermit2NonceUsed,
  permit2Abi,
  permit2Allowance,
  uptoPermit2ProxyAbi,
  type ApprovePermit2Options,
} from "./permit2.js";
export {
  PRICE,
  PRICE_ATOMIC,
  SELLER_NETWORK,
  UPTO_MAX_ATOMIC,
  UPTO_MAX_PRICE,
  WEATHER,
  FORECAST,
  startSeller,
  startV1Seller,
  type BatchSeller,
  type BatchSellerOptions,
  type Seller,
  type StartSellerOptions,
} from "./seller.js";
export {
  ONE_USDC,
  fundedBuyer,
  startInteropStack,
  type FundedBuyerOptions,
  type InteropStack,
  type StartInteropStackOptions,
} from "./stack.js";
export {
  MULTICALL3_ADDRESS,
  PLAIN_TOKEN_ADDRESS,
  USDC_BASE_SEPOLIA,
  installPlainToken,
  installTestUsdc,
  plainTokenAbi,
  testUsdcAbi,
  testUsdcAt,
  testUsdcRuntimeCode,
  type InstallTestUsdcOptions,
  type TestToken,
  type TestUsdc,
} from "./token.js";
export {
  fingerprint,
  startExtensionSeller,
  startFaultProxy,
  type CachedPayment,
  type ExtensionSeller,
  type ExtensionSellerOptions,
  type FaultProxy,
} from "./extensions.js";
