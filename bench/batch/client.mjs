// One paying client in its own process, so its CPU time is its own (run.ts starts it, one per sample).
//   --side ours-batch | ours-batch-cached | ours-exact | reference-batch
//   --url <paid route>  --rpc <chain>  --n N  --warmup W
// The keys come from the environment (BENCH_WARMUP_KEY, BENCH_KEY: fresh keys run.ts funded with test USDC).
// It makes W paid GETs with the warm-up key (a channel of its own), prints `{"warm":true}`, waits for a line
// on stdin (run.ts claims the warm-up channel meanwhile and notes where the chain is), then makes N sequential
// paid GETs with the measured key (a fresh channel: the first call deposits) and prints one JSON line: each
// call's ms and the CPU µs the N calls took. Ours is imported from dist/ through the package's own exports.
import { once } from "node:events";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { privateKeyToAccount } from "viem/accounts";

const { values } = parseArgs({
  options: {
    side: { type: "string" },
    url: { type: "string" },
    rpc: { type: "string" },
    n: { type: "string", default: "100" },
    warmup: { type: "string", default: "20" },
  },
});
const n = Number(values.n);
/** Deposits sized for the measured run: one deposit covers every call of it, for both batch clients. */
const CALLS_PER_DEPOSIT = BigInt(n);

/** A fetch paying as `values.side`, from `account`, written as each README has a user write it. */
async function paying(account) {
  if (values.side.startsWith("ours-")) {
    const [{ createX402Client, quoteCache }, { wrapFetchWithPayment }, { batchSettlementEvm, exactEvm }] =
      await Promise.all([import("x402-pay"), import("x402-pay/fetch"), import("x402-pay/evm")]);
    const scheme = values.side.startsWith("ours-batch")
      ? batchSettlementEvm({ signer: account, rpc: values.rpc, deposit: { multiple: Number(CALLS_PER_DEPOSIT) } })
      : exactEvm({ signer: account });
    const plugins = values.side === "ours-batch-cached" ? [quoteCache()] : [];
    return wrapFetchWithPayment(fetch, createX402Client({ schemes: [scheme], plugins }));
  }
  if (values.side === "reference-batch") {
    const [{ toClientEvmSigner }, { BatchSettlementEvmScheme }, { wrapFetchWithPayment, x402Client }, viem] =
      await Promise.all([
        import("@x402/evm"),
        import("@x402/evm/batch-settlement/client"),
        import("@x402/fetch"),
        import("viem"),
      ]);
    const chain = viem.createPublicClient({ transport: viem.http(values.rpc) });
    // The seller announces minDeposit (10 calls), which the reference deposits unless told otherwise:
    // the strategy sizes its deposit as ours, for the whole run.
    const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, chain), {
      depositStrategy: ({ requestAmount, minimumDepositAmount }) => {
        const wanted = BigInt(requestAmount) * CALLS_PER_DEPOSIT;
        return wanted > BigInt(minimumDepositAmount) ? wanted : BigInt(minimumDepositAmount);
      },
    });
    return wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", scheme));
  }
  throw new Error(`unknown --side ${values.side}`);
}

/** One paid GET, its body read; throws unless it was answered 200. */
async function call(pay) {
  const response = await pay(values.url);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`${values.side}: answered ${response.status}: ${body.slice(0, 200)}`);
}

const warm = await paying(privateKeyToAccount(process.env.BENCH_WARMUP_KEY));
const measured = await paying(privateKeyToAccount(process.env.BENCH_KEY));
for (let i = 0; i < Number(values.warmup); i++) await call(warm);
console.log(JSON.stringify({ warm: true }));
const stdin = createInterface({ input: process.stdin });
await once(stdin, "line");
stdin.close();

const ms = [];
const before = process.cpuUsage();
for (let i = 0; i < n; i++) {
  const start = performance.now();
  await call(measured);
  ms.push(performance.now() - start);
}
const { user, system } = process.cpuUsage(before);
console.log(JSON.stringify({ ms, cpuUs: user + system }));
