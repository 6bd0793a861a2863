// The paying fetches the bench compares, each written as its own README would have a user write it:
// ours (x402-pay, from this repository's built dist through the package's own exports) and the
// reference (@x402/fetch with an @x402/core client and the @x402/evm or @x402/svm exact scheme).
// Each side's modules are imported only when it is asked for, so a process running one side (the
// CPU and memory measures) carries none of the other's code.
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

/**
 * Ours over EVM exact with the payment journal, as docs/journal.md has a user write it:
 * `plugins: [paymentJournal(store)]`, each request keyed by `x402: { paymentId }`, a fresh id per request (a
 * random prefix per process, then a count: no two processes sharing a Redis use one key). `kind` "file":
 * `fileJournalStore` on a file in a fresh temp dir (fsync'd, its default); "redis": `redisJournalStore` over a
 * node-redis client connected to `redisUrl`. `{ get(url), check(), close() }`: `check()` after the timing says what
 * was written (`{ keys, settled, lines }`, lines for the file only); `close()` removes the dir or disconnects.
 */
export async function journalFetch(kind, redisUrl) {
  const [{ createX402Client, paymentJournal }, { wrapFetchWithPayment }, { exactEvm }] = await Promise.all([
    import("x402-pay"),
    import("x402-pay/fetch"),
    import("x402-pay/evm"),
  ]);
  let store;
  let lines = async () => undefined;
  let close;
  if (kind === "file") {
    const { fileJournalStore } = await import("x402-pay/file");
    const dir = await mkdtemp(join(tmpdir(), "x402-pay-bench-journal-"));
    const path = join(dir, "payments.journal.jsonl");
    store = fileJournalStore(path);
    lines = async () => (await readFile(path, "utf8").catch(() => "")).split("\n").filter(Boolean).length;
    close = () => rm(dir, { recursive: true, force: true });
  } else if (kind === "redis") {
    const [{ createClient }, { redisJournalStore }] = await Promise.all([import("redis"), import("x402-pay/redis")]);
    const redis = await createClient({ url: redisUrl }).connect();
    store = redisJournalStore(redis);
    close = () => redis.close();
  } else throw new Error(`journalFetch: no journal store "${kind}"`);
  const client = createX402Client({ schemes: [exactEvm({ signer: evmAccount })], plugins: [paymentJournal(store)] });
  const pay = wrapFetchWithPayment(fetch, client);
  const prefix = `order_${randomBytes(6).toString("hex")}_`;
  let count = 0;
  return {
    get: (url) => pay(url, { x402: { paymentId: `${prefix}${++count}` } }),
    /** Reads every key's latest entry back through the store, and the file's lines. */
    async check() {
      let settled = 0;
      for (let i = 1; i <= count; i++) if ((await store.latest(`${prefix}${i}`))?.state === "settled") settled++;
      return { keys: count, settled, lines: await lines() };
    },
    close,
  };
}
