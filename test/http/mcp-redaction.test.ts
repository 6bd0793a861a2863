/**
 * Key material never reaches what the caller of a paid MCP tool call reads, through either door: foreign text (a
 * wallet's error, an approval hook's, a plug-in's, the paid call's failure in transit, the server's refusal) carrying
 * an EVM hex key, a Solana base58 secret key, a mnemonic or a real PAYMENT-SIGNATURE value. The keys are made at run
 * time; the mnemonic is Anvil's public one. What is read: `String(error)` and the error as JSON for the SDK Client
 * wrapper (LangChain's adapter shows the model `String(error)`), the whole tool result for the transport wrapper.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { getBase58Decoder } from "@solana/kit";
import { generatePrivateKey } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { createX402Client, type X402ClientOptions, type X402Plugin } from "../../src";
import { engineOf } from "../../src/client";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { exactEvm } from "../../src/evm";
import {
  MCP_PAYMENT_META_KEY,
  wrapMcpClientWithPayment,
  wrapMcpTransportWithPayment,
  type McpPaymentOptions,
} from "../../src/mcp";
import { account, v2Challenge } from "../support/seller";

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

const challenge = (over: Record<string, unknown> = {}) => v2Challenge({ resource: { url: "mcp://tool/t" }, ...over });
const asked = (c: Record<string, unknown> = challenge()): CallToolResult => ({
  isError: true,
  structuredContent: c,
  content: [{ type: "text", text: JSON.stringify(c) }],
});

/** The secrets, each as it would be written in an error's text: made now, but for Anvil's public mnemonic. */
const signed = await engineOf(createX402Client({ schemes: [exactEvm({ signer: account })] })).createPayment(
  parseChallenge({ header: encodeBase64Json(challenge()) }),
  { url: "mcp://scripted#t", method: "tools/call" },
);
const secrets = [
  { secret: "an EVM hex private key", text: generatePrivateKey() },
  {
    secret: "a Solana base58 64-byte secret key",
    text: getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(64))),
  },
  { secret: "a mnemonic", text: "test test test test test test test test test test test junk" },
  { secret: "a PAYMENT-SIGNATURE value", text: signed.headerValue },
];

type Answer = (meta: Record<string, any> | undefined) => CallToolResult;

async function connected(answer: Answer, transport: boolean, x402: ReturnType<typeof createX402Client>, options = {}) {
  const server = new Server({ name: "scripted", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, async (request) => answer(request.params._meta));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const mcp = new Client({ name: "test", version: "1.0.0" });
  const below = transport ? wrapMcpTransportWithPayment(clientSide, x402, options) : clientSide;
  await Promise.all([server.connect(serverSide), mcp.connect(below)]);
  closing.push(
    () => mcp.close(),
    () => server.close(),
  );
  return transport ? mcp : wrapMcpClientWithPayment(mcp, x402, options);
}

/** Every text the caller reads of tool "t"'s call: the result whole, or the error as a string and as JSON. */
async function read(
  transport: boolean,
  answer: Answer,
  { options, client }: { options?: McpPaymentOptions; client?: Partial<X402ClientOptions> } = {},
): Promise<{ text: string; code: string }> {
  const x402 = createX402Client({ schemes: [exactEvm({ signer: account })], ...client });
  const mcp = await connected(answer, transport, x402, options);
  return mcp.callTool({ name: "t" }).then(
    (result) => {
      const text = JSON.stringify(result);
      return { text, code: /\(([A-Z_]+)\)/.exec(text)?.[1] ?? "" };
    },
    (error) => ({ text: `${String(error)} ${JSON.stringify(error)}`, code: error.code }),
  );
}

const sells: Answer = (meta) => (meta?.[MCP_PAYMENT_META_KEY] ? { content: [{ type: "text", text: "ok" }] } : asked());
const failing = (secret: string) => () => Promise.reject(new Error(`failed near ${secret}`));

/** A path from foreign text into what the caller reads: the text's secret goes in, the code that comes out. */
interface Path {
  path: string;
  code: string;
  /** Only the transport wrapper's: the SDK Client wrapper hands the typed error to code. */
  transportOnly?: boolean;
  call: (secret: string) => { answer: Answer; options?: McpPaymentOptions; client?: Partial<X402ClientOptions> };
}

const paths: Path[] = [
  {
    path: "the wallet's error",
    code: "SIGNING_FAILED",
    call: (secret) => ({
      answer: sells,
      client: { schemes: [exactEvm({ signer: { address: account.address, signTypedData: failing(secret) } })] },
    }),
  },
  {
    path: "onPaymentRequested throwing",
    code: "PAYMENT_REFUSED",
    call: (secret) => ({ answer: sells, options: { onPaymentRequested: failing(secret) } }),
  },
  {
    path: "onBeforePayment throwing",
    code: "PAYMENT_REFUSED",
    call: (secret) => ({ answer: sells, client: { onBeforePayment: failing(secret) } }),
  },
  {
    path: "the paid call failing in transit",
    code: "PAYMENT_OUTCOME_UNKNOWN",
    call: (secret) => ({
      answer: (meta) => {
        if (meta?.[MCP_PAYMENT_META_KEY]) throw new McpError(-32603, `upstream refused ${secret}`, { secret });
        return asked();
      },
    }),
  },
  {
    // The SDK Client wrapper's PAYMENT_REJECTED quotes the server's reason as it came: the server's own words (it
    // holds no key of the buyer's; the payment it quotes is the one it was sent), as over HTTP.
    path: "the server's refusal after paying",
    code: "PAYMENT_REJECTED",
    transportOnly: true,
    call: (secret) => ({
      answer: (meta) => asked(challenge(meta?.[MCP_PAYMENT_META_KEY] ? { error: `rejected ${secret}` } : {})),
    }),
  },
  {
    path: "a plug-in that keeps signed payments failing",
    code: "PAYMENT_NOT_SENT",
    call: (secret) => ({
      answer: sells,
      client: { plugins: [{ name: "journal", onSigned: failing(secret) } as X402Plugin] },
    }),
  },
  {
    path: "a plug-in that reserves failing",
    code: "FAILED",
    call: (secret) => ({
      answer: sells,
      client: { plugins: [{ name: "budget", reserve: failing(secret) } as X402Plugin] },
    }),
  },
];

describe.each([
  { door: "wrapMcpClientWithPayment", transport: false },
  { door: "wrapMcpTransportWithPayment", transport: true },
])("$door: no key material reaches the caller", ({ transport }) => {
  describe.each(paths.filter((p) => transport || !p.transportOnly))("through $path", (path) => {
    it.each(secrets)("$secret", async ({ text }) => {
      const { answer, options, client } = path.call(text);
      const told = await read(transport, answer, { options, client });
      // The plug-in's own error comes up as it is through the SDK Client wrapper: no code to check.
      if (transport || path.code !== "FAILED") expect(told.code).toBe(path.code);
      expect(told.text.toLowerCase()).not.toContain(text.toLowerCase());
      expect(told.text.toLowerCase()).not.toContain(text.replace(/^0x/, "").toLowerCase());
    });
  });
});
