/**
 * The payment-channel `open` a Solana `upto` buyer signs (svm upto, reference 2.23+): a v0 message
 * [SetComputeUnitLimit 90,000, SetComputeUnitPrice 1, open, Memo] whose fee, rent and payee are the
 * facilitator's `feePayer`, signed by the buyer alone. The deposit is the ceiling; the server's
 * `receiverAuthorizer` signs the vouchers that later settle what was used, the rest goes back.
 *
 * The message is compiled by @solana/kit, as the reference client's is, so both are the same bytes
 * for the same inputs (test/vectors/upto-svm.json).
 */
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getAddressDecoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type TransactionSigner,
} from "@solana/kit";
import { UnpayableRequirementError } from "../../errors";
import { sameBytes, utf8 } from "../../protocol";
import { findProgramAddress } from "../address";
import {
  ASSOCIATED_TOKEN_PROGRAM,
  COMPUTE_BUDGET_PROGRAM,
  MEMO_PROGRAM,
  addressBytes,
  decodeMessage,
  findAssociatedTokenAddress,
  instructionText,
  littleEndian,
  signWith,
  wireTransaction,
  type DecodedMessage,
  type Instruction,
  type SignableTransaction,
} from "../transaction";

/** The payment-channels program (solana-foundation/payment-channels). A constant: nothing a server sends changes it. */
export const PAYMENT_CHANNELS_PROGRAM = "CHNLxYvVA28MJP9PrFuDXccuoGXAx7jBacfLEkahyGsX";
/** The program's event authority, PDA(["event_authority"]): written out, a test derives it. */
export const EVENT_AUTHORITY = "75c2huVzDW1Eq4kD86by5392sjdJzuAT195XNgP2f2tX";
const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const RENT_SYSVAR = "SysvarRent111111111111111111111111111111111";
/** The reference client's compute budget for an open: 90,000 units at 1 µlamport. */
const COMPUTE_UNIT_LIMIT = 90_000n;
const COMPUTE_UNIT_PRICE = 1n;
/** `open`'s instruction discriminator, and the whole of a distribution's basis points. */
const OPEN = 1;
const ALL_BPS = 10_000n;

export interface OpenPlan {
  signer: TransactionSigner;
  /** The facilitator: fee payer, rent payer and payee (with no share) of the channel. */
  feePayer: string;
  /** Signs the vouchers that settle the channel. */
  receiverAuthorizer: string;
  mint: string;
  tokenProgram: string;
  /** Everything settled goes to `payTo` (10,000 basis points). */
  payTo: string;
  /** The ceiling, locked in the channel. */
  deposit: bigint;
  /** The channel's grace period (`extra.withdrawDelay`), seconds. */
  withdrawDelay: number;
  /** A random u64 that makes the channel's address unique. */
  salt: bigint;
  openSlot: bigint;
  memo: string;
  blockhash: { blockhash: string; lastValidBlockHeight: bigint };
  /** The request's signal, passed to the signer as kit's `{ abortSignal }`. */
  signal?: AbortSignal | undefined;
}

/** The channel's address: PDA(["channel", payer, payee, mint, authorizedSigner, u64le salt, u64le openSlot]). */
export async function findChannelAddress(plan: OpenPlan, buyer: string): Promise<string> {
  const { feePayer, mint, receiverAuthorizer, salt, openSlot } = plan;
  const seeds = [
    utf8.encode("channel"),
    ...[buyer, feePayer, mint, receiverAuthorizer].map(addressBytes),
    Uint8Array.from(littleEndian(salt, 8)),
    Uint8Array.from(littleEndian(openSlot, 8)),
  ];
  return getAddressDecoder().decode(await findProgramAddress(seeds, addressBytes(PAYMENT_CHANNELS_PROGRAM)));
}

/** The four instructions, each account with its role (payer and rent payer sign; channel and token accounts move). */
async function instructionsOf(plan: OpenPlan, buyer: string, channel: string) {
  const { feePayer, mint, tokenProgram, receiverAuthorizer } = plan;
  const [payerTokens, channelTokens] = await Promise.all(
    [buyer, channel].map((owner) => findAssociatedTokenAddress(owner, mint, tokenProgram)),
  );
  const { WRITABLE_SIGNER: signs, WRITABLE: writes, READONLY: reads } = AccountRole;
  const openAccounts: [string, AccountRole][] = [
    [buyer, signs],
    [feePayer, signs], // rent payer
    [feePayer, reads], // payee, with no share of the distribution
    [mint, reads],
    [receiverAuthorizer, reads], // authorized signer
    [channel, writes],
    [payerTokens!, writes],
    [channelTokens!, writes],
    [tokenProgram, reads],
    [SYSTEM_PROGRAM, reads],
    [RENT_SYSVAR, reads],
    [ASSOCIATED_TOKEN_PROGRAM, reads],
    [EVENT_AUTHORITY, reads],
    [PAYMENT_CHANNELS_PROGRAM, reads], // the program itself, for its events
  ];
  const data = [
    OPEN,
    ...littleEndian(plan.salt, 8),
    ...littleEndian(plan.deposit, 8),
    ...littleEndian(BigInt(plan.withdrawDelay), 4),
    ...littleEndian(plan.openSlot, 8),
    ...littleEndian(1n, 4), // one recipient
    ...addressBytes(plan.payTo),
    ...littleEndian(ALL_BPS, 2),
  ];
  const withRoles: [string, [string, AccountRole][], number[] | Uint8Array][] = [
    [COMPUTE_BUDGET_PROGRAM, [], [2, ...littleEndian(COMPUTE_UNIT_LIMIT, 4)]],
    [COMPUTE_BUDGET_PROGRAM, [], [3, ...littleEndian(COMPUTE_UNIT_PRICE, 8)]],
    [PAYMENT_CHANNELS_PROGRAM, openAccounts, data],
    [MEMO_PROGRAM, [], utf8.encode(plan.memo)],
  ];
  return withRoles;
}

/**
 * Why `message` is not the open we meant (one fee payer, the buyer and it the only signers, exactly our four
 * instructions, no lookup tables), else `undefined`. Run on the compiled message before the wallet sees it.
 */
export function checkOpen(
  message: DecodedMessage | undefined,
  expected: readonly Instruction[],
  feePayer: string,
  buyer: string,
): string | undefined {
  if (!message) return "the message cannot be read";
  const { version, lookups, keys, requiredSignatures, instructions } = message;
  if (version !== 0 || lookups) return "it is not a v0 message without address lookup tables";
  if (keys[0] !== feePayer) return "its fee payer is not extra.feePayer";
  const signers = new Set(keys.slice(0, requiredSignatures));
  if (signers.size !== new Set([feePayer, buyer]).size || !signers.has(buyer))
    return `its signers are ${[...signers].join(", ")}, not the fee payer and the buyer`;
  if (instructions.length !== expected.length)
    return `it has ${instructions.length} instructions, not ${expected.length}`;
  for (const [i, instruction] of instructions.entries()) {
    if (instructionText(instruction) !== instructionText(expected[i]!))
      return `instruction ${i} (${instruction[0]}) is not the expected one`;
  }
  return undefined;
}

/**
 * Builds the open, checks it, has the buyer sign it, and returns the channel's address and the transaction in wire
 * format, base64. A wallet may not change the transaction: one that does is refused, and nothing is sent.
 */
export async function signOpen(plan: OpenPlan): Promise<{ channel: string; transaction: string }> {
  const { signer, feePayer } = plan;
  const buyer = signer.address;
  const channel = await findChannelAddress(plan, buyer);
  const withRoles = await instructionsOf(plan, buyer, channel);
  const compiled = compileTransaction(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(feePayer as Address, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          {
            blockhash: plan.blockhash.blockhash as Blockhash,
            lastValidBlockHeight: plan.blockhash.lastValidBlockHeight,
          },
          m,
        ),
      (m) =>
        appendTransactionMessageInstructions(
          withRoles.map(([program, accounts, data]) => ({
            programAddress: program as Address,
            accounts: accounts.map(([address, role]) => ({ address: address as Address, role })),
            data: Uint8Array.from(data),
          })),
          m,
        ),
    ),
  );
  // kit's branded read-only bytes, as the plain shape the signers take.
  const unsigned = compiled as unknown as SignableTransaction;
  const message = decodeMessage(unsigned.messageBytes);
  const expected = withRoles.map(([program, accounts, data]): Instruction => [program, accounts.map(([a]) => a), data]);
  const problem = checkOpen(message, expected, feePayer, buyer);
  if (problem) throw new UnpayableRequirementError(`The channel open built is wrong: ${problem}. Nothing was signed.`);

  const signed = await signWith(signer, unsigned, plan.signal);
  if (!sameBytes(signed.messageBytes, unsigned.messageBytes)) {
    throw new UnpayableRequirementError(
      "The wallet changed the channel open before signing it; an upto payment signs only the open it was given. " +
        "Nothing was sent.",
    );
  }
  if (!signed.signatures[buyer]?.some((b) => b !== 0))
    throw new UnpayableRequirementError("The wallet did not sign the channel open. Nothing was sent.");
  return { channel, transaction: wireTransaction(message!, unsigned.messageBytes, signed.signatures) };
}
