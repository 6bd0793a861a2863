// Pay for an x402 resource with an axios instance.
//   EVM_PRIVATE_KEY=0x... npx tsx examples/axios.ts https://seller.example/weather
import axios from "axios";
import { privateKeyToAccount } from "viem/accounts";
import { createX402Client, getPaymentReceipt, isX402Error } from "x402-pay";
import { wrapAxiosWithPayment } from "x402-pay/axios";
import { exactEvm } from "x402-pay/evm";

const key = process.env.EVM_PRIVATE_KEY as `0x${string}` | undefined;
const url = process.argv[2] ?? process.env.RESOURCE_URL;
if (!key || !url) {
  console.error("Usage: EVM_PRIVATE_KEY=0x... npx tsx examples/axios.ts <url>");
  process.exit(2);
}

const client = createX402Client({
  schemes: [exactEvm({ signer: privateKeyToAccount(key) })],
  policy: { maxAmountPerPayment: "$0.10" },
});
const api = wrapAxiosWithPayment(axios.create({ timeout: 30_000 }), client);

try {
  const response = await api.get(url);
  console.log(response.status, response.data);
  const receipt = getPaymentReceipt(response);
  // displayAmount: "0.001 USDC" for assets of known decimals; base units otherwise.
  const paid = receipt && (receipt.displayAmount ?? `${receipt.amount} base units of ${receipt.asset}`);
  if (receipt) console.log(`paid: ${paid} on ${receipt.network} tx ${receipt.transaction ?? "(none reported)"}`);
} catch (error) {
  if (isX402Error(error)) console.error(`${error.code}: ${error.message}`);
  else throw error;
  process.exitCode = 1;
}
