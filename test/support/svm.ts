/** Fixtures for the Solana unit tests: fixed addresses, a fixed buyer, a requirement, one stand-in RPC. */
import {
  createKeyPairSignerFromPrivateKeyBytes,
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
} from "@solana/kit";
import { http, HttpResponse } from "msw";
import { TOKEN_PROGRAM } from "../../src/svm";

export const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
export const USDC_DEVNET = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
export const FEE_PAYER = "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd";
export const PAY_TO = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
export const BLOCKHASH = "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N";

/** A key pair signer from a fixed private key (Ed25519 signatures are deterministic). */
export const buyer = await createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(7));

/** A v2 `exact` requirement for 1000 units of devnet USDC, with the facilitator's fee payer. */
export const svmRequirement = (extra: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}) => ({
  scheme: "exact",
  network: DEVNET,
  amount: "1000",
  asset: USDC_DEVNET,
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { feePayer: FEE_PAYER, ...extra },
  ...overrides,
});

export const DEVNET_GENESIS_HASH = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG";
export const MAINNET_GENESIS_HASH = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp5kX1m1Wb4Z7U";

type RpcMethod = "getAccountInfo" | "getLatestBlockhash" | "getGenesisHash";

export interface FakeRpcOptions {
  /** Owner of the mint account; default the SPL Token program. */
  owner?: string;
  decimals?: number;
  /** `false`: the mint account does not exist. */
  exists?: boolean;
  /** The mint account's length in bytes; default 82 (an SPL Token mint). */
  dataLength?: number;
  /** What getGenesisHash answers; default devnet's. */
  genesisHash?: string;
  /**
   * Replaces a method's answer: return the result, or throw (an RPC failure). Gets the abortSignal passed to `send`.
   */
  answer?: Partial<Record<RpcMethod, (abortSignal: AbortSignal | undefined) => unknown>>;
}

/** The `result` a Solana node answers for a method, as the fake and the msw handler serve it. */
export function rpcResult(
  method: string,
  {
    owner = TOKEN_PROGRAM,
    decimals = 6,
    exists = true,
    genesisHash = DEVNET_GENESIS_HASH,
    dataLength = 82,
  }: FakeRpcOptions = {},
) {
  if (method === "getGenesisHash") return genesisHash;
  if (method === "getLatestBlockhash")
    return { context: { slot: 1 }, value: { blockhash: BLOCKHASH, lastValidBlockHeight: 100 } };
  const data = new Uint8Array(dataLength);
  data[44] = decimals;
  data[45] = 1;
  return {
    context: { slot: 1 },
    value: exists ? { owner, data: [btoa(String.fromCharCode(...data)), "base64"], lamports: 1 } : null,
  };
}

/**
 * A stand-in for a kit RPC (`createSolanaRpc(url)`): a mint account (owner, 82 bytes, decimals at
 * 44), a blockhash and a genesis hash. `calls` lists what was sent, `signals` the abortSignal of each.
 */
export function fakeRpc(options: FakeRpcOptions = {}) {
  const calls: string[] = [];
  const signals: (AbortSignal | undefined)[] = [];
  const method =
    (name: RpcMethod) =>
    (...params: unknown[]) => ({
      send: async ({ abortSignal }: { abortSignal?: AbortSignal } = {}) => {
        calls.push(name === "getAccountInfo" ? `${name} ${params[0]}` : name);
        signals.push(abortSignal);
        const answer = options.answer?.[name];
        return (answer ? answer(abortSignal) : rpcResult(name, options)) as never;
      },
    });
  return {
    calls,
    signals,
    getAccountInfo: method("getAccountInfo"),
    getLatestBlockhash: method("getLatestBlockhash"),
    getGenesisHash: method("getGenesisHash"),
  };
}

export interface RpcRequest {
  jsonrpc: string;
  id: number;
  method: string;
  params: unknown[];
}

/**
 * An msw handler that answers Solana JSON-RPC at `url` as `fakeRpc` does. `requests` lists the
 * bodies received; `respond` may answer a request itself (an error status, a JSON-RPC error).
 */
export function rpcHandler(
  url: string,
  options: FakeRpcOptions & {
    respond?: (request: RpcRequest) => Response | undefined | Promise<Response | undefined>;
  } = {},
) {
  const requests: RpcRequest[] = [];
  const handler = http.post(url, async ({ request }) => {
    if (!request.headers.get("content-type")?.startsWith("application/json"))
      return new HttpResponse(null, { status: 415 });
    const body = (await request.json()) as RpcRequest;
    requests.push(body);
    return (
      (await options.respond?.(body)) ??
      HttpResponse.json({ jsonrpc: "2.0", id: body.id, result: rpcResult(body.method, options) })
    );
  });
  return { handler, requests };
}

/** Decodes a base64 wire transaction with kit: the transaction, its compiled and its decompiled message. */
export function decodeTransaction(transaction: string) {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
  const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  return { tx, compiled, message: decompileTransactionMessage(compiled) };
}
