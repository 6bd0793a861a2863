// The Solana half of the browser page (bundled with page.ts): a wallet-standard wallet registered on the
// page through `@wallet-standard/app`, as a browser extension (Phantom, Solflare, Backpack) registers
// itself, with its own Ed25519 key made in the page (test/support/wallet-standard-wallet.ts); and the
// dapp's side, which finds it with `getWallets()`, connects it and pays through `walletStandardSigner`
// from the built package.
import { getWallets } from "@wallet-standard/app";
import {
  createX402Client,
  getPaymentReceipt,
  isX402Error,
  signInWithX,
  type PaymentReceipt,
  type X402Client,
} from "x402-pay";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { exactSvm, walletStandardSigner } from "x402-pay/svm";
import { TestSolanaWallet } from "../support/wallet-standard-wallet";

const NAME = "x402 Browser Test Wallet";

export interface SolanaPageRequest {
  /** The seller's URL (another origin, with CORS). */
  url: string;
  /** The Solana RPC, relative to the page. */
  rpc: string;
  /** Also sign in with x (`signInWithX({ solana })`, the same wallet). */
  signIn?: boolean;
  /** What the wallet's user does: approve (default), reject, or leave the prompt open. */
  user?: "approve" | "reject" | "leave open";
  /** Abort the request once the wallet is asked to sign. */
  abortWhenAsked?: boolean;
}

/** How often the wallet was asked, and by whom. */
export interface SolanaWalletTrace {
  connect: number;
  signTransaction: number;
  signMessage: number;
}

export type SolanaPageResult = { wallet: SolanaWalletTrace } & (
  | { ok: true; status: number; body: unknown; receipt: PaymentReceipt | undefined }
  | { ok: false; error: { name: string; code?: string; message: string; isX402Error: boolean } }
);

export interface SolanaPage {
  /** Registers the wallet (not yet connected); returns its address. */
  install(): Promise<string>;
  pay(request: SolanaPageRequest): Promise<SolanaPageResult>;
}

let installed: TestSolanaWallet | undefined;
const clients = new Map<string, X402Client>();

async function install(): Promise<string> {
  installed ??= await TestSolanaWallet.create({ name: NAME });
  getWallets().register(installed);
  return installed.address;
}

async function pay({ url, rpc, signIn, user = "approve", abortWhenAsked }: SolanaPageRequest) {
  const test = installed!;
  Object.assign(test.switches, { reject: user === "reject", hang: user === "leave open" });
  const before = { ...test.calls };
  const trace = (): SolanaWalletTrace => ({
    connect: test.calls.connect - before.connect,
    signTransaction: test.calls.signTransaction - before.signTransaction,
    signMessage: test.calls.signMessage - before.signMessage,
  });

  // One client per page and kind, as a dapp keeps one: sign-in-with-x remembers what this wallet paid for.
  const key = `${rpc} ${Boolean(signIn)}`;
  let client = clients.get(key);
  if (!client) {
    client = await dappClient(rpc, Boolean(signIn));
    clients.set(key, client);
  }
  const controller = new AbortController();
  if (abortWhenAsked) void test.nextRequest().then(() => controller.abort());
  try {
    const response = await wrapFetchWithPayment(fetch, client)(url, { signal: controller.signal });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { ok: true, status: response.status, body, receipt: getPaymentReceipt(response), wallet: trace() };
  } catch (error) {
    const e = error as Error & { code?: string };
    const code = isX402Error(error) ? { code: e.code } : {};
    return {
      ok: false,
      error: { name: e.name, message: e.message, ...code, isX402Error: isX402Error(error) },
      wallet: trace(),
    };
  }
}

/** The dapp: the wallet as getWallets() lists it, connected through standard:connect, paying through the signer. */
async function dappClient(rpc: string, signIn: boolean): Promise<X402Client> {
  const wallet = getWallets()
    .get()
    .find((w) => w.name === NAME);
  if (!wallet) throw new Error("the wallet is not registered");
  const connect = wallet.features["standard:connect"] as { connect(): Promise<unknown> };
  await connect.connect();
  const signer = walletStandardSigner(wallet);
  return createX402Client({
    schemes: [exactSvm({ signer, rpc: new URL(rpc, location.href).href })],
    plugins: signIn ? [signInWithX({ solana: signer })] : [],
  });
}

export const solanaPage: SolanaPage = { install, pay: pay as SolanaPage["pay"] };
