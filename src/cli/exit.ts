/** The CLI's exit codes, one per family of outcome: scripts branch on them (README, `--help`). */
import { isX402Error, type X402ErrorCode } from "../errors";

export const EXIT = {
  /** A 2xx answer (paid or free); `--dry-run`: it would pay, or nothing is asked. */
  ok: 0,
  /** Something unexpected (a bug): the message says what. */
  internal: 1,
  /** Bad arguments, options, key or file, or a package the command needs is not installed. */
  usage: 2,
  /** The server (or the discovery endpoint) could not be reached, or cut its answer. */
  network: 3,
  /** The final answer was not 2xx, and no payment was refused or lost. */
  http: 4,
  /** Not paid: the spend policy, `--max`, `--network` or a hook refused; `--dry-run`: it would not pay. */
  refused: 5,
  /** Not paid: a budget is spent or its store is away. */
  budget: 6,
  /** The server refused the payment: nothing was charged. */
  rejected: 7,
  /**
   * The payment left and its fate is unknown, its settlement is pending, or its answer was cut or could
   * not be written: money may have moved. Reconcile it (`x402-pay ledger`).
   */
  unknown: 8,
  /** The 402 was unreadable or not x402. */
  challenge: 9,
  /** The wallet could not sign (or a chain read for the payment failed). */
  wallet: 10,
  /** `--max-time` ran out before any payment left: nothing was paid. */
  timeout: 11,
  /** The discovery endpoint answered, but not with a catalogue: an HTTP error, not JSON, malformed, too large. */
  discovery: 12,
  /** Interrupted (Ctrl-C, or the signal fired) before the payment left. */
  aborted: 130,
} as const;

/** Every error code's exit code: the compiler holds this to the full list. */
const BY_CODE: Record<X402ErrorCode, number> = {
  INVALID_CONFIG: EXIT.usage,
  INVALID_CHALLENGE: EXIT.challenge,
  CHALLENGE_NOT_FOUND: EXIT.challenge,
  NO_PAYABLE_REQUIREMENT: EXIT.refused,
  PAYMENT_REFUSED: EXIT.refused,
  USER_REJECTED: EXIT.wallet,
  SIGNING_FAILED: EXIT.wallet,
  RPC_FAILED: EXIT.wallet,
  UNPAYABLE_REQUIREMENT: EXIT.wallet,
  SIGN_IN_REFUSED: EXIT.refused,
  PAYMENT_ALREADY_ATTEMPTED: EXIT.rejected,
  BODY_NOT_REPLAYABLE: EXIT.usage,
  ABORTED: EXIT.aborted,
  PAYMENT_NOT_SENT: EXIT.network,
  PAYMENT_REJECTED: EXIT.rejected,
  PERMIT2_ALLOWANCE_REQUIRED: EXIT.rejected,
  PAYMENT_ID_CONFLICT: EXIT.rejected,
  PAYMENT_OUTCOME_UNKNOWN: EXIT.unknown,
  PAYMENT_PENDING: EXIT.unknown,
  BUDGET_EXCEEDED: EXIT.budget,
  BUDGET_UNAVAILABLE: EXIT.budget,
  DISCOVERY_FAILED: EXIT.network,
  CHANNEL_DISPUTED: EXIT.rejected,
};

/** The exit code of an error the CLI did not expect to handle itself. */
export function exitCodeOf(error: unknown): number {
  // A discovery endpoint that answered (it has a status) but not with a catalogue, apart from one never reached.
  const answered = isX402Error(error) && error.code === "DISCOVERY_FAILED" && error.details.status !== undefined;
  if (answered) return EXIT.discovery;
  if (isX402Error(error)) return BY_CODE[error.code];
  if (error instanceof Error && error.name === "AbortError") return EXIT.aborted;
  // fetch's own failure (DNS, refused connection, TLS): a TypeError, "fetch failed" in Node,
  // "Failed to fetch" elsewhere.
  if (error instanceof TypeError && /^(fetch failed|failed to fetch)/i.test(error.message)) return EXIT.network;
  return EXIT.internal;
}

/** The table `--help` and the README show. */
export const EXIT_TABLE: readonly (readonly [number, string])[] = [
  [EXIT.ok, "success: a 2xx answer (with --dry-run: it would pay, or nothing was asked)"],
  [EXIT.internal, "unexpected error"],
  [EXIT.usage, "bad arguments, options, key or file, or a package it needs is not installed"],
  [EXIT.network, "the server (or discovery endpoint) could not be reached, or cut its answer"],
  [EXIT.http, "the final answer was not 2xx"],
  [EXIT.refused, "not paid: refused by the policy, --max, --network (with --dry-run: it would not pay)"],
  [EXIT.budget, "not paid: over budget, or the budget store is away"],
  [EXIT.rejected, "the server refused the payment: nothing was charged"],
  [
    EXIT.unknown,
    "the payment left and its outcome is unknown or pending (or its answer was cut or lost): money may have moved",
  ],
  [EXIT.challenge, "the 402 was unreadable or not x402"],
  [EXIT.wallet, "the wallet could not sign, or a chain read failed"],
  [EXIT.timeout, "--max-time ran out before any payment left: nothing was paid"],
  [EXIT.discovery, "the discovery endpoint answered, but not with a catalogue (an HTTP error, not JSON, malformed)"],
  [EXIT.aborted, "interrupted before the payment left"],
];
