/** Solana `exact`: a partially signed SPL TransferChecked, protocol v1 and v2 (svm.md). */
import type { TransactionSigner } from "@solana/kit";
import type { PaymentContext, PaymentScheme, SettlementQuery } from "../contracts";
import { InvalidConfigError, UnpayableRequirementError } from "../errors";
import { bytesToHex, randomBytes as defaultRandomBytes, utf8, type PaymentRequirement } from "../protocol";
import { isSolanaAddress as isAddress } from "./address";
import { SVM_KNOWN_ASSETS, SVM_V1_NETWORKS } from "./networks";
import { checkServed, readVia, servedMismatch } from "../io";
import { routeRpc, type SolanaRpcOption } from "./endpoints";
import { forgetRefused, mintCache } from "./mints";
import { getLatestBlockhash } from "./rpc";
import type { SvmSettlement } from "./settlement";
import { MAX_COMPUTE_UNIT_PRICE, MAX_MEMO_BYTES, signTransfer } from "./transaction";

export interface ExactSvmOptions {
  /** A `@solana/kit` TransactionSigner: a key pair signer or a wallet-standard wallet's signer. */
  signer: TransactionSigner;
  /**
   * Where the mint and a blockhash are read. One RPC per network: a map `{ [CAIP-2 network]: URL or
   * kit RPC }` (a network left out uses its public endpoint, if it has one), or a single URL or kit
   * RPC (`createSolanaRpc(url)`), which pays only on the cluster its genesis hash names.
   * Default: the public endpoint of mainnet, devnet and testnet.
   */
  rpc?: SolanaRpcOption | undefined;
  /** How long one RPC read may take, in ms, before the payment fails with RPC_FAILED. Default 10,000. */
  rpcTimeoutMs?: number | undefined;
  /** Network patterns served. Default `["solana:*"]`; v1 names (`solana-devnet`) match by CAIP-2 id. */
  networks?: readonly string[] | undefined;
  /** Protocol versions served. Default `[1, 2]`. */
  x402Versions?: readonly (1 | 2)[] | undefined;
  /** Compute-unit limit, up to 1,400,000. Default 20,000 (the reference's). */
  computeUnitLimit?: number | undefined;
  /** Compute-unit price in µlamports, at most 5,000,000. Default 1 (the reference's). */
  computeUnitPrice?: bigint | number | undefined;
  /**
   * Lets `checkSettlement(client, …)` look this scheme's payments up through its RPC (a pending
   * settlement, an unknown outcome): `svmSettlement()`. Never read while paying.
   */
  settlement?: SvmSettlement | undefined;
  /** Source of random bytes for the memo nonce. Default WebCrypto. */
  randomBytes?: ((length: number) => Uint8Array) | undefined;
}

const U64_MAX = (1n << 64n) - 1n;

/** The scheme's options, checked: `InvalidConfigError` for a value it cannot use. */
function resolveOptions(options: ExactSvmOptions) {
  const buyer = options.signer?.address;
  if (!isAddress(buyer)) {
    throw new InvalidConfigError(
      "exactSvm needs a @solana/kit TransactionSigner with an address (e.g. createKeyPairSignerFromBytes).",
    );
  }
  const computeUnitPrice = BigInt(options.computeUnitPrice ?? 1);
  if (computeUnitPrice < 0n || computeUnitPrice > MAX_COMPUTE_UNIT_PRICE) {
    throw new InvalidConfigError(
      `computeUnitPrice must be from 0 to ${MAX_COMPUTE_UNIT_PRICE} µlamports: facilitators refuse more.`,
    );
  }
  const computeUnitLimit = options.computeUnitLimit ?? 20_000;
  if (!Number.isInteger(computeUnitLimit) || computeUnitLimit < 1 || computeUnitLimit > 1_400_000) {
    throw new InvalidConfigError(`computeUnitLimit must be an integer from 1 to 1,400,000, not ${computeUnitLimit}.`);
  }
  const timeoutMs = options.rpcTimeoutMs ?? 10_000;
  // The most setTimeout takes: a longer delay would fire at once.
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2 ** 31 - 1) {
    throw new InvalidConfigError(
      `rpcTimeoutMs must be a whole number of milliseconds from 1 to 2^31 - 1, not ${timeoutMs}.`,
      {
        details: { option: "rpcTimeoutMs" },
      },
    );
  }
  return {
    buyer,
    computeUnitPrice,
    computeUnitLimit,
    timeoutMs,
    randomBytes: options.randomBytes ?? defaultRandomBytes,
    rpcFor: routeRpc(options.rpc),
  };
}

/** Pays `exact` requirements on Solana with an SPL Token or Token-2022 TransferChecked. */
export function exactSvm(options: ExactSvmOptions): PaymentScheme {
  const { signer, settlement } = options;
  const { buyer, computeUnitPrice, computeUnitLimit, timeoutMs, randomBytes, rpcFor } = resolveOptions(options);
  // Each mint's decimals and token program, read once per RPC (src/svm/mints.ts).
  const mints = mintCache();

  return {
    scheme: "exact",
    networks: options.networks ?? ["solana:*"],
    x402Versions: options.x402Versions ?? [1, 2],
    payer: buyer,
    v1Networks: SVM_V1_NETWORKS,
    knownAssets: SVM_KNOWN_ASSETS,

    check({ caip2 = "", network, payTo, asset, amount, extra: { feePayer, memo } }) {
      if (!caip2.startsWith("solana:")) return `network ${network} is not a Solana cluster`;
      const endpoint = rpcFor(caip2);
      if (!endpoint) return `no RPC is known for ${caip2}: add it to exactSvm({ rpc: { "${caip2}": url } })`;
      // A single RPC found serving another cluster (by an earlier payment) cannot pay this one.
      const mismatch = servedMismatch(endpoint, caip2);
      if (mismatch) return mismatch;
      // payTo, the mint and the facilitator's fee payer are addresses; payTo and the fee payer not the buyer's.
      for (const [name, value] of Object.entries({ payTo, asset, "extra.feePayer": feePayer })) {
        if (!isAddress(value))
          return `${name} is ${value === undefined ? "missing" : `${JSON.stringify(value)}, not a Solana address`}`;
        if (value === buyer && name !== "asset") return `${name} is the buyer's own address`;
      }
      if (BigInt(amount) > U64_MAX) return `amount ${amount} does not fit a token transfer (u64)`;
      if (memo !== undefined && !(typeof memo === "string" && utf8.encode(memo).length <= MAX_MEMO_BYTES)) {
        return `extra.memo must be a string of at most ${MAX_MEMO_BYTES} UTF-8 bytes`;
      }
      return undefined;
    },

    ...(settlement && {
      async checkSettlement(query: SettlementQuery, signal?: AbortSignal) {
        const endpoint = rpcFor(query.network);
        if (!endpoint)
          throw new InvalidConfigError(
            `exactSvm has no RPC for ${query.network}: give it one, exactSvm({ rpc: { "${query.network}": url } }).`,
            { details: { option: "rpc" } },
          );
        if (endpoint.verify) await checkServed(endpoint, query.network, { signal, timeoutMs });
        return settlement.check(endpoint, query, { signal, timeoutMs });
      },
    }),

    async createPayload({ caip2, network, asset, payTo, amount, extra }: PaymentRequirement, context?: PaymentContext) {
      const endpoint = rpcFor(caip2!)!; // `check` made sure there is one
      const read = { signal: context?.signal, timeoutMs };
      // A server that quotes a recent blockhash saves the buyer an RPC round trip.
      const { recentBlockhash, lastValidBlockHeight: height, feePayer, memo } = extra;
      // The cluster check runs beside the reads, so it adds no round trip; all three end before signing.
      const [mint, blockhash] = await Promise.all([
        mints.read(endpoint, asset, read),
        isAddress(recentBlockhash)
          ? {
              blockhash: recentBlockhash,
              lastValidBlockHeight: /^\d+$/.test(String(height)) ? BigInt(String(height)) : U64_MAX,
            }
          : readVia(endpoint, "getLatestBlockhash", getLatestBlockhash, read),
        endpoint.verify && checkServed(endpoint, caip2!, read),
      ]);
      if (typeof mint === "string") {
        throw new UnpayableRequirementError(
          `The asset ${asset} on ${network} is not a mint of the SPL Token or Token-2022 program (${mint}).`,
        );
      }
      const transaction = await signTransfer({
        signer,
        feePayer: feePayer as string, // `check` let only addresses through
        mint: asset,
        tokenProgram: mint.tokenProgram,
        decimals: mint.decimals,
        payTo,
        amount: BigInt(amount),
        // `check` let only a string or nothing through.
        memo: typeof memo === "string" ? memo : bytesToHex(randomBytes(16)).slice(2),
        memoRequired: typeof memo === "string",
        blockhash,
        computeUnitLimit,
        computeUnitPrice,
        signal: context?.signal,
      });
      return { payload: { transaction } };
    },
    // A payment the server refused: its mint is read again next time.
    onOutcome: forgetRefused(mints, rpcFor),
  };
}
