// The page script of test/browser/pay.test.ts: bundled by esbuild for the browser (platform
// "browser", ESM) and run in headless Chromium. It imports x402-pay from src and viem's
// privateKeyToAccount, exactly as a web app would, and exposes one function the test calls
// through playwright: `window.x402Page.pay(key, requests)`. The key is a fresh key the test just
// generated and funded on the local chain; it is handed over at run time, never bundled.
import { privateKeyToAccount } from "viem/accounts";
import { ChallengeNotFoundError, createX402Client, getPaymentReceipt, isX402Error, type PaymentReceipt } from "../../src";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";

export interface PageRequest {
  /** Absolute, or relative to the page. */
  url: string;
  method?: string;
  /** Sent as JSON with `content-type: application/json`. */
  json?: unknown;
}

export type PageResult =
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
      };
    };

export interface X402Page {
  pay(privateKey: `0x${string}`, request: PageRequest): Promise<PageResult>;
}

declare global {
  interface Window {
    x402Page: X402Page;
  }
}

async function pay(privateKey: `0x${string}`, { url, method = "GET", json }: PageRequest): Promise<PageResult> {
  const client = createX402Client({ schemes: [exactEvm({ signer: privateKeyToAccount(privateKey) })] });
  // The browser's global fetch, unbound, as the README shows it.
  const paidFetch = wrapFetchWithPayment(fetch, client);
  try {
    const response = await paidFetch(
      url,
      json === undefined ? { method } : { method, headers: { "content-type": "application/json" }, body: JSON.stringify(json) },
    );
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: report the text
    }
    // The receipt is a frozen plain object of strings: it crosses to the test as it is.
    return { ok: true, status: response.status, body, receipt: getPaymentReceipt(response) };
  } catch (error) {
    const e = error as Error & { code?: string; phase?: string };
    return {
      ok: false,
      error: {
        name: e?.name ?? typeof error,
        message: e?.message ?? String(error),
        ...(isX402Error(error) ? { code: e.code, phase: e.phase } : {}),
        isX402Error: isX402Error(error),
        isChallengeNotFoundError: error instanceof ChallengeNotFoundError,
      },
    };
  }
}

window.x402Page = { pay };
document.title = "x402-pay browser test: ready";
