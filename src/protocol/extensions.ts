/** Wire facts of the extensions x402-pay serves itself: payment-identifier and builder-code. */
import { problemOfBuilderCode, problemOfPaymentIdentifierPayload } from "./validators.generated";
import { bytesToHex, randomBytes } from "./address";
import { isBuilderCodeText, isPaymentIdText } from "./wire";

/** payment-identifier (wire.md §7): an idempotency key in the v2 PaymentPayload's `extensions[key].info.id`. */
export const PAYMENT_IDENTIFIER = "payment-identifier";

/** A payment id: 16 to 128 characters of `a-z A-Z 0-9 _ -` (the reference's `PAYMENT_ID_PATTERN` and lengths). */
export const isPaymentId = (value: unknown): value is string => typeof value === "string" && isPaymentIdText(value);

/**
 * 32 random hex digits. From `getRandomValues`, which pages served without TLS have too (`randomUUID`
 * is missing there); 128 random bits against its 122.
 */
export const randomId = (): string => bytesToHex(randomBytes(16)).slice(2);

/** A fresh id in the reference's format: `pay_` and 32 hex digits. */
export const generatePaymentId = (): string => `pay_${randomId()}`;

/** The payment id a PaymentPayload carries, if any: only one sent with it can be resent without risk of a conflict. */
export function paymentIdOf(payload: unknown): string | undefined {
  const entry: unknown = Object(Object(payload).extensions)[PAYMENT_IDENTIFIER];
  return problemOfPaymentIdentifierPayload(entry) === undefined
    ? (entry as { info: { id: string } }).info.id
    : undefined;
}

/**
 * builder-code (ERC-8021 Schema 2 attribution): the payload's `extensions[key].info`, `a` the server's, `s` service
 * codes.
 */
export const BUILDER_CODE = "builder-code";

/** A builder code: 1 to 32 characters of `a-z 0-9 _`. */
export const isBuilderCode = (value: unknown): value is string => typeof value === "string" && isBuilderCodeText(value);

/**
 * The service codes of a builder-code declaration (`info.s`, one code or a list; none if not declared), or `undefined`
 * if the declaration is malformed.
 */
export function declaredServiceCodes(declaration: unknown): string[] | undefined {
  if (declaration === undefined) return [];
  if (problemOfBuilderCode(declaration) !== undefined) return undefined;
  const { s } = (declaration as { info: { s?: string | string[] } }).info;
  return s === undefined ? [] : [s].flat();
}

/**
 * Service codes a client may add (`MAX_CLIENT_SERVICE_CODES`), and how many the payload's `s` may hold in all (client
 * and server reservations).
 */
export const MAX_CLIENT_SERVICE_CODES = 5;
export const MAX_ECHOED_SERVICE_CODES = 10;
