// npm run demo [-- --axios | --v1]
//
// A real paid request, end to end, on this machine: a local anvil chain (Base Sepolia's chain id)
// with a test USDC, the unmodified reference facilitator and seller (@x402/*), and a fresh buyer
// paying with x402-pay. Prints what happens at each step, then stops everything it started.
import axios from "axios";
import { createPublicClient, http, type Hash } from "viem";
import {
  PRICE_ATOMIC,
  fundedBuyer,
  startInteropStack,
  type InteropStack,
} from "../localnet/index.js";
import {
  createX402Client,
  decodeBase64Json,
  formatUnits,
  getPaymentReceipt,
  isX402Error,
  parseChallenge,
  type PaymentReceipt,
} from "x402-pay";
import { wrapAxiosWithPayment } from "x402-pay/axios";
import { exactEvm } from "x402-pay/evm";
import { wrapFetchWithPayment } from "x402-pay/fetch";

const useAxios = process.argv.includes("--axios");
const useV1 = process.argv.includes("--v1");
const started = performance.now();
const say = (step: string, text = "") => console.log(`${`[${((performance.now() - started) / 1000).toFixed(2)}s]`.padEnd(9)}${step.padEnd(11)}${text}`);
const usdc = (atomic: bigint) => `${formatUnits(atomic, 6)} USDC`;
const short = (hex: string) => `${hex.slice(0, 10)}…${hex.slice(-8)}`;

let stack: InteropStack | undefined;
try {
  say("start", `anvil (chain 84532), TestUSDC at the Base Sepolia USDC address, reference facilitator and ${useV1 ? "v1 x402-express" : "v2 @x402/express"} seller`);
  stack = await startInteropStack({ v1: useV1 });
  const seller = useV1 ? stack.v1Seller! : stack.seller;
  const buyer = await fundedBuyer(stack.usdc);
  say("buyer", `${buyer.address} funded with ${usdc(await stack.usdc.usdcBalance(buyer.address))} (a fresh key; no ETH needed)`);
  const before = { buyer: await stack.usdc.usdcBalance(buyer.address), seller: await stack.usdc.usdcBalance(seller.payTo) };

  const client = createX402Client({
    schemes: [exactEvm({ signer: buyer.account })],
    policy: { maxAmountPerPayment: "$0.10", networks: ["eip155:84532"] },
    onBeforePayment: (payment) => {
      say("choose", `${payment.scheme} on ${payment.network} (v${payment.x402Version}): ${payment.displayAmount} to ${payment.payTo}`);
      say("", `why: exactEvm serves eip155:* and v1/v2; the policy allows eip155:84532 and caps a payment at $0.10`);
    },
  });

  // A fetch that narrates what goes over the wire; x402-pay wraps it like any other fetch.
  const tracingFetch: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const paid = headers.get("payment-signature") ?? headers.get("x-payment");
    if (paid) {
      const decoded = decodeBase64Json(paid);
      const payload = decoded.ok ? (decoded.value as { payload: { signature: string; authorization: Record<string, string> } }).payload : undefined;
      say("sign", `EIP-3009 transferWithAuthorization, nonce ${short(payload?.authorization.nonce ?? "")}, valid until ${new Date(Number(payload?.authorization.validBefore) * 1000).toISOString()}`);
      say("", `signature ${short(payload?.signature ?? "")}`);
      say("retry", `${init?.method ?? "GET"} ${String(input)} with ${headers.has("payment-signature") ? "PAYMENT-SIGNATURE" : "X-PAYMENT"} (${paid.length} bytes)`);
    } else {
      say("request", `${init?.method ?? "GET"} ${String(input)}`);
    }
    const response = await fetch(input, init);
    if (response.status === 402) {
      const header = response.headers.get("payment-required");
      const challenge = parseChallenge({ header, body: header ? undefined : await response.clone().text() });
      for (const r of challenge.requirements) {
        say("402", `v${challenge.x402Version} offers ${r.scheme} on ${r.network}: ${usdc(BigInt(r.amount))} of ${r.asset} to ${r.payTo}`);
      }
    } else {
      say("response", `${response.status} ${response.statusText}`);
    }
    return response;
  };

  const url = `${seller.url}/weather`;
  let receipt: PaymentReceipt | undefined;
  let resource: unknown;
  if (useAxios) {
    say("request", `GET ${url} (axios)`);
    const response = await wrapAxiosWithPayment(axios.create(), client).get(url);
    say("response", `${response.status}`);
    resource = response.data;
    receipt = getPaymentReceipt(response);
  } else {
    const response = await wrapFetchWithPayment(tracingFetch, client)(url);
    resource = await response.json();
    receipt = getPaymentReceipt(response);
  }

  const chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
  const tx = receipt?.transaction as Hash | undefined;
  const mined = tx ? await chain.getTransactionReceipt({ hash: tx }) : undefined;
  say("settle", `transaction ${tx ?? "(none reported)"}: ${mined ? `${mined.status} in block ${mined.blockNumber}` : "not found"}`);
  const after = { buyer: await stack.usdc.usdcBalance(buyer.address), seller: await stack.usdc.usdcBalance(seller.payTo) };
  say("balances", `buyer  ${usdc(before.buyer)} -> ${usdc(after.buyer)}`);
  say("", `seller ${usdc(before.seller)} -> ${usdc(after.seller)}`);
  say("resource", JSON.stringify(resource));

  const ok = mined?.status === "success" && before.buyer - after.buyer === PRICE_ATOMIC && after.seller - before.seller === PRICE_ATOMIC;
  say(ok ? "done" : "FAILED", ok ? "paid exactly the price, once" : "balances or settlement are not as expected");
  process.exitCode = ok ? 0 : 1;
} catch (error) {
  console.error(isX402Error(error) ? `${error.code}: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  await stack?.stop();
}
