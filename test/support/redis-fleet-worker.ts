/**
 * One process of the Redis fleet test (test/http/redis-fleet.test.ts), forked with tsx: a wallet of
 * its own (a fresh random key) and a Redis connection, then, for each run the parent sends
 * `{ prefix, payments, lanes }`, that many paid requests to the seller through a real x402-pay client
 * whose budget (`$1`) lives in Redis under `prefix`, `lanes` at a time. Answers what it paid, what
 * its wallet signed and the codes of the errors it met. argv: the Redis URL, the seller's URL.
 */
import { createClient } from "redis";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createX402Client } from "../../src";
import { exactEvm, type TypedDataRequest } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { redisBudgetStore } from "../../src/redis";
import { budget } from "../../src";

export interface FleetRun {
  readonly prefix: string;
  readonly payments: number;
  readonly lanes: number;
}

export interface FleetResult {
  readonly paid: number;
  readonly signed: number;
  /** Error code (or message) → how many times. */
  readonly errors: Readonly<Record<string, number>>;
}

const [redisUrl, sellerUrl] = process.argv.slice(2) as [string, string];
const redis = createClient({ url: redisUrl });
redis.on("error", () => undefined);
await redis.connect();
// The parent going away ends this process.
process.on("disconnect", () => process.exit(0));

const account = privateKeyToAccount(generatePrivateKey());
let signed = 0;
const signer = {
  address: account.address,
  signTypedData: (request: TypedDataRequest) => (signed++, account.signTypedData(request as never)),
};

process.on("message", async ({ prefix, payments, lanes }: FleetRun) => {
  signed = 0;
  // Eight processes signing on two shared CPUs can stall an answer past the default timeout: that
  // refuses a payment (BUDGET_UNAVAILABLE), which is not what this test is about.
  const store = redisBudgetStore(redis, { prefix, timeoutMs: 10_000 });
  const client = createX402Client({ schemes: [exactEvm({ signer })], plugins: [budget({ limit: "$1", store })] });
  const pay = wrapFetchWithPayment(fetch, client);
  let started = 0;
  let paid = 0;
  const errors: Record<string, number> = {};
  const lane = async () => {
    while (started < payments) {
      started++;
      try {
        const response = await pay(sellerUrl);
        await response.arrayBuffer();
        if (response.status === 200) paid++;
        else errors[`status ${response.status}`] = (errors[`status ${response.status}`] ?? 0) + 1;
      } catch (error) {
        const code = (error as { code?: string }).code ?? String(error);
        errors[code] = (errors[code] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  process.send!({ paid, signed, errors } satisfies FleetResult);
});
process.send!("ready");
