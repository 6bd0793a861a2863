// client.mjs through require(): the package's CommonJS entries.
const process = require("node:process");
const { createKeyPairSignerFromBytes, getBase58Encoder } = require("@solana/kit");
const { privateKeyToAccount } = require("viem/accounts");
const { createX402Client, getPaymentReceipt } = require("x402-pay");
const { exactEvm } = require("x402-pay/evm");
const { wrapFetchWithPayment } = require("x402-pay/fetch");
const { exactSvm } = require("x402-pay/svm");

async function main() {
  const { X402_URL, EVM_PRIVATE_KEY, SVM_PRIVATE_KEY, SVM_RPC_URL } = process.env;
  const scheme = EVM_PRIVATE_KEY
    ? exactEvm({ signer: privateKeyToAccount(EVM_PRIVATE_KEY) })
    : exactSvm({
        signer: await createKeyPairSignerFromBytes(getBase58Encoder().encode(SVM_PRIVATE_KEY)),
        rpc: SVM_RPC_URL,
      });
  const paidFetch = wrapFetchWithPayment(fetch, createX402Client({ schemes: [scheme] }));
  const response = await paidFetch(X402_URL);
  await response.text();
  const receipt = getPaymentReceipt(response);
  // Node has navigator from 21 on; on Node 20 the same "Node.js/<major>" from its version.
  const runtime = globalThis.navigator?.userAgent ?? `Node.js/${process.versions.node.split(".")[0]}`;
  console.log(JSON.stringify({ runtime, status: response.status, receipt }));
}
main();
