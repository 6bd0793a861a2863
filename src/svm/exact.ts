/** Solana `exact`: a partially signed SPL TransferChecked, protocol v1 and v2 (svm.md). */
import type { TransactionSigner } from "@solana/kit";
import type { PaymentScheme } from "../client";
import { InvalidConfigError, UnpayableRequirementError } from "../errors";
import type { PaymentRequirement } from "../protocol";
import { isSolanaAddress as isAddress } from "./address";
import { SVM_KNOWN_ASSETS, SVM_V1_NETWORKS } from "./networks";
import { DEFAULT_SOLANA_RPC_URLS, getLatestBlockhash, getMint, jsonRpc, type SolanaRpcLike } from "./rpc";
import { MAX_COMPUTE_UNIT_PRICE, MAX_MEMO_BYTES, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, signTransfer } from "./transaction";

export interface ExactSvmOptions {
  /** A `@solana/kit` TransactionSigner: a key pair signer or a wallet-standard wallet's signer. */
  signer: TransactionSigner;
  /** A kit RPC (`createSolanaRpc(url)`) or an RPC URL, for every network. Default: the public endpoint of each cluster. */
  rpc?: SolanaRpcLike | string;
  /** Network patterns served. Default `["solana:*"]`; v1 names (`solana-devnet`) match by CAIP-2 id. */
  networks?: readonly string[];
  /** Protocol versions served. Default `[1, 2]`. */
  x402Versions?: readonly (1 | 2)[];
  /** Compute-unit limit. Default 20,000 (the reference's). */
  computeUnitLimit?: number;
  /** Compute-unit price in µlamports, at most 5,000,000. Default 1 (the reference's). */
  computeUnitPrice?: bigint | number;
  /** Source of random bytes for the memo nonce. Default WebCrypto. */
  randomBytes?: (length: number) => Uint8Array;
}

const U64_MAX = (1n << 64n) - 1n;
const encoder = /* @__PURE__ */ new TextEncoder();

/** Pays `exact` requirements on Solana with an SPL Token or Token-2022 TransferChecked. */
export function exactSvm(options: ExactSvmOptions): PaymentScheme {
  const { signer } = options;
  if (!signer || typeof signer.address !== "string" || !isAddress(signer.address)) {
    throw new InvalidConfigError("exactSvm needs a @solana/kit TransactionSigner with an address (e.g. createKeyPairSignerFromBytes).");
  }
  const computeUnitPrice = BigInt(options.computeUnitPrice ?? 1);
  if (computeUnitPrice < 0n || computeUnitPrice > MAX_COMPUTE_UNIT_PRICE) {
    throw new InvalidConfigError(`computeUnitPrice must be from 0 to ${MAX_COMPUTE_UNIT_PRICE} µlamports: facilitators refuse more.`);
  }
  const computeUnitLimit = options.computeUnitLimit ?? 20_000;
  const randomBytes = options.randomBytes ?? ((length: number) => crypto.getRandomValues(new Uint8Array(length)));
  // One JSON-RPC client per RPC URL, made on first use.
  const rpcs: Record<string, SolanaRpcLike> = {};

  return {
    scheme: "exact",
    networks: options.networks ?? ["solana:*"],
    x402Versions: options.x402Versions ?? [1, 2],
    payer: signer.address,
    v1Networks: SVM_V1_NETWORKS,
    knownAssets: SVM_KNOWN_ASSETS,

    check(requirement) {
      const network = requirement.caip2 ?? "";
      if (!network.startsWith("solana:")) return `network ${requirement.network} is not a Solana cluster`;
      if (!options.rpc && !DEFAULT_SOLANA_RPC_URLS[network]) return `no RPC is known for ${network}: pass exactSvm({ rpc })`;
      if (!isAddress(requirement.payTo)) return `payTo ${JSON.stringify(requirement.payTo)} is not a Solana address`;
      if (requirement.payTo === signer.address) return "payTo is the buyer's own address";
      if (!isAddress(requirement.asset)) return `asset ${JSON.stringify(requirement.asset)} is not a Solana mint address`;
      if (BigInt(requirement.amount) > U64_MAX) return `amount ${requirement.amount} does not fit a token transfer (u64)`;
      const { feePayer, memo } = requirement.extra;
      if (typeof feePayer !== "string" || !isAddress(feePayer)) return "extra.feePayer (the facilitator's fee payer) is missing or not an address";
      if (feePayer === signer.address) return "extra.feePayer is the buyer's own address: the buyer would pay the fees";
      if (memo !== undefined && (typeof memo !== "string" || encoder.encode(memo).length > MAX_MEMO_BYTES)) {
        return `extra.memo must be a string of at most ${MAX_MEMO_BYTES} UTF-8 bytes`;
      }
      return undefined;
    },

    async createPayload(requirement: PaymentRequirement) {
      const network = requirement.caip2!;
      const rpc = options.rpc ?? DEFAULT_SOLANA_RPC_URLS[network]!; // `check` made sure there is one
      const client = typeof rpc === "string" ? (rpcs[rpc] ??= jsonRpc(rpc)) : rpc;
      // A server that quotes a recent blockhash saves the buyer an RPC round trip.
      const { recentBlockhash, lastValidBlockHeight } = requirement.extra;
      const [mint, blockhash] = await Promise.all([
        getMint(client, requirement.asset),
        typeof recentBlockhash === "string" && isAddress(recentBlockhash)
          ? { blockhash: recentBlockhash, lastValidBlockHeight: /^\d+$/.test(String(lastValidBlockHeight)) ? BigInt(String(lastValidBlockHeight)) : U64_MAX }
          : getLatestBlockhash(client),
      ]);
      if (!mint) throw new UnpayableRequirementError(`The mint ${requirement.asset} does not exist on ${requirement.network}.`);
      if (mint.owner !== TOKEN_PROGRAM && mint.owner !== TOKEN_2022_PROGRAM) {
        throw new UnpayableRequirementError(`The asset ${requirement.asset} is not a mint of the SPL Token or Token-2022 program (owner ${mint.owner}).`);
      }
      if (mint.data.length < 82) throw new UnpayableRequirementError(`The account ${requirement.asset} is not a token mint.`);
      const { feePayer, memo } = requirement.extra;
      const transaction = await signTransfer({
        signer,
        feePayer: feePayer as string,
        mint: requirement.asset,
        tokenProgram: mint.owner,
        decimals: mint.data[44]!,
        payTo: requirement.payTo,
        amount: BigInt(requirement.amount),
        // `check` let only a string or nothing through.
        memo: typeof memo === "string" ? memo : Array.from(randomBytes(16), (b) => b.toString(16).padStart(2, "0")).join(""),
        memoRequired: typeof memo === "string",
        blockhash,
        computeUnitLimit,
        computeUnitPrice,
      });
      return { payload: { transaction } };
    },
  };
}
