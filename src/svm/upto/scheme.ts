/**
 * Solana `upto`: the buyer opens a payment channel holding the ceiling (`amount`); the server later settles what the
 * request used, by a voucher its `extra.receiverAuthorizer` signs, and the rest goes back to the buyer. Protocol v2.
 */
import type { TransactionSigner } from "@solana/kit";
import type { PaymentContext, PaymentScheme } from "../../contracts";
import { InvalidConfigError, UnpayableRequirementError } from "../../errors";
import { checkServed, readVia, servedMismatch, type RpcReadOptions } from "../../io";
import { bytesToHex, randomBytes as defaultRandomBytes, utf8, type PaymentRequirement } from "../../protocol";
import { addressToBytes, isOnCurve, isSolanaAddress as isAddress } from "../address";
import { routeRpc, type SolanaEndpoint, type SolanaRpcOption } from "../endpoints";
import { forgetRefused, mintCache, type MintCache } from "../mints";
import { SVM_KNOWN_ASSETS } from "../networks";
import { getFinalizedSlot, getLatestBlockhash } from "../rpc";
import { MAX_MEMO_BYTES, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../transaction";
import { signOpen } from "./open";

export interface UptoSvmOptions {
  /** A `@solana/kit` TransactionSigner: a key pair signer or a wallet-standard wallet's signer. */
  signer: TransactionSigner;
  /**
   * Where the mint, a blockhash and a slot are read when the server quotes none (`extra.tokenProgram`,
   * `extra.recentBlockhash`, `extra.recentSlot`): as exactSvm's `rpc` (a URL or kit RPC, or one per network).
   * Default: the public endpoint of mainnet, devnet and testnet.
   */
  rpc?: SolanaRpcOption | undefined;
  /** How long one RPC read may take, in ms, before the payment fails with RPC_FAILED. Default 10,000. */
  rpcTimeoutMs?: number | undefined;
  /** Network patterns served. Default `["solana:*"]`. */
  networks?: readonly string[] | undefined;
  /** Clock in milliseconds, for the payload's `validAfter` and `expiresAt`. Default `Date.now`. */
  now?: (() => number) | undefined;
  /** Source of random bytes for the channel's salt and the memo nonce. Default WebCrypto. */
  randomBytes?: ((length: number) => Uint8Array) | undefined;
}

const U32_MAX = 2 ** 32 - 1;
const U64_MAX = (1n << 64n) - 1n;
/** An optional hint the server left out (the reference client reads `null` and `""` as absent too). */
const absent = (value: unknown) => value === undefined || value === null || value === "";
/** A u64 written as a safe integer or a decimal string, else `undefined`. */
function u64(value: unknown): bigint | undefined {
  const text = typeof value === "number" && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== "string" || !/^\d{1,20}$/.test(text)) return undefined;
  const n = BigInt(text);
  return n <= U64_MAX ? n : undefined;
}
/** The value as a reason shows it. */
const shown = (value: unknown) => (value === undefined ? "missing" : JSON.stringify(value));

/** Why the requirement's `extra` cannot make a channel this buyer should open, else `undefined`. */
function checkExtra(extra: PaymentRequirement["extra"], buyer: string): string | undefined {
  const { feePayer, receiverAuthorizer, withdrawDelay, tokenProgram, memo, recentBlockhash, recentSlot } = extra;
  for (const [name, value] of Object.entries({ feePayer, receiverAuthorizer })) {
    if (!isAddress(value)) return `extra.${name} is ${shown(value)}, not a Solana address`;
  }
  if (feePayer === buyer) {
    return (
      "extra.feePayer is the buyer's own address: the buyer would pay the fees and rent and be the channel's payee " +
      "(the channel program refuses a payer who is the payee)"
    );
  }
  if (!isOnCurve(addressToBytes(receiverAuthorizer)!)) {
    return "extra.receiverAuthorizer is off the ed25519 curve: it could never sign a voucher (the program refuses it)";
  }
  if (!(Number.isInteger(withdrawDelay) && (withdrawDelay as number) >= 1 && (withdrawDelay as number) <= U32_MAX)) {
    return `extra.withdrawDelay is ${shown(withdrawDelay)}, not a whole number of seconds from 1 to ${U32_MAX}`;
  }
  if (!absent(tokenProgram) && tokenProgram !== TOKEN_PROGRAM && tokenProgram !== TOKEN_2022_PROGRAM) {
    return `extra.tokenProgram ${shown(tokenProgram)} is neither the SPL Token nor the Token-2022 program`;
  }
  if (!absent(memo) && !(typeof memo === "string" && utf8.encode(memo).length <= MAX_MEMO_BYTES)) {
    return `extra.memo must be a string of at most ${MAX_MEMO_BYTES} UTF-8 bytes`;
  }
  // A quote that is there but unreadable is the server's mistake: refused, not silently replaced by our own read.
  if (!absent(recentBlockhash) && !isAddress(recentBlockhash)) {
    return `extra.recentBlockhash ${shown(recentBlockhash)} is not a blockhash (32 bytes in base58)`;
  }
  if (!absent(recentSlot) && u64(recentSlot) === undefined) {
    return `extra.recentSlot ${shown(recentSlot)} is not a slot number (a u64, as an integer or a decimal string)`;
  }
  const { validAfter } = extra;
  if (validAfter !== undefined && !(Number.isSafeInteger(validAfter) && (validAfter as number) >= 0)) {
    return `extra.validAfter ${shown(validAfter)} is not a time in whole seconds`;
  }
  return undefined;
}

/** Why this buyer cannot pay the requirement (its `extra` included), else `undefined`. */
function checkRequirement(
  { caip2 = "", network, payTo, asset, amount, maxTimeoutSeconds, extra }: PaymentRequirement,
  buyer: string,
  rpcFor: ReturnType<typeof routeRpc>,
): string | undefined {
  if (!caip2.startsWith("solana:")) return `network ${network} is not a Solana cluster`;
  for (const [name, value] of Object.entries({ payTo, asset })) {
    if (!isAddress(value)) return `${name} is ${shown(value)}, not a Solana address`;
  }
  if (payTo === buyer) return "payTo is the buyer's own address";
  const deposit = BigInt(amount);
  if (deposit === 0n) return "amount is 0: a channel cannot open without a deposit";
  if (deposit > U64_MAX) return `amount ${amount} does not fit a token deposit (u64)`;
  if (!(Number.isSafeInteger(maxTimeoutSeconds) && maxTimeoutSeconds >= 1)) {
    return `maxTimeoutSeconds is ${shown(maxTimeoutSeconds)}, not a whole number of seconds of at least 1`;
  }
  const problem = checkExtra(extra, buyer);
  if (problem || !needsRpc(extra)) return problem;
  const endpoint = rpcFor(caip2);
  if (!endpoint) return `no RPC is known for ${caip2}: add it to uptoSvm({ rpc: { "${caip2}": url } })`;
  return servedMismatch(endpoint, caip2);
}

/** What the server did not quote is read over RPC: the mint's token program, a blockhash, a slot. */
const needsRpc = ({ tokenProgram, recentBlockhash, recentSlot }: PaymentRequirement["extra"]) =>
  absent(tokenProgram) || absent(recentBlockhash) || absent(recentSlot);

/** The token program, blockhash and open slot: as the server quoted them, else read (and the cluster checked). */
async function chainFacts(
  { caip2, network, asset, extra }: PaymentRequirement,
  endpoint: SolanaEndpoint | undefined,
  mints: MintCache,
  read: RpcReadOptions,
) {
  const { tokenProgram, recentBlockhash, lastValidBlockHeight, recentSlot } = extra;
  const mint = async () => {
    const facts = await mints.read(endpoint!, asset, read);
    if (typeof facts !== "string") return facts.tokenProgram;
    throw new UnpayableRequirementError(
      `The asset ${asset} on ${network} is not a mint of the SPL Token or Token-2022 program (${facts}).`,
    );
  };
  // `check` made sure there is an endpoint when a read is needed.
  const [program, blockhash, openSlot] = await Promise.all([
    absent(tokenProgram) ? mint() : (tokenProgram as string),
    absent(recentBlockhash)
      ? readVia(endpoint!, "getLatestBlockhash", getLatestBlockhash, read)
      : { blockhash: recentBlockhash as string, lastValidBlockHeight: u64(lastValidBlockHeight) ?? 0n },
    absent(recentSlot) ? readVia(endpoint!, "getSlot", getFinalizedSlot, read) : u64(recentSlot)!,
    needsRpc(extra) && endpoint!.verify && checkServed(endpoint!, caip2!, read),
  ]);
  return { program, blockhash, openSlot };
}

/** The scheme's options, checked: `InvalidConfigError` for a value it cannot use. */
function resolveOptions(options: UptoSvmOptions) {
  const buyer = options.signer?.address;
  if (!isAddress(buyer)) {
    throw new InvalidConfigError(
      "uptoSvm needs a @solana/kit TransactionSigner with an address (e.g. createKeyPairSignerFromBytes).",
    );
  }
  const timeoutMs = options.rpcTimeoutMs ?? 10_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2 ** 31 - 1) {
    throw new InvalidConfigError(
      `rpcTimeoutMs must be a whole number of milliseconds from 1 to 2^31 - 1, not ${timeoutMs}.`,
      { details: { option: "rpcTimeoutMs" } },
    );
  }
  return {
    buyer,
    timeoutMs,
    now: options.now ?? Date.now,
    randomBytes: options.randomBytes ?? defaultRandomBytes,
    rpcFor: routeRpc(options.rpc, "uptoSvm"),
  };
}

/**
 * Pays `upto` requirements on Solana by opening a payment channel (`PAYMENT_CHANNELS_PROGRAM`) whose deposit is the
 * ceiling. The program and the instructions are fixed here: nothing in `extra` names or adds one.
 */
export function uptoSvm(options: UptoSvmOptions): PaymentScheme {
  const { signer } = options;
  const { buyer, timeoutMs, now, randomBytes, rpcFor } = resolveOptions(options);
  const mints = mintCache();

  return {
    scheme: "upto",
    networks: options.networks ?? ["solana:*"],
    x402Versions: [2],
    // The deposit is locked in the channel before delivery; what was used is claimed after, the rest returned.
    flows: ["escrow"],
    payer: buyer,
    knownAssets: SVM_KNOWN_ASSETS,
    check: (requirement) => checkRequirement(requirement, buyer, rpcFor),

    async createPayload(requirement: PaymentRequirement, context?: PaymentContext) {
      const { caip2, asset, payTo, amount, maxTimeoutSeconds, extra } = requirement;
      const read = { signal: context?.signal, timeoutMs };
      const { program, blockhash, openSlot } = await chainFacts(requirement, rpcFor(caip2!), mints, read);
      const salt = randomBytes(8).reduceRight((n, byte) => (n << 8n) | BigInt(byte), 0n);
      const { channel, transaction } = await signOpen({
        signer,
        feePayer: extra.feePayer as string, // `check` let only addresses through
        receiverAuthorizer: extra.receiverAuthorizer as string,
        mint: asset,
        tokenProgram: program,
        payTo,
        deposit: BigInt(amount),
        withdrawDelay: extra.withdrawDelay as number,
        salt,
        openSlot,
        memo: absent(extra.memo) ? bytesToHex(randomBytes(16)).slice(2) : (extra.memo as string),
        blockhash,
        signal: context?.signal,
      });
      const seconds = Math.floor(now() / 1000);
      // The reference client's keys, in its order; amounts and slots as decimal strings, times as numbers.
      const payload = {
        channelId: channel,
        deposit: amount,
        expiresAt: seconds + maxTimeoutSeconds,
        from: buyer,
        maxAmount: amount,
        nonce: salt.toString(),
        openSlot: openSlot.toString(),
        openTransaction: transaction,
        authorizedSigner: extra.receiverAuthorizer as string,
        validAfter: (extra.validAfter as number | undefined) ?? seconds,
      };
      return { payload };
    },
    // A payment the server refused: its mint is read again next time.
    onOutcome: forgetRefused(mints, rpcFor),
  };
}
