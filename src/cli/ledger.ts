/** `x402-pay ledger`: spend by a grouping and the outcomes to reconcile, in human amounts where the asset is known. */
import { fileLedger } from "../file";
import { spendBy, unreconciled, type SpendGrouping } from "../extensions/ledger";
import { amountOf } from "./assets";
import { EXIT } from "./exit";
import { checkLedgerToRead } from "./files";
import type { CliIo } from "./index";
import { UsageError, shown } from "./output";

export interface LedgerOptions {
  ledger?: string;
  by: SpendGrouping;
  json?: boolean;
}

export async function showLedger(options: LedgerOptions, io: CliIo): Promise<number> {
  const path = options.ledger ?? io.env.X402_LEDGER;
  if (!path) throw new UsageError("Which ledger? --ledger FILE, or X402_LEDGER.");
  await checkLedgerToRead(path, options.ledger ? "--ledger" : "X402_LEDGER");
  const ledger = fileLedger(path);
  const [spend, open] = await Promise.all([spendBy(ledger, options.by), unreconciled(ledger)]);
  if (options.json) {
    const rows = spend.map((row) => ({ ...row, displayAmount: amountOf(row.amount, row.network, row.asset) }));
    await io.writeOut(`${JSON.stringify({ by: options.by, spend: rows, unreconciled: open })}\n`);
    return EXIT.ok;
  }
  const lines = [`Spend by ${options.by} (settled):`];
  if (spend.length === 0) lines.push("  nothing settled yet");
  for (const row of spend) {
    const count = `${row.count} payment${row.count === 1 ? "" : "s"}`;
    const amount = amountOf(row.amount, row.network, row.asset);
    lines.push(`  ${row.key || "(all)"}  ${amount} on ${row.network}  (${count})`);
  }
  lines.push(`Outcomes to reconcile: ${open.length}`);
  for (const record of open) {
    const amount = record.amount === undefined ? "?" : amountOf(record.amount, record.network, record.asset ?? "?");
    const where = `${record.method} ${record.url}`;
    lines.push(`  ${record.time}  ${where}  ${amount} on ${record.network ?? "?"}  payer ${record.payer ?? "?"}`);
  }
  await io.writeOut(shown(`${lines.join("\n")}\n`));
  return EXIT.ok;
}
