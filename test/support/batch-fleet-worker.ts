/**
 * One process of the batch-settlement fleet tests (test/interop/batch-fleet.test.ts), forked with tsx: a buyer paying
 * the reference seller with batchSettlementEvm whose channels live in a shared store (Redis or a directory). For each
 * run the parent sends `{ privateKey, calls, lanes }` (the same key in every process: one channel), it makes that many
 * calls, `lanes` at a time, and answers what went over the wire: each paid request's payload (type and voucher
 * amount) and the status it got, the seller's 402s to paid requests (their error) and how many requests it sent.
 * argv: "redis" or "file", the Redis URL or the directory, the seller's URL, the chain's RPC URL.
 */
import { createClient } from "redis";
import { privateKeyToAccount } from "viem/accounts";
import { createX402Client, getPaymentReceipt } from "../../src";
import type { ChannelStore } from "../../src/contracts";
import { batchSettlementEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { fileChannelStore } from "../../src/file";
import { redisChannelStore } from "../../src/redis";

export interface BatchFleetRun {
  readonly privateKey: `0x${string}`;
  readonly calls: number;
  readonly lanes: number;
}

export interface BatchFleetResult {
  /** Paid requests, in the order this process sent them. */
  readonly paid: readonly { readonly type: string; readonly max: string; readonly status: number }[];
  /** The `error` of every 402 answering a paid request. */
  readonly refusals: readonly string[];
  /** Every request sent, paid or not. */
  readonly requests: number;
  /** Calls that did not end in a 200 (error code or status). */
  readonly failures: readonly string[];
  /** The channels the receipts named. */
  readonly channels: readonly string[];
}

const [kind, where, sellerUrl, rpcUrl] = process.argv.slice(2) as [string, string, string, string];
let store: ChannelStore;
if (kind === "redis") {
  const redis = createClient({ url: where });
  redis.on("error", () => undefined);
  await redis.connect();
  // Four processes on two shared CPUs: a long lock keeps a stalled holder's lock from expiring under it.
  store = redisChannelStore(redis, { prefix: "fleet:", lockTtlMs: 30_000, timeoutMs: 10_000 });
} else {
  store = fileChannelStore(where);
}
process.on("disconnect", () => process.exit(0));

const decode = (header: string) => JSON.parse(Buffer.from(header, "base64").toString("utf8"));

process.on("message", async ({ privateKey, calls, lanes }: BatchFleetRun) => {
  const paid: { type: string; max: string; status: number }[] = [];
  const refusals: string[] = [];
  const failures: string[] = [];
  const channels = new Set<string>();
  let requests = 0;
  const watching: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    requests++;
    const signature = request.headers.get("PAYMENT-SIGNATURE");
    const response = await fetch(request);
    if (signature) {
      const { payload } = decode(signature);
      paid.push({ type: payload.type, max: payload.voucher.maxClaimableAmount, status: response.status });
      const required = response.headers.get("PAYMENT-REQUIRED");
      if (response.status === 402) refusals.push(required ? String(decode(required).error) : "402");
    }
    return response;
  };
  const scheme = batchSettlementEvm({
    signer: privateKeyToAccount(privateKey),
    rpc: rpcUrl,
    deposit: { multiple: 500 },
    storage: store,
  });
  const client = createX402Client({ schemes: [scheme], policy: { maxAmountPerPayment: "$1" } });
  const pay = wrapFetchWithPayment(watching, client);
  let started = 0;
  const lane = async () => {
    while (started < calls) {
      started++;
      try {
        const response = await pay(sellerUrl);
        await response.arrayBuffer();
        const channel = getPaymentReceipt(response)?.channel?.id;
        if (channel) channels.add(channel);
        if (response.status !== 200) failures.push(`status ${response.status}`);
      } catch (error) {
        failures.push((error as { code?: string }).code ?? String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  process.send!({ paid, refusals, requests, failures, channels: [...channels] } satisfies BatchFleetResult);
});
process.send!("ready");
