/**
 * The `exact` transfer transaction, laid out as the reference facilitators require (svm.md §1):
 * v0, [SetComputeUnitLimit, SetComputeUnitPrice, TransferChecked, Memo], fee payer unsigned.
 * Instruction data is written here (a few bytes each) rather than through program clients.
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getAddressEncoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type AccountMeta,
  type AccountSignerMeta,
  type Address,
  type Blockhash,
  type Transaction,
  type TransactionSigner,
} from "@solana/kit";

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
  memo: Uint8Array;
  blockhash: { blockhash: string; lastValidBlockHeight: bigint };
  computeUnitLimit: number;
  computeUnitPrice: bigint;
}

const le = (size: number, write: (view: DataView) => void) => {
  const bytes = new Uint8Array(size);
  write(new DataView(bytes.buffer));
  return bytes;
};

/** The associated token account of `owner` for `mint` under `tokenProgram`. */
export async function findAssociatedTokenAddress(owner: string, mint: string, tokenProgram: string): Promise<Address> {
  const encoder = getAddressEncoder();
  const [pda] = await getProgramDerivedAddress({
    programAddress: address(ASSOCIATED_TOKEN_PROGRAM),
    seeds: [encoder.encode(address(owner)), encoder.encode(address(tokenProgram)), encoder.encode(address(mint))],
  });
  return pda;
}

/** TransferChecked: discriminator 12, u64 amount, u8 decimals. */
export function transferCheckedData(amount: bigint, decimals: number): Uint8Array {
  return le(10, (v) => {
    v.setUint8(0, 12);
    v.setBigUint64(1, amount, true);
    v.setUint8(9, decimals);
  });
}

/** Builds and partially signs (buyer only) the transfer. Wallets that modify transactions run here. */
export async function buildTransfer(plan: TransferPlan): Promise<{ transaction: Transaction; source: Address; destination: Address }> {
  const [source, destination] = await Promise.all([
    findAssociatedTokenAddress(plan.signer.address, plan.mint, plan.tokenProgram),
    findAssociatedTokenAddress(plan.payTo, plan.mint, plan.tokenProgram),
  ]);
  const computeBudget = address(COMPUTE_BUDGET_PROGRAM);
  const instructions = [
    { programAddress: computeBudget, data: le(5, (v) => (v.setUint8(0, 2), v.setUint32(1, plan.computeUnitLimit, true))) },
    { programAddress: computeBudget, data: le(9, (v) => (v.setUint8(0, 3), v.setBigUint64(1, plan.computeUnitPrice, true))) },
    {
      programAddress: address(plan.tokenProgram),
      accounts: [
        { address: source, role: AccountRole.WRITABLE } satisfies AccountMeta,
        { address: address(plan.mint), role: AccountRole.READONLY } satisfies AccountMeta,
        { address: destination, role: AccountRole.WRITABLE } satisfies AccountMeta,
        { address: plan.signer.address, role: AccountRole.READONLY_SIGNER, signer: plan.signer } as AccountSignerMeta,
      ],
      data: transferCheckedData(plan.amount, plan.decimals),
    },
    { programAddress: address(MEMO_PROGRAM), data: plan.memo },
  ];
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(plan.feePayer), m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: plan.blockhash.blockhash as Blockhash, lastValidBlockHeight: plan.blockhash.lastValidBlockHeight },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const transaction = await partiallySignTransactionMessageWithSigners(message);
  return { transaction, source, destination };
}

/**
 * Checks a signed transaction against the facilitator's rules (svm.md §3), so a wallet that
 * changed it in a way the facilitator refuses fails here, before anything is sent. The reason, or
 * `undefined` when it is acceptable.
 */
export function checkTransfer(
  transaction: { messageBytes: ReadonlyUint8Array; signatures: Readonly<Record<string, ReadonlyUint8Array | null>> },
  expected: { feePayer: string; buyer: string; tokenProgram: string; mint: string; source: string; destination: string; amount: bigint; decimals: number; memo?: string },
): string | undefined {
  const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  if (message.version !== 0) return "the transaction is not a v0 message";
  if ((message.addressTableLookups?.length ?? 0) > 0) return "the transaction uses address lookup tables";
  const keys = message.staticAccounts.map(String);
  const instructions = message.instructions;
  if (keys[0] !== expected.feePayer) return "the fee payer is not the facilitator's";
  if (instructions.length < 3 || instructions.length > 6) return `the transaction has ${instructions.length} instructions (3 to 6 allowed)`;
  const program = (i: number) => keys[instructions[i]!.programAddressIndex];
  const data = (i: number) => instructions[i]!.data ?? new Uint8Array();
  if (program(0) !== COMPUTE_BUDGET_PROGRAM || data(0)[0] !== 2) return "instruction 0 is not SetComputeUnitLimit";
  if (program(1) !== COMPUTE_BUDGET_PROGRAM || data(1)[0] !== 3 || data(1).length !== 9) return "instruction 1 is not SetComputeUnitPrice";
  if (new DataView(data(1).buffer, data(1).byteOffset).getBigUint64(1, true) > MAX_COMPUTE_UNIT_PRICE) return "the compute-unit price is over 5,000,000 µlamports";
  const transfer = instructions[2]!;
  const accounts = (transfer.accountIndices ?? []).map((i) => keys[i]);
  if (
    program(2) !== expected.tokenProgram ||
    !sameBytes(data(2), transferCheckedData(expected.amount, expected.decimals)) ||
    accounts[0] !== expected.source ||
    accounts[1] !== expected.mint ||
    accounts[2] !== expected.destination ||
    accounts[3] !== expected.buyer
  ) {
    return "instruction 2 is not the expected TransferChecked";
  }
  let memos = 0;
  for (let i = 3; i < instructions.length; i++) {
    if (program(i) === MEMO_PROGRAM) {
      memos++;
      if (expected.memo !== undefined && new TextDecoder().decode(data(i)) !== expected.memo) return "the memo differs from extra.memo";
    } else if (program(i) !== LIGHTHOUSE_PROGRAM) {
      return `instruction ${i} calls ${program(i)}, which facilitators refuse`;
    }
  }
  if (expected.memo !== undefined && memos !== 1) return `the transaction has ${memos} memos, not 1`;
  if (instructions.some((ix) => (ix.accountIndices ?? []).some((i) => keys[i] === expected.feePayer))) {
    return "an instruction uses the fee payer's account";
  }
  const signature = transaction.signatures[expected.buyer];
  if (!signature || signature.every((b) => b === 0)) return "the wallet did not sign";
  return undefined;
}

type ReadonlyUint8Array = Omit<Uint8Array, "set" | "fill" | "copyWithin" | "reverse" | "sort">;

function sameBytes(a: ReadonlyUint8Array, b: ReadonlyUint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
