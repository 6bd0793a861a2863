// What the size bench bundles: the code a user writes for a job, ours and the reference's side by side,
// one row per capability added to the base EVM job, and each browser entry on its own.
//
// Every job leaves what it builds on globalThis, so a minifier keeps it, and reads its inputs (a key, a
// provider) from globalThis, so nothing is folded at build time.

/** The base EVM job with x402-pay, plus what a capability adds to it. */
const oursEvm = ({ imports = "", scheme = "", schemes = "", plugins = "", after = "" } = {}) => `
  import { privateKeyToAccount } from "viem/accounts";
  import { createX402Client } from "x402-pay";
  import { exactEvm } from "x402-pay/evm";
  import { wrapFetchWithPayment } from "x402-pay/fetch";
  ${imports}
  const signer = privateKeyToAccount(globalThis.key);
  const client = createX402Client({
    schemes: [exactEvm({ signer${scheme} })${schemes}],${plugins ? ` plugins: [${plugins}],` : ""}
  });
  globalThis.paidFetch = wrapFetchWithPayment(fetch, client);
  ${after}`;

/** The base EVM job with the reference (@x402/fetch, @x402/evm), plus what a capability adds to it. */
const referenceEvm = ({ imports = "", register = "", wrap = "client", after = "" } = {}) => `
  import { privateKeyToAccount } from "viem/accounts";
  import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
  import { ExactEvmScheme } from "@x402/evm/exact/client";
  ${imports}
  const signer = privateKeyToAccount(globalThis.key);
  const client = new x402Client();
  client.register("eip155:*", new ExactEvmScheme(signer));
  ${register}
  globalThis.paidFetch = wrapFetchWithPayment(fetch, ${wrap});
  ${after}`;

const viemAccount = `
  import { privateKeyToAccount } from "viem/accounts";
  globalThis.a = privateKeyToAccount(globalThis.key);`;

/**
 * Whole jobs, ours against the reference. `floor` is what both sides bundle anyway (the signer, axios):
 * the "added" ratio compares the code each side adds above it.
 */
export const jobs = [
  {
    id: "evm",
    name: "base EVM: fetch + exactEvm + viem privateKeyToAccount",
    floor: viemAccount,
    ours: oursEvm(),
    reference: referenceEvm(),
  },
  {
    id: "svm",
    name: "base Solana: fetch + exactSvm + kit key pair signer",
    floor: `import { createKeyPairSignerFromBytes } from "@solana/kit";
      globalThis.s = await createKeyPairSignerFromBytes(globalThis.key);`,
    ours: `
      import { createKeyPairSignerFromBytes } from "@solana/kit";
      import { createX402Client } from "x402-pay";
      import { exactSvm } from "x402-pay/svm";
      import { wrapFetchWithPayment } from "x402-pay/fetch";
      const signer = await createKeyPairSignerFromBytes(globalThis.key);
      const client = createX402Client({ schemes: [exactSvm({ signer })] });
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
    reference: `
      import { createKeyPairSignerFromBytes } from "@solana/kit";
      import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
      import { ExactSvmScheme } from "@x402/svm/exact/client";
      const client = new x402Client();
      client.register("solana:*", new ExactSvmScheme(await createKeyPairSignerFromBytes(globalThis.key)));
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
  },
  {
    // The base Solana job with `upto` beside `exact`: what uptoSvm adds is this row less "svm".
    id: "svm + uptoSvm",
    name: "Solana exact + upto: fetch + exactSvm + uptoSvm + kit key pair signer",
    floor: `import { createKeyPairSignerFromBytes } from "@solana/kit";
      globalThis.s = await createKeyPairSignerFromBytes(globalThis.key);`,
    ours: `
      import { createKeyPairSignerFromBytes } from "@solana/kit";
      import { createX402Client } from "x402-pay";
      import { exactSvm, uptoSvm } from "x402-pay/svm";
      import { wrapFetchWithPayment } from "x402-pay/fetch";
      const signer = await createKeyPairSignerFromBytes(globalThis.key);
      const client = createX402Client({ schemes: [exactSvm({ signer }), uptoSvm({ signer })] });
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
    reference: `
      import { createKeyPairSignerFromBytes } from "@solana/kit";
      import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
      import { ExactSvmScheme } from "@x402/svm/exact/client";
      import { UptoSvmScheme } from "@x402/svm/upto/client";
      const signer = await createKeyPairSignerFromBytes(globalThis.key);
      const client = new x402Client();
      client.register("solana:*", new ExactSvmScheme(signer));
      client.register("solana:*", new UptoSvmScheme(signer));
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
  },
  {
    // A Solana dapp paying from a browser wallet (Phantom, Solflare, Backpack) found through wallet-standard.
    // The reference has no wallet-standard signer: its side is the least a dapp writes by hand, with kit's codecs.
    id: "svm-wallet-standard",
    name: "Solana browser wallet: fetch + exactSvm + walletStandardSigner",
    floor: `globalThis.w = globalThis.wallet;`,
    ours: `
      import { createX402Client } from "x402-pay";
      import { exactSvm, walletStandardSigner } from "x402-pay/svm";
      import { wrapFetchWithPayment } from "x402-pay/fetch";
      const signer = walletStandardSigner(globalThis.wallet);
      const client = createX402Client({ schemes: [exactSvm({ signer })] });
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
    reference: `
      import { getTransactionDecoder, getTransactionEncoder } from "@solana/kit";
      import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
      import { ExactSvmScheme } from "@x402/svm/exact/client";
      const wallet = globalThis.wallet;
      const [account] = wallet.accounts;
      const signer = {
        address: account.address,
        async modifyAndSignTransactions(transactions) {
          const inputs = transactions.map((t) => ({ account, transaction: getTransactionEncoder().encode(t) }));
          const outputs = await wallet.features["solana:signTransaction"].signTransaction(...inputs);
          return outputs.map((o) => getTransactionDecoder().decode(o.signedTransaction));
        },
      };
      const client = new x402Client();
      client.register("solana:*", new ExactSvmScheme(signer));
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
  },
  {
    // A dapp paying from an injected wallet: ours needs no viem WalletClient; the reference needs one.
    id: "eip1193",
    name: "injected wallet: fetch + exactEvm + eip1193Signer",
    floor: `globalThis.a = globalThis.ethereum;`,
    ours: `
      import { createX402Client } from "x402-pay";
      import { eip1193Signer, exactEvm } from "x402-pay/evm";
      import { wrapFetchWithPayment } from "x402-pay/fetch";
      const signer = await eip1193Signer(globalThis.ethereum);
      const client = createX402Client({ schemes: [exactEvm({ signer })] });
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
    reference: `
      import { createWalletClient, custom } from "viem";
      import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
      import { ExactEvmScheme } from "@x402/evm/exact/client";
      const [address] = await globalThis.ethereum.request({ method: "eth_accounts" });
      const wallet = createWalletClient({ account: address, transport: custom(globalThis.ethereum) });
      const signer = { address, signTypedData: (m) => wallet.signTypedData({ account: wallet.account, ...m }) };
      const client = new x402Client();
      client.register("eip155:*", new ExactEvmScheme(signer));
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
  },
  {
    id: "axios",
    name: "axios instead of fetch: exactEvm + viem privateKeyToAccount",
    floor: `
      import axios from "axios";
      import { privateKeyToAccount } from "viem/accounts";
      globalThis.a = privateKeyToAccount(globalThis.key);
      globalThis.http = axios.create();`,
    ours: `
      import axios from "axios";
      import { privateKeyToAccount } from "viem/accounts";
      import { createX402Client } from "x402-pay";
      import { exactEvm } from "x402-pay/evm";
      import { wrapAxiosWithPayment } from "x402-pay/axios";
      const signer = privateKeyToAccount(globalThis.key);
      const client = createX402Client({ schemes: [exactEvm({ signer })] });
      globalThis.http = wrapAxiosWithPayment(axios.create(), client);`,
    reference: `
      import axios from "axios";
      import { privateKeyToAccount } from "viem/accounts";
      import { wrapAxiosWithPayment, x402Client } from "@x402/axios";
      import { ExactEvmScheme } from "@x402/evm/exact/client";
      const client = new x402Client();
      client.register("eip155:*", new ExactEvmScheme(privateKeyToAccount(globalThis.key)));
      globalThis.http = wrapAxiosWithPayment(axios.create(), client);`,
  },
];

const rpc = `{ "eip155:8453": globalThis.rpcUrl }`;

/**
 * One row per capability added to the base EVM job ("evm" above), with the reference's equivalent where
 * it has one. What is counted is everything the job can reach, a dynamic import() included (the bench
 * bundles into one file), unless the row leaves a package `external`.
 */
export const capabilities = [
  {
    id: "signInWithX",
    name: "signInWithX (its memory store)",
    ours: oursEvm({ imports: `import { signInWithX } from "x402-pay";`, plugins: "signInWithX({ evm: signer })" }),
    // The reference's sign-in-with-x client: its hook on the HTTP client.
    reference: referenceEvm({
      imports: `import { x402HTTPClient } from "@x402/fetch";
        import { createSIWxClientHook } from "@x402/extensions/sign-in-with-x";`,
      register: `const http = new x402HTTPClient(client).onPaymentRequired(createSIWxClientHook(signer));`,
      wrap: "http",
    }),
  },
  {
    id: "builderCode",
    name: "builderCode",
    ours: oursEvm({ imports: `import { builderCode } from "x402-pay";`, plugins: `builderCode("bc_bench")` }),
    reference: referenceEvm({
      imports: `import { BuilderCodeClientExtension } from "@x402/extensions/builder-code";`,
      register: `client.registerExtension(new BuilderCodeClientExtension("bc_bench"));`,
    }),
  },
  {
    id: "budget",
    name: "budget (memory store)",
    ours: oursEvm({ imports: `import { budget } from "x402-pay";`, plugins: `budget({ limit: "$10", per: "day" })` }),
  },
  {
    id: "memoryLedger",
    name: "memoryLedger",
    ours: oursEvm({ imports: `import { memoryLedger } from "x402-pay";`, plugins: "memoryLedger()" }),
  },
  {
    id: "quoteCache",
    name: "quoteCache",
    ours: oursEvm({ imports: `import { quoteCache } from "x402-pay";`, plugins: "quoteCache()" }),
  },
  {
    // The journal with its memory store, and recovery called on start.
    id: "paymentJournal",
    name: "paymentJournal (memory store) and recoverPayments",
    ours: oursEvm({
      imports: `import { memoryJournalStore, paymentJournal, recoverPayments } from "x402-pay";`,
      plugins: "paymentJournal(memoryJournalStore())",
      after: "globalThis.recover = () => recoverPayments(client);",
    }),
  },
  {
    // Its EIP-712 checks import viem/utils when first needed: a chunk of its own in an app that splits.
    id: "offerReceipt",
    name: "offerReceipt (x402-pay/offers), first load: viem/utils left to its lazy import",
    external: ["viem/utils"],
    ours: oursEvm({ imports: `import { offerReceipt } from "x402-pay/offers";`, plugins: "offerReceipt()" }),
  },
  {
    id: "offerReceipt+viem",
    name: "offerReceipt, with the viem/utils it loads at the first EIP-712 check",
    ours: oursEvm({ imports: `import { offerReceipt } from "x402-pay/offers";`, plugins: "offerReceipt()" }),
  },
  {
    id: "permit2Allowance",
    name: "permit2Allowance (gas sponsoring, RPC reads)",
    ours: oursEvm({
      imports: `import { permit2Allowance } from "x402-pay/evm";`,
      scheme: `, permit2: permit2Allowance({ rpc: ${rpc} })`,
    }),
  },
  {
    id: "checkSettlement",
    name: "evmSettlement + checkSettlement",
    ours: oursEvm({
      imports: `import { checkSettlement } from "x402-pay";
        import { evmSettlement } from "x402-pay/evm";`,
      scheme: `, settlement: evmSettlement({ rpc: ${rpc} })`,
      after: `globalThis.check = (source) => checkSettlement(client, source);`,
    }),
  },
  {
    id: "uptoEvm",
    name: "uptoEvm beside exactEvm",
    ours: oursEvm({ imports: `import { uptoEvm } from "x402-pay/evm";`, schemes: ", uptoEvm({ signer })" }),
    reference: referenceEvm({
      imports: `import { UptoEvmScheme } from "@x402/evm/upto/client";`,
      register: `client.register("eip155:*", new UptoEvmScheme(signer));`,
    }),
  },
  {
    id: "authCaptureEvm",
    name: "authCaptureEvm beside exactEvm",
    ours: oursEvm({
      imports: `import { authCaptureEvm } from "x402-pay/evm";`,
      schemes: ", authCaptureEvm({ signer })",
    }),
    reference: referenceEvm({
      imports: `import { AuthCaptureEvmScheme } from "@x402/evm/auth-capture/client";`,
      register: `client.register("eip155:*", new AuthCaptureEvmScheme(signer));`,
    }),
  },
  {
    id: "batchSettlementEvm",
    name: "batchSettlementEvm beside exactEvm (memory channel store, refunds)",
    ours: oursEvm({
      imports: `import { batchSettlementEvm } from "x402-pay/evm";`,
      schemes: ", batchSettlementEvm({ signer })",
    }),
    reference: referenceEvm({
      imports: `import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";`,
      register: `client.register("eip155:*", new BatchSettlementEvmScheme(signer));`,
    }),
  },
  {
    id: "discovery",
    name: "discovery client (listings and their quotes)",
    ours: oursEvm({
      imports: `import { createDiscoveryClient, quoteListing } from "x402-pay/discovery";`,
      after: `globalThis.discovery = createDiscoveryClient({ url: globalThis.facilitator });
        globalThis.quote = (listing) => quoteListing(client, listing);`,
    }),
    // The reference's bazaar client: a facilitator client with the bazaar extension. Its module imports
    // Node's "url" (for its facilitator side): left out, as Vite leaves it, or esbuild would refuse it.
    referenceExternal: ["url"],
    reference: referenceEvm({
      imports: `import { HTTPFacilitatorClient } from "@x402/core/http";
        import { withBazaar } from "@x402/extensions/bazaar";`,
      after: `const facilitator = new HTTPFacilitatorClient({ url: globalThis.facilitator });
        globalThis.discovery = withBazaar(facilitator).extensions.bazaar;`,
    }),
  },
  {
    // x402-pay/mcp imports nothing from @modelcontextprotocol/sdk: it wraps the Client the app already
    // has, whose size does not depend on paying. So the SDK is not in the row: it is x402-pay's cost.
    id: "mcp",
    name: "MCP wrapper (x402-pay/mcp; the app's own MCP SDK Client not counted)",
    ours: oursEvm({
      imports: `import { wrapMcpClientWithPayment } from "x402-pay/mcp";`,
      after: `globalThis.mcp = wrapMcpClientWithPayment(globalThis.mcpClient, client);`,
    }),
  },
  {
    // x402-pay/ai-sdk imports only types from `ai`: the app's own AI SDK is not in the row.
    id: "ai-sdk",
    name: "AI SDK paid fetch tool (x402-pay/ai-sdk; the app's own `ai` not counted)",
    ours: oursEvm({
      imports: `import { paidFetchTool } from "x402-pay/ai-sdk";`,
      after: `globalThis.tools = { paid_fetch: paidFetchTool(client, { approval: "$0.10" }) };`,
    }),
  },
  {
    // x402-pay/langchain imports LangChain's tool() and, for approvals, LangGraph's interrupt(): the app's own.
    id: "langchain",
    name: "LangChain paid fetch tool (x402-pay/langchain; the app's own LangChain not counted)",
    external: ["@langchain/core", "@langchain/langgraph"],
    ours: oursEvm({
      imports: `import { paidFetchTool } from "x402-pay/langchain";`,
      after: `globalThis.tools = [paidFetchTool(client, { approval: "$0.10" })];`,
    }),
  },
  {
    // x402-pay/openai-agents imports the Agents SDK's tool(): the app's own SDK is not in the row.
    id: "openai-agents",
    name: "OpenAI Agents SDK paid fetch tool (x402-pay/openai-agents; the app's own SDK not counted)",
    external: ["@openai/agents"],
    ours: oursEvm({
      imports: `import { paidFetchTool } from "x402-pay/openai-agents";`,
      after: `globalThis.tools = [paidFetchTool(client, { approval: "$0.10" })];`,
    }),
  },
  {
    // A typical use of the schemas: checking what arrives and what is sent, with zod/mini.
    id: "schemas",
    name: "schemas (x402-pay/schemas: PaymentRequired and PaymentPayload v2)",
    ours: oursEvm({
      imports: `import { PaymentPayloadV2Schema, PaymentRequiredV2Schema } from "x402-pay/schemas";`,
      after: `globalThis.check = (challenge, payload) =>
        [PaymentRequiredV2Schema.safeParse(challenge), PaymentPayloadV2Schema.safeParse(payload)];`,
    }),
  },
];

/**
 * Each browser entry alone, every export kept, the optional peers (viem, @solana/kit, axios) left out:
 * x402-pay's own code and its dependencies (@noble/hashes, zod). Not here: x402-pay/file and
 * x402-pay/redis (Node only) and the command line.
 */
const browserEntries = [
  "fetch",
  "axios",
  "evm",
  "svm",
  "offers",
  "schemas",
  "errors",
  "protocol",
  "discovery",
  "mcp",
  "ai-sdk",
  "langchain",
  "openai-agents",
];
export const entries = ["x402-pay", ...browserEntries.map((name) => `x402-pay/${name}`)].map((spec) => ({
  id: spec,
  contents: `import * as entry from "${spec}"; globalThis.entry = entry;`,
}));

export const PEERS = [
  "viem",
  "@solana/kit",
  "axios",
  "@modelcontextprotocol/sdk",
  "ai",
  "@langchain/core",
  "@langchain/langgraph",
  "@openai/agents",
];
