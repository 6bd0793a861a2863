/**
 * Wallet-standard wallets as a dapp sees them (`getWallets()` of `@wallet-standard/app`: Phantom, Solflare,
 * Backpack): structural types, so nothing here loads `@wallet-standard/*` or `@solana/kit`, and the one way both
 * Solana signers call a wallet (`walletStandardSigner`, and `signInWithX` given the wallet itself): the user's
 * refusal as `USER_REJECTED`, other failures as `SIGNING_FAILED`, an abort as `ABORTED` at once.
 */
import { SigningError, raceAbort, throwIfAborted, toWalletError } from "../../errors";
import { isSolanaAddress } from "../address";

/** A wallet-standard `WalletAccount`: its base58 address and the features it may use. */
export interface WalletStandardAccountLike {
  readonly address: string;
  /** The features this account may use (`solana:signTransaction`, ...); absent: the wallet's. */
  readonly features?: readonly string[] | undefined;
}

/** A wallet-standard `Wallet`: its connected accounts and its features (`solana:signTransaction`, ...). */
export interface WalletStandardWalletLike {
  readonly accounts: readonly WalletStandardAccountLike[];
  readonly features: Readonly<Record<string, unknown>>;
}

export const SIGN_TRANSACTION = "solana:signTransaction";
export const SIGN_MESSAGE = "solana:signMessage";

type WalletMethod = (...inputs: readonly object[]) => Promise<readonly unknown[]>;

/** The method of one of the wallet's features (`solana:signMessage`'s `signMessage`), else `undefined`. */
export function walletMethod(
  wallet: WalletStandardWalletLike,
  feature: string,
  name: string,
): WalletMethod | undefined {
  const method = Object(Object(wallet?.features)[feature])[name];
  return typeof method === "function" ? (method.bind(wallet.features[feature]) as WalletMethod) : undefined;
}

/** The connected accounts (that may use `feature`, if given), in the wallet's order. */
export function accountsWith(
  wallet: Pick<WalletStandardWalletLike, "accounts">,
  feature?: string,
): WalletStandardAccountLike[] {
  const accounts: readonly WalletStandardAccountLike[] = Array.isArray(wallet?.accounts) ? wallet.accounts : [];
  return accounts.filter(
    (a) => isSolanaAddress(a?.address) && (!feature || !Array.isArray(a.features) || a.features.includes(feature)),
  );
}

/**
 * Asks the wallet: not at all when `signal` has fired, and no longer than until it fires. What the wallet throws
 * becomes `UserRejectedError` (a refusal: Phantom's 4001, a wallet adapter's "User rejected the request") or
 * `SigningError`.
 */
export async function askWallet<T>(what: string, signal: AbortSignal | undefined, ask: () => Promise<T>): Promise<T> {
  try {
    throwIfAborted(signal);
    return await raceAbort(Promise.resolve().then(ask), signal);
  } catch (error) {
    throw toWalletError(error, what);
  }
}

/** The wallet's bytes as a Uint8Array (from another realm too), else `undefined`. */
export function asBytes(value: unknown): Uint8Array | undefined {
  if (value instanceof Uint8Array) return value;
  return ArrayBuffer.isView(value) && Object.prototype.toString.call(value) === "[object Uint8Array]"
    ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
    : undefined;
}

/** What `solana:signMessage` answered for one message: the bytes it signed and the Ed25519 signature. */
export interface SignedMessage {
  readonly signedMessage: Uint8Array;
  readonly signature: Uint8Array;
}

/** Signs `messages` through the wallet's `solana:signMessage` with `account`, one answer checked per message. */
export async function signMessagesWith(
  wallet: WalletStandardWalletLike,
  account: WalletStandardAccountLike,
  messages: readonly Uint8Array[],
  signal?: AbortSignal,
): Promise<SignedMessage[]> {
  const signMessage = walletMethod(wallet, SIGN_MESSAGE, "signMessage");
  if (!signMessage) throw new SigningError("The wallet has no solana:signMessage feature: it cannot sign messages.");
  const outputs = await askWallet("the message", signal, () =>
    signMessage(...messages.map((message) => ({ account, message }))),
  );
  if (!Array.isArray(outputs) || outputs.length !== messages.length)
    throw new SigningError(`The wallet answered ${messages.length} message(s) with something else.`);
  return outputs.map((output: { signedMessage?: unknown; signature?: unknown } | undefined) => {
    const signature = asBytes(output?.signature);
    const signedMessage = asBytes(output?.signedMessage);
    if (signature?.length !== 64 || !signedMessage)
      throw new SigningError("The wallet returned no 64-byte Ed25519 signature over the message.");
    return { signedMessage, signature };
  });
}
