// localnet/svm: the Solana side of the interop harness: a Solana JSON-RPC server backed by an
// in-process LiteSVM, devnet USDC at its real mint address plus a Token-2022 test mint, the
// unmodified reference facilitator (one process for Solana and, by default, EVM) and reference
// sellers (v2 @x402/express, v1 x402-express), all on 127.0.0.1.
//
//   const stack = await startSolanaStack();          // { evm: false } for Solana only
//   const buyer = await stack.fundedBuyer();         // 1 USDC + 1 Token-2022 token, no SOL
//   ... pay `${stack.seller.url}/weather` with buyer.signer, RPC `stack.rpc.url` ...
//   await stack.tokens.balance(stack.tokens.usdc, stack.seller.payTo);
//   await stack.stop();

export {
  SOLANA_DEVNET,
  SOLANA_DEVNET_V1,
  FEE_PAYER_LAMPORTS,
  registerSvmExact,
  startSvmFacilitator,
  type RegisterSvmExactOptions,
  type StartSvmFacilitatorOptions,
  type SvmFacilitator,
} from "./facilitator.js";
export {
  ONE_TOKEN,
  USDC_DEVNET_MINT,
  associatedTokenAddress,
  fundedSolanaBuyer,
  installMint,
  installSolanaTokens,
  mintSupply,
  newSolanaBuyer,
  tokenAccountBalance,
  writeTokenAccount,
  type FundedSolanaBuyerOptions,
  type InstallMintOptions,
  type SolanaBuyer,
  type SolanaTokens,
  type SplMint,
} from "./mints.js";
export {
  BLOCKHASH_VALIDITY,
  DEVNET_GENESIS_HASH,
  FINALIZATION_DEPTH,
  SolanaRpcError,
  startSolanaRpc,
  stringifyRpcJson,
  type LandedTransaction,
  type RpcCall,
  type SolanaRpc,
  type StartSolanaRpcOptions,
} from "./rpc.js";
export {
  TOKEN_2022_PRICE_ATOMIC,
  startSvmSeller,
  startV1SvmSeller,
  type StartSvmSellerOptions,
  type SvmSeller,
} from "./seller.js";
export { startSolanaStack, type SolanaStack, type StartSolanaStackOptions } from "./stack.js";
export {
  ASSOCIATED_TOKEN_PROGRAM,
  MINT_SIZE,
  SYSTEM_PROGRAM,
  TOKEN_2022_ATA_SIZE,
  TOKEN_2022_PROGRAM,
  TOKEN_ACCOUNT_SIZE,
  TOKEN_PROGRAM,
  packMint,
  packTokenAccount,
  parseMint,
  parseTokenAccount,
  uiAmountString,
  type MintState,
  type TokenAccountState,
} from "./token-layout.js";
