// npm run demo [-- --axios] [-- --v1 | --solana | --permit2 | --upto] | -- --batch | -- --serve [--v1] [--solana]
//
// A real paid request, end to end, on this machine: a local chain (anvil with Base Sepolia's chain
// id and a test USDC, or with --solana a LiteSVM-backed Solana RPC with devnet USDC), the unmodified
// reference facilitator and seller (@x402/*), and a fresh buyer paying with x402-pay. Prints what
// happens at each step, then stops everything it started. --permit2 pays `exact` through Permit2
// (after the buyer's one-time approval), --upto pays a metered route that settles less than the
// signed maximum. --batch makes 100 calls from one batch-settlement deposit, then the seller claims
// and settles and the buyer takes the rest back (examples/demo-batch.ts). With --serve it keeps the
// stack running for your own code instead, every seller the demos pay with it, and prints how to reach
// it (examples/demo-serve.ts). Options that do not go together are refused (exit 2); --help prints them.
import axios from "axios";
import { createPublicClient, createWalletClient, http, toHex, type Hash } from "viem";
import { PRICE_ATOMIC, UPTO_MAX_ATOMIC, fundedBuyer, rpc, startInteropStack } from "../test/localnet/index.js";
import { startSolanaStack } from "../test/localnet/svm/index.js";
import { createX402Client, getPaymentReceipt, isX402Error, type PaymentReceipt, type PaymentScheme } from "x402-pay";
import { decodeBase64Json, formatUnits, parseChallenge } from "x402-pay/protocol";
import { wrapAxiosWithPayment } from "x402-pay/axios";
import { exactEvm, permit2Allowance, permit2ApprovalTransaction, uptoEvm } from "x402-pay/evm";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { exactSvm } from "x402-pay/svm";
import { batchDemo } from "./demo-batch.js";
import { HELP, readFlags } from "./demo-flags.js";
import { serveDemo } from "./demo-serve.js";

const read = readFlags(process.argv.slice(2));
if ("refused" in read) {
  console.error(`npm run demo: ${read.refused}.\n\n${HELP}`);
  process.exit(2);
}
const { flags } = read;
const useAxios = flags.has("--axios");
const useV1 = flags.has("--v1");
const useSolana = flags.has("--solana");
const usePermit2 = flags.has("--permit2");
const useUpto = flags.has("--upto");
const useBatch = flags.has("--batch");
/** What the metered route charges of its maximum in the --upto demo. */
const UPTO_CHARGE = 2_500n;
const serve = flags.has("--serve");
const help = flags.has("--help") || flags.has("-h");
const started = performance.now();
const say = (step: string, text = "") =>
  console.log(`${`[${((performance.now() - started) / 1000).toFixed(2)}s]`.padEnd(9)}${step.padEnd(11)}${text}`);
const usdc = (atomic: bigint) => `${formatUnits(atomic, 6)} USDC`;
const short = (text: string) => `${text.slice(0, 10)}…${text.slice(-8)}`;

/** One chain with its seller, facilitator and a funded buyer, as the demo needs it. */
interface World {
  sellerUrl: string;
  /** The paid route, and the atomic amount it should move. */
  path: string;
  expected: bigint;
  buyer: string;
  scheme: PaymentScheme;
  why: string;
  balances(): Promise<{ buyer: bigint; seller: bigint }>;
  /** Describes the signed payload. */
  describePayment(payload: Record<string, unknown>): string[];
  /** Looks the settlement up on chain. */
  confirm(transaction: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

async function evmWorld(): Promise<World> {
  const stack = await startInteropStack({ v1: useV1, permit2: usePermit2 || useUpto });
  const seller = useV1 ? stack.v1Seller! : stack.seller;
  const buyer = await fundedBuyer(stack.usdc);
  const chain = createPublicClient({ chain: stack.anvil.chain, transport: http(stack.anvil.rpcUrl) });
  const permit2 = permit2Allowance({ rpc: stack.anvil.rpcUrl });
  if (usePermit2 || useUpto) {
    // Permit2 moves the token only with the buyer's allowance: one approval transaction, once per
    // token (the only step that needs gas money; a sponsoring server can cover it instead).
    const amount = usePermit2 ? PRICE_ATOMIC : UPTO_MAX_ATOMIC;
    await rpc(stack.anvil.rpcUrl, "anvil_setBalance", [buyer.address, toHex(10n ** 16n)]);
    const wallet = createWalletClient({
      account: buyer.account,
      chain: stack.anvil.chain,
      transport: http(stack.anvil.rpcUrl),
    });
    const hash = await wallet.sendTransaction(permit2ApprovalTransaction({ token: stack.usdc.address, amount }));
    await chain.waitForTransactionReceipt({ hash });
    say(
      "approve",
      `the buyer lets Permit2 move ${usdc(amount)}: permit2ApprovalTransaction, sent once (${short(hash)})`,
    );
  }
  return {
    sellerUrl: seller.url,
    path: useUpto ? `/upto/metered?charge=${UPTO_CHARGE}` : usePermit2 ? "/permit2/weather" : "/weather",
    expected: useUpto ? UPTO_CHARGE : PRICE_ATOMIC,
    buyer: buyer.address,
    scheme: useUpto ? uptoEvm({ signer: buyer.account, permit2 }) : exactEvm({ signer: buyer.account, permit2 }),
    why: useUpto
      ? "uptoEvm pays at most the signed maximum; the policy weighs that maximum against its $0.10 cap"
      : "exactEvm serves eip155:* and v1/v2; the policy caps a payment at $0.10",
    balances: async () => ({
      buyer: await stack.usdc.usdcBalance(buyer.address),
      seller: await stack.usdc.usdcBalance(seller.payTo),
    }),
    describePayment: (payload) => {
      if ("permit2Authorization" in payload) {
        const { permit2Authorization: p, signature } = payload as { permit2Authorization: any; signature: string };
        return [
          `Permit2 witness transfer of at most ${usdc(BigInt(p.permitted.amount))} to ${p.witness.to}, spender ${p.spender}`,
          `${p.witness.facilitator ? `settled only by ${p.witness.facilitator}, ` : ""}valid until ${new Date(Number(p.deadline) * 1000).toISOString()}, signature ${short(signature)}`,
        ];
      }
      const { authorization: a, signature } = payload as { authorization: Record<string, string>; signature: string };
      return [
        `EIP-3009 transferWithAuthorization of ${usdc(BigInt(a.value!))} to ${a.to}, nonce ${short(a.nonce!)}`,
        `valid until ${new Date(Number(a.validBefore) * 1000).toISOString()}, signature ${short(signature)}`,
      ];
    },
    confirm: async (tx) => {
      const receipt = await chain.getTransactionReceipt({ hash: tx as Hash }).catch(() => undefined);
      return receipt && `${receipt.status} in block ${receipt.blockNumber}`;
    },
    stop: stack.stop,
  };
}

async function solanaWorld(): Promise<World> {
  const stack = await startSolanaStack({ evm: false });
  const buyer = await stack.fundedBuyer({ mints: [stack.tokens.usdc] });
  return {
    sellerUrl: stack.seller.url,
    path: "/weather",
    expected: PRICE_ATOMIC,
    buyer: buyer.address,
    scheme: exactSvm({ signer: buyer.signer, rpc: stack.rpc.url }),
    why: "exactSvm serves solana:* and v1/v2; the policy caps a payment at $0.10",
    balances: async () => ({
      buyer: await stack.tokens.balance(stack.tokens.usdc, buyer.address),
      seller: await stack.tokens.balance(stack.tokens.usdc, stack.seller.payTo),
    }),
    describePayment: (payload) => [
      `a v0 transaction: compute budget, TransferChecked, memo; ${atob(String(payload.transaction)).length} bytes`,
      "signed by the buyer only: the facilitator pays the fee and signs as fee payer when it settles",
    ],
    confirm: async (signature) => {
      const landed = stack.rpc.getTransaction(signature);
      return landed && `${landed.err === null ? "success" : "failed"} in slot ${landed.slot}`;
    },
    stop: stack.stop,
  };
}

/** The one paid request, narrated; sets the exit code. */
async function payOnce(): Promise<void> {
  let world: World | undefined;
  try {
    say(
      "start",
      useSolana
        ? "LiteSVM behind a Solana JSON-RPC endpoint, devnet USDC, reference facilitator and @x402/express seller"
        : `anvil (chain 84532), TestUSDC at the Base Sepolia USDC address, reference facilitator and ${useV1 ? "v1 x402-express" : "v2 @x402/express"} seller`,
    );
    world = await (useSolana ? solanaWorld() : evmWorld());
    const before = await world.balances();
    say(
      "buyer",
      `${world.buyer} funded with ${usdc(before.buyer)} (a fresh key; ${usePermit2 || useUpto ? "gas only for the approval above" : "no gas money needed"})`,
    );

    const w = world;
    const client = createX402Client({
      schemes: [w.scheme],
      policy: { maxAmountPerPayment: "$0.10" },
      onBeforePayment: (payment) => {
        say(
          "choose",
          `${payment.scheme} on ${payment.network} (v${payment.x402Version}): ${payment.displayAmount} to ${payment.payTo}`,
        );
        say("", `why: ${w.why}`);
      },
    });

    // A fetch that narrates what goes over the wire; x402-pay wraps it like any other fetch.
    const tracingFetch: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      const paid = headers.get("payment-signature") ?? headers.get("x-payment");
      if (paid) {
        const decoded = decodeBase64Json(paid);
        const payload = decoded.ok ? (decoded.value as { payload: Record<string, unknown> }).payload : {};
        for (const [i, line] of w.describePayment(payload).entries()) say(i === 0 ? "sign" : "", line);
        say(
          "retry",
          `${init?.method ?? "GET"} ${String(input)} with ${headers.has("payment-signature") ? "PAYMENT-SIGNATURE" : "X-PAYMENT"} (${paid.length} bytes)`,
        );
      } else {
        say("request", `${init?.method ?? "GET"} ${String(input)}`);
      }
      const response = await fetch(input, init);
      if (response.status === 402) {
        const header = response.headers.get("payment-required");
        const challenge = parseChallenge({ header, body: header ? undefined : await response.clone().text() });
        for (const r of challenge.requirements) {
          say(
            "402",
            `v${challenge.x402Version} offers ${r.scheme} on ${r.network}: ${usdc(BigInt(r.amount))} of ${r.asset} to ${r.payTo}`,
          );
        }
      } else {
        say("response", `${response.status} ${response.statusText}`);
      }
      return response;
    };

    const url = `${w.sellerUrl}${w.path}`;
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

    const tx = receipt?.transaction;
    const confirmed = tx ? await w.confirm(tx) : undefined;
    say("settle", `transaction ${tx ?? "(none reported)"}: ${confirmed ?? "not found"}`);
    const after = await w.balances();
    say("balances", `buyer  ${usdc(before.buyer)} -> ${usdc(after.buyer)}`);
    say("", `seller ${usdc(before.seller)} -> ${usdc(after.seller)}`);
    say("resource", JSON.stringify(resource));
    if (receipt?.upTo)
      say(
        "receipt",
        `signed up to ${usdc(BigInt(receipt.amount))}, settled ${receipt.settledAmount === undefined ? "(not reported)" : usdc(BigInt(receipt.settledAmount))}`,
      );

    const ok =
      !!confirmed?.startsWith("success") &&
      before.buyer - after.buyer === w.expected &&
      after.seller - before.seller === w.expected;
    say(
      ok ? "done" : "FAILED",
      ok
        ? useUpto
          ? "paid exactly what was used, once"
          : "paid exactly the price, once"
        : "balances or settlement are not as expected",
    );
    process.exitCode = ok ? 0 : 1;
  } catch (error) {
    console.error(isX402Error(error) ? `${error.code}: ${error.message}` : error);
    process.exitCode = 1;
  } finally {
    await world?.stop();
  }
}

if (help) console.log(HELP);
else if (serve) process.exitCode = await serveDemo({ v1: useV1, solana: useSolana });
else if (useBatch) process.exitCode = await batchDemo(say);
else await payOnce();
