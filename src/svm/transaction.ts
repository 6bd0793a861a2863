/**
 * The `exact` transfer transaction, laid out as the reference facilitators require (svm.md §1):
 * a v0 message [SetComputeUnitLimit, SetComputeUnitPrice, TransferChecked, Memo] with the
 * facilitator as unsigned fee payer, signed by the buyer only.
 *
 * The message is compiled and the wire transaction encoded here (about a hundred lines) rather
 * than through kit's transaction-message and signer packages, which would more than double the
 * Solana scheme's share of a browser bundle. Tests decode the result with kit's own decoders.
 */
import { getAddressDecoder, type Address, type TransactionSigner } from "@solana/kit";
import { UnpayableRequirementError } from "../errors";
import { bytesToBase64, concatBytes as concat, utf8 } from "../protocol";
import { addressToBytes, findProgramAddress } from "./address";

export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
export const ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
export const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
export const LIGHTHOUSE_PROGRAM = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95";

/** Highest compute-unit price the reference facilitators accept (µlamports). */
export const MAX_COMPUTE_UNIT_PRICE = 5_000_000n;
export const MAX_MEMO_BYTES = 256;

export interface TransferPlan {
  signer: TransactionSigner;
  feePayer: string;
  mint: string;
  tokenProgram: string;
  decimals: number;
  payTo: string;
  amount: bigint;
  /** The memo written: the server's `extra.memo`, else a random nonce. */
  memo: string;
  /** The memo is the server's, so a wallet must keep it (exactly one memo, unchanged). */
  memoRequired: boolean;
  blockhash: { blockhash: string; lastValidBlockHeight: bigint };
  computeUnitLimit: number;
  computeUnitPrice: bigint;
  /** The request's signal, passed to the signer as kit's `{ abortSignal }`. */
  signal?: AbortSignal | undefined;
}

type Bytes = Uint8Array;
/** The transaction shape kit signers take and return. */
export interface SignableTransaction {
  readonly messageBytes: Bytes;
  readonly signatures: Readonly<Record<string, Bytes | null>>;
}
/** An instruction by key: program, accounts, data. */
export type Instruction = [program: string, accounts: string[], data: ArrayLike<number>];

/** `size` bytes, little-endian. */
export const littleEndian = (n: bigint, size: number) =>
  Array.from({ length: size }, (_, i) => Number((n >> BigInt(8 * i)) & 255n));

/** Solana's compact-u16 length prefix. */
export function shortVec(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const low = n & 0x7f;
    n >>= 7;
    if (n === 0) return (out.push(low), out);
    out.push(low | 0x80);
  }
}

/** A base58 address as its 32 bytes; throws for anything that is not an address. */
export function addressBytes(key: string): Bytes {
  const bytes = addressToBytes(key);
  if (!bytes) throw new TypeError(`${JSON.stringify(key)} is not a Solana address`);
  return bytes;
}

/** The associated token account of `owner` for `mint` under `tokenProgram`. */
export async function findAssociatedTokenAddress(owner: string, mint: string, tokenProgram: string): Promise<Address> {
  const pda = await findProgramAddress(
    [addressBytes(owner), addressBytes(tokenProgram), addressBytes(mint)],
    addressBytes(ASSOCIATED_TOKEN_PROGRAM),
  );
  return getAddressDecoder().decode(pda);
}

const bytesText = (data: ArrayLike<number>) => Array.from(data).join();
/** One instruction as text, to compare a wallet's with ours. */
export const instructionText = ([program, accounts, data]: Instruction) => `${program} ${accounts} ${bytesText(data)}`;

/**
 * Builds the transfer, has the buyer sign it, checks the signed transaction against the
 * facilitator's rules, and returns it in wire format, base64. A wallet that modifies transactions
 * (`modifyAndSignTransactions`, e.g. wallet-standard) may rewrite it first; a partial signer
 * (`signTransactions`, e.g. a key pair) only signs.
 */
export async function signTransfer(plan: TransferPlan): Promise<string> {
  const { unsigned, expected } = await compileTransfer(plan);
  const { messageBytes, signatures } = await signWith(plan.signer, unsigned, plan.signal);
  // The facilitator's rules (svm.md §3), so a wallet's change that it would refuse fails here,
  // before anything is sent.
  const message = decodeMessage(messageBytes);
  const problem = message ? checkTransfer(message, signatures, expected) : "the transaction message cannot be read";
  if (problem)
    throw new UnpayableRequirementError(`The signed transaction would be refused: ${problem}. Nothing was sent.`);
  return wireTransaction(message!, messageBytes, signatures);
}

/** Wire format, base64: the signatures in static-key order (missing ones as 64 zero bytes), then the message. */
export function wireTransaction(
  message: DecodedMessage,
  messageBytes: Bytes,
  signatures: SignableTransaction["signatures"],
): string {
  const signers = message.keys.slice(0, message.requiredSignatures);
  return bytesToBase64(
    concat([shortVec(signers.length), ...signers.map((k) => signatures[k] ?? new Uint8Array(64)), messageBytes]),
  );
}

/** What the signed transaction must still be: who pays the fee, who signs, the transfer and the memo. */
interface ExpectedTransfer {
  readonly feePayer: string;
  readonly buyer: string;
  readonly transfer: Instruction;
  readonly memo: string;
  readonly memoRequired: boolean;
}

/** The unsigned v0 message of the transfer, as kit signers take it, and what its signed form must keep. */
async function compileTransfer(plan: TransferPlan) {
  const { signer, feePayer, mint, tokenProgram, memo, memoRequired } = plan;
  const buyer = signer.address;
  const [source, destination] = (await Promise.all(
    [buyer, plan.payTo].map((owner) => findAssociatedTokenAddress(owner, mint, tokenProgram)),
  )) as string[] as [string, string];
  const transfer: Instruction = [
    tokenProgram,
    [source, mint, destination, buyer],
    [12, ...littleEndian(plan.amount, 8), plan.decimals],
  ];

  // The v0 message. Static keys: fee payer (writable signer), buyer (readonly signer), the two
  // token accounts (writable), then the mint and the programs (readonly).
  const keys = [feePayer, buyer, source, destination, mint, COMPUTE_BUDGET_PROGRAM, tokenProgram, MEMO_PROGRAM];
  const index = (key: string) => keys.indexOf(key);
  const instructions: Instruction[] = [
    [COMPUTE_BUDGET_PROGRAM, [], [2, ...littleEndian(BigInt(plan.computeUnitLimit), 4)]],
    [COMPUTE_BUDGET_PROGRAM, [], [3, ...littleEndian(plan.computeUnitPrice, 8)]],
    transfer,
    [MEMO_PROGRAM, [], utf8.encode(memo)],
  ];
  const unsigned: SignableTransaction = Object.freeze({
    messageBytes: concat([
      [0x80, 2, 1, 4, ...shortVec(keys.length)],
      ...keys.map(addressBytes),
      addressBytes(plan.blockhash.blockhash),
      shortVec(instructions.length),
      ...instructions.map(([program, accounts, data]) => [
        index(program),
        ...shortVec(accounts.length),
        ...accounts.map(index),
        ...shortVec(data.length),
        ...Array.from(data),
      ]),
      [0], // no address table lookups
    ]),
    signatures: Object.freeze({ [feePayer]: null, [buyer]: null }),
    lifetimeConstraint: Object.freeze({ ...plan.blockhash }),
  });
  const expected: ExpectedTransfer = { feePayer, buyer, transfer, memo, memoRequired };
  return { unsigned, expected };
}

/** kit's signer config: the request's signal, so a signer that waits on a wallet can stop waiting. */
type SignerConfig = { abortSignal?: AbortSignal } | undefined;

/**
 * The transaction as the wallet signed it: modified and signed, or only signed. `signal` goes to the signer as kit's
 * `{ abortSignal }`.
 */
export async function signWith(
  signer: TransactionSigner,
  unsigned: SignableTransaction,
  signal?: AbortSignal,
): Promise<SignableTransaction> {
  const wallet = signer as Partial<{
    modifyAndSignTransactions(
      txs: readonly SignableTransaction[],
      config?: SignerConfig,
    ): Promise<readonly SignableTransaction[]>;
    signTransactions(
      txs: readonly SignableTransaction[],
      config?: SignerConfig,
    ): Promise<readonly Readonly<Record<string, Bytes>>[]>;
  }>;
  const config = signal && { abortSignal: signal };
  let transaction: SignableTransaction | undefined;
  if (wallet.modifyAndSignTransactions) {
    [transaction] = await wallet.modifyAndSignTransactions([unsigned], config);
  } else if (wallet.signTransactions) {
    const [signatures] = await wallet.signTransactions([unsigned], config);
    transaction = { ...unsigned, signatures: { ...unsigned.signatures, ...signatures } };
  }
  if (!transaction) throw new Error("The Solana signer can neither sign nor modify-and-sign transactions.");
  return transaction;
}

/** Why the facilitators would refuse the signed transaction, else `undefined`. */
function checkTransfer(
  { version, lookups, keys: used, instructions: ixs }: DecodedMessage,
  signatures: SignableTransaction["signatures"],
  { feePayer, buyer, transfer, memo, memoRequired }: ExpectedTransfer,
): string | undefined {
  if (version !== 0 || lookups) return "the transaction is not a v0 message without address lookup tables";
  if (used[0] !== feePayer) return "the fee payer is not the facilitator's";
  if (ixs.length < 3 || ixs.length > 6) return `the transaction has ${ixs.length} instructions (3 to 6 allowed)`;
  const [[limitProgram, , limit], [priceProgram, , price]] = ixs as [Instruction, Instruction];
  if (limitProgram !== COMPUTE_BUDGET_PROGRAM || limit[0] !== 2) return "instruction 0 is not SetComputeUnitLimit";
  if (priceProgram !== COMPUTE_BUDGET_PROGRAM || price[0] !== 3 || price.length !== 9)
    return "instruction 1 is not SetComputeUnitPrice";
  if (Array.from(price).reduceRight((n, b, i) => (i ? (n << 8n) | BigInt(b) : n), 0n) > MAX_COMPUTE_UNIT_PRICE) {
    return "the compute-unit price is over 5,000,000 µlamports";
  }
  if (instructionText(ixs[2]!) !== instructionText(transfer))
    return "instruction 2 is not the expected TransferChecked";
  let memos = 0;
  for (let i = 3; i < ixs.length; i++) {
    const [program, , data] = ixs[i]!;
    if (program === MEMO_PROGRAM) {
      memos++;
      if (memoRequired && bytesText(data) !== bytesText(utf8.encode(memo))) return "the memo differs from extra.memo";
    } else if (program !== LIGHTHOUSE_PROGRAM) {
      return `instruction ${i} calls ${program}, which facilitators refuse`;
    }
  }
  if (memoRequired && memos !== 1) return `the transaction has ${memos} memos, not 1`;
  if (ixs.some(([, accounts]) => accounts.includes(feePayer))) return "an instruction uses the fee payer's account";
  if (!signatures[buyer]?.some((b) => b !== 0)) return "the wallet did not sign";
  return undefined;
}

export interface DecodedMessage {
  version: number | "legacy";
  requiredSignatures: number;
  keys: string[];
  instructions: Instruction[];
  lookups: number;
}

/** Reads a legacy or v0 message far enough to check it; `undefined` when it is truncated. */
export function decodeMessage(bytes: Bytes): DecodedMessage | undefined {
  let at = 0;
  const take = (n: number) => {
    if (at + n > bytes.length) throw new Error("truncated Solana message");
    return bytes.subarray(at, (at += n));
  };
  const byte = () => take(1)[0]!;
  const length = () => {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      const b = byte();
      n |= (b & 0x7f) << shift;
      if (!(b & 0x80)) return n;
    }
  };
  let keys: string[] = [];
  const list = <T>(item: () => T) => Array.from({ length: length() }, item);
  // An index past the static keys (an address-lookup-table account) stays a number in the text, so
  // it matches nothing the checks expect.
  const key = (i: number) => keys[i] ?? `#${i}`;
  try {
    const decoder = getAddressDecoder();
    const prefix = bytes[0]!;
    const version = prefix & 0x80 ? (byte(), prefix & 0x7f) : "legacy";
    const requiredSignatures = byte();
    take(2);
    keys = list(() => decoder.decode(take(32)) as string);
    take(32);
    const instructions = list((): Instruction => [key(byte()), Array.from(take(length()), key), take(length())]);
    return { version, requiredSignatures, keys, instructions, lookups: version === "legacy" ? 0 : length() };
  } catch {
    return undefined;
  }
}
