/**
 * `checkSettlement(client, source)`: settles the question a pending settlement or an unknown outcome
 * leaves open, by asking the chain through the scheme that paid (its RPC), never the server.
 */
import { schemesFor, type PaymentScheme, type SettlementQuery, type SettlementStatus } from "../contracts";
import { InvalidConfigError, isX402Error, throwIfAborted } from "../errors";

/**
 * What `checkSettlement` takes: the error of a pending or unknown outcome, a ledger record or a receipt of one, or the
 * query itself.
 */
export type SettlementSource =
  | { readonly code: "PAYMENT_PENDING" | "PAYMENT_OUTCOME_UNKNOWN"; readonly details: object }
  | {
      readonly outcome: string;
      readonly scheme?: string | undefined;
      readonly network?: string | undefined;
      readonly transaction?: string | undefined;
      readonly asset?: string | undefined;
      readonly payee?: string | undefined;
      readonly payer?: string | undefined;
      readonly amount?: string | undefined;
    }
  | SettlementQuery;

const USAGE =
  "give it a PAYMENT_PENDING or PAYMENT_OUTCOME_UNKNOWN error, or a ledger record of one (unreconciled(ledger))";

/** The query a source describes; v1 network names are read as their CAIP-2 ids. */
function toSettlementQuery(source: SettlementSource, v1Networks: Readonly<Record<string, string>>): SettlementQuery {
  const caip2 = (network: unknown) =>
    typeof network === "string" && Object.hasOwn(v1Networks, network) ? v1Networks[network]! : network;
  let query: Partial<Record<keyof SettlementQuery, unknown>>;
  if (isX402Error(source)) {
    if (source.code !== "PAYMENT_PENDING" && source.code !== "PAYMENT_OUTCOME_UNKNOWN")
      throw invalid(`checkSettlement was given a ${source.code} error: nothing was paid to check`);
    const details = source.details as Record<string, unknown>;
    const requirement = Object(details.requirement) as Record<string, unknown>;
    query = {
      scheme: requirement.scheme,
      network: caip2(details.network ?? requirement.network),
      transaction: details.transaction || undefined,
      asset: requirement.asset,
      payTo: requirement.payTo,
      payer: details.payer,
      amount: requirement.amount ?? requirement.maxAmountRequired,
      payload: details.payload,
    };
  } else if (source && typeof source === "object" && "outcome" in source) {
    const { scheme, network, transaction, asset, payee, payer, amount } = source;
    query = { scheme, network: caip2(network), transaction, asset, payTo: payee, payer, amount };
  } else {
    const given = Object(source) as SettlementQuery;
    query = { ...given, network: caip2(given.network) };
  }
  const text = ["scheme", "network", "asset", "payTo", "payer", "amount"] as const;
  const missing = text.filter((key) => typeof query[key] !== "string" || query[key] === "");
  if (missing.length > 0)
    throw invalid(`checkSettlement cannot tell what to look up (no ${missing.join(", ")}): ${USAGE}`);
  return query as SettlementQuery;
}

/**
 * Did the money move? For a pending settlement or an unknown outcome (its error, its ledger record, or a
 * receipt): looks the payment up on its chain through the client's scheme that paid it (`exactEvm({
 * settlement: evmSettlement({ rpc }) })`, `exactSvm({ settlement: svmSettlement() })`), never trusting
 * the server. `settled`, `failed` (it can no longer move) or `pending`, with the reason.
 */
export async function checkSettlement(
  client: { readonly schemes: readonly PaymentScheme[] },
  source: SettlementSource,
  { signal }: { signal?: AbortSignal | undefined } = {},
): Promise<SettlementStatus> {
  throwIfAborted(signal);
  const schemes = Object(client).schemes as readonly PaymentScheme[] | undefined;
  if (!Array.isArray(schemes))
    throw invalid("checkSettlement needs the client that paid: checkSettlement(client, error)");
  const v1Networks: Record<string, string> = Object.assign({}, ...schemes.map((s) => s.v1Networks));
  const query = toSettlementQuery(source, v1Networks);
  const paying = schemesFor(schemes, query.scheme, query.network);
  const checker = paying.find((scheme) => scheme.checkSettlement);
  if (!checker) {
    const about = `${query.scheme} on ${query.network}`;
    throw invalid(
      paying.length === 0
        ? `no registered scheme pays ${about}, so none can look it up`
        : `the scheme that pays ${about} has no chain to look it up on: give it one, exactEvm({ signer, settlement: ` +
            `evmSettlement({ rpc }) }) or exactSvm({ signer, settlement: svmSettlement() })`,
    );
  }
  return checker.checkSettlement!(query, signal);
}

const invalid = (message: string) => new InvalidConfigError(`${message}.`, { details: { option: "checkSettlement" } });
