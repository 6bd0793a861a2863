/** The one-time ERC-20 approval that lets Permit2 move a token for its owner. */
import { InvalidConfigError } from "../errors";
import { PERMIT2_ADDRESS, checksumAddress, parseAtomicAmount } from "../protocol";
import { isEvmAddress, type Hex } from "./signer";
import { ERC20, erc20Call, MAX_UINT256 } from "./words";

export interface Permit2ApprovalOptions {
  /** The token (`asset`) to let Permit2 move. */
  token: string;
  /**
   * Base units Permit2 may move from now on: an amount (`10_000_000n`, or the string `"10000000"`), or
   * `"unlimited"` to approve once for every future payment. Never unlimited unless asked.
   */
  amount: bigint | string;
}

/**
 * The transaction (`{ to, data }`) that approves Permit2 for `amount` of `token`, for the owner's wallet
 * to send: `walletClient.sendTransaction(permit2ApprovalTransaction({ token, amount }))`. The answer to
 * a `PERMIT2_ALLOWANCE_REQUIRED` error (`error.details` has `token` and `amount`).
 */
export function permit2ApprovalTransaction({ token, amount }: Permit2ApprovalOptions): { to: Hex; data: Hex } {
  if (typeof token !== "string" || !isEvmAddress(token)) {
    throw new InvalidConfigError(`permit2ApprovalTransaction: token ${JSON.stringify(token)} is not an EVM address.`, {
      details: { option: "token" },
    });
  }
  const value =
    amount === "unlimited" ? MAX_UINT256 : typeof amount === "bigint" ? amount : (parseAtomicAmount(amount) ?? -1n);
  if (value <= 0n || value > MAX_UINT256) {
    throw new InvalidConfigError(
      `permit2ApprovalTransaction: amount ${typeof amount === "bigint" ? `${amount}n` : JSON.stringify(amount)} is ` +
        `not a positive number of base units or "unlimited".`,
      { details: { option: "amount" } },
    );
  }
  return { to: checksumAddress(token), data: erc20Call(ERC20.approve, [PERMIT2_ADDRESS, value]) };
}
