/** The PaymentPayload envelope (v1 and v2) and the settlement header. */
import { decodeBase64Json } from "./base64";
import type { PaymentChallenge, PaymentRequirement } from "./challenge";
import { MAX_HEADER_BYTES } from "./headers";
import type { SettleResponse } from "./schemas";
import { problemOfSettleResponse } from "./validators.generated";
import { SETTLEMENT_TEXT_FIELDS, isObject, isTooDeep } from "./wire";

/** What a scheme produces: the scheme-specific `payload` and any extension data it adds. */
export interface SchemePayload {
  readonly payload: Record<string, unknown>;
  /** Per extension key, added to the server's declaration (see `buildPaymentPayload`). */
  readonly extensions?: Record<string, Record<string, unknown>>;
}

/**
 * Assembles the PaymentPayload. v2: `{x402Version, payload, extensions?, resource?, accepted}` with
 * every declared extension echoed and `accepted` the chosen requirement verbatim (the reference key
 * order). Extension data is added to the declaration, objects within objects: a declared field is never
 * dropped or changed (spec v2 §5.1.2). v1: `{x402Version, scheme, network, payload}`.
 */
export function buildPaymentPayload(
  challenge: PaymentChallenge,
  requirement: PaymentRequirement,
  result: SchemePayload,
): Record<string, unknown> {
  if (requirement.x402Version === 1) {
    return { x402Version: 1, scheme: requirement.scheme, network: requirement.network, payload: result.payload };
  }
  const extensions = mergeExtensions(challenge.extensions, result.extensions);
  const { resource } = challenge.raw;
  return {
    x402Version: 2,
    payload: result.payload,
    ...(extensions && { extensions }),
    ...(resource !== undefined && { resource }),
    accepted: requirement.raw,
  };
}

function mergeExtensions(
  declared: Readonly<Record<string, unknown>> | undefined,
  added: Record<string, Record<string, unknown>> | undefined,
): Record<string, unknown> | undefined {
  const merged: Record<string, unknown> = { ...declared };
  for (const [key, value] of Object.entries(added ?? {})) merged[key] = addTo(merged[key], value);
  return Object.keys(merged).length > 0 ? merged : undefined;
}

/**
 * `added`'s fields that `declared` lacks, added to it, and so on into objects both have. A declaration
 * that is no object is replaced. A declared list (or single value) gives way only to a list that still
 * holds every declared entry: how builder-code's service codes `s` grow (the reference's additive merge).
 */
function addTo(declared: unknown, added: Record<string, unknown>): Record<string, unknown> {
  if (!isObject(declared)) return added;
  const merged = { ...declared };
  for (const [key, value] of Object.entries(added)) {
    const old = merged[key];
    if (!Object.hasOwn(merged, key)) merged[key] = value;
    else if (isObject(old) && isObject(value)) merged[key] = addTo(old, value);
    else if (Array.isArray(value) && (Array.isArray(old) ? old : [old]).every((entry) => value.includes(entry)))
      merged[key] = value;
  }
  return merged;
}

/**
 * A settlement's `errorReason` when the facilitator broadcast a transaction that was not yet confirmed (spec v2 §9).
 */
export const SETTLEMENT_PENDING = "settlement_pending";

/** Decodes a PAYMENT-RESPONSE / X-PAYMENT-RESPONSE value; `undefined` if it is not a settlement. */
export function decodeSettlement(value: string | null | undefined): SettleResponse | undefined {
  if (!value || value.length > MAX_HEADER_BYTES) return undefined;
  const decoded = decodeBase64Json(value);
  if (!decoded.ok || isTooDeep(decoded.value) || problemOfSettleResponse(decoded.value) !== undefined) return undefined;
  // A text field sent as null is read as absent, so the fields are strings or undefined.
  const settlement = { ...(decoded.value as SettleResponse) };
  for (const key of SETTLEMENT_TEXT_FIELDS) if (settlement[key] === null) delete settlement[key];
  return settlement;
}
