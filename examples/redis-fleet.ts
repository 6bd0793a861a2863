// One agent of a fleet: every process that runs this against the same Redis shares one daily budget, one budget per
// origin, one receipts ledger and sign-in's memory of the routes paid for.
//   REDIS_URL=redis://127.0.0.1:6379 EVM_PRIVATE_KEY=0x... npx tsx examples/redis-fleet.ts
//   https://seller.example/weather
import { createClient } from "redis";
import { privateKeyToAccount } from "viem/accounts";
import { budget, createX402Client, isX402Error, signInWithX, spendBy } from "x402-pay";
import { EVM_KNOWN_ASSETS, exactEvm } from "x402-pay/evm";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { findKnownAsset, formatUnits } from "x402-pay/protocol";
import { redisBudgetStore, redisLedger, redisSignInStore } from "x402-pay/redis";

const key = process.env.EVM_PRIVATE_KEY as `0x${string}` | undefined;
const url = process.argv[2] ?? process.env.RESOURCE_URL;
if (!key || !url) {
  console.error("Usage: REDIS_URL=redis://... EVM_PRIVATE_KEY=0x... npx tsx examples/redis-fleet.ts <url>");
  process.exit(2);
}

// node-redis retries a connection for ever by default, and connect() then never settles: here a
// Redis that cannot be reached at start is an error, and once connected the client reconnects.
let connected = false;
const redis = createClient({
  url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  socket: {
    connectTimeout: 2_000,
    reconnectStrategy: (retries, cause) => (connected ? Math.min(100 * 2 ** retries, 5_000) : cause),
  },
});
redis.on("error", () => undefined); // while Redis is away, payments are refused (BUDGET_UNAVAILABLE)
try {
  await redis.connect();
  connected = true;
} catch (error) {
  // The error names the host and port, never the URL's password.
  console.error(`Redis cannot be reached: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const wallet = privateKeyToAccount(key);
const store = redisBudgetStore(redis); // every call answered within 2 s, or the payment is refused
const ledger = redisLedger(redis);
const client = createX402Client({
  schemes: [exactEvm({ signer: wallet })],
  plugins: [
    budget({ limit: "$20", per: "day", name: "fleet", store }), // the whole fleet, a rolling day
    budget({ limit: "$1", per: "hour", scope: "origin", store }), // and each origin, a rolling hour
    ledger,
    signInWithX({ evm: wallet, store: redisSignInStore(redis) }),
  ],
});
const paidFetch = wrapFetchWithPayment(fetch, client);

try {
  const response = await paidFetch(url);
  console.log(response.status, await response.text());
  for (const row of await spendBy(ledger, "origin")) {
    // The ledger keeps base units; a stablecoin of known decimals reads as "0.25 USDC".
    const known = findKnownAsset(row.network, row.asset, EVM_KNOWN_ASSETS);
    const spent = known
      ? `${formatUnits(BigInt(row.amount), known.decimals)} ${known.symbol}`
      : `${row.amount} of ${row.asset}`;
    console.log(`fleet spend: ${row.key} ${spent} in ${row.count} payments`);
  }
} catch (error) {
  if (isX402Error(error)) console.error(`${error.code}: ${error.message}`);
  else throw error;
  process.exitCode = 1;
} finally {
  await redis.close();
}
