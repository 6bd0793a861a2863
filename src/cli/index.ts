/**
 * `npx x402-pay <url>`: curl for paid resources. The library's own user: `createX402Client`,
 * `wrapFetchWithPayment`, the spend policy (`--max`, `--network`), a JSONL ledger. The body goes to
 * stdout (or `-o`) as it arrives, progress and the payment trace to stderr, and the exit code says what
 * happened (exit.ts). Keys come from the environment or a file and are never printed; nothing the CLI
 * prints echoes key material (output.ts). Every run is bounded by `--max-time` (run.ts).
 */
import { Command, CommanderError, Option } from "commander";
import { isX402Error } from "../errors";
import type { SpendGrouping } from "../extensions/ledger";
import { discover, type DiscoverOptions } from "./discover";
import { EXIT, EXIT_TABLE, exitCodeOf } from "./exit";
import { showLedger } from "./ledger";
import { CliFailure, shown, word } from "./output";
import { messageOf, pay, type PayOptions } from "./pay";
import { DEFAULT_MAX_TIME_SECONDS } from "./run";

export { DEFAULT_MAX_TIME_SECONDS };

/** Where the CLI reads and writes: the process's, or a test's. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The answer's bytes; a promise when the reader is slower (backpressure), which rejects if it went away. */
  writeOut(chunk: string | Uint8Array): void | Promise<void>;
  writeErr(text: string): void;
  /** Is stderr a terminal (progress redraws in place) or a pipe (plain lines)? */
  readonly errIsTTY: boolean;
  /** Standard input, at most `maxBytes` (more is refused). */
  readStdin(maxBytes: number): Promise<Uint8Array>;
  /** Fires on Ctrl-C. */
  readonly signal: AbortSignal;
}

const MONEY_MAY_HAVE_MOVED =
  "MONEY MAY HAVE MOVED: the payment left and no answer confirmed or refused it, or its answer was lost. " +
  "Check the payer's balance or the ledger (x402-pay ledger) before paying again.";

const HELP_AFTER = [
  "",
  "Keys: EVM_PRIVATE_KEY (0x + 64 hex) and SVM_PRIVATE_KEY (base58), or --evm-key-file / --svm-key-file.",
  "Exit codes:",
  ...EXIT_TABLE.map(([code, what]) => `  ${String(code).padStart(3)}  ${what}`),
].join("\n");

const collect = (value: string, list: string[]) => [...list, value];
const GROUPINGS: SpendGrouping[] = ["origin", "payee", "day", "asset"];
const maxTimeHelp = (what: string) => `longest ${what} may take (default ${DEFAULT_MAX_TIME_SECONDS}; 0: no limit)`;

/** Runs the CLI with `argv` (after `node cli.js`); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command("x402-pay")
    .description("Fetch a URL, paying an x402 402 Payment Required answer within your limits.")
    .exitOverride()
    // Options after a subcommand are its own (`ledger --ledger F`, `discover --json`), not the URL form's.
    .enablePositionalOptions()
    // Commander's own messages (an unknown option, a bad choice) echo what was typed: they are redacted too.
    .configureOutput({
      writeOut: (text) => void Promise.resolve(io.writeOut(shown(text))).catch(() => {}),
      writeErr: (text) => io.writeErr(shown(text)),
    })
    .showHelpAfterError("(x402-pay --help for usage)")
    .addHelpText("after", HELP_AFTER);

  program
    .argument("<url>", "the resource")
    .option("-X, --request <method>", "HTTP method (default GET, POST with --data)")
    .option("-H, --header <header>", "a request header, 'Name: value' (repeatable)", collect, [])
    .option("-d, --data <data>", "request body; @file reads a file, @- reads stdin (at most 100 MiB)")
    .option("-o, --output <file>", "write the body (or the --json object) to a file as it arrives, not to stdout")
    .option("-i, --include", "print the status line and headers before the body")
    .option("--json", "print one JSON object as the body arrives: status, headers, payment, then body (or bodyBase64)")
    .option("--max <usd>", "largest payment allowed, in USD (default $1, the library's cap)")
    .option("--network <caip2>", "pay only on this network (repeatable; patterns such as eip155:*)", collect, [])
    .option("--dry-run", "send the request unpaid and show what would be paid, and why not; signs nothing")
    .option("--max-time <seconds>", maxTimeHelp("the whole run, body included,"))
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
    .addOption(new Option("--by <grouping>", "group spend by").choices(GROUPINGS).default("origin"))
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
    .option("--max-pages <n>", "stop after n pages (default 100)")
    .option("--max-time <seconds>", maxTimeHelp("the whole listing"))
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

/** Says what went wrong on stderr (through the redaction); the exit code of it. */
function report(error: unknown, io: CliIo): number {
  const say = (text: string) => io.writeErr(`x402-pay: ${shown(text)}\n`);
  if (error instanceof CliFailure) {
    say(error.message);
    if (error.moneyMayHaveMoved) say(MONEY_MAY_HAVE_MOVED);
    return error.exitCode;
  }
  const code = exitCodeOf(error);
  if (isX402Error(error)) {
    say(`${error.code}: ${error.message}`);
    // A transaction the server reported, printed whole: the way to check on the payment.
    const transaction = (error.details as { transaction?: unknown } | undefined)?.transaction;
    if (typeof transaction === "string" && transaction !== "") {
      io.writeErr(`x402-pay: transaction ${word(transaction)}\n`);
    }
    if (code === EXIT.unknown) say(MONEY_MAY_HAVE_MOVED);
  } else {
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
    say(`${messageOf(error)}${cause}`);
  }
  return code;
}
