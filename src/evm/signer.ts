/** EVM wallets: a viem LocalAccount, a viem WalletClient with an account, or any `{ address, signTypedData }`. */
import { InvalidConfigError, SigningError } from "../errors";

export type Hex = `0x${string}`;

/** Typed data exactly as viem's `signTypedData` takes it (no `EIP712Domain` in `types`). */
export interface TypedDataRequest {
  domain: Record<string, unknown>;
  types: Record<string, readonly { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** An EIP-1559 transaction to sign, not send, as viem's `signTransaction` takes it. */
export interface TransactionToSign {
  type: "eip1559";
  chainId: number;
  to: Hex;
  data: Hex;
  nonce: number;
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * What x402-pay needs from an EVM wallet: typed-data signatures, and for a sponsored ERC-20 approval, a signed
 * transaction.
 */
export interface EvmSigner {
  readonly address: Hex;
  signTypedData(request: TypedDataRequest): Promise<Hex>;
  /**
   * Signs without sending (viem accounts can; most browser wallets cannot). Only the sponsored ERC-20 approval uses it.
   */
  signTransaction?(transaction: TransactionToSign): Promise<Hex>;
}

/**
 * A wallet that signs EIP-191 messages (`personal_sign`), as sign-in-with-x asks: a viem account, or
 * the signer `eip1193Signer` returns. The signature comes back as the wallet made it.
 */
export interface EvmMessageSigner {
  readonly address: Hex;
  signMessage(request: { message: string }): Promise<Hex>;
}

/** A viem WalletClient (JSON-RPC or local account), e.g. over an injected EIP-1193 provider. */
export interface WalletClientLike {
  readonly address?: undefined;
  readonly account?: { readonly address: Hex } | undefined;
  // `never`: any WalletClient's generic signTypedData fits; it is called with TypedDataRequest & { account }.
  signTypedData(request: never): Promise<Hex>;
  signTransaction?(request: never): Promise<Hex>;
}

export type EvmSignerInput = EvmSigner | WalletClientLike;

const addressShape = /^0x[0-9a-fA-F]{40}$/;

/** Normalises the wallets x402-pay accepts into an `EvmSigner`. Throws `InvalidConfigError` otherwise. */
export function toEvmSigner(input: EvmSignerInput): EvmSigner {
  if (!input || typeof (input as { signTypedData?: unknown }).signTypedData !== "function") {
    throw new InvalidConfigError(
      "The EVM signer must be a viem account, a WalletClient with an account, or { address, signTypedData }.",
    );
  }
  const direct = (input as { address?: unknown }).address;
  if (typeof direct === "string") {
    // The value is not repeated: a key pasted in the wrong place must not reach a log.
    if (!addressShape.test(direct))
      throw new InvalidConfigError("The EVM signer's address is not a 20-byte hex address.", {
        details: { option: "signer" },
      });
    const signer = input as EvmSigner;
    return {
      address: direct as Hex,
      signTypedData: (request) => signer.signTypedData(request),
      ...(typeof signer.signTransaction === "function" && {
        signTransaction: (transaction: TransactionToSign) => signer.signTransaction!(transaction),
      }),
    };
  }
  const wallet = input as WalletClientLike;
  const account = wallet.account;
  if (!account || typeof account.address !== "string" || !addressShape.test(account.address)) {
    throw new InvalidConfigError(
      "The WalletClient has no account: create it with `account` (from eth_requestAccounts).",
    );
  }
  return {
    address: account.address,
    signTypedData: (request) => wallet.signTypedData({ ...request, account } as never),
    ...(typeof wallet.signTransaction === "function" && {
      signTransaction: (transaction: TransactionToSign) =>
        wallet.signTransaction!({ ...transaction, account } as never),
    }),
  };
}

export function isEvmAddress(value: string): boolean {
  return addressShape.test(value);
}

/**
 * Wallets that return a 65-byte signature with v = 0/1 get v = 27/28; longer (smart-wallet) signatures pass through.
 */
export function normalizeSignature(signature: unknown): Hex {
  if (typeof signature !== "string" || !/^0x(?:[0-9a-fA-F]{2})+$/.test(signature)) {
    throw new SigningError("The wallet returned something that is not a hex signature.");
  }
  if (signature.length !== 132) return signature as Hex;
  const v = parseInt(signature.slice(130), 16);
  return (v < 27 ? `${signature.slice(0, 130)}${(v + 27).toString(16)}` : signature) as Hex;
}
