// Pay for an x402 resource with fetch.
//   EVM_PRIVATE_KEY=0x... npx tsx examples/fetch.ts https://seller.example/weather
import { privateKeyToAccount } from "viem/accounts";
import { createX402Client, getPaymentReceipt, isX402Error } from "x402-pay";
import { exactEvm } from "x402-pay/evm";
import { wrapFetchWithPayment } from "x402-pay/fetch";

const key = process.env.EVM_PRIVATE_KEY as `0x${string}` | undefined;
const url = process.argv[2] ?? process.env.RESOURCE_URL;
if (!key || !url) {
  console.error("Usage: EVM_PRIVATE_KEY=0x... npx tsx examples/fetch.ts <url>");
  process.exit(2);
}

const client = createX402Client({
  schemes: [exactEvm({ signer: privateKeyToAccount(key) })],
  policy: { maxAmountPerPayment: "$0.10" },
  onBeforePayment: (payment) => {
    console.log(
      `Paying ${payment.displayAmount ?? `${payment.amount} of ${payment.asset}`} on ${payment.network} to ${payment.payTo}`,
    );
  },
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
