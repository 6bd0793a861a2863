// Byte layouts of SPL Token / Token-2022 mint and token accounts: packing (to place accounts with
// LiteSVM's setAccount) and parsing (for balances and the RPC's jsonParsed encoding).
//
// Base layouts are shared by both programs: Mint = 82 bytes, Account = 165 bytes. Token-2022
// accounts with extensions continue with one AccountType byte at offset 165 (1 = Mint,
// 2 = Account; mints are zero-padded to 165 first) and TLV entries (u16 type, u16 length, value).

import { getAddressDecoder, getAddressEncoder, type Address } from "@solana/kit";

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address;
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" as Address;
export const ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL" as Address;
export const SYSTEM_PROGRAM = "11111111111111111111111111111111" as Address;

export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;
/** Token-2022 ATA size: base account + AccountType byte + ImmutableOwner TLV header (type 7, length 0). */
export const TOKEN_2022_ATA_SIZE = 170;

const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;
const EXTENSION_IMMUTABLE_OWNER = 7;

export function isTokenProgram(program: Address): boolean {
  return program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM;
}

export interface MintState {
  mintAuthority: Address | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: Address | null;
}

export type TokenAccountStateName = "uninitialized" | "initialized" | "frozen";

export interface TokenAccountState {
  mint: Address;
  owner: Address;
  amount: bigint;
  delegate: Address | null;
  state: TokenAccountStateName;
  /** Rent-exempt reserve for wrapped SOL accounts, else null. */
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: Address | null;
  /** Token-2022 extension type numbers present after the base layout (empty for classic accounts). */
  extensions: number[];
}

const STATES: readonly TokenAccountStateName[] = ["uninitialized", "initialized", "frozen"];

export function packMint({
  mintAuthority,
  supply = 0n,
  decimals,
  isInitialized = true,
  freezeAuthority = null,
}: Partial<MintState> & { decimals: number }): Uint8Array {
  const bytes = new Uint8Array(MINT_SIZE);
  const view = new DataView(bytes.buffer);
  writeOptionalAddress(bytes, 0, mintAuthority ?? null);
  view.setBigUint64(36, supply, true);
  bytes[44] = decimals;
  bytes[45] = isInitialized ? 1 : 0;
  writeOptionalAddress(bytes, 46, freezeAuthority);
  return bytes;
}

/**
 * Packs a token account. With `immutableOwner` (what the ATA program gives every Token-2022
 * associated account) the Token-2022 extension tail is appended (170 bytes).
 */
export function packTokenAccount({
  mint,
  owner,
  amount = 0n,
  delegate = null,
  state = "initialized",
  isNative = null,
  delegatedAmount = 0n,
  closeAuthority = null,
  immutableOwner = false,
}: Partial<Omit<TokenAccountState, "extensions">> & {
  mint: Address;
  owner: Address;
  immutableOwner?: boolean;
}): Uint8Array {
  const bytes = new Uint8Array(immutableOwner ? TOKEN_2022_ATA_SIZE : TOKEN_ACCOUNT_SIZE);
  const view = new DataView(bytes.buffer);
  const encoder = getAddressEncoder();
  bytes.set(encoder.encode(mint), 0);
  bytes.set(encoder.encode(owner), 32);
  view.setBigUint64(64, amount, true);
  writeOptionalAddress(bytes, 72, delegate);
  bytes[108] = STATES.indexOf(state);
  if (isNative !== null) {
    view.setUint32(109, 1, true);
    view.setBigUint64(113, isNative, true);
  }
  view.setBigUint64(121, delegatedAmount, true);
  writeOptionalAddress(bytes, 129, closeAuthority);
  if (immutableOwner) {
    bytes[165] = ACCOUNT_TYPE_ACCOUNT;
    view.setUint16(166, EXTENSION_IMMUTABLE_OWNER, true);
    view.setUint16(168, 0, true);
  }
  return bytes;
}

/** Parses a mint (either program); null if the data is not a mint. */
export function parseMint(data: Uint8Array): MintState | null {
  if (data.length !== MINT_SIZE && !(data.length > TOKEN_ACCOUNT_SIZE && data[165] === ACCOUNT_TYPE_MINT)) return null;
  const view = viewOf(data);
  return {
    mintAuthority: readOptionalAddress(data, 0),
    supply: view.getBigUint64(36, true),
    decimals: data[44] ?? 0,
    isInitialized: data[45] === 1,
    freezeAuthority: readOptionalAddress(data, 46),
  };
}

/** Parses a token account (either program); null if the data is not a token account. */
export function parseTokenAccount(data: Uint8Array): TokenAccountState | null {
  if (data.length < TOKEN_ACCOUNT_SIZE) return null;
  if (data.length > TOKEN_ACCOUNT_SIZE && data[165] !== ACCOUNT_TYPE_ACCOUNT) return null;
  const view = viewOf(data);
  const decoder = getAddressDecoder();
  return {
    mint: decoder.decode(data.subarray(0, 32)),
    owner: decoder.decode(data.subarray(32, 64)),
    amount: view.getBigUint64(64, true),
    delegate: readOptionalAddress(data, 72),
    state: STATES[data[108] ?? 0] ?? "uninitialized",
    isNative: view.getUint32(109, true) === 1 ? view.getBigUint64(113, true) : null,
    delegatedAmount: view.getBigUint64(121, true),
    closeAuthority: readOptionalAddress(data, 129),
    extensions: data.length > TOKEN_ACCOUNT_SIZE ? extensionTypes(data) : [],
  };
}

/** Token-2022 extension type numbers in the TLV area (offset 166 on). */
export function extensionTypes(data: Uint8Array): number[] {
  const view = viewOf(data);
  const types: number[] = [];
  for (let offset = 166; offset + 4 <= data.length; ) {
    const type = view.getUint16(offset, true);
    const length = view.getUint16(offset + 2, true);
    if (type === 0) break; // Uninitialized: padding
    types.push(type);
    offset += 4 + length;
  }
  return types;
}

/** Decimal string of `amount / 10^decimals` without trailing zeros, as Solana's uiAmountString. */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

function viewOf(data: Uint8Array): DataView {
  return new DataView(data.buffer, data.byteOffset, data.byteLength);
}

function writeOptionalAddress(bytes: Uint8Array, offset: number, value: Address | null): void {
  if (value === null) return;
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(offset, 1, true);
  bytes.set(getAddressEncoder().encode(value), offset + 4);
}

function readOptionalAddress(data: Uint8Array, offset: number): Address | null {
  if (viewOf(data).getUint32(offset, true) !== 1) return null;
  return getAddressDecoder().decode(data.subarray(offset + 4, offset + 36));
}
