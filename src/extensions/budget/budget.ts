/** Cumulative budgets: what a client may spend in all, per window and scope, reserved before signing. */
import {
  fail,
  type BudgetEntry,
  type BudgetStore,
  type PaymentTerms,
  type Reservation,
  type ReserveContext,
  type X402Plugin,
} from "../../contracts";
import {
  BudgetExceededError,
  BudgetUnavailableError,
  PaymentRefusedError,
  raceAbort,
  requestDetails,
  type RequestDetails,
} from "../../errors";
import {
  formatUnits,
  originOf,
  parseUsd,
  randomId,
  type KnownAsset,
  type Money,
  type PaymentRequirement,
} from "../../protocol";
import { memoryBudgetStore } from "./store";

/** A named window, or milliseconds. */
export type BudgetWindow = "minute" | "hour" | "day" | "week" | number;

/** What a budget is shared by: the whole client, each request origin, or each payee (`payTo` on its network). */
export type BudgetScope = "client" | "origin" | "payee";

/** The payment a budget values: the requirement's network (CAIP-2), asset and atomic amount. */
export interface BudgetPayment {
  readonly network: string;
  readonly asset: string;
  readonly amount: string;
}

export interface BudgetOptions {
  /** The most to spend, in USD: `"$5"`. */
  limit: Money;
  /**
   * A rolling window (`"minute"`, `"hour"`, `"day"`, `"week"`, or milliseconds); none: the client's whole life (the
   * store's).
   */
  per?: BudgetWindow | undefined;
  /** Default `"client"`. */
  scope?: BudgetScope | undefined;
  /**
   * Names the budget in its store's keys and in errors. Default: its scope and window (`origin/day`). Processes that
   * share a store share the budgets of the same name.
   */
  name?: string | undefined;
  /** Where spend is kept: this budget's memory by default; `redisBudgetStore` from `x402-pay/redis` for a fleet. */
  store?: BudgetStore | undefined;
  /**
   * The USD value of a payment in an asset of unknown worth (stablecoins of known decimals are valued
   * without it): a USD amount such as `"$0.25"`, or `undefined` for "cannot tell", which refuses it.
   */
  value?: ((payment: BudgetPayment) => Money | undefined) | undefined;
}

interface ResolvedBudget {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number | undefined;
  readonly scope: BudgetScope;
  readonly store: BudgetStore;
  readonly value: BudgetOptions["value"];
  /** `$5 per day, per origin` */
  readonly label: string;
}

const WINDOWS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };
const MICRO_PER_USD_UNIT = 10n ** 12n;
/** $9 billion in micro-dollars: sums stay exact in a double (a Lua number in Redis). */
const MAX_LIMIT = 9e15;

/** `parseUsd` units (10^-18 dollars) to micro-dollars, rounded up (a payment) or down (a limit). */
const toMicro = (usd: bigint, up: boolean) => Number((usd + (up ? MICRO_PER_USD_UNIT - 1n : 0n)) / MICRO_PER_USD_UNIT);
const showMicro = (micro: number) => `$${formatUnits(BigInt(micro), 6)}`;
const OPTIONS = ["limit", "per", "scope", "name", "store", "value"];

/** Checks and freezes a budget's options; `InvalidConfigError` names the option (`budget.limit`). */
function resolveBudget(b: BudgetOptions): ResolvedBudget {
  if (typeof b !== "object" || b === null) fail("budget", "must be { limit, per?, scope?, name?, store?, value? }");
  for (const key of Object.keys(b))
    if (!OPTIONS.includes(key)) fail(`budget.${key}`, `is not an option (options: ${OPTIONS.join(", ")})`);
  const usd = typeof b.limit === "string" ? parseUsd(b.limit) : undefined;
  const limit = usd === undefined ? NaN : toMicro(usd, false);
  if (!(limit > 0 && limit <= MAX_LIMIT))
    fail("budget.limit", 'must be a USD amount from "$0.000001" to "$9000000000", such as "$5"');
  const windowMs =
    b.per === undefined
      ? undefined
      : typeof b.per === "number"
        ? b.per
        : Object.hasOwn(WINDOWS, b.per)
          ? WINDOWS[b.per]
          : NaN;
  if (windowMs !== undefined && !(Number.isSafeInteger(windowMs) && windowMs > 0))
    fail("budget.per", '"minute", "hour", "day", "week" or milliseconds above 0');
  const scope = b.scope ?? "client";
  if (!["client", "origin", "payee"].includes(scope)) fail("budget.scope", '"client", "origin" or "payee"');
  const name = b.name ?? `${scope}/${b.per ?? "life"}`;
  if (typeof name !== "string" || !/^[\w./-]{1,64}$/.test(name))
    fail("budget.name", "1 to 64 characters of a-z, A-Z, 0-9, _, ., / and -");
  const store = b.store ?? memoryBudgetStore();
  if (typeof store?.reserve !== "function" || typeof store.commit !== "function" || typeof store.release !== "function")
    fail("budget.store", "a budget store { reserve, commit, release, usage }");
  if (b.value !== undefined && typeof b.value !== "function") fail("budget.value", "a function");
  const per = b.per === undefined ? "" : ` per ${typeof b.per === "number" ? `${b.per} ms` : b.per}`;
  const label = `${showMicro(limit)}${per}${scope === "client" ? "" : `, per ${scope}`}`;
  return Object.freeze({ name, limit, windowMs, scope, store, value: b.value, label });
}

/**
 * A cumulative budget, as a plug-in of `createX402Client({ plugins: [budget({ limit: "$5", per: "day" })] })`:
 * what the client may spend in all, per window and scope. A payment is reserved in it before any prompt,
 * committed when it settles (or may have: an unknown or pending outcome counts its maximum), released
 * when nothing was charged. N concurrent requests never overspend it; several budgets must all hold.
 */
export function budget(options: BudgetOptions): X402Plugin {
  const resolved = resolveBudget(options);
  return Object.freeze({
    name: `budget ${resolved.name}`,
    checkRequirement: (requirement: PaymentRequirement, asset: KnownAsset | undefined) =>
      checkBudget(
        resolved,
        { network: requirement.caip2!, asset: requirement.asset, amount: requirement.amount },
        asset,
      ),
    reserve: (terms: PaymentTerms, { asset, requirement, request }: ReserveContext) =>
      reserveBudget(
        resolved,
        // A deposit into a channel must fit as a whole; what the call is charged is what gets committed.
        {
          network: requirement.caip2!,
          asset: terms.asset,
          amount: largest(terms.amount, terms.deposit),
          payTo: terms.payTo,
        },
        asset,
        request,
      ),
  });
}

/** The larger of two base-unit amounts (the second may be absent). */
const largest = (a: string, b: string | undefined) => (b !== undefined && BigInt(b) > BigInt(a) ? b : a);

/** A payment's value in micro-dollars under a budget, or `undefined` if the budget cannot tell it. */
function microDollars(
  budget: ResolvedBudget,
  payment: BudgetPayment,
  asset: KnownAsset | undefined,
): number | undefined {
  if (asset) {
    // Rounded up: a budget never counts less than was paid.
    const unit = 10n ** BigInt(asset.decimals);
    return Number((BigInt(payment.amount) * 1_000_000n + unit - 1n) / unit);
  }
  let told: unknown;
  try {
    told = budget.value?.(payment);
  } catch {
    // A value function that throws cannot tell: the payment is refused.
  }
  const usd = typeof told === "string" ? parseUsd(told) : undefined;
  return usd === undefined ? undefined : toMicro(usd, true);
}

/**
 * Why the budget refuses a requirement outright (a value it cannot tell, or more than its whole limit), else
 * `undefined`.
 */
function checkBudget(
  budget: ResolvedBudget,
  payment: BudgetPayment,
  asset: KnownAsset | undefined,
): string | undefined {
  const micro = microDollars(budget, payment, asset);
  if (micro === undefined)
    return (
      `budget ${budget.name} cannot value asset ${payment.asset} on ${payment.network} (give the budget a value ` +
      `function, or add the asset to policy.assets)`
    );
  if (micro > budget.limit)
    return `${showMicro(micro)} is more than budget ${budget.name} allows in all (${budget.label})`;
  return undefined;
}

/** The key part of a scope value. */
function scopeOf(budget: ResolvedBudget, url: string, network: string, payTo: string): string {
  if (budget.scope === "origin") return `origin:${originOf(url)}`;
  if (budget.scope === "payee") return `payee:${network}:${/^0x/i.test(payTo) ? payTo.toLowerCase() : payTo}`;
  return "client";
}

/**
 * Reserves the payment in the budget before anything is signed. A payment it does not fit throws
 * `BudgetExceededError` (limit, spent, reserved), and a store that fails or does not answer throws
 * `BudgetUnavailableError`: fail closed.
 */
async function reserveBudget(
  budget: ResolvedBudget,
  payment: BudgetPayment & { readonly payTo: string },
  asset: KnownAsset | undefined,
  request: { readonly url: string; readonly method: string; readonly signal?: AbortSignal | undefined },
): Promise<Reservation> {
  const where = requestDetails(request);
  const id = randomId();
  const micro = microDollars(budget, payment, asset);
  // Checked when the requirement was evaluated; a value function may answer otherwise now.
  if (micro === undefined)
    throw new PaymentRefusedError(`Budget ${budget.name} cannot value this payment: nothing was signed.`, {
      details: where,
    });
  const entry: BudgetEntry = {
    key: `${budget.name}:${scopeOf(budget, request.url, payment.network, payment.payTo)}`,
    limit: budget.limit,
    windowMs: budget.windowMs,
  };
  const reserving = Promise.resolve().then(() => budget.store.reserve(entry, id, micro));
  let answer: Awaited<typeof reserving>;
  try {
    answer = await raceAbort(reserving, request.signal, where);
  } catch (error) {
    // Given up while under way (aborted): a reservation the store still makes is released.
    void reserving.then(({ ok }) => (ok ? budget.store.release(entry, id) : undefined)).catch(() => undefined);
    throw request.signal?.aborted ? error : unavailable(budget, error, where);
  }
  if (!answer.ok) {
    const details = {
      ...where,
      budget: budget.name,
      limit: showMicro(budget.limit),
      spent: showMicro(answer.spent),
      reserved: showMicro(answer.reserved),
      amount: showMicro(micro),
    };
    throw new BudgetExceededError(
      `Budget ${budget.name} (${budget.label}) cannot take ${details.amount} more: ${details.spent} spent and ` +
        `${details.reserved} reserved of ${details.limit}. Nothing was signed.`,
      { details },
    );
  }
  let open = true;
  return {
    async commit(amount) {
      if (!open) return;
      open = false;
      const spent = amount === undefined ? micro : (microDollars(budget, { ...payment, amount }, asset) ?? micro);
      // A store that fails now leaves the reservation standing: counted as spent, never less.
      await budget.store.commit(entry, id, Math.min(spent, micro)).catch(() => undefined);
    },
    async release() {
      if (!open) return;
      open = false;
      await budget.store.release(entry, id).catch(() => undefined);
    },
  };
}

function unavailable(budget: ResolvedBudget, cause: unknown, where: RequestDetails) {
  return new BudgetUnavailableError(
    `The store of budget ${budget.name} did not answer, so nothing was paid (budgets fail closed).`,
    {
      cause,
      details: { ...where, budget: budget.name },
    },
  );
}
