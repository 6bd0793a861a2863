// List what a facilitator's discovery endpoint sells, and whether your policy would pay each.
//   npx tsx examples/discovery.ts https://x402.org/facilitator [search words]
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createX402Client, isX402Error } from "x402-pay";
import { createDiscoveryClient, quoteListing } from "x402-pay/discovery";
import { exactEvm } from "x402-pay/evm";
import { formatUnits } from "x402-pay/protocol";

const [facilitator, ...words] = process.argv.slice(2);
if (!facilitator) {
  console.error("Usage: npx tsx examples/discovery.ts <facilitator url> [search words]");
  process.exit(2);
}
// Quoting signs nothing: any key will do to ask "would I pay this?", your own to be sure.
const key = (process.env.EVM_PRIVATE_KEY as `0x${string}` | undefined) ?? generatePrivateKey();
const client = createX402Client({
  schemes: [exactEvm({ signer: privateKeyToAccount(key) })],
  policy: { maxAmountPerPayment: "$0.05" },
});
const discovery = createDiscoveryClient({ url: facilitator });

try {
  const listings = words.length
    ? discovery.search(words.join(" "), { maxItems: 50 })
    : discovery.resources({ maxItems: 50 });
  for await (const listing of listings) {
    const quote = await quoteListing(client, listing);
    const name = listing.metadata.name ?? listing.metadata.description ?? "";
    const payable = quote.payable;
    // The asset the policy priced (known decimals and symbol), else base units.
    const amount = payable?.asset
      ? `${formatUnits(BigInt(payable.requirement.amount), payable.asset.decimals)} ${payable.asset.symbol}`
      : `${payable?.requirement.amount} base units of ${payable?.requirement.asset}`;
    const verdict = payable
      ? `would pay ${amount} on ${payable.requirement.network}`
      : `would not pay: ${quote.rejected.map((r) => r.reason).join("; ")}`;
    console.log(`${listing.key}  ${name}\n  ${verdict}`);
  }
} catch (error) {
  if (isX402Error(error)) console.error(`${error.code}: ${error.message}`);
  else throw error;
  process.exitCode = 1;
}
