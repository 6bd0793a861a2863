// The paying fetches the bench compares, each written as its own README would have a user write it:
// ours (x402-pay, from this repository's built dist through the package's own exports) and the
// reference (@x402/fetch with an @x402/core client and the @x402/evm or @x402/svm exact scheme).
import { createKeyPairSignerFromPrivateKeyBytes } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPayment as referenceWrap, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { createX402Client } from "x402-pay";
import { exactEvm } from "x402-pay/evm";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { exactSvm } from "x402-pay/svm";

// The first public Anvil test key; the seller checks no signature, so no funds are involved.
const evmAccount = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

/** Creates our client, or `undefined` when this build has no `quoteCache` option yet. */
function ours(schemes, quoteCache) {
  try {
    return createX402Client({ schemes, ...(quoteCache && { quoteCache: true }) });
  } catch (error) {
    if (quoteCache && error?.code === "INVALID_CONFIG" && error.details?.option === "quoteCache") return undefined;
    throw error;
  }
}

/** EVM exact: `{ ours, reference }`, each a fetch that pays; `ours` is undefined if quoteCache is asked and missing. */
export function evmFetches({ quoteCache = false } = {}) {
  const client = ours([exactEvm({ signer: evmAccount })], quoteCache);
  const reference = new x402Client().register("eip155:*", new ExactEvmScheme(evmAccount));
  return { ours: client && wrapFetchWithPayment(fetch, client), reference: referenceWrap(fetch, reference) };
}

/** Solana exact, each side reading the mint and a blockhash from the seller's stand-in RPC at `rpcUrl(who)`. */
export async function svmFetches(rpcUrl) {
  const signer = await createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(7));
  const client = ours([exactSvm({ signer, rpc: { [SOLANA_DEVNET]: rpcUrl("ours") } })], false);
  const reference = new x402Client().register("solana:*", new ExactSvmScheme(signer, { rpcUrl: rpcUrl("reference") }));
  return { ours: wrapFetchWithPayment(fetch, client), reference: referenceWrap(fetch, reference) };
}
