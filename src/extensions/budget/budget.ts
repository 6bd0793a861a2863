/** Cumulative budgets: what a client may spend in all, per window and scope, reserved before signing. */
import {
  fail,
  type BudgetEntry,
  type BudgetStore,
  type BudgetUsage,
  type ChannelRefund,
  type X402Request,
  type PaymentTerms,
  type Reservation,
  type ReserveContext,
  type ReservedAttempt,
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
import { formatUnits, originOf, parseUsd, type KnownAsset, type Money, type PaymentRequirement } from "../../protocol";
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
    reserve: (terms: PaymentTerms, { asset, requirement, request, channel, attempt }: ReserveContext) => {
      const payment = { network: requirement.caip2!, asset: terms.asset, amount: terms.amount, payTo: terms.payTo };
      if (channel !== undefined && resolved.store.hold)
        return holdBudget(resolved, { ...payment, deposit: terms.deposit, channel }, asset, { request, attempt });
      // Without holds a deposit into a channel must fit as a whole; what the call is charged is what gets committed.
      const most = { ...payment, amount: largest(terms.amount, terms.deposit) };
      return reserveBudget(resolved, most, asset, { request, id: attempt });
    },
    // A reservation is found again by its attempt's id, in whatever process reads the same store. A channel's hold is
    // the channel's: it stands until spent or refunded, whoever paid last.
    reservationOf: ({ id, terms, network, channel }: ReservedAttempt, { asset }: { asset: KnownAsset | undefined }) => {
      if (terms.kind !== undefined && resolved.store.hold)
        return channel === undefined ? undefined : heldFor(resolved, { id, terms, network, channel }, asset);
      const payment = { network, asset: terms.asset, amount: largest(terms.amount, terms.deposit) };
      const most = microDollars(resolved, payment, asset) ?? Number.MAX_SAFE_INTEGER;
      const entry = entryOf(resolved, terms.url, network, terms.payTo);
      const { store } = resolved;
      return once({
        commit: (amount) => store.commit(entry, id, charged(resolved, payment, asset, { amount, most })),
        release: () => store.release(entry, id),
      });
    },
    onRefund: (refund: ChannelRefund, { asset }: { asset: KnownAsset | undefined }) =>
      refunded(resolved, refund, asset),
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

/** A budget's entry for a payment to `payTo` on `network` for the request at `url`. */
const entryOf = (budget: ResolvedBudget, url: string, network: string, payTo: string): BudgetEntry => ({
  key: `${budget.name}:${scopeOf(budget, url, network, payTo)}`,
  limit: budget.limit,
  windowMs: budget.windowMs,
});

/** A channel's hold in a budget's store. */
const holdId = (network: string, channel: string) => `channel:${network}:${channel.toLowerCase()}`;

/** A payment's value under the budget, or `PaymentRefusedError` if it cannot tell it (a value function may change). */
function worth(budget: ResolvedBudget, payment: BudgetPayment, asset: KnownAsset | undefined, where: RequestDetails) {
  const micro = microDollars(budget, payment, asset);
  if (micro === undefined)
    throw new PaymentRefusedError(`Budget ${budget.name} cannot value this payment: nothing was signed.`, {
      details: where,
    });
  return micro;
}

/**
 * Asks the budget's store, bounded by the request's signal: an answer given up on (aborted) is undone by `undo`
 * when the store still makes it, and a store that fails throws `BudgetUnavailableError`: fail closed.
 */
async function ask<T>(
  budget: ResolvedBudget,
  asking: () => Promise<T>,
  { signal, where, undo }: { signal: AbortSignal | undefined; where: RequestDetails; undo: (answer: T) => unknown },
): Promise<T> {
  const answer = Promise.resolve().then(asking);
  try {
    return await raceAbort(answer, signal, where);
  } catch (error) {
    void answer.then(undo).catch(() => undefined);
    throw signal?.aborted ? error : unavailable(budget, error, where);
  }
}

/** `BudgetExceededError`: `micro` more does not fit what the store holds. */
function exceeded(budget: ResolvedBudget, usage: BudgetUsage, micro: number, where: RequestDetails) {
  const details = {
    ...where,
    budget: budget.name,
    limit: showMicro(budget.limit),
    spent: showMicro(usage.spent),
    reserved: showMicro(usage.reserved),
    amount: showMicro(micro),
  };
  return new BudgetExceededError(
    `Budget ${budget.name} (${budget.label}) cannot take ${details.amount} more: ${details.spent} spent and ` +
      `${details.reserved} reserved of ${details.limit}. Nothing was signed.`,
    { details },
  );
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
  { request, id }: { request: X402Request; id: string },
): Promise<Reservation> {
  const where = requestDetails(request);
  // Checked when the requirement was evaluated; a value function may answer otherwise now.
  const micro = worth(budget, payment, asset, where);
  const entry = entryOf(budget, request.url, payment.network, payment.payTo);
  const { store } = budget;
  const answer = await ask(budget, () => store.reserve(entry, id, micro), {
    signal: request.signal,
    where,
    undo: ({ ok }) => (ok ? store.release(entry, id) : undefined),
  });
  if (!answer.ok) throw exceeded(budget, answer, micro, where);
  return once({
    // A store that fails now leaves the reservation standing: counted as spent, never less.
    commit: (amount) => store.commit(entry, id, charged(budget, payment, asset, { amount, most: micro })),
    release: () => store.release(entry, id),
  });
}

/**
 * A payment from a channel, in a store with holds: a deposit or top-up is held as a whole until the channel spends it
 * or a refund returns it; each call's charge is spent from the hold. A voucher reserves only what the hold lacks (a
 * hold this store lost). The channel's own lock keeps one payment at a time on it, so the hold is read and changed
 * by one payment at once.
 */
async function holdBudget(
  budget: ResolvedBudget,
  payment: BudgetPayment & { readonly payTo: string; readonly deposit: string | undefined; readonly channel: string },
  asset: KnownAsset | undefined,
  { request, attempt }: { request: X402Request; attempt: string },
): Promise<Reservation> {
  const where = requestDetails(request);
  const price = worth(budget, payment, asset, where);
  const entry = entryOf(budget, request.url, payment.network, payment.payTo);
  const id = holdId(payment.network, payment.channel);
  const store = budget.store as Required<BudgetStore>;
  const { signal } = request;
  const deposit = payment.deposit && worth(budget, { ...payment, amount: payment.deposit }, asset, where);
  const add =
    deposit ||
    Math.max(0, price - (await ask(budget, () => store.hold(entry, id, {}), { signal, where, undo: () => 0 })).held);
  if (add > 0) {
    const answer = await ask(budget, () => store.hold(entry, id, { add, attempt }), {
      signal,
      where,
      undo: ({ ok }) => (ok ? store.hold(entry, id, { release: add, attempt }) : undefined),
    });
    if (!answer.ok) throw exceeded(budget, answer, add, where);
  }
  return once({
    commit: (amount) =>
      store.hold(entry, id, { spend: charged(budget, payment, asset, { amount, most: price }), attempt }),
    release: () => (add > 0 ? store.hold(entry, id, { release: add, attempt }) : undefined),
  });
}

/**
 * What a channel's hold did for an earlier call of it (perhaps a dead process's), ended as its voucher did: charged,
 * its price spent from the hold; never charged, the deposit it added let go (a voucher alone added none).
 */
function heldFor(
  budget: ResolvedBudget,
  { id: attempt, terms, network, channel }: { id: string; terms: PaymentTerms; network: string; channel: string },
  asset: KnownAsset | undefined,
): Reservation {
  const payment = { network, asset: terms.asset, amount: terms.amount };
  const price = microDollars(budget, payment, asset) ?? Number.MAX_SAFE_INTEGER;
  const deposit = terms.deposit === undefined ? 0 : microDollars(budget, { ...payment, amount: terms.deposit }, asset);
  const entry = entryOf(budget, terms.url, network, terms.payTo);
  const id = holdId(network, channel);
  const store = budget.store as Required<BudgetStore>;
  return once({
    commit: (amount) =>
      store.hold(entry, id, { spend: charged(budget, payment, asset, { amount, most: price }), attempt }),
    release: () => (deposit ? store.hold(entry, id, { release: deposit, attempt }) : undefined),
  });
}

/**
 * What a settled payment spent, in micro-dollars: `amount` (base units) when the server reported it, else `most`,
 * never more than `most`.
 */
function charged(
  budget: ResolvedBudget,
  payment: BudgetPayment,
  asset: KnownAsset | undefined,
  { amount, most }: { amount: string | undefined; most: number },
): number {
  const spent = amount === undefined ? most : (microDollars(budget, { ...payment, amount }, asset) ?? most);
  return Math.min(spent, most);
}

/** What a refund returned, let go of the channel's hold (all of it when the channel holds nothing more). */
async function refunded(budget: ResolvedBudget, refund: ChannelRefund, asset: KnownAsset | undefined): Promise<void> {
  const { store } = budget;
  if (!store.hold) return;
  const release = BigInt(refund.balance) === 0n ? "all" : microDollars(budget, refund, asset);
  if (release === undefined) return;
  await store.hold(entryOf(budget, refund.url, refund.network, refund.payTo), holdId(refund.network, refund.channel), {
    release,
  });
}

/**
 * A reservation settled once: the first commit or release counts, later ones nothing. A store that fails throws: the
 * reservation stays counted (never less), and whoever ends its attempt later (recovery) finds it by its id.
 */
function once({
  commit,
  release,
}: {
  commit: (amount: string | undefined) => unknown;
  release: () => unknown;
}): Reservation {
  let open = true;
  const settle = async (step: () => unknown) => {
    if (!open) return;
    open = false;
    await step();
  };
  return { commit: (amount) => settle(() => commit(amount)), release: () => settle(release) };
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
