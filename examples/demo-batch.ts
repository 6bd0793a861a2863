// npm run demo -- --batch
//
// A hundred paid calls from one deposit, on this machine: anvil with TestUSDC and the batch-settlement
// contract (test/localnet), the unmodified reference facilitator and seller (@x402/evm batch-settlement
// behind @x402/express), and a fresh buyer paying with x402-pay's batchSettlementEvm. The first call
// deposits into a channel, the other 99 send vouchers only; then the seller claims and settles, and the
// buyer asks for the unspent rest back (a cooperative refund). Prints the transactions the chain saw
// and the balances of the buyer, the seller and the settlement contract, before and after.
import { createPublicClient, http, type Address } from "viem";
import {
  BATCH_SETTLEMENT,
  PRICE_ATOMIC,
  USDC_BASE_SEPOLIA,
  fundedBuyer,
  startInteropStack,
  type InteropStack,
} from "../test/localnet/index.js";
import { createX402Client, getPaymentReceipt, isX402Error } from "x402-pay";
import { batchSettlementEvm } from "x402-pay/evm";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { formatUnits } from "x402-pay/protocol";

const CALLS = 100;
/** The deposit covers half as many calls again, so that the refund has something to return. */
const DEPOSIT_CALLS = 150;
const usdc = (atomic: bigint) => `${formatUnits(atomic, 6)} USDC`;

/** Runs the batch demo, narrating through `say`; the process's exit code. */
export async function batchDemo(say: (step: string, text?: string) => void): Promise<number> {
  let stack: InteropStack | undefined;
  try {
    say("start", "anvil (chain 84532), TestUSDC, the batch-settlement contract, reference facilitator and seller");
    stack = await startInteropStack({ batchSettlement: true });
    const { batch, seller } = stack;
    const chain = createPublicClient({ transport: http(stack.anvil.rpcUrl), cacheTime: 0 });
    const buyer = await fundedBuyer(stack.usdc);
    const holders: [string, Address][] = [
      ["buyer", buyer.address],
      ["seller", seller.payTo],
      ["contract", BATCH_SETTLEMENT],
    ];
    const balances = () => Promise.all(holders.map(([, owner]) => batch!.tokenBalance(USDC_BASE_SEPOLIA, owner)));
    const before = await balances();
    say("buyer", `${buyer.address} funded with ${usdc(before[0]!)} (a fresh key; no gas money needed)`);

    // Every transaction from here on is counted, block by block (anvil mines one block per transaction).
    const firstBlock = (await chain.getBlockNumber()) + 1n;
    const scheme = batchSettlementEvm({
      signer: buyer.account,
      rpc: stack.anvil.rpcUrl,
      deposit: { multiple: DEPOSIT_CALLS },
    });
    const client = createX402Client({ schemes: [scheme], policy: { maxAmountPerPayment: "$0.20" } });
    const pay = wrapFetchWithPayment(fetch, client);
    const url = `${seller.url}/batch/weather`;

    say("calls", `${CALLS} × GET ${url} at ${usdc(PRICE_ATOMIC)} each`);
    const started = performance.now();
    for (let call = 1; call <= CALLS; call++) {
      const response = await pay(url);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`call ${call} answered ${response.status}`);
      const receipt = getPaymentReceipt(response);
      if (call === 1)
        say(
          "deposit",
          `the first call deposits ${usdc(BigInt(receipt?.deposit ?? 0))} into channel ${receipt?.channel?.id}` +
            ` (transaction ${receipt?.transaction})`,
        );
      if (call === CALLS)
        say(
          "vouchers",
          `calls 2 to ${CALLS}: a voucher each, no transaction; the channel has charged ` +
            `${usdc(BigInt(receipt?.channel?.charged ?? 0))} of ${usdc(BigInt(receipt?.channel?.balance ?? 0))}` +
            ` (${((performance.now() - started) / CALLS).toFixed(1)} ms a call)`,
        );
    }
    const afterCalls = await chain.getBlockNumber();

    const { claims, settle } = await seller.batch!.manager.claimAndSettle();
    const claimed = claims.map((claim) => claim.transaction).join(", ");
    say("claim", `the seller claims its vouchers (${claimed}) and settles (${settle?.transaction ?? "nothing"})`);

    const refund = await scheme.refund(url, { through: pay }); // through the stack that paid
    say("refund", `the buyer asks for the rest back: ${usdc(BigInt(refund.refunded))} (${refund.transaction})`);

    const lastBlock = await chain.getBlockNumber();
    const transactionsIn = async (from: bigint, to: bigint) => {
      let count = 0;
      for (let block = from; block <= to; block++)
        count += (await chain.getBlock({ blockNumber: block })).transactions.length;
      return count;
    };
    const during = await transactionsIn(firstBlock, afterCalls);
    const transactions = during + (await transactionsIn(afterCalls + 1n, lastBlock));
    say(
      "chain",
      `${transactions} transactions in all: ${during} during the ${CALLS} calls, the rest claim, settle, refund`,
    );

    const after = await balances();
    for (const [i, [who]] of holders.entries())
      say(i === 0 ? "balances" : "", `${who.padEnd(8)} ${usdc(before[i]!)} -> ${usdc(after[i]!)}`);

    const spent = BigInt(CALLS) * PRICE_ATOMIC;
    const ok =
      before[0]! - after[0]! === spent &&
      after[1]! - before[1]! === spent &&
      after[2] === before[2] &&
      during === 1 &&
      transactions === 4;
    say(
      ok ? "done" : "FAILED",
      ok
        ? `paid exactly ${CALLS} calls, from one deposit, in 4 transactions`
        : "balances or transactions are not as expected",
    );
    return ok ? 0 : 1;
  } catch (error) {
    console.error(isX402Error(error) ? `${error.code}: ${error.message}` : error);
    return 1;
  } finally {
    await stack?.stop();
  }
}
