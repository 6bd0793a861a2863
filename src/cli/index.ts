/**
 * `npx x402-pay <url>`: curl for paid resources. The library's own user: `createX402Client`,
 * `wrapFetchWithPayment`, the spend policy (`--max`, `--network`), a JSONL ledger. The body goes to
 * stdout (or `-o`), progress and the payment trace to stderr, and the exit code says what happened
 * (exit.ts). Keys come from the environment or a file and are never printed.
 */
import { readFile, writeFile } from "node:fs/promises";
import { Command, CommanderError, Option } from "commander";
import { createX402Client, type X402Client } from "../client";
import type { PaymentScheme } from "../contracts";
import { isX402Error, redactSecrets, type AnyX402Error } from "../errors";
import { fileLedger } from "../file";
import { wrapFetchWithPayment } from "../fetch";
import { getPaymentReceipt } from "../handshake";
import { spendBy, unreconciled, type SpendGrouping } from "../extensions/ledger";
import { PAYMENT_REQUIRED_HEADER, formatUnits, parseChallenge, type PaymentChallenge } from "../protocol";
import { EXIT, EXIT_TABLE, exitCodeOf } from "./exit";
import { createDiscoveryClient, quoteListing } from "../discovery";

/** Where the CLI reads and writes: the process's, or a test's. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  writeOut(chunk: string | Uint8Array): void;
  writeErr(text: string): void;
  /** Is stderr a terminal (progress redraws in place) or a pipe (plain lines)? */
  readonly errIsTTY: boolean;
  readStdin(): Promise<Uint8Array>;
  /** Fires on Ctrl-C. */
  readonly signal: AbortSignal;
}

/** A mistake in what the user typed or gave: exit 2, with a message that shows no secret. */
class UsageError extends Error {}

/** Runs the CLI with `argv` (after `node cli.js`); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command("x402-pay")
    .description("Fetch a URL, paying an x402 402 Payment Required answer within your limits.")
    .exitOverride()
    // Options after a subcommand are its own (`ledger --ledger F`, `discover --json`), not the URL form's.
    .enablePositionalOptions()
    .configureOutput({ writeOut: (text) => io.writeOut(text), writeErr: (text) => io.writeErr(text) })
    .showHelpAfterError("(x402-pay --help for usage)")
    .addHelpText("after", `\nKeys: EVM_PRIVATE_KEY (0x + 64 hex) and SVM_PRIVATE_KEY (base58), or --evm-key-file / --svm-key-file.\nExit codes:\n${EXIT_TABLE.map(([c, what]) => `  ${String(c).padStart(3)}  ${what}`).join("\n")}`);

  program
    .argument("<url>", "the resource")
    .option("-X, --request <method>", "HTTP method (default GET, POST with --data)")
    .option("-H, --header <header>", "a request header, 'Name: value' (repeatable)", collect, [])
    .option("-d, --data <data>", "request body; @file reads a file, @- reads stdin")
    .option("-o, --output <file>", "write the body to a file instead of stdout")
    .option("-i, --include", "print the status line and headers before the body")
    .option("--json", "print one JSON object: status, headers, body, payment")
    .option("--max <usd>", "largest payment allowed, in USD (default $1, the library's cap)")
    .option("--network <caip2>", "pay only on this network (repeatable; patterns such as eip155:*)", collect, [])
    .option("--dry-run", "send the request unpaid and show what would be paid, and why not; signs nothing")
    .option("-s, --quiet", "no progress on stderr")
    .option("--ledger <file>", "append every payment outcome to this JSONL file (or X402_LEDGER)")
    .addOption(new Option("--evm-key-file <file>", "file holding the EVM private key (hex)"))
    .addOption(new Option("--svm-key-file <file>", "file holding the Solana key (base58, or a JSON byte array)"))
    .option("--svm-rpc <url>", "Solana RPC endpoint (default: the cluster's public one)")
    .action(async (url: string, options: PayOptions) => {
      code = await pay(url, options, io);
    });

  program
    .command("ledger")
    .description("spend and unreconciled outcomes recorded in a ledger file")
    .option("--ledger <file>", "the JSONL ledger (or X402_LEDGER)")
    .addOption(new Option("--by <grouping>", "group spend by").choices(["origin", "payee", "day", "asset"]).default("origin"))
    .option("--json", "print JSON")
    .action(async (options: { ledger?: string; by: SpendGrouping; json?: boolean }) => {
      code = await showLedger(options, io);
    });

  program
    .command("discover")
    .description("list (or search) what a facilitator's discovery endpoint sells, and whether you would pay it")
    .argument("<facilitator>", "the facilitator's URL")
    .argument("[query...]", "search words")
    .option("--type <type>", "http or mcp")
    .option("--network <caip2>", "only listings on this network")
    .option("--max <usd>", "the largest payment your quote allows (default $1)")
    .option("--max-items <n>", "stop after n listings", "50")
    .option("--json", "print JSON lines")
    .action(async (facilitator: string, query: string[], options: DiscoverOptions) => {
      code = await discover(facilitator, query, options, io);
    });

  try {
    await program.parseAsync(argv as string[], { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return report(error, io);
  }
}

interface PayOptions {
  request?: string;
  header: string[];
  data?: string;
  output?: string;
  include?: boolean;
  json?: boolean;
  max?: string;
  network: string[];
  dryRun?: boolean;
  quiet?: boolean;
  ledger?: string;
  evmKeyFile?: string;
  svmKeyFile?: string;
  svmRpc?: string;
}

interface DiscoverOptions {
  type?: string;
  network?: string;
  max?: string;
  maxItems: string;
  json?: boolean;
}

const collect = (value: string, list: string[]) => [...list, value];

/** One paid (or dry) request. */
async function pay(url: string, options: PayOptions, io: CliIo): Promise<number> {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new UsageError(`${JSON.stringify(url)} is not an http(s) URL.`);
  const progress = createProgress(io, options.quiet || options.json === true);
  const headers = new Headers();
  for (const header of options.header) {
    const at = header.indexOf(":");
    if (at <= 0) throw new UsageError(`-H ${JSON.stringify(header)} is not 'Name: value'.`);
    try {
      headers.append(header.slice(0, at).trim(), header.slice(at + 1).trim());
    } catch {
      throw new UsageError(`-H ${JSON.stringify(header)} is not a valid header.`);
    }
  }
  const body = options.data === undefined ? undefined : await readData(options.data, io);
  if (body && !headers.has("content-type")) headers.set("content-type", "application/x-www-form-urlencoded");
  const method = (options.request ?? (body ? "POST" : "GET")).toUpperCase();
  const init: RequestInit = { method, headers, ...(body && { body: body as Uint8Array<ArrayBuffer> }), signal: io.signal };

  const failures: AnyX402Error[] = [];
  const client = await makeClient(options, io, {
    onBeforePayment: (payment) => {
      progress.line(`paying ${payment.displayAmount ?? `${payment.amount} base units of ${payment.asset}`} on ${payment.network} to ${payment.payTo} from ${payment.payer}`);
      progress.wait("waiting for the paid answer");
      return true;
    },
    onPaymentSettled: (receipt) =>
      progress.line(receipt.settled ? `settled${receipt.transaction ? `: transaction ${receipt.transaction}` : ""}` : "answered without a settlement report: the payment may or may not have settled"),
    onPaymentFailed: (error) => void failures.push(error),
  });

  if (options.dryRun) return dryRun(client, url, init, options, io, progress);

  // Each send shows on stderr: the first request, the 402, the paid one and its answer.
  const tracing: typeof fetch = async (input, sendInit) => {
    const paid = new Headers(sendInit?.headers).has("payment-signature") || new Headers(sendInit?.headers).has("x-payment");
    progress.wait(`${sendInit?.method ?? "GET"} ${String(input)}${paid ? " (paid)" : ""}`);
    const response = await fetch(input, sendInit);
    progress.line(`${paid ? "paid request" : "request"}: ${response.status} ${response.statusText}`.trim());
    return response;
  };
  let response: Response;
  try {
    response = await wrapFetchWithPayment(tracing, client)(url, init);
  } finally {
    progress.done();
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const receipt = getPaymentReceipt(response);
  if (options.json) {
    const text = utf8OrUndefined(bytes);
    io.writeOut(
      `${JSON.stringify({
        status: response.status,
        headers: Object.fromEntries(response.headers),
        ...(text !== undefined ? { body: text } : { bodyBase64: Buffer.from(bytes).toString("base64") }),
        payment: receipt ? { ...receipt, requirement: undefined } : null,
      })}\n`,
    );
  } else {
    if (options.include) io.writeOut(`HTTP ${response.status} ${response.statusText}\r\n${[...response.headers].map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`);
    if (options.output) await writeFile(options.output, bytes);
    else io.writeOut(bytes);
  }
  const unknown = failures.find((e) => e.code === "PAYMENT_OUTCOME_UNKNOWN" || e.code === "PAYMENT_PENDING");
  if (unknown) return report(unknown, io);
  return response.ok ? EXIT.ok : EXIT.http;
}

/** The request sent unpaid; a 402 is read and quoted with the client's rules, nothing signed. */
async function dryRun(client: X402Client, url: string, init: RequestInit, options: PayOptions, io: CliIo, progress: Progress): Promise<number> {
  progress.wait(`${init.method} ${url} (unpaid)`);
  const response = await fetch(url, init).finally(() => progress.done());
  if (response.status !== 402) {
    void response.body?.cancel().catch(() => {});
    if (options.json) io.writeOut(`${JSON.stringify({ status: response.status, asked: false })}\n`);
    else io.writeErr(`No payment asked: ${url} answered ${response.status}.\n`);
    return response.ok ? EXIT.ok : EXIT.http;
  }
  const header = response.headers.get(PAYMENT_REQUIRED_HEADER);
  const challenge: PaymentChallenge = parseChallenge({ header, body: header ? undefined : await boundedText(response), contentType: response.headers.get("content-type") });
  if (header) void response.body?.cancel().catch(() => {});
  const { options: payable, rejected } = await client.quote(challenge, { url: response.url || url, method: init.method ?? "GET", signal: io.signal });
  const rows = [
    ...payable.map((o) => ({ index: o.requirement.index, verdict: o === payable[0] ? "would pay" : "payable", amount: show(o.requirement.amount, o.asset), network: o.requirement.network, payTo: o.requirement.payTo, reason: "" })),
    ...rejected.map((r) => ({ index: r.index, verdict: `refused (${r.code})`, amount: String(r.amount ?? ""), network: String(r.network ?? ""), payTo: String(r.payTo ?? ""), reason: r.reason })),
  ].sort((a, b) => a.index - b.index);
  if (options.json) io.writeOut(`${JSON.stringify({ status: 402, asked: true, x402Version: challenge.x402Version, wouldPay: payable.length > 0, options: rows })}\n`);
  else {
    io.writeErr(`${url} asks for payment (x402 v${challenge.x402Version}); nothing was signed:\n`);
    for (const row of rows) io.writeErr(`  #${row.index} ${row.verdict}: ${row.amount} on ${row.network} to ${row.payTo}${row.reason ? ` (${row.reason})` : ""}\n`);
  }
  return payable.length > 0 ? EXIT.ok : EXIT.refused;
}

/** `1000` of a 6-decimal stablecoin → `0.001 USDC`; else the base units and the asset. */
function show(amount: string, asset: { decimals: number; symbol: string } | undefined): string {
  return asset ? `${formatUnits(BigInt(amount), asset.decimals)} ${asset.symbol}` : `${amount} base units`;
}

async function boundedText(response: Response): Promise<string> {
  const text = await response.text();
  return text.length > 1024 * 1024 ? "" : text;
}

function utf8OrUndefined(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** `--data`: the text, `@file`'s bytes, or stdin's for `@-`. */
async function readData(data: string, io: CliIo): Promise<Uint8Array> {
  if (!data.startsWith("@")) return new TextEncoder().encode(data);
  if (data === "@-") return io.readStdin();
  try {
    return new Uint8Array(await readFile(data.slice(1)));
  } catch {
    throw new UsageError(`--data ${data}: the file cannot be read.`);
  }
}

/** A client with the wallets the environment or key files give, the policy of the options, and the ledger. */
async function makeClient(
  options: { max?: string; network?: string[] | string; ledger?: string; evmKeyFile?: string; svmKeyFile?: string; svmRpc?: string; dryRun?: boolean },
  io: CliIo,
  hooks: Pick<Parameters<typeof createX402Client>[0], "onBeforePayment" | "onPaymentSettled" | "onPaymentFailed"> = {},
): Promise<X402Client> {
  const schemes = await wallets(options, io);
  const networks = options.network === undefined ? [] : ([] as string[]).concat(options.network);
  const ledgerPath = options.ledger ?? io.env.X402_LEDGER;
  return createX402Client({
    schemes,
    policy: { ...(options.max !== undefined && { maxAmountPerPayment: options.max.startsWith("$") ? options.max : `$${options.max}` }), ...(networks.length > 0 && { networks }) },
    ...(ledgerPath && { plugins: [fileLedger(ledgerPath)] }),
    ...hooks,
  });
}

/** The payment schemes of the keys given; without any key, only a quote (a throwaway EVM key that never signs) is possible. */
async function wallets(options: { evmKeyFile?: string; svmKeyFile?: string; svmRpc?: string; dryRun?: boolean }, io: CliIo): Promise<PaymentScheme[]> {
  const schemes: PaymentScheme[] = [];
  const evmKey = options.evmKeyFile ? await secretFile(options.evmKeyFile, "--evm-key-file") : io.env.EVM_PRIVATE_KEY;
  const svmKey = options.svmKeyFile ? await secretFile(options.svmKeyFile, "--svm-key-file") : io.env.SVM_PRIVATE_KEY;
  if (evmKey !== undefined || svmKey === undefined) {
    const { privateKeyToAccount, generatePrivateKey } = await importPeer<typeof import("viem/accounts")>("viem/accounts", "viem");
    const { exactEvm } = await import("../evm");
    const key = evmKey?.trim();
    if (key !== undefined && !/^(0x)?[0-9a-fA-F]{64}$/.test(key)) throw new UsageError(`The EVM key (${options.evmKeyFile ? "--evm-key-file" : "EVM_PRIVATE_KEY"}) is not 32 bytes of hex.`);
    if (key === undefined && !options.dryRun) throw new UsageError("No key: set EVM_PRIVATE_KEY or SVM_PRIVATE_KEY (or --evm-key-file / --svm-key-file). --dry-run needs none.");
    const account = privateKeyToAccount((key ? (key.startsWith("0x") ? key : `0x${key}`) : generatePrivateKey()) as `0x${string}`);
    schemes.push(exactEvm({ signer: account }));
  }
  if (svmKey !== undefined) {
    const kit = await importPeer<typeof import("@solana/kit")>("@solana/kit", "@solana/kit");
    const { exactSvm } = await import("../svm");
    const text = svmKey.trim();
    let bytes: Uint8Array;
    try {
      bytes = text.startsWith("[") ? new Uint8Array(JSON.parse(text) as number[]) : new Uint8Array(kit.getBase58Encoder().encode(text));
    } catch {
      throw new UsageError(`The Solana key (${options.svmKeyFile ? "--svm-key-file" : "SVM_PRIVATE_KEY"}) is neither base58 nor a JSON byte array.`);
    }
    if (bytes.length !== 64) throw new UsageError(`The Solana key (${options.svmKeyFile ? "--svm-key-file" : "SVM_PRIVATE_KEY"}) is not 64 bytes.`);
    const signer = await kit.createKeyPairSignerFromBytes(bytes).catch(() => {
      throw new UsageError("The Solana key is not a valid key pair.");
    });
    schemes.push(exactSvm({ signer, ...(options.svmRpc && { rpc: options.svmRpc }) }));
  }
  return schemes;
}

async function secretFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch {
    throw new UsageError(`${flag} ${path}: the file cannot be read.`);
  }
}

async function importPeer<T>(specifier: string, pkg: string): Promise<T> {
  try {
    return (await import(specifier)) as T;
  } catch {
    throw new UsageError(`This needs ${pkg}: npm install ${pkg} (next to x402-pay).`);
  }
}

/** `x402-pay ledger`: spend by a grouping, and the outcomes still to reconcile. */
async function showLedger(options: { ledger?: string; by: SpendGrouping; json?: boolean }, io: CliIo): Promise<number> {
  const path = options.ledger ?? io.env.X402_LEDGER;
  if (!path) throw new UsageError("Which ledger? --ledger FILE, or X402_LEDGER.");
  try {
    await readFile(path);
  } catch {
    throw new UsageError(`--ledger ${path}: the file cannot be read.`);
  }
  const ledger = fileLedger(path);
  const [spend, open] = await Promise.all([spendBy(ledger, options.by), unreconciled(ledger)]);
  if (options.json) {
    io.writeOut(`${JSON.stringify({ by: options.by, spend, unreconciled: open })}\n`);
    return EXIT.ok;
  }
  io.writeOut(`Spend by ${options.by} (settled):\n`);
  if (spend.length === 0) io.writeOut("  nothing settled yet\n");
  for (const row of spend) io.writeOut(`  ${row.key || "(all)"}  ${row.amount} base units of ${row.asset} on ${row.network}  (${row.count} payment${row.count === 1 ? "" : "s"})\n`);
  io.writeOut(`Outcomes to reconcile: ${open.length}\n`);
  for (const record of open) io.writeOut(`  ${record.time}  ${record.method} ${record.url}  ${record.amount ?? "?"} of ${record.asset ?? "?"} on ${record.network ?? "?"}  payer ${record.payer ?? "?"}\n`);
  return EXIT.ok;
}

/** `x402-pay discover`: listings with the quote of each. */
async function discover(facilitator: string, query: string[], options: DiscoverOptions, io: CliIo): Promise<number> {
  const maxItems = Number(options.maxItems);
  if (!Number.isSafeInteger(maxItems) || maxItems < 1) throw new UsageError("--max-items must be a whole number above 0.");
  const client = await makeClient({ ...(options.max !== undefined && { max: options.max }), dryRun: true }, io);
  const discovery = createDiscoveryClient({ url: facilitator });
  const filter = { ...(options.type && { type: options.type }), ...(options.network && { network: options.network }), maxItems, signal: io.signal };
  const listings = query.length > 0 ? discovery.search(query.join(" "), filter) : discovery.resources(filter);
  let count = 0;
  for await (const listing of listings) {
    count++;
    const quote = await quoteListing(client, listing);
    const first = listing.challenge.requirements[0]!;
    if (options.json) {
      io.writeOut(`${JSON.stringify({ key: listing.key, resource: listing.resource, tool: listing.tool, type: listing.type, metadata: listing.metadata, wouldPay: !!quote.payable, rejected: quote.rejected.map((r) => r.reason) })}\n`);
    } else {
      const price = quote.payable ? show(quote.payable.requirement.amount, quote.payable.asset) : `${first.amount} base units`;
      io.writeOut(`${listing.key}${listing.metadata.name ? `  ${listing.metadata.name}` : ""}\n  ${price} on ${first.caip2 ?? first.network}: ${quote.payable ? "would pay" : `would not pay (${quote.rejected.map((r) => r.reason).join("; ")})`}\n`);
    }
  }
  if (!options.json && count === 0) io.writeErr("Nothing listed.\n");
  return EXIT.ok;
}

/** Says what went wrong on stderr (keys scrubbed); the exit code of it. */
function report(error: unknown, io: CliIo): number {
  if (error instanceof UsageError) {
    io.writeErr(`x402-pay: ${error.message}\n`);
    return EXIT.usage;
  }
  const code = exitCodeOf(error);
  const message = redactSecrets(error instanceof Error ? error.message : String(error));
  if (isX402Error(error)) {
    io.writeErr(`x402-pay: ${error.code}: ${message}\n`);
    if (error.code === "PAYMENT_OUTCOME_UNKNOWN") {
      io.writeErr("x402-pay: MONEY MAY HAVE MOVED: the payment left and no answer confirmed or refused it. Check the payer's balance or the ledger (x402-pay ledger) before paying again.\n");
    }
    if (error.code === "PAYMENT_PENDING") {
      io.writeErr(`x402-pay: MONEY MAY STILL MOVE: the settlement transaction ${error.details.transaction} on ${error.details.network} is not yet confirmed. Look it up before paying again.\n`);
    }
  } else io.writeErr(`x402-pay: ${message}${error instanceof Error && error.cause instanceof Error ? ` (${redactSecrets(error.cause.message)})` : ""}\n`);
  return code;
}

/** Progress on stderr: a line redrawn in place on a terminal, plain lines in a pipe. */
interface Progress {
  /** Something under way (a spinner on a terminal). */
  wait(text: string): void;
  /** A line of the trace, kept. */
  line(text: string): void;
  done(): void;
}

function createProgress(io: CliIo, quiet: boolean): Progress {
  if (quiet) return { wait: () => {}, line: () => {}, done: () => {} };
  if (!io.errIsTTY) return { wait: (text) => io.writeErr(`x402-pay: ${text}\n`), line: (text) => io.writeErr(`x402-pay: ${text}\n`), done: () => {} };
  const frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
  let waiting: string | undefined;
  let frame = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const draw = () => waiting !== undefined && io.writeErr(`\r\x1b[K${frames[frame++ % frames.length]} ${waiting}`);
  const clear = () => {
    if (waiting !== undefined) io.writeErr("\r\x1b[K");
    waiting = undefined;
  };
  return {
    wait(text) {
      waiting = text;
      draw();
      timer ??= setInterval(draw, 80);
      timer.unref?.();
    },
    line(text) {
      clear();
      io.writeErr(`✔ ${text}\n`);
    },
    done() {
      clearInterval(timer);
      timer = undefined;
      clear();
    },
  };
}
