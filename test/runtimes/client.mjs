// One paid request, run as-is in every runtime of the matrix (runtimes.test.ts) against the package
// installed from its tarball: 402, sign, paid retry; prints the receipt as JSON. client.cjs is the same
// through require(). Input from the environment: X402_URL, and EVM_PRIVATE_KEY or SVM_PRIVATE_KEY
// (base58, 64 bytes) with SVM_RPC_URL.
import process from "node:process";
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";
import { createX402Client, getPaymentReceipt } from "x402-pay";
import { exactEvm } from "x402-pay/evm";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { exactSvm } from "x402-pay/svm";

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
