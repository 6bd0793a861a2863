// The names the ```ts blocks of README.md and docs/*.md use without declaring them. Each block is
// type-checked as a module of its own with these in scope (test/unit/docs-code.test.ts); a block that
// declares one of these names itself uses its own. See docs/contributing.md, "Code in the docs".

/** An EVM account: `privateKeyToAccount(process.env.EVM_PRIVATE_KEY)`, a server wallet, ... */
declare const signer: import("viem/accounts").PrivateKeyAccount;
/** A viem WalletClient with an account, e.g. over `window.ethereum`. */
declare const walletClient: import("viem").WalletClient<
  import("viem").Transport,
  import("viem").Chain,
  import("viem").Account
>;
/** A Solana key pair signer: `await createKeyPairSignerFromBytes(bytes)`. */
declare const solanaSigner: import("@solana/kit").KeyPairSigner;
/** A client made with `createX402Client({ schemes: [...] })`. */
declare const client: import("x402-pay").X402Client;
/** `wrapFetchWithPayment(fetch, client)`. */
declare const paidFetch: import("x402-pay/fetch").PaidFetch;
/** A receipts ledger: `memoryLedger()`, `fileLedger(path)`, `redisLedger(redis)`. */
declare const ledger: import("x402-pay").Ledger & import("x402-pay").X402Plugin;
/** A batch-settlement scheme: `batchSettlementEvm({ signer, rpc })`. */
declare const batch: import("x402-pay/evm").BatchSettlementEvm;
/** A paid resource. */
declare const url: string;

interface Window {
  /** An injected wallet (EIP-1193). */
  readonly ethereum: import("x402-pay/evm").EvmRequester;
}
