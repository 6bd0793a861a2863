// worker-evm.mjs paying on Solana. It runs with the nodejs_compat flag, as any Worker using @solana/kit 8 must:
// kit's packages map the `workerd` condition to their Node builds, and @solana/keys' one imports fs/promises and
// path (for writeKeyPair), which workerd provides only under that flag. Bindings (a test key): X402_URL,
// SVM_PRIVATE_KEY (base58, 64 bytes), SVM_RPC_URL.
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { createX402Client, getPaymentReceipt } from "x402-pay";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { exactSvm } from "x402-pay/svm";

export default {
  async fetch(_request, env) {
    const signer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(env.SVM_PRIVATE_KEY));
    const scheme = exactSvm({ signer, rpc: env.SVM_RPC_URL });
    const paidFetch = wrapFetchWithPayment(fetch, createX402Client({ schemes: [scheme] }));
    const response = await paidFetch(env.X402_URL);
    await response.text();
    const receipt = getPaymentReceipt(response);
    return Response.json({ runtime: navigator.userAgent, status: response.status, receipt });
  },
};
