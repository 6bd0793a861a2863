// The reference facilitator (@x402/core x402Facilitator + @x402/evm exact scheme, and on request
// the upto and batch-settlement schemes, unmodified), served over HTTP the way the reference HTTPFacilitatorClient (and
// x402@1's useFacilitator) call it: POST /verify and POST /settle with { x402Version,
// paymentPayload, paymentRequirements }, GET /supported. On request, with the gas-sponsoring
// extensions of @x402/extensions registered (EIP-2612 permits, ERC-20 approvals it broadcasts).
// Before each verify and settle it brings anvil's latest block up to the wall clock's time
// (catchUpChainClock): a stack served for hours keeps accepting payments.

import type { IncomingMessage, ServerResponse } from "node:http";
import { x402Facilitator } from "@x402/core/facilitator";
import type { Network } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/facilitator";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/facilitator";
import { UptoEvmScheme } from "@x402/evm/upto/facilitator";
import {
  EIP2612_GAS_SPONSORING,
  createErc20ApprovalGasSponsoringExtension,
  type TransactionRequest,
} from "@x402/extensions";
import {
  createPublicClient,
  createWalletClient,
  http,
  nonceManager,
  parseTransaction,
  recoverTransactionAddress,
  type Address,
  type Hash,
  type Hex,
  type TransactionSerialized,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { FACILITATOR_KEY } from "./accounts.js";
import { BASE_SEPOLIA_CHAIN_ID, catchUpChainClock, localChain } from "./anvil.js";
import { listenOnLoopback } from "./listen.js";

export interface Facilitator {
  /** Base URL for HTTPFacilitatorClient / x402-express, `http://127.0.0.1:<port>`. */
  url: string;
  /** Address that submits settlement transactions. */
  address: Address;
  /**
   * The receiver authorizer the facilitator advertises for `batch-settlement` (in /supported) and
   * signs claims and refunds with, when started with `batchSettlement: { authorizer: true }`.
   */
  receiverAuthorizer?: Address;
  /** Every request received, in order (method and path), for tests that count round trips. */
  requests: { method: string; path: string }[];
  /** ETH the facilitator sent payers so their signed approvals could pay for gas (with `sponsoring`). */
  gasTopUps: { payer: Address; value: bigint; transaction: Hash }[];
  stop(): Promise<void>;
}

export interface StartFacilitatorOptions {
  rpcUrl: string;
  chainId?: number;
  /** Settlement key; defaults to public Anvil test account #1. */
  privateKey?: Hex;
  /**
   * Also register the reference `upto` scheme for {@link FACILITATOR_V2_NETWORK}. It settles
   * through the upto Permit2 proxy, which must be installed (localnet/permit2.ts). Default false.
   */
  upto?: boolean;
  /**
   * Also register the reference `batch-settlement` scheme for {@link FACILITATOR_V2_NETWORK}. The
   * contract and its collectors must be installed (localnet/batch.ts; Permit2 too for Permit2 deposits).
   * With `{ authorizer: true }` the facilitator gets an authorizer key (a fresh random one): it
   * advertises that address as `receiverAuthorizer` and signs the claims and refunds of sellers that
   * have no authorizer of their own. Without it, sellers must bring theirs (startSeller's default).
   * Default false.
   */
  batchSettlement?: boolean | { authorizer?: boolean };
  /**
   * Register the gas-sponsoring extensions: `eip2612GasSponsoring` (a marker; the schemes settle a
   * permit with settleWithPermit either way) and `erc20ApprovalGasSponsoring` with a signer that
   * broadcasts the payer's signed approval, then settles. It first tops the payer up to the gas its
   * transaction may cost, as the reference's e2e facilitator does. Default false.
   */
  sponsoring?: boolean;
  /**
   * Called with the facilitator after the EVM schemes are registered, to register more (e.g. the
   * Solana scheme, localnet/svm) so one facilitator serves several chains.
   */
  extend?: (facilitator: x402Facilitator) => void;
  /**
   * How long a settlement waits for its transaction's receipt, in ms. When it runs out (a chain that
   * does not mine, as anvil with automine off), the reference facilitator answers `settlement_pending`
   * with the broadcast transaction's hash. Default: viem's (minutes).
   */
  receiptTimeoutMs?: number;
}

/** v2 network and v1 network name the facilitator is registered for. */
export const FACILITATOR_V2_NETWORK: Network = "eip155:84532";
export const FACILITATOR_V1_NETWORK = "base-sepolia";

export async function startFacilitator({
  rpcUrl,
  chainId = BASE_SEPOLIA_CHAIN_ID,
  privateKey = FACILITATOR_KEY,
  upto = false,
  batchSettlement = false,
  sponsoring = false,
  extend,
  receiptTimeoutMs,
}: StartFacilitatorOptions): Promise<Facilitator> {
  const chain = localChain(rpcUrl, chainId);
  // The nonce manager keeps concurrent settlements from reusing a nonce.
  const account = privateKeyToAccount(privateKey, { nonceManager });
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 });
  const walletClient = createWalletClient({ account, chain, transport: http(rpcUrl) });

  // The reference signer interface is loosely typed (abi: unknown[], functionName: string);
  // viem's actions are strictly typed, hence the casts at this boundary.
  type Args<F extends (...args: never[]) => unknown> = Parameters<F>[0];
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    // Reads and simulations are sent from the facilitator's address, as they are from a viem
    // wallet client extended with public actions. The upto proxy needs it: it accepts only calls
    // from the facilitator the buyer named, simulations included.
    readContract: (args) =>
      publicClient.readContract({ ...args, account: account.address } as Args<typeof publicClient.readContract>),
    verifyTypedData: (args) => publicClient.verifyTypedData(args as Args<typeof publicClient.verifyTypedData>),
    writeContract: (args) =>
      walletClient.writeContract({ ...args, account, chain } as Args<typeof walletClient.writeContract>),
    sendTransaction: (args) => walletClient.sendTransaction({ ...args, account, chain }),
    waitForTransactionReceipt: (args) =>
      publicClient.waitForTransactionReceipt({ ...args, ...(receiptTimeoutMs && { timeout: receiptTimeoutMs }) }),
    getCode: (args) => publicClient.getCode(args),
  });

  const facilitator = new x402Facilitator()
    .register(FACILITATOR_V2_NETWORK, new ExactEvmScheme(signer))
    // v1 network names are not CAIP-2; the reference types them as Network all the same.
    .registerV1(FACILITATOR_V1_NETWORK as Network, new ExactEvmSchemeV1(signer));
  if (upto) facilitator.register(FACILITATOR_V2_NETWORK, new UptoEvmScheme(signer));
  const authorizer =
    typeof batchSettlement === "object" && batchSettlement.authorizer
      ? privateKeyToAccount(generatePrivateKey())
      : undefined;
  if (batchSettlement) facilitator.register(FACILITATOR_V2_NETWORK, new BatchSettlementEvmScheme(signer, authorizer));

  // anvil's latest block is only as recent as the last transaction: bring it to the wall clock's
  // time before anything is simulated, or a stack left idle ten minutes refuses every payment.
  let catchingUp: Promise<void> | undefined;
  const catchUp = async () => {
    catchingUp ??= catchUpChainClock(rpcUrl).finally(() => (catchingUp = undefined));
    await catchingUp;
  };
  facilitator.onBeforeVerify(catchUp).onBeforeSettle(catchUp);

  const gasTopUps: Facilitator["gasTopUps"] = [];
  if (sponsoring) {
    /** Sends each transaction in turn and waits for it: a signed one as it is, a call from the facilitator. */
    const sendTransactions = async (transactions: TransactionRequest[]): Promise<Hash[]> => {
      const hashes: Hash[] = [];
      for (const transaction of transactions) {
        let hash: Hash;
        if (typeof transaction === "string") {
          const signed = transaction as TransactionSerialized;
          await topUpGas(signed);
          hash = await publicClient.sendRawTransaction({ serializedTransaction: signed });
        } else hash = await walletClient.sendTransaction({ ...transaction, account, chain });
        const receipt = await publicClient.waitForTransactionReceipt({ hash });
        if (receipt.status !== "success") throw new Error(`transaction_failed: ${hash}`);
        hashes.push(hash);
      }
      return hashes;
    };
    /** Gives the signer of `serialized` what its gas may cost at most, less what it holds. */
    const topUpGas = async (serialized: TransactionSerialized) => {
      const { gas = 70_000n, maxFeePerGas = 1_000_000_000n } = parseTransaction(serialized);
      const payer = await recoverTransactionAddress({ serializedTransaction: serialized });
      const deficit = gas * maxFeePerGas - (await publicClient.getBalance({ address: payer }));
      if (deficit <= 0n) return;
      const hash = await walletClient.sendTransaction({ to: payer, value: deficit, account, chain });
      if ((await publicClient.waitForTransactionReceipt({ hash })).status !== "success")
        throw new Error(`gas_funding_failed: ${hash}`);
      gasTopUps.push({ payer, value: deficit, transaction: hash });
    };
    facilitator
      .registerExtension(EIP2612_GAS_SPONSORING)
      .registerExtension(createErc20ApprovalGasSponsoringExtension({ ...signer, sendTransactions }));
  }
  extend?.(facilitator);

  const server = await serveFacilitator(facilitator);
  return {
    url: server.url,
    address: account.address,
    ...(authorizer && { receiverAuthorizer: authorizer.address }),
    requests: server.requests,
    gasTopUps,
    stop: server.stop,
  };
}

export interface FacilitatorServer {
  url: string;
  requests: { method: string; path: string }[];
  stop(): Promise<void>;
}

/** Serves an x402Facilitator over HTTP on 127.0.0.1: POST /verify, POST /settle, GET /supported. */
export async function serveFacilitator(facilitator: x402Facilitator): Promise<FacilitatorServer> {
  const requests: Facilitator["requests"] = [];
  const server = await listenOnLoopback((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    requests.push({ method: req.method ?? "", path });
    handle(req, res, path).catch((error: unknown) => {
      sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (req.method === "GET" && path === "/supported") {
      return sendJson(res, 200, facilitator.getSupported());
    }
    if (req.method === "POST" && (path === "/verify" || path === "/settle")) {
      let body: { paymentPayload?: unknown; paymentRequirements?: unknown };
      try {
        body = JSON.parse(await readBody(req)) as typeof body;
      } catch {
        return sendJson(res, 400, { error: "request body is not JSON" });
      }
      const { paymentPayload, paymentRequirements } = body;
      if (!isObject(paymentPayload) || !isObject(paymentRequirements)) {
        return sendJson(res, 400, { error: "paymentPayload and paymentRequirements are required" });
      }
      type Payload = Parameters<typeof facilitator.verify>[0];
      type Requirements = Parameters<typeof facilitator.verify>[1];
      const result =
        path === "/verify"
          ? await facilitator.verify(paymentPayload as Payload, paymentRequirements as Requirements)
          : await facilitator.settle(paymentPayload as Payload, paymentRequirements as Requirements);
      return sendJson(res, 200, result);
    }
    sendJson(res, 404, { error: `no route ${req.method} ${path}` });
  }

  return { url: server.url, requests, stop: server.stop };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  res.writeHead(status, { "content-type": "application/json" }).end(text);
}
