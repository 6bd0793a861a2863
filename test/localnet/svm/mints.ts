// Test tokens in the local LiteSVM chain:
// - devnet USDC at its real address (4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU, 6 decimals,
//   classic SPL Token program), placed with setAccount as a packed Mint whose mint authority is a
//   key generated here, so balances are then minted with real instructions;
// - a Token-2022 mint (6 decimals) at a generated address, placed the same way.
// Associated token accounts are created and funded with real transactions (ATA program
// CreateIdempotent + MintToChecked), so the accounts look exactly like the cluster's.

import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from "@solana/kit";
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getMintToCheckedInstruction,
} from "@solana-program/token";
import type { LiteSVM } from "litesvm";
import type { SolanaRpc } from "./rpc.js";
import {
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  packMint,
  packTokenAccount,
  parseMint,
  parseTokenAccount,
} from "./token-layout.js";

/** USDC on Solana devnet (the reference's default asset for solana:EtWT... and v1 solana-devnet). */
export const USDC_DEVNET_MINT = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU" as Address;

/** One token in atomic units for a 6-decimal mint. */
export const ONE_TOKEN = 1_000_000n;
const ONE_SOL = 1_000_000_000n;

export interface SplMint {
  address: Address;
  /** Owner program of the mint: Token or Token-2022. */
  tokenProgram: Address;
  decimals: number;
}

export interface SolanaTokens {
  /** Devnet USDC (classic SPL Token). */
  usdc: SplMint;
  /** A 6-decimal Token-2022 mint at a generated address. */
  token2022: SplMint;
  /** Mint authority of both mints; also pays the rent of accounts created by the helpers. */
  authority: KeyPairSigner;
  /** Associated token account of `owner` for `mint` (derived; may not exist). */
  ata(mint: SplMint, owner: Address): Promise<Address>;
  /** Creates the associated token account if missing (real ATA-program instruction). */
  createAta(mint: SplMint, owner: Address): Promise<Address>;
  /** Creates the ATA if needed and mints `amount` atomic units to it (MintToChecked). */
  mintTo(mint: SplMint, owner: Address, amount: bigint): Promise<Signature>;
  /** Balance of `owner`'s ATA in atomic units; 0n when the account does not exist. */
  balance(mint: SplMint, owner: Address): Promise<bigint>;
}

export interface InstallMintOptions {
  address: Address;
  decimals: number;
  tokenProgram?: Address;
  mintAuthority: Address | null;
  freezeAuthority?: Address | null;
  supply?: bigint;
}

/** Writes a rent-exempt, initialised Mint account with setAccount. */
export function installMint(
  svm: LiteSVM,
  {
    address,
    decimals,
    tokenProgram = TOKEN_PROGRAM,
    mintAuthority,
    freezeAuthority = null,
    supply = 0n,
  }: InstallMintOptions,
): SplMint {
  const data = packMint({ mintAuthority, freezeAuthority, supply, decimals });
  svm.setAccount({
    address,
    data,
    executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))),
    programAddress: tokenProgram,
    space: BigInt(data.length),
  });
  return { address, tokenProgram, decimals };
}

/** Associated token account address for (owner, mint) under the mint's token program. */
export async function associatedTokenAddress(mint: SplMint, owner: Address): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint: mint.address, tokenProgram: mint.tokenProgram });
  return ata;
}

/**
 * Writes `owner`'s associated token account directly (setAccount), bypassing instructions and
 * the mint's supply: for states real instructions make awkward (e.g. frozen). Token-2022 ATAs get
 * the ImmutableOwner extension, as the ATA program would create them.
 */
export async function writeTokenAccount(
  svm: LiteSVM,
  mint: SplMint,
  owner: Address,
  amount: bigint,
  { state = "initialized" }: { state?: "initialized" | "frozen" } = {},
): Promise<Address> {
  const address = await associatedTokenAddress(mint, owner);
  const data = packTokenAccount({
    mint: mint.address,
    owner,
    amount,
    state,
    immutableOwner: mint.tokenProgram === TOKEN_2022_PROGRAM,
  });
  svm.setAccount({
    address,
    data,
    executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))),
    programAddress: mint.tokenProgram,
    space: BigInt(data.length),
  });
  return address;
}

/** Token balance held in a token account; 0n if it does not exist or is not a token account. */
export function tokenAccountBalance(svm: LiteSVM, tokenAccount: Address): bigint {
  const account = svm.getAccount(tokenAccount);
  if (!account.exists) return 0n;
  return parseTokenAccount(account.data as Uint8Array)?.amount ?? 0n;
}

/** Total supply recorded in a mint account. */
export function mintSupply(svm: LiteSVM, mint: Address): bigint {
  const account = svm.getAccount(mint);
  return account.exists ? (parseMint(account.data as Uint8Array)?.supply ?? 0n) : 0n;
}

/** Installs devnet USDC and a Token-2022 test mint; returns helpers bound to `rpc`. */
export async function installSolanaTokens(rpc: SolanaRpc): Promise<SolanaTokens> {
  const authority = await generateKeyPairSigner();
  rpc.setLamports(authority.address, 100n * ONE_SOL);
  const usdc = installMint(rpc.svm, { address: USDC_DEVNET_MINT, decimals: 6, mintAuthority: authority.address });
  const token2022 = installMint(rpc.svm, {
    address: (await generateKeyPairSigner()).address,
    decimals: 6,
    tokenProgram: TOKEN_2022_PROGRAM,
    mintAuthority: authority.address,
  });

  async function send(instructions: Instruction[]): Promise<Signature> {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(authority, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(rpc.latestBlockhash(), m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    return rpc.sendTransaction(await signTransactionMessageWithSigners(message));
  }

  // Transactions are sent one at a time: two identical ones built against the same blockhash
  // would be one transaction (AlreadyProcessed).
  let queue: Promise<unknown> = Promise.resolve();
  function serial<T>(task: () => Promise<T>): Promise<T> {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  }

  const createAtaInstruction = (mint: SplMint, owner: Address, ata: Address) =>
    getCreateAssociatedTokenIdempotentInstruction({
      payer: authority,
      ata,
      owner,
      mint: mint.address,
      tokenProgram: mint.tokenProgram,
    });

  return {
    usdc,
    token2022,
    authority,
    ata: associatedTokenAddress,
    createAta: (mint, owner) =>
      serial(async () => {
        const ata = await associatedTokenAddress(mint, owner);
        if (!rpc.svm.getAccount(ata).exists) await send([createAtaInstruction(mint, owner, ata)]);
        return ata;
      }),
    mintTo: (mint, owner, amount) =>
      serial(async () => {
        const ata = await associatedTokenAddress(mint, owner);
        return send([
          createAtaInstruction(mint, owner, ata),
          getMintToCheckedInstruction(
            { mint: mint.address, token: ata, mintAuthority: authority, amount, decimals: mint.decimals },
            { programAddress: mint.tokenProgram },
          ),
        ]);
      }),
    balance: async (mint, owner) => tokenAccountBalance(rpc.svm, await associatedTokenAddress(mint, owner)),
  };
}

/** A Solana buyer: a kit KeyPairSigner plus its 64-byte secret key (seed ‖ public key). */
export interface SolanaBuyer {
  signer: KeyPairSigner;
  address: Address;
  /** 64 bytes, the format of `createKeyPairSignerFromBytes` and Solana CLI key files. Generated at run time. */
  secretKey: Uint8Array;
}

/** A fresh random buyer. Holds no SOL: in x402 `exact` the facilitator pays the fees. */
export async function newSolanaBuyer(): Promise<SolanaBuyer> {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed, true);
  const secretKey = new Uint8Array(64);
  secretKey.set(seed, 0);
  secretKey.set(getAddressEncoder().encode(signer.address), 32);
  return { signer, address: signer.address, secretKey };
}

export interface FundedSolanaBuyerOptions {
  /** Atomic units of each mint to give; default 1 token (1_000_000). */
  amount?: bigint;
  /** Mints to fund; default both (USDC and the Token-2022 mint). */
  mints?: SplMint[];
}

/** A fresh buyer whose ATAs for the test mints exist and hold `amount`. */
export async function fundedSolanaBuyer(
  tokens: SolanaTokens,
  { amount = ONE_TOKEN, mints = [tokens.usdc, tokens.token2022] }: FundedSolanaBuyerOptions = {},
): Promise<SolanaBuyer> {
  const buyer = await newSolanaBuyer();
  for (const mint of mints) {
    if (amount > 0n) await tokens.mintTo(mint, buyer.address, amount);
    else await tokens.createAta(mint, buyer.address);
  }
  return buyer;
}
