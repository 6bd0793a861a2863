// npm run demo -- --serve [--v1] [--solana]
//
// The demo's local stack, kept running for your own code: prints every paid route with its scheme, price
// and network, the facilitator, the chain, the tokens and test keys holding test USDC, then waits
// for Ctrl-C (SIGINT) or SIGTERM, stops everything it started and exits 0. On EVM it serves every seller
// the demos pay: exact (EIP-3009 and Permit2), upto, batch-settlement, the auth-capture (escrow) seller,
// and also the extension seller (sign-in-with-x, payment-identifier, signed offers), the MCP seller and a
// discovery service that catalogues the routes paid through the facilitator. The printed EVM keys have
// approved Permit2 already, so the Permit2, upto and batch-settlement Permit2 routes are payable at once.
//
// The listing is line-oriented so that scripts can read it too: a paid route is
// `  <METHOD>  <url>  <scheme>  <price>  on <network>  <about>`, a key appears as `EVM_PRIVATE_KEY=0x...` or
// `SVM_PRIVATE_KEY=<base58>`, and the listing ends with a line starting `ready`.
import { getBase58Decoder } from "@solana/kit";
import { startDiscoveryService } from "../test/localnet/discovery.js";
import {
  ANVIL_TEST_KEYS,
  AUTH_CAPTURE_ESCROW,
  BATCH_SETTLEMENT,
  FACILITATOR_V1_NETWORK,
  PERMIT2,
  PRICE_ATOMIC,
  SELLER_NETWORK,
  UPTO_MAX_ATOMIC,
  approvePermit2,
  fundedBuyer,
  installAuthCapture,
  newBuyer,
  startAuthCaptureSeller,
  startExtensionSeller,
  startInteropStack,
} from "../test/localnet/index.js";
import { startMcpSeller } from "../test/localnet/mcp.js";
import {
  DEVNET_GENESIS_HASH,
  SOLANA_DEVNET,
  SOLANA_DEVNET_V1,
  TOKEN_2022_PRICE_ATOMIC,
  startSolanaStack,
} from "../test/localnet/svm/index.js";
import { stopStack } from "../test/localnet/cleanup.js";
import { formatUnits } from "x402-pay/protocol";

export interface ServeOptions {
  /** Also start the protocol v1 seller (x402-express 1.x). */
  v1: boolean;
  /** Solana (LiteSVM) instead of the EVM chain. */
  solana: boolean;
}

/** One paid route as a buyer sees it. */
interface PaidRoute {
  method: "GET" | "POST";
  url: string;
  /** The x402 scheme it asks for: `exact`, `upto`, `batch-settlement`, `auth-capture`. */
  scheme: string;
  price: string;
  network: string;
  about: string;
}

/** A running stack and what to print about it. */
interface Served {
  routes: PaidRoute[];
  /** Routes that answer without payment, to check that a seller is up. */
  free: string[];
  /** Routes that take a sign-in instead of a payment. */
  signIn?: string[];
  /** Label and value: sellers, facilitator, chain, tokens. */
  stack: [string, string][];
  /** What the keys hold and why they may be printed. */
  keysNote: string;
  /** Address, and the environment assignment the examples read the key from. */
  keys: [string, string][];
  /** Commands to paste into another terminal. */
  tryIt: string[];
  stop(): Promise<void>;
}

interface SellerInfo {
  url: string;
  payTo: string;
}

/** Given to each printed key, in atomic units of each 6-decimal test token: 10 000 payments of 0.001. */
const FUNDING = 10_000_000n;
const tokens = (atomic: bigint, symbol: string) => `${formatUnits(atomic, 6)} ${symbol}`;
const PRICE_USDC = tokens(PRICE_ATOMIC, "USDC");

/** The v1 seller's paid route, when it runs: `GET /weather` at the same price. */
function v1Route(v1Seller: SellerInfo | undefined, network: string): PaidRoute[] {
  if (!v1Seller) return [];
  return [
    {
      method: "GET",
      url: `${v1Seller.url}/weather`,
      scheme: "exact",
      price: PRICE_USDC,
      network,
      about: "v1 seller (x402-express 1.x): weather report",
    },
  ];
}

/** The lines about the sellers themselves, the same on both chains. */
function sellerLines(seller: SellerInfo, v1Seller: SellerInfo | undefined): Pick<Served, "free" | "stack"> {
  const stack: [string, string][] = [["seller v2", `${seller.url}  (@x402/express; pays to ${seller.payTo})`]];
  const free = [`${seller.url}/free`];
  if (v1Seller) {
    stack.push(["seller v1", `${v1Seller.url}  (x402-express 1.x; pays to ${v1Seller.payTo})`]);
    free.push(`${v1Seller.url}/free`);
  }
  return { stack, free };
}

/** What the auth-capture seller holds in escrow per request, and what it captures of it after answering. */
const HOLD_ATOMIC = 10_000n;

async function evmServed(v1: boolean): Promise<Served> {
  const discovery = await startDiscoveryService();
  const { add, stop } = stopStack();
  add(discovery.stop);
  try {
    // Everything the demos pay: exact (EIP-3009 and Permit2), upto and batch-settlement, through the reference
    // facilitator; auth-capture through a local escrow-flow seller (no reference one ships on npm).
    const stack = await startInteropStack({
      v1,
      permit2: true,
      batchSettlement: true,
      extend: (facilitator) => discovery.catalogue(facilitator),
    });
    add(stack.stop);
    const { seller, v1Seller, facilitator, anvil, usdc } = stack;
    await installAuthCapture(anvil.rpcUrl);
    // The public Anvil keys, so that nothing secret is printed; #1 is the facilitator's, #3 the auth-capture
    // operator's. One after the other: two transactions sent at once from the same dev account can get the same
    // nonce, and anvil then refuses the second as an underpriced replacement. Each approves Permit2 once (anvil's
    // accounts hold ETH for the gas), so the Permit2 routes are payable at once.
    const buyers = [];
    for (const privateKey of [ANVIL_TEST_KEYS[0], ANVIL_TEST_KEYS[2]]) {
      const buyer = await fundedBuyer(usdc, { amount: FUNDING, privateKey });
      await approvePermit2(anvil.rpcUrl, { account: buyer.account, token: usdc.address });
      buyers.push(buyer);
    }
    // The extension seller's signed offers and receipts come from a key made for this run; it is
    // also that seller's payee.
    const [extensions, mcp, authCapture] = await Promise.all([
      startExtensionSeller({ facilitatorUrl: facilitator.url, offerSigner: newBuyer().account }),
      startMcpSeller({ facilitatorUrl: facilitator.url, payTo: seller.payTo }),
      startAuthCaptureSeller({ rpcUrl: anvil.rpcUrl, payTo: seller.payTo, price: HOLD_ATOMIC, charge: PRICE_ATOMIC }),
    ]);
    add(extensions.stop);
    add(mcp.stop);
    add(authCapture.stop);
    const sellers = sellerLines(seller, v1Seller);
    const env = `EVM_PRIVATE_KEY=${buyers[0]!.privateKey}`;
    return {
      routes: evmRoutes({ seller, v1Seller, extensions, authCapture }),
      free: sellers.free,
      signIn: [`${extensions.url}/siwx/profile  (sign-in-with-x only, no payment: answers who signed in)`],
      stack: [
        ...sellers.stack,
        ["auth-capture", `${authCapture.url}  (escrow flow; operator ${authCapture.operator.address})`],
        ["extensions", `${extensions.url}  (@x402/express with @x402/extensions; pays to ${extensions.payTo})`],
        ["MCP", `${mcp.url}  (streamable HTTP; paid tools weather, weather_text, weather_rpc, weather_v1; ping free)`],
        ["discovery", `${discovery.url}  (/discovery/resources, /discovery/search?query=: declared routes once paid)`],
        [
          "facilitator",
          `${facilitator.url}  (GET /supported, POST /verify, POST /settle; settles from ${facilitator.address})`,
        ],
        ["chain", `${anvil.rpcUrl}  chain id ${anvil.chain.id} (anvil, Base Sepolia's id)`],
        ["USDC", `${usdc.address}  6 decimals (TestUSDC with EIP-3009, at Base Sepolia's USDC address)`],
        ["Permit2", `${PERMIT2}  (and the x402 exact and upto proxies, at their canonical addresses)`],
        ["batch", `${BATCH_SETTLEMENT}  (the batch-settlement contract and its deposit collectors)`],
        ["escrow", `${AUTH_CAPTURE_ESCROW}  (the auth-capture escrow v1.1 and its collectors)`],
      ],
      keysNote:
        `public Anvil test keys, each funded with ${tokens(FUNDING, "USDC")} on this chain only, Permit2 approved; ` +
        "EIP-3009 needs no ETH",
      keys: buyers.map((buyer) => [buyer.address, `EVM_PRIVATE_KEY=${buyer.privateKey}`]),
      tryIt: [
        `curl -i ${seller.url}/weather`,
        `${env} npx tsx examples/fetch.ts ${seller.url}/weather`,
        `${env} npx tsx examples/axios.ts ${seller.url}/weather`,
        ...(v1Seller ? [`${env} npx tsx examples/fetch.ts ${v1Seller.url}/weather`] : []),
        `${env} npx tsx examples/mcp.ts ${mcp.url} weather`,
        `${env} npx tsx examples/fetch.ts "${seller.url}/forecast?city=Lisbon"`,
        `npx tsx examples/discovery.ts ${discovery.url}`,
      ],
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Every paid route of the EVM stack, each with its scheme. */
function evmRoutes({
  seller,
  v1Seller,
  extensions,
  authCapture,
}: {
  seller: SellerInfo;
  v1Seller: SellerInfo | undefined;
  extensions: SellerInfo;
  authCapture: SellerInfo;
}): PaidRoute[] {
  const route =
    (base: string, label: string) =>
    (method: PaidRoute["method"], path: string, about: string, { scheme = "exact", price = PRICE_USDC } = {}) => ({
      method,
      url: `${base}${path}`,
      scheme,
      price,
      network: SELLER_NETWORK,
      about: `${label}: ${about}`,
    });
  const v2Route = route(seller.url, "v2 seller");
  const extensionRoute = route(extensions.url, "extension seller");
  const upto = { scheme: "upto", price: `up to ${tokens(UPTO_MAX_ATOMIC, "USDC")}` };
  const batch = { scheme: "batch-settlement" };
  return [
    v2Route("GET", "/weather", "weather report"),
    v2Route("POST", "/echo", "echoes the JSON body"),
    v2Route("GET", "/dynamic", "price rises on every request, so a paid retry is refused (to see a failure)", {
      price: `from ${PRICE_USDC}`,
    }),
    v2Route("GET", "/forecast?city=Lisbon", "declared for discovery (bazaar): listed once paid"),
    v2Route("POST", "/translate", 'declared for discovery (bazaar): JSON body {"text":"hello","to":"pt"}'),
    v2Route("GET", "/permit2/weather", "weather report, paid through Permit2 (exactEvm with permit2Allowance)"),
    v2Route("GET", "/upto/metered?charge=2500", "settles ?charge= base units of the signed maximum (uptoEvm)", upto),
    v2Route("GET", "/batch/weather", "a voucher per call from one deposit, by EIP-3009 (batchSettlementEvm)", batch),
    v2Route("GET", "/batch/permit2", "the same, the deposit through Permit2", batch),
    ...v1Route(v1Seller, FACILITATOR_V1_NETWORK),
    route(authCapture.url, "auth-capture seller")(
      "GET",
      "/weather",
      `holds ${tokens(HOLD_ATOMIC, "USDC")} in escrow, captures ${PRICE_USDC} after answering, voids the rest ` +
        "(authCaptureEvm)",
      { scheme: "auth-capture", price: `${tokens(HOLD_ATOMIC, "USDC")} held` },
    ),
    extensionRoute("GET", "/siwx/weather", "sign-in-with-x: a wallet that paid once signs in on later visits"),
    extensionRoute("GET", "/idempotent/weather", "payment-identifier: a payment resent is not charged"),
    extensionRoute("GET", "/offers/weather", "signed offers in the 402 and a signed receipt (offer-and-receipt)"),
  ];
}

async function solanaServed(v1: boolean): Promise<Served> {
  const stack = await startSolanaStack({ evm: false, v1 });
  try {
    // A fresh key (Solana has no public test keys): it holds nothing outside this local chain.
    const buyer = await stack.fundedBuyer({ amount: FUNDING });
    const { seller, v1Seller, facilitator, rpc, tokens: mints } = stack;
    const sellers = sellerLines(seller, v1Seller);
    const env = `SVM_PRIVATE_KEY=${getBase58Decoder().decode(buyer.secretKey)}`;
    // Without the RPC argument the example would read the mint and a blockhash from the public
    // devnet, which knows nothing of this chain.
    const pay = (url: string) => `${env} npx tsx examples/solana.ts ${url}/weather ${rpc.url}`;
    return {
      routes: [
        {
          method: "GET",
          url: `${seller.url}/weather`,
          scheme: "exact",
          price: PRICE_USDC,
          network: SOLANA_DEVNET,
          about: "v2 seller: weather report",
        },
        {
          method: "GET",
          url: `${seller.url}/weather-2022`,
          scheme: "exact",
          price: tokens(BigInt(TOKEN_2022_PRICE_ATOMIC), "T22"),
          network: SOLANA_DEVNET,
          about: "v2 seller: weather report, paid in the Token-2022 test token",
        },
        ...v1Route(v1Seller, SOLANA_DEVNET_V1),
      ],
      free: sellers.free,
      stack: [
        ...sellers.stack,
        [
          "facilitator",
          `${facilitator.url}  (GET /supported, POST /verify, POST /settle; fee payer ${facilitator.feePayer})`,
        ],
        ["Solana RPC", `${rpc.url}  cluster devnet (genesis hash ${DEVNET_GENESIS_HASH}; LiteSVM)`],
        ["USDC", `${mints.usdc.address}  ${mints.usdc.decimals} decimals (devnet USDC mint, SPL Token)`],
        ["T22", `${mints.token2022.address}  ${mints.token2022.decimals} decimals (Token-2022 test mint)`],
      ],
      keysNote: `generated for this run, funded with ${tokens(FUNDING, "USDC")} and ${tokens(FUNDING, "T22")} on this chain only; no SOL needed`,
      keys: [[buyer.address, env]],
      tryIt: [`curl -i ${seller.url}/weather`, pay(seller.url), ...(v1Seller ? [pay(v1Seller.url)] : [])],
      stop: stack.stop,
    };
  } catch (error) {
    await stack.stop();
    throw error;
  }
}

/** Rows with every column but the last padded to the widest cell, two spaces apart. */
function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0))) ?? [];
  return rows.map(
    (row) => `  ${row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]!) : cell)).join("  ")}`,
  );
}

function print(served: Served): void {
  const lines = [
    "",
    "Paid routes",
    ...table(served.routes.map((r) => [r.method, r.url, r.scheme, r.price, `on ${r.network}`, r.about])),
    `  free (no payment): ${served.free.join("  ")}`,
    ...(served.signIn ?? []).map((line) => `  sign in (no payment): ${line}`),
    "",
    "Stack",
    ...table(served.stack),
    "",
    `Test keys (${served.keysNote})`,
    ...table(served.keys),
    "",
    "Try it from another terminal in this repository",
    ...served.tryIt.map((command) => `  ${command}`),
    "",
    "ready: Ctrl-C stops everything",
  ];
  console.log(lines.join("\n"));
}

/**
 * Resolves with the first SIGINT or SIGTERM. The handlers are removed then, so a second signal
 * ends the process at once; anvil's watchdog (localnet/anvil.ts) still stops anvil.
 */
function untilStopSignal(): Promise<NodeJS.Signals> {
  const signals = ["SIGINT", "SIGTERM"] as const;
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      for (const s of signals) process.off(s, stop);
      resolve(signal);
    };
    for (const s of signals) process.on(s, stop);
  });
}

/** Starts the stack, prints it and serves until SIGINT or SIGTERM; resolves with the exit code. */
export async function serveDemo({ v1, solana }: ServeOptions): Promise<number> {
  const sellers = v1 ? "v2 and v1 sellers" : "v2 seller";
  console.log(
    solana
      ? `starting LiteSVM behind a Solana JSON-RPC endpoint, devnet USDC, the reference facilitator and ${sellers}…`
      : `starting anvil (chain 84532), TestUSDC, Permit2, the batch-settlement and auth-capture contracts, the reference facilitator, ${sellers}, auth-capture, extension and MCP sellers…`,
  );
  let served: Served;
  try {
    served = await (solana ? solanaServed(v1) : evmServed(v1));
  } catch (error) {
    console.error(error);
    return 1;
  }
  const signal = untilStopSignal();
  print(served);
  console.log(`${await signal}: stopping…`);
  await served.stop();
  console.log("stopped");
  return 0;
}
