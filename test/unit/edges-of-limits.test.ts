/**
 * The zero and empty edges of every limit and list: `[]` and `0` mean "none" (or are refused at construction), never
 * "no limit" or "any". The options are FOUND, not listed by hand: test/support/option-kinds.ts walks the public
 * API's type definitions for every option that takes a list or a number, and this test fails for one that has no
 * edge case registered below, so an option added later cannot be left out. Each entry either runs its edge here,
 * names the test that holds it elsewhere (checked to be there), or says why the value is no limit at all.
 */
import { readFileSync } from "node:fs";
import { privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { budget, createX402Client, quoteCache, type SpendPolicy, type X402Client } from "../../src";
import { main } from "../../src/cli";
import { EXIT } from "../../src/cli/exit";
import { createDiscoveryClient, sanitize } from "../../src/discovery";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import {
  authCaptureEvm,
  batchSettlementEvm,
  evmSettlement,
  exactEvm,
  permit2Allowance,
  permit2ApprovalTransaction,
} from "../../src/evm";
import { fileChannelStore } from "../../src/file";
import { redisBudgetStore, redisChannelStore, redisJournalStore, redisLedger, redisSignInStore } from "../../src/redis";
import { exactSvm, uptoSvm } from "../../src/svm";
import { PRICE, createBatchSeller } from "../support/batch-seller";
import { useMswServer } from "../support/msw";
import { paidFetchTool } from "../../src/ai-sdk";
import { createPaidFetch } from "../../src/agents";
import { type OptionKind, optionsOfKind } from "../support/option-kinds";
import { PATH, SELLER, countingSigner, createSeller, v2Challenge, v2Requirement } from "../support/seller";
import { DEVNET, buyer, fakeRpc, svmRequirement } from "../support/svm";
import { ANVIL_KEY_0, VECTOR_NOW_MS, countingBytes } from "../support/vectors";
import { fetchWrapper } from "../support/wrappers";

const server = useMswServer();
const account = privateKeyToAccount(ANVIL_KEY_0);
const request = { url: `${SELLER}/edge`, method: "GET" };
const payingClient = () => createX402Client({ schemes: [exactEvm({ signer: countingSigner().signer })] });

/** What the client makes of a one-requirement challenge: "payable", or the reasons of its refusal. */
async function verdict(client: X402Client, requirement: Record<string, unknown>) {
  const challenge = parseChallenge({
    header: encodeBase64Json(v2Challenge({ resource: { url: request.url }, accepts: [requirement] })),
  });
  const { options, rejected } = await client.quote(challenge, request);
  return options.length > 0 ? "payable" : rejected.map((r) => `${r.code}: ${r.reason}`).join("; ");
}

/** What constructing (or the call, if it answers a promise) throws: its code and option, or "accepted". */
async function construction(make: () => unknown) {
  try {
    await make();
  } catch (error) {
    const { code, details } = error as { code?: string; details?: { option?: string } };
    return `${code}${details?.option ? ` (${details.option})` : ""}`;
  }
  return "accepted";
}

// auth-capture's requirement, from the committed vectors (whose deadlines hold at VECTOR_NOW_MS).
const vectors = JSON.parse(readFileSync(new URL("../vectors/auth-capture.json", import.meta.url), "utf8"));
const escrow = (extra: Record<string, unknown> = {}) => {
  const base = vectors.vectors[0].requirements;
  return { ...base, extra: { ...base.extra, ...extra } };
};
const authCapture = (options: { capturers?: string[]; networks?: string[] } = {}, policy: SpendPolicy = {}) =>
  createX402Client({
    schemes: [authCaptureEvm({ signer: account, now: () => VECTOR_NOW_MS, randomBytes: countingBytes, ...options })],
    policy,
  });
const redis = () =>
  Object.fromEntries(["evalSha", "eval", "get", "set", "xAdd", "xRange"].map((m) => [m, async () => null])) as never;
const ZERO_ADDRESS = `0x${"0".repeat(40)}`;

/** An option's edge: how `[]` or `0` is taken. */
type Edge =
  /** Refused at construction: `make(edge)` throws INVALID_CONFIG naming the option. */
  | { refused: (edge: never) => unknown; option: string; edge?: unknown }
  /** Means "none": the check runs here. */
  | { none: () => Promise<void> | void }
  /** Held by a test elsewhere, whose file holds `holds` (checked). */
  | { elsewhere: string; holds: string }
  /** No limit nor list of what is allowed: why. */
  | { notALimit: string };

const lists = "test/http/lists.test.ts";
const edges: Record<string, Edge> = {
  // ---------------------------------------------------------------- the client and its policy
  "createX402Client(options).schemes": { elsewhere: lists, holds: "schemes: [] is refused at construction" },
  "createX402Client(options).plugins": { elsewhere: lists, holds: "plugins: [] is no budget" },
  "createX402Client(options).policy.assets": { elsewhere: lists, holds: "policy.assets: [] knows only" },
  "createX402Client(options).policy.assetCaps": { elsewhere: lists, holds: "policy.assetCaps: [] caps nothing" },
  "createX402Client(options).policy.networks": { elsewhere: lists, holds: 'option: "policy.networks"' },
  "createX402Client(options).policy.payees": { elsewhere: lists, holds: 'option: "policy.payees"' },
  "createX402Client(options).policy.origins": { elsewhere: lists, holds: 'option: "policy.origins"' },
  "createX402Client(options).policy.maxTimeoutSeconds": {
    refused: (maxTimeoutSeconds: number) =>
      createX402Client({ schemes: [exactEvm({ signer: account })], policy: { maxTimeoutSeconds } }),
    option: "policy.maxTimeoutSeconds",
  },
  "createX402Client(options).policy.maxAmountPerPayment": {
    async none() {
      const client = createX402Client({
        schemes: [exactEvm({ signer: account })],
        policy: { maxAmountPerPayment: "$0" },
      });
      expect(await verdict(client, v2Requirement())).toBe("policy: 0.01 USDC is over policy.maxAmountPerPayment ($0)");
      expect(await verdict(client, v2Requirement({ amount: "1" }))).toMatch(/over policy.maxAmountPerPayment \(\$0\)/);
    },
  },
  "createX402Client(options).policy.flows": {
    async none() {
      const client = (flows?: ("escrow" | "authorization" | "upfront")[]) =>
        createX402Client({ schemes: [exactEvm({ signer: account })], policy: { flows } });
      expect(await verdict(client([]), v2Requirement())).toBe(
        "policy: paymentFlow authorization is not in policy.flows",
      );
      expect(await verdict(client(["authorization"]), v2Requirement())).toBe("payable");
      expect(await verdict(client(undefined), v2Requirement())).toBe("payable");
    },
  },
  "createX402Client(options).policy.maxFeeBps": {
    async none() {
      // 0: no fee at all; an escrow that may take 1 bps is refused, one that takes none is paid.
      const refusal = "policy: an escrow fee of up to 1 bps is over policy.maxFeeBps (0)";
      expect(await verdict(authCapture({}, { maxFeeBps: 0 }), escrow({ minFeeBps: 0, maxFeeBps: 1 }))).toBe(refusal);
      expect(await verdict(authCapture({}, { maxFeeBps: 0 }), escrow({ minFeeBps: 0, maxFeeBps: 100 }))).toMatch(
        /over policy.maxFeeBps \(0\)/,
      );
      const free = escrow({ feeRecipient: ZERO_ADDRESS, minFeeBps: 0, maxFeeBps: 0 });
      expect(await verdict(authCapture({}, { maxFeeBps: 0 }), free)).toBe("payable");
      // 1 bps lets 1 in, not 2.
      expect(await verdict(authCapture({}, { maxFeeBps: 1 }), escrow({ minFeeBps: 0, maxFeeBps: 1 }))).toBe("payable");
      expect(await verdict(authCapture({}, { maxFeeBps: 1 }), escrow({ minFeeBps: 0, maxFeeBps: 2 }))).toMatch(
        /over policy.maxFeeBps \(1\)/,
      );
    },
  },
  // ---------------------------------------------------------------- plug-ins
  "builderCode(serviceCodes)": { elsewhere: lists, holds: "builderCode([]) adds no code" },
  "budget(options).per": { refused: (per: number) => budget({ limit: "$1", per }), option: "budget.per" },
  "budget(options).limit": { refused: (limit: string) => budget({ limit }), option: "budget.limit", edge: "$0" },
  "quoteCache(options).ttlSeconds": {
    refused: (ttlSeconds: number) => quoteCache({ ttlSeconds }),
    option: "quoteCache.ttlSeconds",
  },
  "quoteCache(options).maxEntries": {
    refused: (maxEntries: number) => quoteCache({ maxEntries }),
    option: "quoteCache.maxEntries",
  },
  "offerReceipt(options).requireSigner": {
    elsewhere: "test/http/offers.test.ts",
    holds: "requireSigner: [] accepts no signer",
  },
  // offerReceipt's own review, the same options.
  "reviewOffers(options).requireSigner": {
    elsewhere: "test/http/offers.test.ts",
    holds: "requireSigner: [] accepts no signer",
  },
  "spendBy(query).since": { notALimit: "a time (ms since the epoch) records are read from; 0 is the epoch" },
  "spendBy(query).until": { notALimit: "a time (ms since the epoch) records are read to" },
  "reconcileOnChain(client).schemes": { notALimit: "the client's schemes (a client, not an option)" },
  "checkSettlement(client).schemes": { notALimit: "the client's schemes (a client, not an option)" },
  // ---------------------------------------------------------------- EVM schemes
  "exactEvm(options).networks": { elsewhere: lists, holds: 'option: "exactEvm networks"' },
  "exactEvm(options).x402Versions": { elsewhere: lists, holds: 'option: "exactEvm x402Versions"' },
  "uptoEvm(options).facilitators": { elsewhere: lists, holds: 'option: "uptoEvm facilitators"' },
  "uptoEvm(options).networks": { elsewhere: lists, holds: 'option: "uptoEvm networks"' },
  "authCaptureEvm(options).capturers": {
    async none() {
      const capturer = escrow().extra.captureAuthorizer as string;
      expect(await verdict(authCapture({ capturers: [] }), escrow())).toBe(
        `unsupported: capturer ${capturer} is not in the scheme's capturers`,
      );
      expect(await verdict(authCapture({ capturers: [capturer.toLowerCase()] }), escrow())).toBe("payable");
      expect(await verdict(authCapture({}), escrow())).toBe("payable");
    },
  },
  "authCaptureEvm(options).networks": {
    async none() {
      const network = escrow().network as string;
      expect(await verdict(authCapture({ networks: [] }), escrow())).toBe(
        `unsupported: no registered scheme pays "auth-capture" on ${network} (x402 v2)`,
      );
      expect(await verdict(authCapture({ networks: [network] }), escrow())).toBe("payable");
    },
  },
  "batchSettlementEvm(options).networks": {
    async none() {
      const seller = createBatchSeller();
      const client = (networks?: string[]) =>
        createX402Client({ schemes: [batchSettlementEvm({ signer: account, rpc: seller.rpc, networks })] });
      const [requirement] = (await challengeOf(seller)).accepts;
      expect(await verdict(client([]), requirement)).toBe(
        'unsupported: no registered scheme pays "batch-settlement" on eip155:84532 (x402 v2)',
      );
      expect(await verdict(client(["eip155:84532"]), requirement)).toBe("payable");
    },
  },
  "batchSettlementEvm(options).deposit.multiple": {
    async none() {
      // 0 times the price: no more than the call needs, never "any amount".
      const seller = createBatchSeller();
      server.use(seller.handler);
      const scheme = batchSettlementEvm({ signer: countingSigner().signer, deposit: { multiple: 0 } });
      const client = createX402Client({ schemes: [scheme] });
      for (let i = 0; i < 2; i++) expect((await fetchWrapper.send(client, { url: seller.url })).status).toBe(200);
      expect(seller.vouchers.map((v) => v.kind)).toEqual(["deposit", "deposit"]);
      expect([...seller.channels.values()][0]).toMatchObject({ balance: 2n * PRICE, charged: 2n * PRICE });
    },
  },
  "batchSettlementEvm(options).rpcTimeoutMs": {
    refused: (rpcTimeoutMs: number) =>
      batchSettlementEvm({ signer: account, rpc: createBatchSeller().rpc, rpcTimeoutMs }),
    option: "rpcTimeoutMs",
  },
  "permit2Allowance(options).rpcTimeoutMs": {
    refused: (rpcTimeoutMs: number) => permit2Allowance({ rpc: "https://rpc.example", rpcTimeoutMs }),
    option: "rpcTimeoutMs",
  },
  "evmSettlement(options).rpcTimeoutMs": {
    refused: (rpcTimeoutMs: number) => evmSettlement({ rpc: "https://rpc.example", rpcTimeoutMs }),
    option: "rpcTimeoutMs",
  },
  "permit2ApprovalTransaction(__0).amount": {
    refused: (amount: bigint) => permit2ApprovalTransaction({ token: ZERO_ADDRESS.replace(/0$/, "1"), amount }),
    option: "amount",
    edge: 0n,
  },
  "channelIdOf(chainId)": { notALimit: "the chain a channel id is computed for" },
  // ---------------------------------------------------------------- Solana schemes
  "exactSvm(options).networks": { elsewhere: lists, holds: 'option: "exactSvm networks"' },
  "exactSvm(options).x402Versions": { elsewhere: lists, holds: 'option: "exactSvm x402Versions"' },
  "exactSvm(options).rpcTimeoutMs": {
    refused: (rpcTimeoutMs: number) => exactSvm({ signer: buyer, rpc: fakeRpc(), rpcTimeoutMs }),
    option: "rpcTimeoutMs",
  },
  "exactSvm(options).computeUnitLimit": {
    refused: (computeUnitLimit: number) => exactSvm({ signer: buyer, rpc: fakeRpc(), computeUnitLimit }),
    option: "undefined",
  },
  "exactSvm(options).computeUnitPrice": {
    notALimit: "a price the buyer offers (µlamports per compute unit): 0 is no priority fee, itself bounded above",
  },
  "uptoSvm(options).rpcTimeoutMs": {
    refused: (rpcTimeoutMs: number) => uptoSvm({ signer: buyer, rpc: fakeRpc(), rpcTimeoutMs }),
    option: "rpcTimeoutMs",
  },
  "uptoSvm(options).networks": {
    async none() {
      const client = (networks?: string[]) =>
        createX402Client({ schemes: [uptoSvm({ signer: buyer, rpc: fakeRpc(), networks })] });
      const requirement = { ...svmRequirement(), scheme: "upto" };
      expect(await verdict(client([]), requirement)).toBe(
        `unsupported: no registered scheme pays "upto" on ${DEVNET} (x402 v2)`,
      );
      expect(await verdict(client([DEVNET]), requirement)).not.toMatch(/no registered scheme/);
    },
  },
  // ---------------------------------------------------------------- protocol helpers
  "paymentHeaderName(x402Version)": { notALimit: "a protocol version" },
  "findKnownAsset(assets)": { notALimit: "the assets searched: [] finds none (it returns undefined)" },
  "formatUnits(atomic)": { notALimit: "an amount to write" },
  "formatUnits(decimals)": { notALimit: "the asset's decimals" },
  "formatUsd(limit)": { notALimit: "an amount to write" },
  // ---------------------------------------------------------------- stores
  "fileChannelStore(options).lockTtlMs": {
    refused: (lockTtlMs: number) => fileChannelStore("unused-directory", { lockTtlMs }),
    option: "fileChannelStore.lockTtlMs",
  },
  "redisBudgetStore(options).timeoutMs": {
    refused: (timeoutMs: number) => redisBudgetStore(redis(), { timeoutMs }),
    option: "redisBudgetStore.timeoutMs",
  },
  "redisLedger(options).timeoutMs": {
    refused: (timeoutMs: number) => redisLedger(redis(), { timeoutMs }),
    option: "redisLedger.timeoutMs",
  },
  "redisJournalStore(options).timeoutMs": {
    refused: (timeoutMs: number) => redisJournalStore(redis(), { timeoutMs }),
    option: "redisJournalStore.timeoutMs",
  },
  "redisSignInStore(options).ttlSeconds": {
    refused: (ttlSeconds: number) => redisSignInStore(redis(), { ttlSeconds }),
    option: "redisSignInStore.ttlSeconds",
  },
  "redisSignInStore(options).timeoutMs": {
    refused: (timeoutMs: number) => redisSignInStore(redis(), { timeoutMs }),
    option: "redisSignInStore.timeoutMs",
  },
  "redisChannelStore(options).lockTtlMs": {
    refused: (lockTtlMs: number) => redisChannelStore(redis(), { lockTtlMs }),
    option: "redisChannelStore.lockTtlMs",
  },
  "redisChannelStore(options).timeoutMs": {
    refused: (timeoutMs: number) => redisChannelStore(redis(), { timeoutMs }),
    option: "redisChannelStore.timeoutMs",
  },
  // ---------------------------------------------------------------- MCP, discovery
  "wrapMcpClientWithPayment(options).servers": {
    elsewhere: "test/http/mcp.test.ts",
    holds: 'options: { servers: [] }, reason: "server mcp://scripted is not in mcp.servers"',
  },
  "wrapMcpClientWithPayment(options).tools": {
    elsewhere: "test/http/mcp.test.ts",
    holds: "options: { tools: [] }, reason: 'tool \"t\" is not in mcp.tools'",
  },
  // A cap of $0 pays nothing for the tool (no caps at all is `{}`).
  "wrapMcpClientWithPayment(options).maxAmountPerTool": {
    elsewhere: "test/http/mcp.test.ts",
    holds: `{ options: { maxAmountPerTool: { t: "$0" } }, reason: '0.01 USDC is over mcp.maxAmountPerTool for "t" ($0)' }`,
  },
  "wrapMcpTransportWithPayment(options).servers": {
    elsewhere: "test/http/mcp-transport.test.ts",
    holds: 'options: { servers: [] }, reason: "server mcp://scripted is not in mcp.servers"',
  },
  "wrapMcpTransportWithPayment(options).tools": {
    elsewhere: "test/http/mcp-transport.test.ts",
    holds: "options: { tools: [] }, reason: 'tool \"t\" is not in mcp.tools'",
  },
  "wrapMcpTransportWithPayment(options).maxAmountPerTool": {
    elsewhere: "test/http/mcp-transport.test.ts",
    holds: `{ options: { maxAmountPerTool: { t: "$0" } }, reason: '0.01 USDC is over mcp.maxAmountPerTool for "t" ($0)' }`,
  },
  // 0: no grace, every unfinished entry is recovered (a start where no other process shares the store).
  "recoverPayments(options).staleAfterMs": {
    elsewhere: "test/http/journal.test.ts",
    holds: "await recoverPayments(client, { staleAfterMs: 0 })",
  },
  // paidMcpServer loads the OpenAI Agents SDK (Node 22): its lists' edges are held in the runtime matrix.
  "paidMcpServer(options).servers": {
    elsewhere: "test/runtimes/agents-openai.mjs",
    holds: "return mcpRefused(10, { servers: [] });",
  },
  "paidMcpServer(options).tools": {
    elsewhere: "test/runtimes/agents-openai.mjs",
    holds: "return mcpRefused(9, { tools: [] });",
  },
  "paidMcpServer(options).maxAmountPerTool": {
    elsewhere: "test/runtimes/agents-openai.mjs",
    holds: 'return mcpRefused(11, { maxAmountPerTool: { weather: "$0" } });',
  },
  "createDiscoveryClient(options).timeoutMs": {
    refused: (timeoutMs: number) => createDiscoveryClient({ timeoutMs }),
    option: "discovery.timeoutMs",
  },
  "createDiscoveryClient(options).maxBytes": {
    refused: (maxBytes: number) => createDiscoveryClient({ maxBytes }),
    option: "discovery.maxBytes",
  },
  // A listing's page, and the iterations over pages: 0 items or pages is refused when asked (no "all").
  "createDiscoveryClient().list(filter).limit": {
    refused: (limit: number) => createDiscoveryClient().list({ limit }),
    option: "discovery.limit",
  },
  "createDiscoveryClient().list(filter).offset": { notALimit: "a position in the listing: 0 is its start" },
  ...Object.fromEntries(
    (["resources", "search"] as const).flatMap((method) =>
      (["limit", "maxItems", "maxPages"] as const).map((option) => [
        `createDiscoveryClient().${method}(options).${option}`,
        {
          refused: (value: number) => {
            const client = createDiscoveryClient();
            const listings =
              method === "search"
                ? client.search("weather", { [option]: value })
                : client.resources({ [option]: value });
            return listings[Symbol.asyncIterator]().next();
          },
          option: `discovery.${option}`,
        },
      ]),
    ),
  ),
  "memoryBudgetStore().reserve(amount)": { notALimit: "an amount reserved: 0 reserves nothing" },
  "memoryBudgetStore().commit(amount)": { notALimit: "an amount spent: 0 spends nothing" },
  "redisBudgetStore().reserve(amount)": { notALimit: "an amount reserved: 0 reserves nothing" },
  "redisBudgetStore().commit(amount)": { notALimit: "an amount spent: 0 spends nothing" },
  "permit2Allowance().prepare(declared)": {
    notALimit: "the extensions a challenge declares (the client's call, not an option): [] declares none",
  },
  "paidFetchTool(options).maxBytes": {
    refused: (maxBytes: number) => paidFetchTool(payingClient(), { maxBytes }),
    option: "maxBytes",
  },
  "paidFetchTool(options).maxChars": {
    refused: (maxChars: number) => paidFetchTool(payingClient(), { maxChars }),
    option: "maxChars",
  },
  // A tool that may use no method could make no request: refused.
  "paidFetchTool(options).methods": {
    refused: (methods: never[]) => paidFetchTool(payingClient(), { methods }),
    option: "methods",
  },
  // The model may set no header.
  "paidFetchTool(options).allowHeaders": {
    async none() {
      const answer = await createPaidFetch(payingClient(), { allowHeaders: [] }).run({
        url: request.url,
        headers: { accept: "text/plain" },
      });
      expect(answer.error?.message).toBe('The header "accept" is not allowed (none).');
    },
  },
  // Above $0: every payment is asked about.
  "paidFetchTool(options).approval.above": {
    async none() {
      server.use(createSeller({ path: "/edge" }).handler);
      const tool = createPaidFetch(payingClient(), { approval: { above: "$0" } });
      expect(await tool.needsApproval({ url: request.url }, { callId: "edge-above" })).toBe(true);
    },
  },
  // To no origin: refused, as it would ask about no payment (an approval rule that never asks).
  "paidFetchTool(options).approval.origins": {
    none() {
      expect(() => createPaidFetch(payingClient(), { approval: { origins: [] } })).toThrow(
        /origins: \[\] asks about no payment/,
      );
    },
  },
  "sanitize(max)": {
    none() {
      expect(sanitize("text", 0)).toBeUndefined();
      expect(sanitize("text", 1)).toBe("…");
      expect(sanitize("text", 4)).toBe("text");
    },
  },
};

async function challengeOf(seller: ReturnType<typeof createBatchSeller>) {
  server.use(seller.handler);
  const response = await fetch(seller.url);
  return JSON.parse(Buffer.from(response.headers.get("PAYMENT-REQUIRED")!, "base64").toString("utf8"));
}

let found: Map<string, OptionKind>;
beforeAll(() => void (found = optionsOfKind()), 120_000);

describe("every list or number option of the public API has its edge registered", () => {
  it("the walk finds the options it must (a check of the walk itself)", () => {
    for (const name of [
      "createX402Client(options).policy.maxFeeBps",
      "authCaptureEvm(options).capturers",
      "batchSettlementEvm(options).deposit.multiple",
      "quoteCache(options).maxEntries",
      "budget(options).per",
    ])
      expect(found.has(name), name).toBe(true);
    expect(found.get("createX402Client(options).policy.networks")).toBe("list");
    expect(found.get("budget(options).per")).toBe("number");
  });

  it("no option found lacks an edge, and no edge is registered for an option that is not there", () => {
    const missing = [...found.keys()].filter((name) => !(name in edges));
    expect(missing, "options of list or number kind without an edge case: register one in this file").toEqual([]);
    const stale = Object.keys(edges).filter((name) => !found.has(name));
    expect(stale, "edges of options that no longer exist").toEqual([]);
  });

  it.each(Object.entries(edges).filter(([, edge]) => "elsewhere" in edge))("%s: held elsewhere", (_, edge) => {
    const { elsewhere, holds } = edge as { elsewhere: string; holds: string };
    expect(readFileSync(new URL(`../../${elsewhere}`, import.meta.url), "utf8")).toContain(holds);
  });
});

describe("[] and 0 refused at construction (or when a method is called with it)", () => {
  const refused = Object.entries(edges).filter(([, edge]) => "refused" in edge) as [
    string,
    { refused: (edge: unknown) => unknown; option: string; edge?: unknown },
  ][];
  it.each(refused)("%s", async (name, { refused: make, option, edge }) => {
    const value = edge ?? (found.get(name) === "list" ? [] : 0);
    expect(await construction(() => make(value))).toBe(
      option === "undefined" ? "INVALID_CONFIG" : `INVALID_CONFIG (${option})`,
    );
  });
});

describe("[] and 0 mean none", () => {
  const none = Object.entries(edges).filter(([, edge]) => "none" in edge) as [string, { none: () => unknown }][];
  it.each(none)("%s", async (_, { none: check }) => {
    await check();
  });
});

// ---------------------------------------------------------------- the command line

/**
 * The CLI's options that take a number or an amount (`<usd>`, `<seconds>`, `<n>`) or may be repeated (`collect`),
 * found in its commander definitions (src/cli/index.ts), named by their command.
 */
function cliOptions(): string[] {
  const text = readFileSync(new URL("../../src/cli/index.ts", import.meta.url), "utf8");
  const found: string[] = [];
  let command = "x402-pay";
  for (const line of text.split("\n")) {
    const named = /\.command\("(\w+)"\)/.exec(line);
    if (named) command = `x402-pay ${named[1]}`;
    const option = /\.option\("(?:-\w, )?(--[\w-]+) <(\w+)>"(.*)$/.exec(line);
    if (option && (["usd", "seconds", "n"].includes(option[2]!) || /\bcollect\b/.test(option[3]!)))
      found.push(`${command} ${option[1]} <${option[2]}>`);
  }
  return found;
}

/** The CLI run in this process; what it said and its exit code. */
async function cli(args: string[], env: Record<string, string> = {}) {
  let said = "";
  const code = await main(args, {
    env,
    writeOut: (chunk) => void (said += String(chunk)),
    writeErr: (text) => void (said += text),
    errIsTTY: false,
    readStdin: async () => new Uint8Array(),
    signal: new AbortController().signal,
  });
  return { code, said };
}

const FACILITATOR = "https://facilitator.example";
const cliEdges: Record<string, Edge> = {
  "x402-pay --max <usd>": {
    async none() {
      // 0 (or $0): a cap of nothing, never "no cap".
      for (const max of ["0", "$0"]) {
        const seller = createSeller();
        server.use(seller.handler);
        const { code, said } = await cli(["--max", max, url], { EVM_PRIVATE_KEY: ANVIL_KEY_0 });
        expect(code).toBe(EXIT.refused);
        expect(said).toContain("over policy.maxAmountPerPayment ($0)");
        expect(seller.payments).toHaveLength(0);
      }
    },
  },
  "x402-pay --header <header>": { notALimit: "repeated to add headers: none given adds none" },
  "x402-pay --network <caip2>": {
    notALimit: "repeated to list networks; not given is no restriction, and there is no way to give an empty list",
  },
  "x402-pay --max-time <seconds>": {
    notALimit: "a time bound, not money: 0 is documented as no limit (as curl's --max-time), in --help and docs/cli.md",
  },
  "x402-pay discover --max <usd>": {
    notALimit: "the same cap as the paying form's --max (policy.maxAmountPerPayment), whose $0 edge is tested above",
  },
  "x402-pay discover --max-items <n>": {
    async none() {
      expect(await cli(["discover", FACILITATOR, "--max-items", "0"])).toEqual({
        code: EXIT.usage,
        said: "x402-pay: --max-items must be a whole number above 0.\n",
      });
    },
  },
  "x402-pay discover --max-pages <n>": {
    async none() {
      expect(await cli(["discover", FACILITATOR, "--max-pages", "0"])).toEqual({
        code: EXIT.usage,
        said: "x402-pay: --max-pages must be a whole number above 0.\n",
      });
    },
  },
  "x402-pay discover --max-time <seconds>": {
    notALimit: "a time bound, not money: 0 is documented as no limit (as curl's --max-time)",
  },
};
const url = `${SELLER}${PATH}`;

describe("the CLI: every option that takes a number, an amount or a list has its edge", () => {
  it("none lacks one, none is stale", () => {
    const options = cliOptions();
    expect(options).toContain("x402-pay --max <usd>");
    expect(options.filter((o) => !(o in cliEdges))).toEqual([]);
    expect(Object.keys(cliEdges).filter((o) => !options.includes(o))).toEqual([]);
  });

  const none = Object.entries(cliEdges).filter(([, edge]) => "none" in edge) as [string, { none: () => unknown }][];
  it.each(none)("%s", async (_, { none: check }) => {
    await check();
  });
});

describe("batchSettlementEvm's deposit sizing is checked at construction, not at the first deposit", () => {
  const make = (deposit: unknown) => () => batchSettlementEvm({ signer: account, deposit: deposit as never });

  it.each([
    [{ multiple: 1.5 }],
    [{ multiple: -1 }],
    [{ multiple: "10" }],
    [{ multiple: Number.NaN }],
    [{ amount: "1.5" }],
    [{ amount: 5 }],
    [{ amount: "" }],
    [{}],
    [{ multiple: 1, amount: "1" }],
    [null],
    [5],
  ])("%j: INVALID_CONFIG", async (deposit) => {
    expect(await construction(make(deposit))).toBe("INVALID_CONFIG (deposit)");
  });

  it.each([[undefined], [{ multiple: 0 }], [{ multiple: 10 }], [{ amount: "0" }], [{ amount: "1000000" }], [() => 5n]])(
    "%j: accepted",
    async (deposit) => {
      expect(await construction(make(deposit))).toBe("accepted");
    },
  );
});
