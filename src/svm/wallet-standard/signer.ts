/**
 * `walletStandardSigner(wallet, account?)`: a `@solana/kit` signer over a wallet-standard wallet, for `exactSvm`,
 * `uptoSvm` and `signInWithX`. Transactions go to the wallet's `solana:signTransaction` in wire format and come back
 * as the wallet signed them (it may have changed them: the schemes check what it returns before anything is sent);
 * messages go to `solana:signMessage`.
 *
 * No `chain` is passed: kit's signer interface does not say which cluster a transaction is for (x402's CAIP-2
 * network is a genesis hash, wallet-standard's chains are `solana:mainnet`, `solana:devnet`, ...), and x402
 * transactions are sent by the facilitator, never by the wallet, so the wallet uses the cluster it is on, as when
 * `chain` is left out of any request.
 */
import type { MessageModifyingSigner, TransactionModifyingSigner } from "@solana/kit";
import { InvalidConfigError, SigningError, throwIfAborted } from "../../errors";
import { isSolanaAddress } from "../address";
import { sameBytes as same } from "../../protocol";
import type { SignableTransaction } from "../transaction";
import { fromWire, toWire } from "./wire";
import {
  SIGN_MESSAGE,
  SIGN_TRANSACTION,
  accountsWith,
  asBytes,
  askWallet,
  signMessagesWith,
  walletMethod,
  type WalletStandardAccountLike,
  type WalletStandardWalletLike,
} from "./wallet";

/** A kit signer that signs transactions (`exactSvm`, `uptoSvm`) and messages (`signInWithX`) through a wallet. */
export type WalletStandardSigner = TransactionModifyingSigner & MessageModifyingSigner;

type Lifetime = { blockhash: string; lastValidBlockHeight: bigint } | { nonce: string };
type InputTransaction = SignableTransaction & { readonly lifetimeConstraint?: Lifetime };
type SignableMessage = { readonly content: Uint8Array; readonly signatures: Readonly<Record<string, Uint8Array>> };
type Config = { readonly abortSignal?: AbortSignal | undefined } | undefined;

const U64_MAX = (1n << 64n) - 1n;
const CONNECT = "connect it first (its standard:connect feature)";
const config = (message: string, option: string) =>
  new InvalidConfigError(`walletStandardSigner: ${message}`, { details: { option } });

/**
 * A `@solana/kit` `TransactionModifyingSigner` and `MessageModifyingSigner` over a wallet-standard wallet. `account`:
 * one of its connected accounts, or its address; default the first that has `solana:signTransaction`. Throws
 * `InvalidConfigError` for a wallet without `solana:signTransaction`, or without that account connected.
 */
export function walletStandardSigner(
  wallet: WalletStandardWalletLike,
  account?: WalletStandardAccountLike | string,
): WalletStandardSigner {
  if (!walletMethod(wallet, SIGN_TRANSACTION, "signTransaction")) {
    throw config(
      "the wallet has no solana:signTransaction feature: give a wallet-standard Solana wallet (getWallets().get()).",
      "wallet",
    );
  }
  const wanted = typeof account === "string" ? account : account?.address;
  if (account !== undefined && !isSolanaAddress(wanted))
    throw config("account is neither a wallet-standard account nor a base58 address.", "account");
  const usable = accountsWith(wallet, SIGN_TRANSACTION);
  const chosen = wanted === undefined ? usable[0] : usable.find((a) => a.address === wanted);
  if (!chosen) {
    throw config(
      wanted === undefined
        ? `the wallet has no connected account that signs Solana transactions: ${CONNECT}.`
        : `the wallet has no connected account ${wanted} that signs Solana transactions: ${CONNECT}.`,
      "account",
    );
  }
  const { address } = chosen;
  // The account as the wallet holds it when it signs: the user may have disconnected it since.
  const connected = (feature: string) => {
    const mine = accountsWith(wallet).filter((a) => a.address === address);
    if (!mine.length) throw new SigningError(`The wallet no longer has ${address} connected: ${CONNECT}.`);
    const found = accountsWith({ accounts: mine }, feature)[0];
    if (!found) throw new SigningError(`The wallet's account ${address} does not offer ${feature}.`);
    return found;
  };

  async function modifyAndSignTransactions(transactions: readonly InputTransaction[], options?: Config) {
    const signal = options?.abortSignal;
    throwIfAborted(signal);
    const inputs = transactions.map(({ messageBytes, signatures }) => {
      const wire = toWire(messageBytes, signatures);
      if (!wire) throw new SigningError("The transaction to sign has a message that cannot be read.");
      return wire;
    });
    const outputs = await askWallet("the transaction", signal, () => {
      const account = connected(SIGN_TRANSACTION);
      const signTransaction = walletMethod(wallet, SIGN_TRANSACTION, "signTransaction")!;
      return signTransaction(...inputs.map((transaction) => ({ account, transaction })));
    });
    if (!Array.isArray(outputs) || outputs.length !== transactions.length)
      throw new SigningError(`The wallet answered ${transactions.length} transaction(s) with something else.`);
    return outputs.map((output: { signedTransaction?: unknown } | undefined, i) => {
      const signed = fromWire(asBytes(output?.signedTransaction));
      if (!signed) throw new SigningError("The wallet returned a signed transaction that cannot be read.");
      const { lifetimeToken, ...transaction } = signed;
      return Object.freeze({ ...transaction, lifetimeConstraint: lifetimeOf(transactions[i]!, signed, lifetimeToken) });
    });
  }

  async function modifyAndSignMessages(messages: readonly SignableMessage[], options?: Config) {
    const signal = options?.abortSignal;
    throwIfAborted(signal);
    // signMessagesWith refuses a wallet without solana:signMessage.
    const contents = messages.map((m) => m.content);
    const outputs = await signMessagesWith(wallet, connected(SIGN_MESSAGE), contents, signal);
    return outputs.map(({ signedMessage, signature }, i) =>
      // Other bytes than given (a prefix, fewer) are another message: the signatures given do not cover it.
      same(signedMessage, contents[i]!)
        ? Object.freeze({ content: contents[i]!, signatures: { ...messages[i]!.signatures, [address]: signature } })
        : Object.freeze({ content: signedMessage, signatures: { [address]: signature } }),
    );
  }

  return Object.freeze({
    address,
    modifyAndSignTransactions,
    modifyAndSignMessages,
  }) as unknown as WalletStandardSigner;
}

/**
 * The signed transaction's lifetime: the one given while the wallet kept its blockhash or nonce, else the blockhash the
 * wallet wrote, with no known last block height.
 */
function lifetimeOf(given: InputTransaction, signed: SignableTransaction, token: string): Lifetime {
  const lifetime = given.lifetimeConstraint;
  const kept = lifetime && ("nonce" in lifetime ? lifetime.nonce : lifetime.blockhash) === token;
  if (lifetime && (kept || same(given.messageBytes, signed.messageBytes))) return lifetime;
  return { blockhash: token, lastValidBlockHeight: U64_MAX };
}
