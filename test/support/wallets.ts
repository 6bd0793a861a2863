/**
 * Wallets for tests: the fixed test keys behind signers that record what they were asked to sign
 * and may change what the wallet returns or throws: a rewritten signature, a wallet error, a
 * Solana wallet that rewrites the transaction it signs.
 */
import {
  compileTransaction,
  decompileTransactionMessage,
  getCompiledTransactionMessageDecoder,
  type Transaction,
  type TransactionModifyingSigner,
  type TransactionPartialSigner,
} from "@solana/kit";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { TypedDataRequest } from "../../src/evm";
import { buyer } from "./svm";
import { ANVIL_KEY_0 } from "./vectors";

// ---------------------------------------------------------------- EVM

/** Anvil's public test key #0 as a viem account. */
export const account = privateKeyToAccount(ANVIL_KEY_0);

/**
 * An `{ address, signTypedData }` wallet for `account` that records every request; `sign` answers
 * in its place (return another signature, sign with another key, or throw a wallet error).
 */
export function countingSigner(
  sign: (request: TypedDataRequest) => Promise<Hex> = (r) => account.signTypedData(r as never),
) {
  const calls: TypedDataRequest[] = [];
  return {
    calls,
    signer: {
      address: account.address,
      signTypedData: (request: TypedDataRequest) => {
        calls.push(request);
        return sign(request);
      },
    },
  };
}

// ---------------------------------------------------------------- Solana

type SignTransactions = TransactionPartialSigner["signTransactions"];

/**
 * The fixed Solana test buyer as a partial signer that records every signing call; `sign` answers
 * in its place (throw a wallet error, return something else).
 */
export function countingSvmSigner(sign: SignTransactions = (transactions) => buyer.signTransactions(transactions)) {
  const calls: (readonly Transaction[])[] = [];
  const signer: TransactionPartialSigner = {
    ...buyer,
    signTransactions: (transactions, config) => {
      calls.push(transactions as readonly Transaction[]);
      return sign(transactions, config);
    },
  };
  return { calls, signer };
}

/** An instruction of a decompiled message, as a rewriting wallet sees it. */
export interface WalletInstruction {
  readonly programAddress: string;
  readonly data?: Uint8Array;
  readonly accounts?: readonly unknown[];
}

/** A signed transaction, as a rewriting wallet returns it. */
export interface WalletTransaction {
  readonly messageBytes: Uint8Array;
  readonly signatures: Record<string, Uint8Array | null>;
}

/**
 * A wallet-standard-like signer for the fixed buyer that rewrites the transaction it is given:
 * `instructions` edits the message's instructions before the buyer signs the recompiled message;
 * `signed` changes the signed transaction before it is returned (another fee payer, a dropped
 * signature, truncated bytes).
 */
export function rewritingSvmSigner(rewrite: {
  instructions?: (instructions: WalletInstruction[]) => unknown[];
  signed?: (transaction: WalletTransaction) => object;
}): TransactionModifyingSigner {
  return {
    address: buyer.address,
    async modifyAndSignTransactions(transactions) {
      return Promise.all(
        transactions.map(async (transaction) => {
          const message = decompileTransactionMessage(
            getCompiledTransactionMessageDecoder().decode(transaction.messageBytes),
          );
          const instructions = rewrite.instructions
            ? rewrite.instructions([...message.instructions] as WalletInstruction[])
            : message.instructions;
          const edited = compileTransaction({ ...message, instructions } as never) as Transaction;
          const [signed] = await buyer.signTransactions([edited as never]);
          const result = { ...edited, signatures: { ...edited.signatures, ...signed } } as unknown as WalletTransaction;
          return (rewrite.signed ? rewrite.signed(result) : result) as never;
        }),
      );
    },
  };
}
