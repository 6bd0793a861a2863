/** Errors from wallets: a user's refusal is told apart from a failure, and the original error is kept as `cause`. */
import { isX402Error } from "./base";
import { SigningError, UserRejectedError, type AnyX402Error, type RequestDetails } from "./classes";

const causeOf = (e: object) => (e as { cause?: unknown }).cause ?? (e as { error?: unknown }).error;

/**
 * EIP-1193 4001 (and Phantom's Solana 4001), ethers' ACTION_REJECTED, viem's UserRejectedRequestError, wallet
 * adapters' "User rejected the request".
 */
function isUserRejection(error: unknown): boolean {
  try {
    // Down `cause`, or a wallet adapter's `error` (WalletSignTransactionError wraps the wallet's own error there).
    for (let e = error, i = 0; e && typeof e === "object" && i < 16; e = causeOf(e), i++) {
      const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
      if (code === 4001 || code === "ACTION_REJECTED" || /UserRejected/.test(String(name))) return true;
      if (/\buser (rejected|denied|cancel)|(rejected|denied) by (the )?user/i.test(String(message))) return true;
    }
  } catch {
    // A getter that throws, a field String() cannot show: not a refusal this can recognise.
  }
  return false;
}

/** The typed error for something a wallet (or a scheme calling it) threw. X402Errors pass through. */
export function toWalletError(error: unknown, what: string, details?: RequestDetails): AnyX402Error {
  if (isX402Error(error)) return error;
  return isUserRejection(error)
    ? new UserRejectedError(`The wallet's user declined to sign ${what}: nothing was paid.`, { cause: error, details })
    : new SigningError(`Signing ${what} failed: nothing was paid.`, { cause: error, details });
}
