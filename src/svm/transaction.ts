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
import { bytesToBase64 } from "../protocol";
import { addressToBytes, concatBytes as concat, findProgramAddress } from "./address";

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
}

type Bytes = Uint8Array;
/** The transaction shape kit signers take and return. */
export interface SignableTransaction {
  readonly messageBytes: Bytes;
  readonly signatures: Readonly<Record<string, Bytes | null>>;
}

const encoder = /* @__PURE__ */ new TextEncoder();

const le = (size: number, write: (view: DataView) => void): Bytes => {
  const bytes = new Uint8Array(size);
  write(new DataView(bytes.buffer));
  return bytes;
};

/** Solana's compact-u16 length prefix. */
function shortVec(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const low = n & 0x7f;
    n >>= 7;
    if (n === 0) return out.push(low), out;
    out.push(low | 0x80);
  }
}

/** A base58 address as its 32 bytes; throws for anything that is not an address. */
function addressBytes(key: string): Bytes {
  const bytes = addressToBytes(key);
  if (!bytes) throw new TypeError(`${JSON.stringify(key)} is not a Solana address`);
  return bytes;
}

/** The associated token account of `owner` for `mint` under `tokenProgram`. */
export async function findAssociatedTokenAddress(owner: string, mint: string, tokenProgram: string): Promise<Address> {
  const pda = await findProgramAddress([addressBytes(owner), addressBytes(tokenProgram), addressBytes(mint)], addressBytes(ASSOCIATED_TOKEN_PROGRAM));
  return getAddressDecoder().decode(pda);
}

/** TransferChecked: discriminator 12, u64 amount, u8 decimals. */
function transferCheckedData(amount: bigint, decimals: number): Bytes {
  return le(10, (v) => {
    v.setUint8(0, 12);
    v.setBigUint64(1, amount, true);
    v.setUint8(9, decimals);
  });
}

/**
 * Compiles the v0 message. Static keys: fee payer (writable signer), buyer (readonly signer), the two
 * token accounts (writable), then the mint and the programs (readonly).
 */
function compileMessage(plan: TransferPlan, source: string, destination: string): Bytes {
  const keys = [plan.feePayer, plan.signer.address, source, destination, plan.mint, COMPUTE_BUDGET_PROGRAM, plan.tokenProgram, MEMO_PROGRAM];
  const index = (key: string) => keys.indexOf(key);
  const instruction = (program: string, accounts: string[], data: Bytes) => [
    [index(program), ...shortVec(accounts.length), ...accounts.map(index), ...shortVec(data.length)],
    data,
  ];
  return concat([
    [0x80, 2, 1, 4, ...shortVec(keys.length)],
    ...keys.map(addressBytes),
    addressBytes(plan.blockhash.blockhash),
    shortVec(4),
    ...instruction(COMPUTE_BUDGET_PROGRAM, [], le(5, (v) => (v.setUint8(0, 2), v.setUint32(1, plan.computeUnitLimit, true)))),
    ...instruction(COMPUTE_BUDGET_PROGRAM, [], le(9, (v) => (v.setUint8(0, 3), v.setBigUint64(1, plan.computeUnitPrice, true)))),
    ...instruction(plan.tokenProgram, [source, plan.mint, destination, plan.signer.address], transferCheckedData(plan.amount, plan.decimals)),
    ...instruction(MEMO_PROGRAM, [], encoder.encode(plan.memo)),
    shortVec(0),
  ]);
}

/**
 * Builds the transfer, has the buyer sign it, checks the signed transaction against the
 * facilitator's rules, and returns it in wire format, base64. A wallet that modifies transactions
 * (`modifyAndSignTransactions`, e.g. wallet-standard) may rewrite it first; a partial signer
 * (`signTransactions`, e.g. a key pair) only signs.
 */
export async function signTransfer(plan: TransferPlan): Promise<string> {
  const [source, destination] = await Promise.all([
    findAssociatedTokenAddress(plan.signer.address, plan.mint, plan.tokenProgram),
    findAssociatedTokenAddress(plan.payTo, plan.mint, plan.tokenProgram),
  ]);
  const unsigned = Object.freeze({
    messageBytes: compileMessage(plan, source, destination),
    signatures: Object.freeze({ [plan.feePayer]: null, [plan.signer.address]: null }),
    lifetimeConstraint: Object.freeze({ ...plan.blockhash }),
  });
  const signer = plan.signer as Partial<{
    modifyAndSignTransactions(txs: readonly SignableTransaction[]): Promise<readonly SignableTransaction[]>;
    signTransactions(txs: readonly SignableTransaction[]): Promise<readonly Readonly<Record<string, Bytes>>[]>;
  }>;
  let transaction: SignableTransaction | undefined;
  if (signer.modifyAndSignTransactions) {
    [transaction] = await signer.modifyAndSignTransactions([unsigned]);
  } else if (signer.signTransactions) {
    const [signatures] = await signer.signTransactions([unsigned]);
    transaction = { ...unsigned, signatures: { ...unsigned.signatures, ...signatures } };
  }
  if (!transaction) throw new Error("The Solana signer can neither sign nor modify-and-sign transactions.");

  const { messageBytes, signatures } = transaction;
  const message = decodeMessage(messageBytes);
  const problem = message ? checkTransfer(message, signatures, plan, source, destination) : "the transaction message cannot be read";
  if (problem) throw new UnpayableRequirementError(`The signed transaction would be refused: ${problem}. Nothing was sent.`);
  // Wire format: the signatures in static-key order (missing ones as 64 zero bytes), then the message.
  const signers = message!.keys.slice(0, message!.requiredSignatures);
  return bytesToBase64(concat([shortVec(signers.length), ...signers.map((k) => signatures[k] ?? new Uint8Array(64)), messageBytes]));
}

interface DecodedMessage {
  version: number | "legacy";
  requiredSignatures: number;
  keys: string[];
  instructions: { program: number; accounts: number[]; data: Bytes }[];
  lookups: number;
}

/** Reads a legacy or v0 message far enough to check it; `undefined` when it is truncated. */
function decodeMessage(bytes: Bytes): DecodedMessage | undefined {
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
  try {
    const decoder = getAddressDecoder();
    const prefix = bytes[0]!;
    const version = prefix & 0x80 ? (byte(), prefix & 0x7f) : "legacy";
    const requiredSignatures = byte();
    take(2);
    const keys = Array.from({ length: length() }, () => decoder.decode(take(32)) as string);
    take(32);
    const instructions = Array.from({ length: length() }, () => ({
      program: byte(),
      accounts: Array.from(take(length())),
      data: take(length()),
    }));
    return { version, requiredSignatures, keys, instructions, lookups: version === "legacy" ? 0 : length() };
  } catch {
    return undefined;
  }
}

/**
 * Checks a signed transaction against the facilitator's rules (svm.md §3), so a wallet that
 * changed it in a way the facilitator refuses fails here, before anything is sent. The reason, or
 * `undefined` when it is acceptable.
 */
function checkTransfer(
  message: DecodedMessage,
  signatures: SignableTransaction["signatures"],
  plan: TransferPlan,
  source: string,
  destination: string,
): string | undefined {
  const { keys, instructions } = message;
  if (message.version !== 0) return "the transaction is not a v0 message";
  if (message.lookups > 0) return "the transaction uses address lookup tables";
  if (keys[0] !== plan.feePayer) return "the fee payer is not the facilitator's";
  if (instructions.length < 3 || instructions.length > 6) return `the transaction has ${instructions.length} instructions (3 to 6 allowed)`;
  const program = (i: number) => keys[instructions[i]!.program];
  const data = (i: number) => instructions[i]!.data;
  if (program(0) !== COMPUTE_BUDGET_PROGRAM || data(0)[0] !== 2) return "instruction 0 is not SetComputeUnitLimit";
  if (program(1) !== COMPUTE_BUDGET_PROGRAM || data(1)[0] !== 3 || data(1).length !== 9) return "instruction 1 is not SetComputeUnitPrice";
  if (new DataView(data(1).buffer, data(1).byteOffset).getBigUint64(1, true) > MAX_COMPUTE_UNIT_PRICE) return "the compute-unit price is over 5,000,000 µlamports";
  const accounts = instructions[2]!.accounts.map((i) => keys[i]);
  if (
    program(2) !== plan.tokenProgram ||
    data(2).join() !== transferCheckedData(plan.amount, plan.decimals).join() ||
    accounts.join() !== [source, plan.mint, destination, plan.signer.address].join()
  ) {
    return "instruction 2 is not the expected TransferChecked";
  }
  let memos = 0;
  for (let i = 3; i < instructions.length; i++) {
    if (program(i) === MEMO_PROGRAM) {
      memos++;
      if (plan.memoRequired && new TextDecoder().decode(data(i)) !== plan.memo) return "the memo differs from extra.memo";
    } else if (program(i) !== LIGHTHOUSE_PROGRAM) {
      return `instruction ${i} calls ${program(i)}, which facilitators refuse`;
    }
  }
  if (plan.memoRequired && memos !== 1) return `the transaction has ${memos} memos, not 1`;
  if (instructions.some((ix) => ix.accounts.some((i) => keys[i] === plan.feePayer))) return "an instruction uses the fee payer's account";
  const signature = signatures[plan.signer.address];
  if (!signature || signature.every((b) => b === 0)) return "the wallet did not sign";
  return undefined;
}
