// The paying fetches the bench compares, each written as its own README would have a user write it:
// ours (x402-pay, from this repository's built dist through the package's own exports) and the
// reference (@x402/fetch with an @x402/core client and the @x402/evm or @x402/svm exact scheme).
// Each side's modules are imported only when it is asked for, so a process running one side (the
// CPU and memory measures) carries none of the other's code.
import { privateKeyToAccount } from "viem/accounts";

// The first public Anvil test key; the seller checks no signature, so no funds are involved.
const evmAccount = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

/** Wraps fetch with our client over `schemes`, with the quote cache plug-in when asked. */
async function oursFetch(schemes, cached) {
  const [{ createX402Client, quoteCache }, { wrapFetchWithPayment }] = await Promise.all([
    import("x402-pay"),
    import("x402-pay/fetch"),
  ]);
  return wrapFetchWithPayment(fetch, createX402Client({ schemes, plugins: cached ? [quoteCache()] : [] }));
}

/** Wraps fetch with the reference client, `scheme` registered for `networks`. */
async function referenceFetch(networks, scheme) {
  const { wrapFetchWithPayment, x402Client } = await import("@x402/fetch");
  return wrapFetchWithPayment(fetch, new x402Client().register(networks, scheme));
}

/** A fetch that pays EVM exact, `side` "ours" or "reference" (ours with the quote cache when asked). */
export async function evmFetch(side, { quoteCache = false } = {}) {
  if (side === "ours") {
    const { exactEvm } = await import("x402-pay/evm");
    return oursFetch([exactEvm({ signer: evmAccount })], quoteCache);
  }
  const { ExactEvmScheme } = await import("@x402/evm/exact/client");
  return referenceFetch("eip155:*", new ExactEvmScheme(evmAccount));
}

/** A fetch that pays Solana exact, reading the mint and a blockhash from the RPC at `rpcUrl`. */
export async function svmFetch(side, rpcUrl) {
  const { createKeyPairSignerFromPrivateKeyBytes } = await import("@solana/kit");
  const signer = await createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(7));
  if (side === "ours") {
    const { exactSvm } = await import("x402-pay/svm");
    return oursFetch([exactSvm({ signer, rpc: { [SOLANA_DEVNET]: rpcUrl } })], false);
  }
  const { ExactSvmScheme } = await import("@x402/svm/exact/client");
  return referenceFetch("solana:*", new ExactSvmScheme(signer, { rpcUrl }));
}

/**
 * The agent tool (x402-pay/ai-sdk's paidFetchTool, called as the AI SDK calls a tool's execute) over our EVM client:
 * a function of the URL that answers the status the tool read. Its cost beside the bare wrapped fetch is the tool's.
 */
export async function toolCall() {
  const [{ createX402Client }, { exactEvm }, { paidFetchTool }] = await Promise.all([
    import("x402-pay"),
    import("x402-pay/evm"),
    import("x402-pay/ai-sdk"),
  ]);
  const tool = paidFetchTool(createX402Client({ schemes: [exactEvm({ signer: evmAccount })] }));
  let calls = 0;
  return async (url) => {
    const answer = await tool.execute({ url }, { toolCallId: `call-${++calls}`, messages: [] });
    if (!answer.ok) throw new Error(`the tool answered ${JSON.stringify(answer)}`);
    return answer.status;
  };
}
