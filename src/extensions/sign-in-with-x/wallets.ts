/**
 * The wallets that may sign in. EVM: EIP-191 `personal_sign` from a viem account, a viem WalletClient
 * with an account, or `eip1193Signer(provider)`; the signature passed on as the wallet made it (a
 * smart wallet's ERC-1271 or ERC-6492 signature is not touched). Solana: raw Ed25519 over the message
 * bytes, in base58, from a `@solana/kit` message signer or a wallet-standard wallet. Structural types
 * only: nothing here loads viem or `@solana/kit`.
 */
import { InvalidConfigError, SigningError } from "../../errors";
import type { EvmMessageSigner, Hex } from "../../evm";
import { BASE58_ALPHABET, bytesToBase58, checksumAddress, utf8 } from "../../protocol";
import { SIGN_MESSAGE, accountsWith, signMessagesWith, type WalletStandardWalletLike } from "../../svm/wallet-standard";

/** A viem WalletClient with an account (a JSON-RPC account from `eth_requestAccounts`, or a local one). */
export interface MessageWalletClientLike {
  readonly address?: undefined;
  readonly account?: { readonly address: Hex } | undefined;
  // `never`: any WalletClient's generic signMessage fits; it is called with { message, account }.
  signMessage(request: never): Promise<Hex>;
}

export type EvmMessageSignerInput = EvmMessageSigner | MessageWalletClientLike;

/** A message as kit's signers take it (`SignableMessage`). */
export interface SignableMessageLike {
  readonly content: Uint8Array;
  readonly signatures: Readonly<Record<string, Uint8Array>>;
}

/** A `@solana/kit` `MessagePartialSigner`, such as `createKeyPairSignerFromBytes(...)`. */
export interface KitMessagePartialSignerLike {
  readonly address: string;
  signMessages(messages: readonly SignableMessageLike[]): Promise<readonly Readonly<Record<string, Uint8Array>>[]>;
}

/** A `@solana/kit` `MessageModifyingSigner`, such as a wallet-standard account's message signer. */
export interface KitMessageModifyingSignerLike {
  readonly address: string;
  modifyAndSignMessages(messages: readonly SignableMessageLike[]): Promise<readonly SignableMessageLike[]>;
}

export type SolanaMessageSignerInput =
  | KitMessagePartialSignerLike
  | KitMessageModifyingSignerLike
  /** A wallet-standard `Wallet` with the `solana:signMessage` feature: its first account that has the feature signs. */
  | WalletStandardWalletLike;

/** A wallet as sign-in uses it: its address now (`undefined` while none is connected), and how it signs a message. */
export interface MessageSigner {
  readonly address: string | undefined;
  sign(message: string): Promise<string>;
}

const config = (message: string, option: string) =>
  new InvalidConfigError(message, { details: { option: `signInWithX.${option}` } });
const isBase58Address = (value: unknown): value is string =>
  typeof value === "string" &&
  value.length >= 32 &&
  value.length <= 44 &&
  [...value].every((c) => BASE58_ALPHABET.includes(c));

/**
 * The EVM wallet, its address in the EIP-55 form the EIP-4361 message writes. Throws `InvalidConfigError` for anything
 * else.
 */
export function toEvmMessageSigner(input: EvmMessageSignerInput): MessageSigner {
  if (typeof input?.signMessage !== "function") {
    throw config(
      "signInWithX: the EVM wallet must sign messages: a viem account, a WalletClient with an account, or " +
        "eip1193Signer(provider).",
      "evm",
    );
  }
  const account = typeof input.address === "string" ? undefined : input.account;
  const address: unknown = account ? account.address : input.address;
  if (typeof address !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(address)) {
    // The value is not repeated: a key pasted in the wrong place must not reach a log.
    throw config(
      address === undefined
        ? "signInWithX: the WalletClient has no account: create it with `account` (from eth_requestAccounts)."
        : "signInWithX: the EVM wallet's address is not a 20-byte hex address.",
      "evm",
    );
  }
  return {
    address: checksumAddress(address),
    async sign(message) {
      const signature: unknown = await input.signMessage((account ? { message, account } : { message }) as never);
      if (typeof signature !== "string" || !/^0x(?:[0-9a-fA-F]{2})+$/.test(signature))
        throw new SigningError("The wallet returned something that is not a hex signature.");
      return signature;
    },
  };
}

/** The Solana wallet. Throws `InvalidConfigError` for anything that does not sign messages. */
export function toSolanaMessageSigner(input: SolanaMessageSignerInput): MessageSigner {
  const wallet = input as Partial<
    KitMessagePartialSignerLike & KitMessageModifyingSignerLike & WalletStandardWalletLike
  >;
  if (
    typeof Object(Object(wallet?.features)[SIGN_MESSAGE]).signMessage === "function" &&
    Array.isArray(wallet.accounts)
  ) {
    const standard = wallet as WalletStandardWalletLike;
    const account = () => accountsWith(standard, SIGN_MESSAGE)[0];
    return {
      get address() {
        return account()?.address;
      },
      async sign(text) {
        const signer = account();
        if (!signer) throw new SigningError("The wallet has no connected account that signs messages.");
        const message = utf8.encode(text);
        const [output] = await signMessagesWith(standard, signer, [message]);
        return base58Signature(output!.signature, output!.signedMessage, message);
      },
    };
  }
  const { address } = wallet;
  const partial = typeof wallet?.signMessages === "function";
  if (!partial && typeof wallet?.modifyAndSignMessages !== "function") {
    throw config(
      "signInWithX: the Solana wallet must sign messages: a @solana/kit message signer (signMessages or " +
        "modifyAndSignMessages) or a wallet-standard wallet with solana:signMessage.",
      "solana",
    );
  }
  if (!isBase58Address(address))
    throw config("signInWithX: the Solana wallet's address is not a base58 address.", "solana");
  return {
    address,
    async sign(text) {
      const content = utf8.encode(text);
      if (partial) {
        const [signatures] = await wallet.signMessages!([{ content, signatures: {} }]);
        return base58Signature(signatures?.[address], content, content);
      }
      const [signed] = await wallet.modifyAndSignMessages!([{ content, signatures: {} }]);
      return base58Signature(signed?.signatures?.[address], signed?.content, content);
    },
  };
}

/**
 * The signature in base58, once it is 64 bytes over the very bytes asked: a wallet may not rewrite a sign-in message.
 */
function base58Signature(signature: unknown, signed: unknown, message: Uint8Array): string {
  if (
    !(signed instanceof Uint8Array) ||
    signed.length !== message.length ||
    signed.some((byte, i) => byte !== message[i])
  ) {
    throw new SigningError("The wallet changed the sign-in message it was asked to sign.");
  }
  if (!(signature instanceof Uint8Array) || signature.length !== 64)
    throw new SigningError("The wallet returned no 64-byte Ed25519 signature.");
  return bytesToBase58(signature);
}
