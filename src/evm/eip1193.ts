/**
 * A signer straight from an EIP-1193 provider (`window.ethereum`, a wallet SDK's provider): typed data
 * through `eth_signTypedData_v4`, messages (sign-in-with-x) through `personal_sign`, the address from
 * `eth_accounts`. For a dapp that does not otherwise ship viem's WalletClient.
 */
import { InvalidConfigError } from "../errors";
import { bytesToHex, checksumAddress, utf8 } from "../protocol";
import type { EvmRequester } from "./chain";
import {
  isEvmAddress,
  normalizeSignature,
  type EvmMessageSigner,
  type EvmSigner,
  type Hex,
  type TypedDataRequest,
} from "./signer";

export interface Eip1193SignerOptions {
  /**
   * Ask the wallet to connect (`eth_requestAccounts`, which may prompt) instead of reading `eth_accounts`. Default
   * false.
   */
  connect?: boolean | undefined;
  /** Which connected account pays, when the wallet has several. Default: the first. */
  address?: string | undefined;
}

/** The EIP712Domain fields, in their canonical order, with the types a domain's present keys have. */
const domainFields: [string, string][] = [
  ["name", "string"],
  ["version", "string"],
  ["chainId", "uint256"],
  ["verifyingContract", "address"],
  ["salt", "bytes32"],
];

/**
 * An `EvmSigner` over an EIP-1193 provider, which also signs messages (for `signInWithX`). Throws
 * `InvalidConfigError` when the wallet exposes no account (not connected: pass `{ connect: true }`,
 * or connect first).
 */
export async function eip1193Signer(
  provider: EvmRequester,
  options: Eip1193SignerOptions = {},
): Promise<EvmSigner & EvmMessageSigner> {
  if (typeof provider?.request !== "function") {
    throw new InvalidConfigError("eip1193Signer needs an EIP-1193 provider, such as window.ethereum.", {
      details: { option: "provider" },
    });
  }
  const accounts = await provider.request({ method: options.connect ? "eth_requestAccounts" : "eth_accounts" });
  const list = Array.isArray(accounts)
    ? accounts.filter((a): a is string => typeof a === "string" && isEvmAddress(a))
    : [];
  const chosen =
    options.address === undefined ? list[0] : list.find((a) => a.toLowerCase() === options.address!.toLowerCase());
  if (!chosen) {
    throw new InvalidConfigError(
      options.address === undefined
        ? "The wallet exposes no account: connect it first, or pass eip1193Signer(provider, { connect: true })."
        : `The wallet does not expose ${options.address}.`,
      { details: { option: options.address === undefined ? "provider" : "address" } },
    );
  }
  const address = checksumAddress(chosen);
  return {
    address,
    async signTypedData({ domain, types, primaryType, message }: TypedDataRequest) {
      const EIP712Domain = domainFields
        .filter(([name]) => domain[name] !== undefined)
        .map(([name, type]) => ({ name, type }));
      // eth_signTypedData_v4 takes JSON: bigints as decimal strings.
      const json = JSON.stringify({ types: { EIP712Domain, ...types }, domain, primaryType, message }, (_, v) =>
        typeof v === "bigint" ? v.toString() : v,
      );
      return normalizeSignature(await provider.request({ method: "eth_signTypedData_v4", params: [address, json] }));
    },
    // personal_sign takes the message's UTF-8 bytes as hex, then the account; the signature is passed
    // on as the wallet made it (a smart wallet's ERC-1271 or ERC-6492 signature included).
    signMessage: ({ message }: { message: string }) =>
      provider.request({
        method: "personal_sign",
        params: [bytesToHex(utf8.encode(message)), address],
      }) as Promise<Hex>,
  };
}
