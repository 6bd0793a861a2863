// Pay for an x402 resource on Solana with fetch.
//   SVM_PRIVATE_KEY=<base58 64-byte key> npx tsx examples/solana.ts https://seller.example/weather [rpc-url]
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { createX402Client, getPaymentReceipt, isX402Error } from "x402-pay";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { exactSvm } from "x402-pay/svm";

const key = process.env.SVM_PRIVATE_KEY;
const [url, rpc] = process.argv.slice(2);
if (!key || !url) {
  console.error("Usage: SVM_PRIVATE_KEY=<base58 key> npx tsx examples/solana.ts <url> [rpc-url]");
  process.exit(2);
}

const signer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(key));
const client = createX402Client({
  // Without `rpc`, the public endpoint of the cluster the seller names is used.
  schemes: [exactSvm({ signer, ...(rpc ? { rpc } : {}) })],
  policy: { maxAmountPerPayment: "$0.10" },
});
const paidFetch = wrapFetchWithPayment(fetch, client);

try {
  const response = await paidFetch(url);
  console.log(response.status, await response.text());
  const receipt = getPaymentReceipt(response);
  // displayAmount: "0.001 USDC" for assets of known decimals; base units otherwise.
  const paid = receipt && (receipt.displayAmount ?? `${receipt.amount} base units of ${receipt.asset}`);
  if (receipt) console.log(`paid: ${paid} on ${receipt.network} tx ${receipt.transaction ?? "(none reported)"}`);
} catch (error) {
  if (isX402Error(error)) console.error(`${error.code}: ${error.message}`);
  else throw error;
  process.exitCode = 1;
}
