// The page script of the browser tests (test/browser/harness.ts): bundled by esbuild for the browser
// (platform "browser", ESM) and run in headless Chromium and Firefox. It imports x402-pay by its
// package name (the built entries in dist/, as a dapp's bundler finds them), viem's
// privateKeyToAccount and axios, exactly as a web app would, and exposes one function the tests
// call through puppeteer: `window.x402Page.pay(key, request)`. The key is a fresh key the test just
// generated and funded on the local chain; it is handed over at run time, never bundled.
import axios from "axios";
import { privateKeyToAccount } from "viem/accounts";
import { createX402Client, getPaymentReceipt, isX402Error, type PaymentReceipt } from "x402-pay";
import { wrapAxiosWithPayment } from "x402-pay/axios";
import { ChallengeNotFoundError } from "x402-pay/errors";
import { eip1193Signer, exactEvm, type EvmSigner } from "x402-pay/evm";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { solanaPage, type SolanaPage } from "./solana-page";

export interface PageRequest {
  /** Absolute, or relative to the page. */
  url: string;
  method?: string;
  /** Sent as JSON with `content-type: application/json`. */
  json?: unknown;
  /**
   * The wrapped browser `fetch` (default), or an axios instance with its default (XHR) adapter, or with its fetch
   * adapter.
   */
  via?: "fetch" | "axios" | "axios-fetch";
  /** The wallet: viem's account object (default), or an injected EIP-1193 provider through `eip1193Signer`. */
  wallet?: "account" | "eip1193";
}

/** What the page observed besides the answer: how many payments were signed, what the client reported. */
export interface PageTrace {
  /** EIP-712 signatures made by the wallet. */
  signed: number;
  /** `onPaymentSettled` receipts and `onPaymentFailed` error codes, in order. */
  outcomes: ({ settled: true; transaction: string | undefined } | { settled: false; code: string })[];
  /** Requests axios sent through XMLHttpRequest (its default adapter in a browser). */
  xhr: number;
}

export type PageResult = PageTrace &
  (
    | { ok: true; status: number; body: unknown; receipt: PaymentReceipt | undefined }
    | {
        ok: false;
        error: {
          name: string;
          message: string;
          code?: string;
          phase?: string;
          isX402Error: boolean;
          isChallengeNotFoundError: boolean;
          /** An unknown outcome carries the signed header to reconcile with. */
          hasPaymentHeader: boolean;
          cause?: string;
        };
      }
  );

export interface X402Page {
  pay(privateKey: `0x${string}`, request: PageRequest): Promise<PageResult>;
  /** Solana, from a wallet-standard wallet (./solana-page.ts). */
  solana: SolanaPage;
}

declare global {
  interface Window {
    x402Page: X402Page;
  }
}

let xhr = 0;
const open = XMLHttpRequest.prototype.open;
XMLHttpRequest.prototype.open = function (this: XMLHttpRequest, ...args: Parameters<typeof open>) {
  xhr++;
  return open.apply(this, args);
} as typeof open;

async function pay(
  privateKey: `0x${string}`,
  { url, method = "GET", json, via = "fetch", wallet = "account" }: PageRequest,
): Promise<PageResult> {
  const account = privateKeyToAccount(privateKey);
  const trace: PageTrace = { signed: 0, outcomes: [], xhr: 0 };
  const xhrBefore = xhr;
  const signer: EvmSigner =
    wallet === "eip1193"
      ? await eip1193Signer(injectedWallet(account, trace))
      : {
          address: account.address,
          signTypedData: (request) => (
            trace.signed++, account.signTypedData(request as Parameters<typeof account.signTypedData>[0])
          ),
        };
  const client = createX402Client({
    schemes: [exactEvm({ signer })],
    onPaymentSettled: (receipt) => void trace.outcomes.push({ settled: true, transaction: receipt.transaction }),
    onPaymentFailed: (error) => void trace.outcomes.push({ settled: false, code: error.code }),
  });
  try {
    let status: number;
    let body: unknown;
    let receipt: PaymentReceipt | undefined;
    if (via !== "fetch") {
      const instance = wrapAxiosWithPayment(axios.create(via === "axios-fetch" ? { adapter: "fetch" } : {}), client);
      const response = await instance.request({
        url,
        method,
        data: json,
        responseType: "text",
        transformResponse: (text: string) => text,
      });
      status = response.status;
      body = parse(response.data as string);
      receipt = getPaymentReceipt(response);
    } else {
      // The browser's global fetch, unbound, as the README shows it.
      const paidFetch = wrapFetchWithPayment(fetch, client);
      const response = await paidFetch(
        url,
        json === undefined
          ? { method }
          : { method, headers: { "content-type": "application/json" }, body: JSON.stringify(json) },
      );
      status = response.status;
      body = parse(await response.text());
      // The receipt is a frozen plain object of strings: it crosses to the test as it is.
      receipt = getPaymentReceipt(response);
    }
    return { ok: true, status, body, receipt, ...trace, xhr: xhr - xhrBefore };
  } catch (error) {
    const e = error as Error & { code?: string; phase?: string; details?: { paymentHeader?: unknown } };
    const cause = (e as { cause?: Error })?.cause;
    return {
      ok: false,
      error: {
        name: e?.name ?? typeof error,
        message: e?.message ?? String(error),
        ...(isX402Error(error) ? { code: e.code, phase: e.phase } : {}),
        isX402Error: isX402Error(error),
        isChallengeNotFoundError: error instanceof ChallengeNotFoundError,
        hasPaymentHeader: typeof e?.details?.paymentHeader === "object",
        ...(cause ? { cause: `${cause.name}: ${cause.message}` } : {}),
      },
      ...trace,
      xhr: xhr - xhrBefore,
    };
  }
}

/**
 * What an injected wallet (`window.ethereum`) does for a dapp, in the page: EIP-1193 `request`, with
 * the account lower-cased as wallets report it, and eth_signTypedData_v4 JSON parsed and signed.
 */
function injectedWallet(account: ReturnType<typeof privateKeyToAccount>, trace: PageTrace) {
  return {
    async request({ method, params }: { method: string; params?: readonly unknown[] }): Promise<unknown> {
      if (method === "eth_accounts") return [account.address.toLowerCase()];
      if (method === "eth_signTypedData_v4") {
        trace.signed++;
        return account.signTypedData(JSON.parse((params as string[])[1]!));
      }
      throw Object.assign(new Error(`The method ${method} is not supported.`), { code: 4200 });
    },
  };
}

/** JSON when it parses, else the text. */
function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

window.x402Page = { pay, solana: solanaPage };
document.title = "x402-pay browser test: ready";
