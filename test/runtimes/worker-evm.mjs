// client.mjs as a Cloudflare Worker, paying on EVM: runtimes.test.ts bundles it as wrangler does (esbuild, ESM,
// conditions workerd, worker, browser) against the package installed from its tarball, and runs it in workerd
// through miniflare, with no compatibility flag. Each request it gets pays X402_URL once, from inside the
// Worker, and answers with the receipt as JSON. Bindings (a test key): X402_URL, EVM_PRIVATE_KEY.
import { privateKeyToAccount } from "viem/accounts";
import { createX402Client, getPaymentReceipt } from "x402-pay";
import { exactEvm } from "x402-pay/evm";
import { wrapFetchWithPayment } from "x402-pay/fetch";

export default {
  async fetch(_request, env) {
    const scheme = exactEvm({ signer: privateKeyToAccount(env.EVM_PRIVATE_KEY) });
    const paidFetch = wrapFetchWithPayment(fetch, createX402Client({ schemes: [scheme] }));
    const response = await paidFetch(env.X402_URL);
    await response.text();
    const receipt = getPaymentReceipt(response);
    return Response.json({ runtime: navigator.userAgent, status: response.status, receipt });
  },
};
