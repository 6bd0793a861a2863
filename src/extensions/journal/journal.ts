/**
 * `paymentJournal(store)`: every payment written down before it is signed (its intent), before it leaves (the signed
 * header) and when it ends, so that a process killed at any instruction leaves what may have been paid findable. A
 * request with a key (`x402: { paymentId }`) whose payment is kept is never signed anew: the kept header is sent again.
 */
import {
  UNFINISHED,
  checkOptions,
  fail,
  is,
  nonEmpty,
  type JournalEntry,
  type JournalStore,
  type KeptPayment,
  type PaymentHeader,
  type PaymentOutcome,
  type PaymentTerms,
  type Reservation,
  type ReserveContext,
  type ResumeContext,
  type X402Plugin,
  type X402Request,
} from "../../contracts";
import { MONEY_MAY_HAVE_MOVED, PaymentAlreadyAttemptedError, PaymentRefusedError, requestDetails } from "../../errors";
import { decodeBase64Json, randomId } from "../../protocol";
import { checkSettlement } from "../../settlement";

/** The plug-in, and the store it writes to (what `recoverPayments` reads). */
export interface PaymentJournal extends X402Plugin {
  readonly name: string;
  readonly store: JournalStore;
}

export interface PaymentJournalOptions {
  /** The plug-in's name, for two journals on one client. Default `"journal"`. */
  name?: string | undefined;
}

const JOURNAL = Symbol.for("x402-pay.journal");

/** The journal among a client's plug-ins, if it has one. */
export const journalOf = (plugins: readonly X402Plugin[]): PaymentJournal | undefined =>
  plugins.find((plugin): plugin is PaymentJournal => JOURNAL in plugin);

/** How long a signed payment may be held by default, when its requirement does not say (seconds). */
const DEFAULT_VALIDITY_S = 3600;

/**
 * A journal over `store` (`memoryJournalStore()`, `fileJournalStore(path)` from x402-pay/file,
 * `redisJournalStore(redis)` from x402-pay/redis): `plugins: [paymentJournal(store)]`. What it holds is a signed
 * authorization to pay the payee named, not a key: see docs/journal.md for who should read it.
 */
export function paymentJournal(store: JournalStore, options: PaymentJournalOptions = {}): PaymentJournal {
  if (!store || typeof store.put !== "function" || typeof store.latest !== "function")
    fail(
      "paymentJournal",
      "give it a journal store: memoryJournalStore(), fileJournalStore(path), redisJournalStore(redis)",
    );
  checkOptions("journal.", options, { name: is(nonEmpty, "a name") });
  /** The entry of each request's current attempt (the one written last). */
  const current = new WeakMap<X402Request, JournalEntry>();
  /** Writes the request's current entry; `false` if the store refused it (written nothing). */
  const write = async (request: X402Request, entry: JournalEntry) => {
    const written = await store.put(Object.freeze(entry));
    if (written === false) return false;
    current.set(request, entry);
    return true;
  };

  return Object.freeze({
    [JOURNAL]: true,
    name: options.name ?? "journal",
    store,
    // Before any prompt or signature, and before the budgets reserve under the same id: the intent. Its failure
    // refuses the payment (nothing was signed).
    async reserve(terms: PaymentTerms, { request, requirement, attempt, channel }: ReserveContext) {
      const intent = {
        ...intentOf(terms, request, { id: attempt, network: requirement.caip2 }),
        ...(channel && { channel }),
      };
      let written: boolean;
      try {
        written = await write(request, intent);
      } catch (error) {
        const said = error instanceof Error ? error.message : String(error);
        throw new PaymentRefusedError(
          `The journal could not write the payment's intent (${said}): nothing was signed.`,
          {
            cause: error,
            details: requestDetails(request),
          },
        );
      }
      // Refused: another attempt of the key, signed, may still move money (a request of another process sends it).
      if (!written) throw await keyHeld(store, request);
      return undefined;
    },
    async onSigned(
      { terms, paymentHeader }: { terms: PaymentTerms; paymentHeader: PaymentHeader },
      request: X402Request,
    ) {
      const intent = current.get(request) ?? intentOf(terms, request, { id: randomId(), network: undefined });
      const seconds = Number(Object(terms.requirement).maxTimeoutSeconds);
      const validFor = Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_VALIDITY_S;
      const signed: JournalEntry = {
        ...intent,
        state: "signed",
        at: Date.now(),
        paymentHeader,
        validBefore: Math.ceil(Date.now() / 1000) + validFor,
      };
      if (!(await write(request, signed)))
        throw new Error(
          `its attempt ${intent.id} was ended before it was signed (another request with its key took its place, or ` +
            "a recovery dropped it as stale)",
        );
    },
    async onOutcome(outcome: PaymentOutcome) {
      const entry = current.get(outcome.request);
      if (!entry) return;
      current.delete(outcome.request);
      await store.put(Object.freeze(ended(entry, outcome)));
    },
    async resume(request: X402Request, { schemes, reservations }: ResumeContext): Promise<KeptPayment | undefined> {
      const entry = await supersede(store, await store.latest(request.paymentId!), reservations);
      if (!entry?.paymentHeader || !(UNFINISHED.includes(entry.state) || entry.state === "settled")) return undefined;
      // A key names one purchase: its payment is never sent for, nor replaced by one for, another resource.
      if (entry.url !== request.url || entry.method !== request.method)
        throw new PaymentRefusedError(
          `The key ${request.paymentId} holds a payment for ${entry.method} ${entry.url} (${entry.state}): it is not ` +
            `sent for ${request.method} ${request.url}, and no other is signed under it. ` +
            "Give this request its own key.",
          { details: requestDetails(request) },
        );
      const held = reservations(entry);
      if (await endedNow(store, entry, { schemes, held, request })) return undefined;
      current.set(request, entry);
      // A settled entry's reservations were ended when it settled.
      const reported = entry.state === "settled";
      return {
        paymentHeader: entry.paymentHeader,
        terms: entry.terms,
        attempt: entry.id,
        reported,
        reservations: held,
      };
    },
  });
}

/** The refusal of a new attempt for a key whose newest attempt is unfinished (read again, to name it). */
async function keyHeld(store: JournalStore, request: X402Request): Promise<PaymentRefusedError> {
  const other = await Promise.resolve(store.latest(request.paymentId!)).catch(() => undefined);
  return new PaymentRefusedError(
    `The key ${request.paymentId} is being paid by another attempt${other ? ` (${other.id}, ${other.state})` : ""}: ` +
      "nothing was signed anew. Ask again once it ends: its payment is then sent again, never a new one.",
    { details: requestDetails(request) },
  );
}

/**
 * A key's latest attempt, asked again: one still at its intent (nothing signed under it) is ended here, only if it is
 * still at its intent, so that the request holding it (in this process or another, alive or dead) can never sign under
 * it, and what the budgets reserved for it is let go (after the ending: a process killed between the two leaves it
 * counted, never released while it may pay). One signed meanwhile is read again, as it is now.
 */
async function supersede(
  store: JournalStore,
  entry: JournalEntry | undefined,
  reservations: ResumeContext["reservations"],
): Promise<JournalEntry | undefined> {
  if (entry?.state !== "intent") return entry;
  const ended = { ...entry, state: "failed", at: Date.now(), code: "PAYMENT_NOT_SENT" } as const;
  if (!(await store.put(Object.freeze(ended), { over: "intent" }))) return store.latest(entry.key!);
  await Promise.all(reservations(entry).map((r) => r.release().catch(() => undefined)));
  return ended;
}

/**
 * Is a kept entry over, as the chain says now? One that can no longer move money is ended `expired` (`true`: the key
 * pays afresh); a channel's voucher the seller charged is thrown as `PAYMENT_ALREADY_ATTEMPTED`: such a seller charges
 * a call once and keeps no answer to send again.
 */
async function endedNow(
  store: JournalStore,
  entry: JournalEntry,
  { schemes, held, request }: { schemes: ResumeContext["schemes"]; held: readonly Reservation[]; request: X402Request },
): Promise<boolean> {
  const status = await lookUp(entry, schemes, request.signal);
  if (isChannelPayment(entry) && (entry.state === "settled" || status?.state === "settled"))
    throw new PaymentAlreadyAttemptedError(
      `The key ${request.paymentId} was paid already: the seller charged its ${entry.scheme} voucher ` +
        `(${entry.state === "settled" ? "and answered it" : "its answer was lost"}). Such a seller does not ` +
        "answer one call twice, and no other payment is signed under this key.",
      { details: requestDetails(request) },
    );
  if (status?.state !== "failed") return false;
  await expire(store, entry, held);
  return true;
}

/**
 * What the chain says of a kept entry held past its validity and never settled (`failed`: it can no longer move
 * money); a channel's voucher is asked at once, whatever its age: its channel may have given its amount to another
 * call, or seen it charged. `undefined` when not asked, or when the chain could not say.
 */
async function lookUp(entry: JournalEntry, schemes: ResumeContext["schemes"], signal: AbortSignal | undefined) {
  if (entry.state === "settled" || !(isChannelPayment(entry) || pastValidity(entry, Date.now()))) return undefined;
  return checkSettlement({ schemes }, queryOf(entry), { signal }).catch(() => undefined);
}

/** A kept entry that can no longer move money: its reservations released, ended `expired` (open if a store fails). */
async function expire(store: JournalStore, entry: JournalEntry, held: readonly Reservation[]): Promise<void> {
  const released = await Promise.all(
    held.map((r) =>
      r.release().then(
        () => true,
        () => false,
      ),
    ),
  );
  if (released.every(Boolean)) await store.put(Object.freeze({ ...entry, state: "expired", at: Date.now() }));
}

/** The first entry of an attempt (`id`): what it will pay, before anything is signed. */
function intentOf(
  terms: PaymentTerms,
  request: X402Request,
  { id, network }: { id: string; network: string | undefined },
): JournalEntry {
  return {
    id,
    ...(request.paymentId !== undefined && { key: request.paymentId }),
    state: "intent",
    at: Date.now(),
    url: terms.url,
    method: terms.method,
    scheme: terms.scheme,
    network: network ?? terms.network,
    asset: terms.asset,
    payTo: terms.payTo,
    amount: terms.amount,
    payer: terms.payer,
    terms,
  };
}

/** The entry as the outcome ends it: settled, failed (nothing charged), or still open (pending, unknown). */
function ended(entry: JournalEntry, outcome: PaymentOutcome): JournalEntry {
  const at = Date.now();
  if (outcome.settled) return { ...entry, state: "settled", at, transaction: outcome.receipt.transaction };
  const { code } = outcome.error;
  const transaction = Object(outcome.error.details).transaction as string | undefined;
  if (!MONEY_MAY_HAVE_MOVED.includes(code)) return { ...entry, state: "failed", at, code };
  return {
    ...entry,
    state: code === "PAYMENT_PENDING" ? "pending" : "unknown",
    at,
    code,
    ...(transaction && { transaction }),
  };
}

/** A batch-settlement channel's payment: its voucher never expires, its channel tells its end. */
export const isChannelPayment = (entry: JournalEntry) => Object(entry.terms).kind !== undefined;

/** Is the entry's signed payment past its validity at `now` (ms)? */
export const pastValidity = (entry: JournalEntry, now: number) =>
  entry.validBefore !== undefined && entry.validBefore * 1000 < now;

/** What the chain is asked about an entry. */
export const queryOf = (entry: JournalEntry) => ({
  attempt: entry.id,
  scheme: entry.scheme,
  network: entry.network,
  transaction: entry.transaction,
  asset: entry.asset,
  payTo: entry.payTo,
  payer: entry.payer,
  amount: entry.amount,
  payload: entry.paymentHeader && payloadOf(entry.paymentHeader.value),
});

/** The signed payload a kept header carries. */
function payloadOf(value: string): Readonly<Record<string, unknown>> | undefined {
  const decoded = decodeBase64Json(value);
  return decoded.ok ? (decoded.value as Record<string, unknown>) : undefined;
}
