// A small Solana JSON-RPC 2.0 server on 127.0.0.1 backed by one in-process LiteSVM: enough of the
// real node's HTTP API for @solana/kit RPC clients, the reference x402 SVM facilitator and clients.
//
// Chain model: one block per landed transaction. Every block advances the slot (= block height)
// by one, moves the clock to the wall time and rotates the blockhash; a blockhash stays valid for
// BLOCKHASH_VALIDITY blocks (lastValidBlockHeight = height + 150, as on a real cluster), so
// transactions built against an earlier getLatestBlockhash still land after other payments.
// Landed transactions are immediately "confirmed" and become "finalized" 32 blocks later.
//
// The RPC layer does the checks a node does before execution: signature verification (LiteSVM's
// own sigverify and blockhash check are switched off so that simulateTransaction can honour
// `sigVerify: false` and so blockhashes can stay valid across blocks), recent-blockhash validity,
// and replay protection keyed by message hash (AlreadyProcessed), like the status cache.
//
// Errors follow the node: bad signatures give JSON-RPC -32003; a failing preflight gives -32002
// "Transaction simulation failed: ..." with the simulation result as `data`. With
// `skipPreflight: true` (what the reference facilitator uses) a transaction that fails during
// execution still lands: sendTransaction returns its signature and getSignatureStatuses reports
// the error, as on a real cluster. Transactions that could never land (expired blockhash,
// already processed, fee payer cannot pay) are refused with -32002 even with skipPreflight: a real
// node would accept and silently drop them, leaving the caller polling until its timeout.

import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  getAddressDecoder,
  getBase58Decoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  getTransactionEncoder,
  lamports,
  verifySignature,
  type Address,
  type Blockhash,
  type EncodedAccount,
  type Signature,
  type Transaction,
} from "@solana/kit";
import { Clock, FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from "litesvm";
import { listenOnLoopback } from "../listen.js";
import {
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  isTokenProgram,
  parseMint,
  parseTokenAccount,
  uiAmountString,
} from "./token-layout.js";

/** Genesis hash of Solana devnet; `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1` is its CAIP-2 id. */
export const DEVNET_GENESIS_HASH = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG";
/** Blocks a blockhash stays usable (MAX_PROCESSING_AGE on a real cluster). */
export const BLOCKHASH_VALIDITY = 150n;
/** Blocks after which a landed transaction is reported "finalized" instead of "confirmed". */
export const FINALIZATION_DEPTH = 32n;
const SLOTS_PER_EPOCH = 432_000n;
const LAMPORTS_PER_SIGNATURE = 5_000n;
const MAX_TRANSACTION_SIZE = 1232;
const U64_MAX = 18_446_744_073_709_551_615n;
const API_VERSION = "2.2.0";

export interface RpcCall {
  method: string;
  params: unknown[];
  /**
   * Request path. The server ignores it; callers can use distinct paths (`${url}/facilitator`)
   * to tell themselves apart here.
   */
  path: string;
}

/** Landed transaction as recorded by the RPC layer. */
export interface LandedTransaction {
  signature: Signature;
  slot: bigint;
  /** Solana TransactionError JSON, or null on success. */
  err: unknown;
  wire: Uint8Array;
  fee: bigint;
  logs: string[];
  computeUnitsConsumed: bigint;
  blockTime: number;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: unknown[];
  postTokenBalances: unknown[];
}

export interface SolanaRpc {
  /** JSON-RPC endpoint, `http://127.0.0.1:<port>`; any path is accepted. */
  url: string;
  /** The LiteSVM instance behind the endpoint (sigverify and blockhash check are off: the RPC layer checks). */
  svm: LiteSVM;
  /** Every JSON-RPC call received, in order. */
  calls: RpcCall[];
  /** Current slot, equal to the block height. */
  slot(): bigint;
  latestBlockhash(): { blockhash: Blockhash; lastValidBlockHeight: bigint };
  /**
   * Lands a signed transaction in-process exactly as sendTransaction with preflight would (same
   * checks, new block, status recorded). Throws {@link SolanaRpcError} if it does not succeed.
   */
  sendTransaction(transaction: Transaction): Promise<Signature>;
  /** Looks up a landed transaction (also the ones that failed during execution). */
  getTransaction(signature: string): LandedTransaction | undefined;
  /** Produces `count` empty blocks. */
  advanceBlocks(count: number | bigint): void;
  /** Makes every blockhash handed out so far invalid (advances past their lastValidBlockHeight). */
  expireBlockhashes(): void;
  /** Sets an account's lamports (creating a system account if there is none). */
  setLamports(address: Address, amount: bigint): void;
  /** Closes the server. Idempotent. */
  stop(): Promise<void>;
}

export interface StartSolanaRpcOptions {
  /** Bring your own LiteSVM; default `new LiteSVM()` (builtins, sysvars, SPL programs incl. Token-2022, ATA, Memo). */
  svm?: LiteSVM;
  /** Answer to getGenesisHash; default devnet's. */
  genesisHash?: string;
  /** Slot to start at; default 1000. */
  startSlot?: bigint;
}

/** A JSON-RPC error as a real node would send it. */
export class SolanaRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "SolanaRpcError";
  }
}

// Names in the order of Solana's TransactionError / InstructionError enums (LiteSVM reports the
// fieldless variants by their index).
const TRANSACTION_ERRORS = [
  "AccountInUse",
  "AccountLoadedTwice",
  "AccountNotFound",
  "ProgramAccountNotFound",
  "InsufficientFundsForFee",
  "InvalidAccountForFee",
  "AlreadyProcessed",
  "BlockhashNotFound",
  "CallChainTooDeep",
  "MissingSignatureForFee",
  "InvalidAccountIndex",
  "SignatureFailure",
  "InvalidProgramForExecution",
  "SanitizeFailure",
  "ClusterMaintenance",
  "AccountBorrowOutstanding",
  "WouldExceedMaxBlockCostLimit",
  "UnsupportedVersion",
  "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedAccountDataBlockLimit",
  "TooManyAccountLocks",
  "AddressLookupTableNotFound",
  "InvalidAddressLookupTableOwner",
  "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex",
  "InvalidRentPayingAccount",
  "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit",
  "MaxLoadedAccountsDataSizeExceeded",
  "ResanitizationNeeded",
  "InvalidLoadedAccountsDataSizeLimit",
  "UnbalancedTransaction",
  "ProgramCacheHitMaxLimit",
  "CommitCancelled",
] as const;
const INSTRUCTION_ERRORS = [
  "GenericError",
  "InvalidArgument",
  "InvalidInstructionData",
  "InvalidAccountData",
  "AccountDataTooSmall",
  "InsufficientFunds",
  "IncorrectProgramId",
  "MissingRequiredSignature",
  "AccountAlreadyInitialized",
  "UninitializedAccount",
  "UnbalancedInstruction",
  "ModifiedProgramId",
  "ExternalAccountLamportSpend",
  "ExternalAccountDataModified",
  "ReadonlyLamportChange",
  "ReadonlyDataModified",
  "DuplicateAccountIndex",
  "ExecutableModified",
  "RentEpochModified",
  "NotEnoughAccountKeys",
  "AccountDataSizeChanged",
  "AccountNotExecutable",
  "AccountBorrowFailed",
  "AccountBorrowOutstanding",
  "DuplicateAccountOutOfSync",
  "InvalidError",
  "ExecutableDataModified",
  "ExecutableLamportChange",
  "ExecutableAccountNotRentExempt",
  "UnsupportedProgramId",
  "CallDepth",
  "MissingAccount",
  "ReentrancyNotAllowed",
  "MaxSeedLengthExceeded",
  "InvalidSeeds",
  "InvalidRealloc",
  "ComputationalBudgetExceeded",
  "PrivilegeEscalation",
  "ProgramEnvironmentSetupFailure",
  "ProgramFailedToComplete",
  "ProgramFailedToCompile",
  "Immutable",
  "IncorrectAuthority",
  "AccountNotRentExempt",
  "InvalidAccountOwner",
  "ArithmeticOverflow",
  "UnsupportedSysvar",
  "IllegalOwner",
  "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded",
  "MaxInstructionTraceLengthExceeded",
  "BuiltinProgramsMustConsumeComputeUnits",
  "BorshIoError",
] as const;
/** Errors that happen during execution: such a transaction still lands (fee charged, status recorded). */
const LANDING_ERRORS = new Set([
  "InstructionError",
  "InsufficientFundsForRent",
  "ProgramExecutionTemporarilyRestricted",
]);
const ERROR_TEXT: Record<string, string> = {
  AlreadyProcessed: "This transaction has already been processed",
  BlockhashNotFound: "Blockhash not found",
  AccountNotFound: "Attempt to debit an account but found no record of a prior credit.",
  InsufficientFundsForFee: "Insufficient funds for fee",
  SignatureFailure: "Transaction did not pass signature verification",
};

type AnyCompiled = ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>["decode"]>;
/** Legacy and v0 messages (kit 8 also decodes the proposed v1 format, which clusters do not accept yet). */
type Compiled = Extract<AnyCompiled, { instructions: unknown }>;

interface Decoded {
  transaction: Transaction;
  compiled: Compiled;
  wire: Uint8Array;
  signature: Signature;
  messageHash: string;
}

interface ExecutionResult {
  err: unknown;
  logs: string[];
  unitsConsumed: bigint;
  returnData: { programId: string; data: [string, "base64"] } | null;
  innerInstructions: unknown[];
  postAccounts?: EncodedAccount[];
}

export async function startSolanaRpc({
  svm = new LiteSVM(),
  genesisHash = DEVNET_GENESIS_HASH,
  startSlot = 1000n,
}: StartSolanaRpcOptions = {}): Promise<SolanaRpc> {
  svm.withSigverify(false).withBlockhashCheck(false);
  const calls: RpcCall[] = [];
  /** Valid blockhashes → lastValidBlockHeight. */
  const blockhashes = new Map<string, bigint>();
  /** Message hash (hex) → signature: the status cache. */
  const processed = new Map<string, Signature>();
  const landed = new Map<string, LandedTransaction>();
  let slot = startSlot;
  let transactionCount = 0n;

  const base58 = getBase58Decoder();
  const transactionDecoder = getTransactionDecoder();
  const messageDecoder = getCompiledTransactionMessageDecoder();

  function setClockToSlot(): void {
    const clock = svm.getClock();
    const now = BigInt(Math.floor(Date.now() / 1000));
    svm.setClock(new Clock(slot, clock.epochStartTimestamp, slot / SLOTS_PER_EPOCH, clock.leaderScheduleEpoch, now));
  }
  function newBlock(): void {
    slot += 1n;
    setClockToSlot();
    svm.expireBlockhash();
    blockhashes.set(svm.latestBlockhash(), slot + BLOCKHASH_VALIDITY);
    for (const [hash, lastValid] of blockhashes) if (lastValid < slot) blockhashes.delete(hash);
  }
  setClockToSlot();
  blockhashes.set(svm.latestBlockhash(), slot + BLOCKHASH_VALIDITY);

  const context = () => ({ slot, apiVersion: API_VERSION });
  const withContext = (value: unknown) => ({ context: context(), value });
  const blockTime = () => Math.floor(Date.now() / 1000);

  function latestBlockhash(): { blockhash: Blockhash; lastValidBlockHeight: bigint } {
    const blockhash = svm.latestBlockhash();
    return { blockhash, lastValidBlockHeight: blockhashes.get(blockhash) ?? slot + BLOCKHASH_VALIDITY };
  }

  // ---- transactions ----------------------------------------------------------------------------

  function decode(wireBase64OrBase58: string, encoding: string = "base58"): Decoded {
    let wire: Uint8Array;
    try {
      wire =
        encoding === "base64"
          ? new Uint8Array(Buffer.from(wireBase64OrBase58, "base64"))
          : new Uint8Array(getBase58Encoder().encode(wireBase64OrBase58));
    } catch (error) {
      throw new SolanaRpcError(-32602, `invalid transaction: ${messageOf(error)}`);
    }
    return decodeWire(wire);
  }

  function decodeWire(wire: Uint8Array): Decoded {
    if (wire.length > MAX_TRANSACTION_SIZE) {
      const detail = `${wire.length} bytes (max: ${MAX_TRANSACTION_SIZE} bytes)`;
      throw new SolanaRpcError(-32602, `transaction too large: ${detail}`);
    }
    try {
      const transaction = transactionDecoder.decode(wire);
      const compiled = messageDecoder.decode(transaction.messageBytes);
      if (!("instructions" in compiled)) throw new Error(`unsupported transaction version ${compiled.version}`);
      const first = Object.values(transaction.signatures)[0];
      const signature = base58.decode(first ?? new Uint8Array(64)) as Signature;
      const messageHash = createHash("sha256")
        .update(transaction.messageBytes as unknown as Uint8Array)
        .digest("hex");
      return { transaction, compiled, wire, signature, messageHash };
    } catch (error) {
      throw new SolanaRpcError(-32602, `failed to deserialize VersionedTransaction: ${messageOf(error)}`);
    }
  }

  async function signaturesValid({ transaction, compiled }: Decoded): Promise<boolean> {
    for (let i = 0; i < compiled.header.numSignerAccounts; i++) {
      const signer = compiled.staticAccounts[i];
      const signature = signer ? transaction.signatures[signer] : null;
      if (!signer || !signature) return false;
      try {
        if (!(await verifySignature(await getPublicKeyFromAddress(signer), signature, transaction.messageBytes))) {
          return false;
        }
      } catch {
        return false;
      }
    }
    return true;
  }

  /** Pre-execution checks of a node: blockhash age and the status cache. Returns a TransactionError or null. */
  function precheck(decoded: Decoded, checkBlockhash: boolean): unknown {
    if (checkBlockhash && !usesDurableNonce(decoded.compiled)) {
      const lastValid = blockhashes.get(decoded.compiled.lifetimeToken);
      if (lastValid === undefined || lastValid < slot) return "BlockhashNotFound";
    }
    if (processed.has(decoded.messageHash)) return "AlreadyProcessed";
    return null;
  }

  function simulate(decoded: Decoded, checkBlockhash: boolean): ExecutionResult {
    const early = precheck(decoded, checkBlockhash);
    if (early !== null) return notExecuted(early);
    const result = svm.simulateTransaction(decoded.transaction);
    if (result instanceof FailedTransactionMetadata) {
      return { err: transactionErrorJson(result.err()), ...metaFields(result.meta()) };
    }
    return { err: null, ...metaFields(result.meta()), postAccounts: result.postAccounts() };
  }

  /** Executes and commits; records a status when the transaction lands. */
  function execute(decoded: Decoded): { landed: boolean; err: unknown; result: ExecutionResult } {
    const early = precheck(decoded, true);
    if (early !== null) return { landed: false, err: early, result: notExecuted(early) };
    const keys = decoded.compiled.staticAccounts;
    const preBalances = keys.map((key) => svm.getBalance(key) ?? 0n);
    const preTokenBalances = tokenBalances(keys);
    const outcome = svm.sendTransaction(decoded.transaction);
    const failed = outcome instanceof FailedTransactionMetadata;
    const err = failed ? transactionErrorJson(outcome.err()) : null;
    const meta = failed ? outcome.meta() : outcome;
    const result: ExecutionResult = { err, ...metaFields(meta) };
    if (failed && !LANDING_ERRORS.has(errorName(err))) return { landed: false, err, result };

    newBlock();
    transactionCount += 1n;
    processed.set(decoded.messageHash, decoded.signature);
    landed.set(decoded.signature, {
      signature: decoded.signature,
      slot,
      err,
      wire: decoded.wire,
      fee: feeOf(decoded.compiled),
      logs: result.logs,
      computeUnitsConsumed: result.unitsConsumed,
      blockTime: blockTime(),
      preBalances,
      postBalances: keys.map((key) => svm.getBalance(key) ?? 0n),
      preTokenBalances,
      postTokenBalances: tokenBalances(keys),
    });
    return { landed: true, err, result };
  }

  async function send(decoded: Decoded, skipPreflight: boolean): Promise<Signature> {
    if (!(await signaturesValid(decoded))) {
      throw new SolanaRpcError(-32003, "Transaction signature verification failure");
    }
    if (!skipPreflight) {
      const preflight = simulate(decoded, true);
      if (preflight.err !== null) throw preflightError(preflight);
    }
    const { landed: didLand, result } = execute(decoded);
    if (!didLand) throw preflightError(result);
    return decoded.signature;
  }

  function preflightError(result: ExecutionResult): SolanaRpcError {
    return new SolanaRpcError(-32002, `Transaction simulation failed: ${describeError(result.err)}`, {
      accounts: null,
      err: result.err,
      innerInstructions: null,
      loadedAccountsDataSize: 0,
      logs: result.logs,
      replacementBlockhash: null,
      returnData: result.returnData,
      unitsConsumed: result.unitsConsumed,
    });
  }

  function tokenBalances(keys: readonly Address[]): unknown[] {
    const balances: unknown[] = [];
    keys.forEach((key, accountIndex) => {
      const account = svm.getAccount(key);
      if (!account.exists || !isTokenProgram(account.programAddress)) return;
      const token = parseTokenAccount(account.data as Uint8Array);
      if (!token) return;
      balances.push({
        accountIndex,
        mint: token.mint,
        owner: token.owner,
        programId: account.programAddress,
        uiTokenAmount: uiTokenAmount(token.amount, decimalsOf(token.mint)),
      });
    });
    return balances;
  }

  function decimalsOf(mint: Address): number {
    const account = svm.getAccount(mint);
    return account.exists ? (parseMint(account.data as Uint8Array)?.decimals ?? 0) : 0;
  }

  // ---- accounts --------------------------------------------------------------------------------

  function encodeAccount(account: EncodedAccount, config: AccountConfig): unknown {
    let data = account.data as Uint8Array;
    const slice = config.dataSlice;
    if (slice) data = data.subarray(slice.offset, slice.offset + slice.length);
    return {
      data: encodeData(account, data, config.encoding ?? "base58"),
      executable: account.executable,
      lamports: account.lamports,
      owner: account.programAddress,
      rentEpoch: U64_MAX,
      space: BigInt((account.data as Uint8Array).length),
    };
  }

  function encodeData(account: EncodedAccount, data: Uint8Array, encoding: string): unknown {
    switch (encoding) {
      case "base64":
        return [Buffer.from(data).toString("base64"), "base64"];
      case "base58":
      case "binary": {
        if (data.length > 128) {
          throw new SolanaRpcError(
            -32600,
            "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
          );
        }
        const text = base58.decode(data);
        return encoding === "binary" ? text : [text, "base58"];
      }
      case "jsonParsed":
        return parseAccountJson(account) ?? [Buffer.from(data).toString("base64"), "base64"];
      default:
        throw new SolanaRpcError(-32602, `Invalid params: unsupported encoding: ${encoding}`);
    }
  }

  function parseAccountJson(account: EncodedAccount): unknown {
    if (!isTokenProgram(account.programAddress)) return null;
    const data = account.data as Uint8Array;
    const program = account.programAddress === TOKEN_PROGRAM ? "spl-token" : "spl-token-2022";
    const token = parseTokenAccount(data);
    if (token) {
      const info: Record<string, unknown> = {
        isNative: token.isNative !== null,
        mint: token.mint,
        owner: token.owner,
        state: token.state,
        tokenAmount: uiTokenAmount(token.amount, decimalsOf(token.mint)),
      };
      if (token.delegate) {
        info.delegate = token.delegate;
        info.delegatedAmount = uiTokenAmount(token.delegatedAmount, decimalsOf(token.mint));
      }
      if (token.closeAuthority) info.closeAuthority = token.closeAuthority;
      if (token.isNative !== null) info.rentExemptReserve = uiTokenAmount(token.isNative, 9);
      if (account.programAddress === TOKEN_2022_PROGRAM && token.extensions.length > 0) {
        info.extensions = token.extensions.map((type) =>
          type === 7 ? { extension: "immutableOwner" } : { extension: "unparseableExtension" },
        );
      }
      return { parsed: { info, type: "account" }, program, space: BigInt(data.length) };
    }
    const mint = parseMint(data);
    if (mint) {
      return {
        parsed: {
          info: {
            decimals: mint.decimals,
            freezeAuthority: mint.freezeAuthority,
            isInitialized: mint.isInitialized,
            mintAuthority: mint.mintAuthority,
            supply: mint.supply.toString(),
          },
          type: "mint",
        },
        program,
        space: BigInt(data.length),
      };
    }
    return null;
  }

  function accountOrNull(address: string, config: AccountConfig): unknown {
    const account = svm.getAccount(checkAddress(address));
    return account.exists ? encodeAccount(account, config) : null;
  }

  function tokenAccountOrThrow(address: string): { amount: bigint; mint: Address } {
    const account = svm.getAccount(checkAddress(address));
    if (!account.exists) throw new SolanaRpcError(-32602, "Invalid param: could not find account");
    const token = isTokenProgram(account.programAddress) ? parseTokenAccount(account.data as Uint8Array) : null;
    if (!token) throw new SolanaRpcError(-32602, "Invalid param: not a Token account");
    return token;
  }

  // ---- methods ---------------------------------------------------------------------------------

  const methods: Record<string, (params: unknown[]) => unknown> = {
    getHealth: () => "ok",
    getVersion: () => ({ "solana-core": API_VERSION, "feature-set": 0 }),
    getGenesisHash: () => genesisHash,
    getIdentity: () => ({ identity: "11111111111111111111111111111111" }),
    getSlot: () => slot,
    getBlockHeight: () => slot,
    getTransactionCount: () => transactionCount,
    getEpochInfo: () => ({
      absoluteSlot: slot,
      blockHeight: slot,
      epoch: slot / SLOTS_PER_EPOCH,
      slotIndex: slot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount,
    }),
    getLatestBlockhash: () => withContext(latestBlockhash()),
    isBlockhashValid: ([blockhash]) => {
      const lastValid = blockhashes.get(String(blockhash));
      return withContext(lastValid !== undefined && lastValid >= slot);
    },
    getMinimumBalanceForRentExemption: ([size]) => svm.minimumBalanceForRentExemption(BigInt(Number(size ?? 0))),
    getBalance: ([address]) => withContext(svm.getBalance(checkAddress(address)) ?? 0n),
    getAccountInfo: ([address, config]) => withContext(accountOrNull(String(address), asConfig(config))),
    getMultipleAccounts: ([addresses, config]) => {
      if (!Array.isArray(addresses)) throw new SolanaRpcError(-32602, "Invalid params: expected an array of addresses");
      return withContext(addresses.map((address) => accountOrNull(String(address), asConfig(config))));
    },
    getTokenAccountBalance: ([address]) => {
      const token = tokenAccountOrThrow(String(address));
      return withContext(uiTokenAmount(token.amount, decimalsOf(token.mint)));
    },
    getTokenSupply: ([address]) => {
      const account = svm.getAccount(checkAddress(address));
      const mint =
        account.exists && isTokenProgram(account.programAddress) ? parseMint(account.data as Uint8Array) : null;
      if (!mint) throw new SolanaRpcError(-32602, "Invalid param: not a Token mint");
      return withContext(uiTokenAmount(mint.supply, mint.decimals));
    },
    getFeeForMessage: ([message]) => {
      try {
        const bytes = new Uint8Array(Buffer.from(String(message), "base64"));
        const compiled = messageDecoder.decode(bytes);
        if (!("instructions" in compiled)) throw new Error(`unsupported message version ${compiled.version}`);
        const lastValid = blockhashes.get(compiled.lifetimeToken);
        return withContext(lastValid !== undefined && lastValid >= slot ? feeOf(compiled) : null);
      } catch (error) {
        throw new SolanaRpcError(-32602, `invalid message: ${messageOf(error)}`);
      }
    },
    getSignatureStatuses: ([signatures]) => {
      if (!Array.isArray(signatures)) {
        throw new SolanaRpcError(-32602, "Invalid params: expected an array of signatures");
      }
      return withContext(
        signatures.map((signature) => {
          const tx = landed.get(String(signature));
          if (!tx) return null;
          const depth = slot - tx.slot;
          const finalized = depth >= FINALIZATION_DEPTH;
          return {
            slot: tx.slot,
            confirmations: finalized ? null : depth,
            err: tx.err,
            status: tx.err === null ? { Ok: null } : { Err: tx.err },
            confirmationStatus: finalized ? "finalized" : "confirmed",
          };
        }),
      );
    },
    getTransaction: ([signature, config]) => {
      const tx = landed.get(String(signature));
      if (!tx) return null;
      const { encoding = "json", maxSupportedTransactionVersion } = (config ?? {}) as {
        encoding?: string;
        maxSupportedTransactionVersion?: number;
      };
      const { compiled, transaction } = decodeWire(tx.wire);
      if (compiled.version !== "legacy" && maxSupportedTransactionVersion === undefined) {
        throw new SolanaRpcError(
          -32015,
          `Transaction version (${compiled.version}) is not supported by the requesting client. ` +
            'Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      }
      const transactionJson =
        encoding === "base64"
          ? [Buffer.from(tx.wire).toString("base64"), "base64"]
          : encoding === "base58"
            ? [base58.decode(tx.wire), "base58"]
            : {
                signatures: Object.values(transaction.signatures).map((s) => base58.decode(s ?? new Uint8Array(64))),
                message: {
                  header: compiled.header,
                  accountKeys: compiled.staticAccounts,
                  recentBlockhash: compiled.lifetimeToken,
                  instructions: compiled.instructions.map((ix) => ({
                    programIdIndex: ix.programAddressIndex,
                    accounts: ix.accountIndices ?? [],
                    data: base58.decode(ix.data ?? new Uint8Array()),
                    stackHeight: null,
                  })),
                  ...(compiled.version === "legacy" ? {} : { addressTableLookups: [] }),
                },
              };
      return {
        slot: tx.slot,
        blockTime: tx.blockTime,
        version: compiled.version,
        transaction: transactionJson,
        meta: {
          err: tx.err,
          status: tx.err === null ? { Ok: null } : { Err: tx.err },
          fee: tx.fee,
          preBalances: tx.preBalances,
          postBalances: tx.postBalances,
          innerInstructions: [],
          logMessages: tx.logs,
          preTokenBalances: tx.preTokenBalances,
          postTokenBalances: tx.postTokenBalances,
          rewards: [],
          loadedAddresses: { writable: [], readonly: [] },
          computeUnitsConsumed: tx.computeUnitsConsumed,
        },
      };
    },
    requestAirdrop: ([address, amount]) => {
      const outcome = svm.airdrop(checkAddress(address), lamports(BigInt(Number(amount ?? 0))));
      if (!outcome || outcome instanceof FailedTransactionMetadata) {
        const reason = outcome ? describeError(transactionErrorJson(outcome.err())) : "no result";
        throw new SolanaRpcError(-32603, `airdrop failed: ${reason}`);
      }
      newBlock();
      transactionCount += 1n;
      const signature = base58.decode(outcome.signature()) as Signature;
      landed.set(signature, {
        signature,
        slot,
        err: null,
        wire: new Uint8Array(),
        fee: LAMPORTS_PER_SIGNATURE,
        logs: outcome.logs(),
        computeUnitsConsumed: outcome.computeUnitsConsumed(),
        blockTime: blockTime(),
        preBalances: [],
        postBalances: [],
        preTokenBalances: [],
        postTokenBalances: [],
      });
      return signature;
    },
  };

  const asyncMethods: Record<string, (params: unknown[]) => Promise<unknown>> = {
    simulateTransaction: async ([wire, rawConfig]) => {
      const config = (rawConfig ?? {}) as {
        sigVerify?: boolean;
        replaceRecentBlockhash?: boolean;
        encoding?: string;
        innerInstructions?: boolean;
        accounts?: { addresses?: string[]; encoding?: string };
      };
      if (config.sigVerify && config.replaceRecentBlockhash) {
        throw new SolanaRpcError(-32602, "sigVerify may not be used with replaceRecentBlockhash");
      }
      const decoded = decode(String(wire), config.encoding);
      if (config.sigVerify && !(await signaturesValid(decoded))) {
        throw new SolanaRpcError(-32003, "Transaction signature verification failure");
      }
      const result = simulate(decoded, !config.replaceRecentBlockhash);
      const accounts = config.accounts?.addresses?.map((address) => {
        const post = result.postAccounts?.find((account) => account.address === address);
        const account = post ?? svm.getAccount(checkAddress(address));
        return "exists" in account && !account.exists
          ? null
          : encodeAccount(account as EncodedAccount, { encoding: config.accounts?.encoding ?? "base64" });
      });
      return withContext({
        err: result.err,
        logs: result.logs,
        accounts: accounts ?? null,
        unitsConsumed: result.unitsConsumed,
        returnData: result.returnData,
        innerInstructions: config.innerInstructions ? result.innerInstructions : null,
        loadedAccountsDataSize: 0,
        replacementBlockhash: config.replaceRecentBlockhash ? latestBlockhash() : null,
      });
    },
    sendTransaction: async ([wire, rawConfig]) => {
      const config = (rawConfig ?? {}) as { encoding?: string; skipPreflight?: boolean };
      return send(decode(String(wire), config.encoding), config.skipPreflight ?? false);
    },
  };

  async function dispatch(request: unknown, path: string): Promise<unknown> {
    const { id = null, method, params = [] } = (request ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof method !== "string") return { jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid request" } };
    const list = Array.isArray(params) ? params : [params];
    calls.push({ method, params: list, path });
    try {
      const sync = methods[method];
      const async_ = asyncMethods[method];
      if (!sync && !async_) throw new SolanaRpcError(-32601, "Method not found");
      const result = sync ? sync(list) : await async_!(list);
      return { jsonrpc: "2.0", id, result };
    } catch (error) {
      const rpcError =
        error instanceof SolanaRpcError ? error : new SolanaRpcError(-32603, `Internal error: ${messageOf(error)}`);
      const { code, message, data } = rpcError;
      return { jsonrpc: "2.0", id, error: { code, message, ...(data !== undefined ? { data } : {}) } };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (req.method === "GET" && path === "/health") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    if (req.method !== "POST") {
      res
        .writeHead(405, { "content-type": "text/plain" })
        .end("Used HTTP Method is not allowed. POST or OPTIONS is required");
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      sendJson(res, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
      return;
    }
    const response = Array.isArray(body)
      ? await Promise.all(body.map((one) => dispatch(one, path)))
      : await dispatch(body, path);
    sendJson(res, response);
  }

  const server = await listenOnLoopback((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return;
      sendJson(res, { jsonrpc: "2.0", id: null, error: { code: -32603, message: messageOf(error) } });
    });
  });

  return {
    url: server.url,
    svm,
    calls,
    slot: () => slot,
    latestBlockhash,
    sendTransaction(transaction) {
      return send(decodeWire(new Uint8Array(getTransactionEncoder().encode(transaction))), false);
    },
    getTransaction: (signature) => landed.get(signature),
    advanceBlocks(count) {
      for (let i = 0n; i < BigInt(count); i++) newBlock();
    },
    expireBlockhashes() {
      for (let i = 0n; i <= BLOCKHASH_VALIDITY; i++) newBlock();
    },
    setLamports(address, amount) {
      const account = svm.getAccount(address);
      svm.setAccount(
        account.exists
          ? { ...account, lamports: lamports(amount) }
          : {
              address,
              lamports: lamports(amount),
              data: new Uint8Array(),
              programAddress: "11111111111111111111111111111111" as Address,
              executable: false,
              space: 0n,
            },
      );
    },
    stop: server.stop,
  };
}

// ---- helpers -------------------------------------------------------------------------------------

interface AccountConfig {
  encoding?: string;
  dataSlice?: { offset: number; length: number };
}

function notExecuted(err: unknown): ExecutionResult {
  return { err, logs: [], unitsConsumed: 0n, returnData: null, innerInstructions: [] };
}

function asConfig(config: unknown): AccountConfig {
  return (config ?? {}) as AccountConfig;
}

function checkAddress(value: unknown): Address {
  const text = String(value);
  try {
    if (getBase58Encoder().encode(text).length === 32) return text as Address;
  } catch {
    // fall through
  }
  throw new SolanaRpcError(-32602, "Invalid param: Invalid");
}

function uiTokenAmount(amount: bigint, decimals: number) {
  const text = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text };
}

function usesDurableNonce(compiled: Compiled): boolean {
  const first = compiled.instructions[0];
  if (!first) return false;
  const program = compiled.staticAccounts[first.programAddressIndex];
  const data = first.data;
  // SystemProgram AdvanceNonceAccount (u32 LE 4) as the first instruction.
  return program === "11111111111111111111111111111111" && !!data && data.length >= 4 && data[0] === 4 && data[1] === 0;
}

/** Fee as the runtime computes it: 5000 lamports per signature + ceil(CU limit × CU price / 10^6). */
function feeOf(compiled: Compiled): bigint {
  let unitLimit: bigint | undefined;
  let unitPrice = 0n;
  let otherInstructions = 0n;
  for (const ix of compiled.instructions) {
    const program = compiled.staticAccounts[ix.programAddressIndex];
    const data = ix.data;
    if (program === "ComputeBudget111111111111111111111111111111" && data && data.length > 0) {
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      if (data[0] === 2 && data.length >= 5) unitLimit = BigInt(view.getUint32(1, true));
      else if (data[0] === 3 && data.length >= 9) unitPrice = view.getBigUint64(1, true);
    } else {
      otherInstructions += 1n;
    }
  }
  const limit = unitLimit ?? otherInstructions * 200_000n;
  const priority = (limit * unitPrice + 999_999n) / 1_000_000n;
  return BigInt(compiled.header.numSignerAccounts) * LAMPORTS_PER_SIGNATURE + priority;
}

function metaFields(meta: TransactionMetadata): Omit<ExecutionResult, "err"> {
  const returnData = meta.returnData();
  const data = returnData.data();
  const inner = meta.innerInstructions();
  const base58 = getBase58Decoder();
  return {
    logs: meta.logs(),
    unitsConsumed: meta.computeUnitsConsumed(),
    returnData:
      data.length > 0
        ? {
            programId: getAddressDecoder().decode(returnData.programId()),
            data: [Buffer.from(data).toString("base64"), "base64"],
          }
        : null,
    innerInstructions: inner
      .map((list, index) => ({
        index,
        instructions: list.map((one) => {
          const ix = one.instruction();
          return {
            programIdIndex: ix.programIdIndex(),
            accounts: [...ix.accounts()],
            data: base58.decode(ix.data()),
            stackHeight: one.stackHeight(),
          };
        }),
      }))
      .filter((entry) => entry.instructions.length > 0),
  };
}

/** LiteSVM's error object → Solana's TransactionError JSON (as in RPC responses). */
function transactionErrorJson(err: ReturnType<FailedTransactionMetadata["err"]>): unknown {
  if (typeof err === "number") return TRANSACTION_ERRORS[err] ?? `TransactionError${err}`;
  const text = err.toString();
  if ("err" in err && typeof err.err === "function") {
    const inner = err.err();
    let innerJson: unknown;
    if (typeof inner === "number") innerJson = INSTRUCTION_ERRORS[inner] ?? `InstructionError${inner}`;
    else if ("code" in inner) innerJson = { Custom: inner.code };
    else if ("msg" in inner) innerJson = { BorshIoError: inner.msg };
    else innerJson = String(inner);
    return { InstructionError: [(err as { index: number }).index, innerJson] };
  }
  if ("accountIndex" in err) {
    const name = text.includes("ProgramExecutionTemporarilyRestricted")
      ? "ProgramExecutionTemporarilyRestricted"
      : "InsufficientFundsForRent";
    return { [name]: { account_index: err.accountIndex } };
  }
  if ("index" in err) return { DuplicateInstruction: err.index };
  return text;
}

function errorName(err: unknown): string {
  if (typeof err === "string") return err;
  if (err && typeof err === "object") return Object.keys(err)[0] ?? "";
  return "";
}

/** The Display text a node puts after "Transaction simulation failed: ". */
function describeError(err: unknown): string {
  const name = errorName(err);
  if (name === "InstructionError") {
    const [index, inner] = (err as { InstructionError: [number, unknown] }).InstructionError;
    const detail =
      typeof inner === "object" && inner !== null && "Custom" in inner
        ? `custom program error: 0x${(inner as { Custom: number }).Custom.toString(16)}`
        : typeof inner === "string"
          ? inner
          : JSON.stringify(inner);
    return `Error processing Instruction ${index}: ${detail}`;
  }
  return ERROR_TEXT[name] ?? name;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** JSON with bigints written as plain JSON numbers (u64 values exceed 2^53; kit parses them as bigint). */
export function stringifyRpcJson(value: unknown): string {
  const marker = "\u0000bigint:";
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `${marker}${v}` : v)).replace(
    /"\\u0000bigint:(-?\d+)"/g,
    "$1",
  );
}

function sendJson(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { "content-type": "application/json" }).end(stringifyRpcJson(value));
}
