/**
 * `signInWithX`: answer a 402 with a sign-in proof instead of money, where the server grants it: on a
 * route with no payment option, and on a route this wallet paid before. Elsewhere it pays at once,
 * with no wasted round trip.
 */
import type { Ledger, SignInStore, X402Plugin } from "../../contracts";
import { InvalidConfigError, SignInRefusedError, requestDetails } from "../../errors";
import { encodeBase64Json } from "../../protocol";
import { checkDeclaration, chooseChain, type SignInWallet } from "./challenge";
import { isLedger, ledgerStore, memoryStore, paidKey } from "./store";
import {
  toEvmMessageSigner,
  toSolanaMessageSigner,
  type EvmMessageSignerInput,
  type SolanaMessageSignerInput,
} from "./wallets";

/** The extension's key in a 402 and the name of the request header carrying the proof. */
export const SIGN_IN_WITH_X = "sign-in-with-x";

export interface SignInWithXOptions {
  /** Signs EIP-4361 messages: a viem account, a viem WalletClient with an account, or `eip1193Signer(provider)`. */
  evm?: EvmMessageSignerInput | undefined;
  /** Signs SIWS messages: a `@solana/kit` message signer, or a wallet-standard wallet with `solana:signMessage`. */
  solana?: SolanaMessageSignerInput | undefined;
  /**
   * Where the routes each wallet paid for are remembered: a key-value store, or the client's receipts ledger. Default:
   * this process's memory.
   */
  store?: SignInStore | Ledger | undefined;
}

const SIGNATURE_SCHEMES: readonly unknown[] = ["eip191", "eip1271", "eip6492", "siws"];

/**
 * The sign-in-with-x extension, for `createX402Client({ schemes, extensions: [signInWithX({ evm })] })`.
 * On a 402 that declares it, signs in (one extra request, no payment) when the route has no payment
 * option or a registered wallet paid for it before; otherwise the request pays directly. A server
 * that still answers 402 after the sign-in is paid, within policy. A challenge for another origin, a
 * stale or expired one, or one with a weak nonce is refused with `SignInRefusedError` before anything
 * is signed; so is, on a route with no payment option, one that no wallet can sign.
 */
export function signInWithX(options: SignInWithXOptions): X402Plugin {
  const config = (problem: string, option = "") =>
    new InvalidConfigError(`signInWithX: ${problem}`, { details: { option: `signInWithX${option}` } });
  if (!options || typeof options !== "object")
    throw config("needs its wallets: signInWithX({ evm }) or signInWithX({ solana }).");
  const unknown = Object.keys(options).find((key) => !["evm", "solana", "store"].includes(key));
  if (unknown) throw config(`${unknown} is not an option (options: evm, solana, store).`, `.${unknown}`);
  if (!options.evm && !options.solana)
    throw config("needs at least one wallet that signs messages: { evm }, { solana }, or both.");
  const store = isLedger(options.store) ? ledgerStore(options.store) : (options.store ?? memoryStore());
  if (typeof store?.get !== "function" || typeof store.set !== "function")
    throw config("store must have get(key) and set(key, value), or be a ledger.", ".store");
  const evm = options.evm && toEvmMessageSigner(options.evm);
  const solana = options.solana && toSolanaMessageSigner(options.solana);

  /** The wallets that can sign now (a wallet-standard wallet may have no account connected). */
  const wallets = (): SignInWallet[] => [
    ...(evm ? [{ family: "evm" as const, address: evm.address!, sign: evm.sign }] : []),
    ...(solana?.address ? [{ family: "solana" as const, address: solana.address, sign: solana.sign }] : []),
  ];

  return {
    name: "sign-in-with-x",
    key: SIGN_IN_WITH_X,

    async beforePayment({ declaration, challenge, request }) {
      const authOnly = challenge.requirements.length === 0 && challenge.invalid.length === 0;
      let candidates = wallets();
      const paidOn: string[] = [];
      if (!authOnly) {
        // Only a wallet that paid for this route is let in by the server: the others pay.
        const remembered = await Promise.all(candidates.map((wallet) => recall(store, request.url, wallet.address)));
        candidates = candidates.filter((_, i) => remembered[i] !== undefined);
        for (const network of remembered) if (network) paidOn.push(network);
        if (candidates.length === 0) return undefined;
      }
      const { info, chains } = checkDeclaration(declaration, request, Date.now());
      const offered = challenge.requirements.map((r) => r.caip2 ?? r.network);
      const choice = chooseChain({ info, chains }, candidates, [...paidOn, ...offered]);
      if ("reasons" in choice) {
        // With a payment option, paying is the way in; without one, say why no chain would do.
        if (!authOnly) return undefined;
        throw new SignInRefusedError(
          `Sign-in refused: the route takes no payment, and no declared chain can be signed in on ` +
            `(${choice.reasons.join("; ")}). Nothing was signed.`,
          {
            details: { ...requestDetails(request), reason: "unsupported_chain" },
          },
        );
      }
      const { chain, wallet, message } = choice;
      const signature = await wallet.sign(message);
      // The reference's field order; JSON.stringify leaves out the fields that are undefined.
      const proof = {
        domain: info.domain,
        address: wallet.address,
        statement: info.statement,
        uri: info.uri,
        version: info.version,
        chainId: chain.chainId,
        type: chain.type,
        nonce: info.nonce,
        issuedAt: info.issuedAt,
        expirationTime: info.expirationTime,
        notBefore: info.notBefore,
        requestId: info.requestId,
        resources: info.resources,
        signatureScheme: SIGNATURE_SCHEMES.includes(chain.signatureScheme) ? chain.signatureScheme : undefined,
        signature,
      };
      return { [SIGN_IN_WITH_X]: encodeBase64Json(proof) };
    },

    async onOutcome(outcome) {
      // Remembered from the server's own word: a settlement it reported as successful.
      if (!outcome.settled || !outcome.receipt.settled) return;
      const { url, payer, network } = outcome.receipt;
      await store.set(paidKey(url, payer), network);
    },
  };
}

/**
 * The network `address` paid this route on (`""` if the store did not say), or `undefined` if it
 * did not pay. A store that fails to answer knows nothing: the request pays, as on a first visit.
 */
async function recall(store: SignInStore, url: string, address: string): Promise<string | undefined> {
  try {
    const value = await store.get(paidKey(url, address));
    return value === undefined || value === null ? undefined : String(value);
  } catch {
    return undefined;
  }
}
