/**
 * `x402-pay <url>`: one paid (or dry) request. What must hold for the answer to be kept (the output
 * file, the ledger) is checked before anything is sent; the answer streams to stdout or `-o`; the
 * whole run is bounded by `--max-time`, and a failure after the payment left is exit 8.
 */
import type { X402Client } from "../client";
import { isX402Error, raceAbort, type AnyX402Error } from "../errors";
import { wrapFetchWithPayment } from "../fetch";
import { getPaymentReceipt, readBody } from "../handshake";
import { PAYMENT_REQUIRED_HEADER, parseChallenge } from "../protocol";
import { BodyReadError, streamBody, streamJson } from "./answer";
import { amountOf } from "./assets";
import { EXIT } from "./exit";
import { DATA_BYTES, checkLedgerPath, readBounded } from "./files";
import type { CliIo } from "./index";
import { CliFailure, OutputError, UsageError, createProgress, fileSink, shown, stdoutSink, word } from "./output";
import type { Progress, Sink } from "./output";
import { deadline, makeClient, type Deadline } from "./run";
import type { WalletOptions } from "./wallets";

export interface PayOptions extends WalletOptions {
  request?: string;
  header: string[];
  data?: string;
  output?: string;
  include?: boolean;
  json?: boolean;
  max?: string;
  network: string[];
  dryRun?: boolean;
  maxTime?: string;
  quiet?: boolean;
  ledger?: string;
}

const UNSURE = "the payment may or may not have settled";

// RFC 9110 token characters: a method is one word, never a place for anything else.
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/;

/** The request's headers from `-H`; a malformed one is a usage error. */
function requestHeaders(given: readonly string[]): Headers {
  const headers = new Headers();
  for (const header of given) {
    const at = header.indexOf(":");
    if (at <= 0) throw new UsageError(`-H ${JSON.stringify(header)} is not 'Name: value'.`);
    try {
      headers.append(header.slice(0, at).trim(), header.slice(at + 1).trim());
    } catch {
      throw new UsageError(`-H ${JSON.stringify(header)} is not a valid header.`);
    }
  }
  return headers;
}

export async function pay(url: string, options: PayOptions, io: CliIo): Promise<number> {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new UsageError(`${JSON.stringify(url)} is not an http(s) URL.`);
  }
  if (options.request !== undefined && !METHOD.test(options.request)) {
    throw new UsageError("-X takes an HTTP method, one word such as GET or POST (at most 20 characters).");
  }
  const run = deadline(options.maxTime, io.signal);
  const progress = createProgress(io, options.quiet || options.json === true);
  const headers = requestHeaders(options.header);
  // What must hold for the answer to be kept is checked before anything is sent: the ledger and the output file.
  const ledgerPath = options.ledger ?? io.env.X402_LEDGER;
  if (ledgerPath && !options.dryRun) await checkLedgerPath(ledgerPath, options.ledger ? "--ledger" : "X402_LEDGER");
  const toStdout = options.dryRun || options.output === undefined || options.output === "-";
  const sink = toStdout ? stdoutSink(io) : await fileSink(options.output!);
  let paymentLeft = false;
  try {
    const body = options.data === undefined ? undefined : await readData(options.data, io, run.signal);
    if (body && !headers.has("content-type")) headers.set("content-type", "application/x-www-form-urlencoded");
    const method = (options.request ?? (body ? "POST" : "GET")).toUpperCase();
    const sent = body && { body: body as Uint8Array<ArrayBuffer> };
    const init: RequestInit = { method, headers, signal: run.signal, ...sent };

    const failures: AnyX402Error[] = [];
    const client = await makeClient({ ...options, quoteOnly: options.dryRun }, io, {
      onBeforePayment: (payment) => {
        const amount = payment.displayAmount ?? `${payment.amount} base units of ${payment.asset}`;
        progress.line(`paying ${amount} on ${payment.network} to ${payment.payTo} from ${payment.payer}`);
        progress.wait("waiting for the paid answer");
        return true;
      },
      // The transaction is the server's, printed whole (a Solana signature has the shape of a secret key).
      onPaymentSettled: (receipt) => {
        if (!receipt.settled) progress.line(`answered without a settlement report: ${UNSURE}`);
        else if (receipt.transaction) progress.line("settled: transaction ", word(receipt.transaction));
        else progress.line("settled");
      },
      onPaymentFailed: (error) => void failures.push(error),
    });

    if (options.dryRun) return await dryRun(client, { url, init }, options, { io, progress });

    // Each send shows on stderr: the first request, the 402, the paid one and its answer.
    const tracing: typeof fetch = async (input, sendInit) => {
      const sent = new Headers(sendInit?.headers);
      const paid = sent.has("payment-signature") || sent.has("x-payment");
      paymentLeft ||= paid;
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
    await writeAnswer(response, options, { io, sink, signal: run.signal });
    await sink.finish();
    const unknown = failures.find((e) => e.code === "PAYMENT_OUTCOME_UNKNOWN" || e.code === "PAYMENT_PENDING");
    if (unknown) throw unknown;
    return response.ok ? EXIT.ok : EXIT.http;
  } catch (error) {
    await sink.abandon();
    throw explain(error, { run, paymentLeft, written: sink.written });
  }
}

/** The answer to the sink: `--json`'s object, or (after `-i`'s head on stdout) the body, streamed. */
async function writeAnswer(
  response: Response,
  options: PayOptions,
  { io, sink, signal }: { io: CliIo; sink: Sink; signal: AbortSignal },
) {
  const receipt = getPaymentReceipt(response);
  await sink.begin();
  if (options.json) {
    const payment = receipt ? { ...receipt, requirement: undefined } : null;
    const head = { status: response.status, headers: Object.fromEntries(response.headers), payment };
    await streamJson(head, response.body, sink, signal);
    return;
  }
  if (options.include) {
    const head = [...response.headers].map(([name, value]) => `${name}: ${value}\r\n`).join("");
    await io.writeOut(`HTTP ${response.status} ${response.statusText}\r\n${head}\r\n`);
  }
  await streamBody(response.body, sink, signal);
}

/** What a failure of a run means, with what is known: did a payment leave, did `--max-time` run out. */
function explain(error: unknown, state: { run: Deadline; paymentLeft: boolean; written: number }): unknown {
  if (error instanceof CliFailure && !(error instanceof OutputError)) return error;
  const timedOut = state.run.timedOut();
  const limit = `--max-time (${state.run.seconds} s) ran out`;
  const money = (message: string) => new CliFailure(message, EXIT.unknown, { cause: error, moneyMayHaveMoved: true });
  // The library's own word stands (a refusal, a rejection, an unknown outcome); an abort is this run's.
  if (isX402Error(error) && error.code !== "ABORTED") {
    const unknown = timedOut && error.code === "PAYMENT_OUTCOME_UNKNOWN";
    return unknown ? money(`${limit} after the payment left: ${error.code}: ${error.message}`) : error;
  }
  const written = state.written > 0 ? ` (${state.written} bytes of the answer written)` : "";
  if (state.paymentLeft) {
    if (timedOut) return money(`${limit} after the payment left${written}.`);
    if (error instanceof OutputError) return money(`${error.message.slice(0, -1)}, after the payment left${written}.`);
    if (error instanceof BodyReadError) return money(`The paid ${error.message}, after the payment left${written}.`);
    return money(`The run stopped (${messageOf(error)}) after the payment left${written}.`);
  }
  if (timedOut) {
    const message = `No whole answer within --max-time ${state.run.seconds} s${written}: nothing was paid.`;
    return new CliFailure(message, EXIT.timeout, { cause: error });
  }
  if (error instanceof BodyReadError) {
    return new CliFailure(`The ${error.message}${written}.`, EXIT.network, { cause: error });
  }
  return error;
}

export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The request sent unpaid; a 402 is read (bounded, as the library reads it) and quoted with the
 * client's rules, nothing signed.
 */
async function dryRun(
  client: X402Client,
  { url, init }: { url: string; init: RequestInit },
  options: PayOptions,
  { io, progress }: { io: CliIo; progress: Progress },
): Promise<number> {
  const signal = init.signal ?? undefined;
  progress.wait(`${init.method} ${url} (unpaid)`);
  const response = await fetch(url, init).finally(() => progress.done());
  if (response.status !== 402) {
    void response.body?.cancel().catch(() => {});
    if (options.json) await io.writeOut(`${JSON.stringify({ status: response.status, asked: false })}\n`);
    else io.writeErr(`No payment asked: ${shown(url)} answered ${response.status}.\n`);
    return response.ok ? EXIT.ok : EXIT.http;
  }
  const header = response.headers.get(PAYMENT_REQUIRED_HEADER);
  if (header) void response.body?.cancel().catch(() => {});
  // At most 1 MiB and 10 s, and never past the run's signal: the library's bounds for a 402 body.
  const body = header ? undefined : await readBody(response.body, signal);
  const challenge = parseChallenge({ header, body, contentType: response.headers.get("content-type") });
  const quote = await client.quote(challenge, { url: response.url || url, method: init.method ?? "GET", signal });
  const payable = quote.options.map((o) => {
    const { index, amount, caip2, asset, network, payTo } = o.requirement;
    const verdict = o === quote.options[0] ? "would pay" : "payable";
    return { index, verdict, amount: amountOf(amount, caip2, asset), network, payTo, reason: "" };
  });
  const refused = quote.rejected.map((r) => {
    const [amount, network, payTo] = [r.amount, r.network, r.payTo].map((v) => String(v ?? ""));
    const verdict = `refused (${r.code})`;
    return { index: r.index, verdict, amount: amount!, network: network!, payTo: payTo!, reason: r.reason };
  });
  const rows = [...payable, ...refused].sort((a, b) => a.index - b.index);
  const wouldPay = payable.length > 0;
  if (options.json) {
    const { x402Version } = challenge;
    await io.writeOut(`${JSON.stringify({ status: 402, asked: true, x402Version, wouldPay, options: rows })}\n`);
  } else {
    io.writeErr(shown(`${url} asks for payment (x402 v${challenge.x402Version}); nothing was signed:\n`));
    for (const row of rows) {
      const reason = row.reason ? ` (${row.reason})` : "";
      io.writeErr(shown(`  #${row.index} ${row.verdict}: ${row.amount} on ${row.network} to ${row.payTo}${reason}\n`));
    }
  }
  return wouldPay ? EXIT.ok : EXIT.refused;
}

/** `--data`: the text, `@file`'s bytes, or stdin's for `@-`; at most 100 MiB, within the run's time. */
async function readData(data: string, io: CliIo, signal: AbortSignal): Promise<Uint8Array> {
  if (!data.startsWith("@")) return new TextEncoder().encode(data);
  const reading = data === "@-" ? io.readStdin(DATA_BYTES) : readBounded(data.slice(1), DATA_BYTES, "--data @");
  return raceAbort(reading, signal);
}
