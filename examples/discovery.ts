// List what a facilitator's discovery endpoint sells, and whether your policy would pay each.
//   npx tsx examples/discovery.ts https://x402.org/facilitator [search words]
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createX402Client, isX402Error } from "x402-pay";
import { createDiscoveryClient, quoteListing } from "x402-pay/discovery";
import { exactEvm } from "x402-pay/evm";

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
    const verdict = quote.payable
      ? `would pay ${quote.payable.requirement.amount} on ${quote.payable.requirement.network}`
      : `would not pay: ${quote.rejected.map((r) => r.reason).join("; ")}`;
    console.log(`${listing.key}  ${name}\n  ${verdict}`);
  }
} catch (error) {
  if (isX402Error(error)) console.error(`${error.code}: ${error.message}`);
  else throw error;
  process.exitCode = 1;
}
