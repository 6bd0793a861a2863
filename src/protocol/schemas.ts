/**
 * Wire shapes of x402 v1 and v2 and their validators: the one source of truth for what a well-formed
 * message is. Unknown fields are kept. Written by hand rather than with a schema library: zod/mini
 * alone would add about 5.5 KB gzipped to every browser bundle.
 */
import { parseAtomicAmount } from "./money";
import { isCaip2 } from "./networks";

export interface ResourceInfo {
  url: string;
  description?: string;
  mimeType?: string;
  [key: string]: unknown;
}

interface RequirementsCommon {
  scheme: string;
  network: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown> | null;
  [key: string]: unknown;
}

export interface PaymentRequirementsV2 extends RequirementsCommon {
  amount: string;
}

export interface PaymentRequirementsV1 extends RequirementsCommon {
  maxAmountRequired: string;
  resource?: string;
  description?: string;
  mimeType?: string;
}

export interface PaymentRequiredV2 {
  x402Version: 2;
  error?: string;
  resource?: ResourceInfo;
  accepts: unknown[];
  extensions?: Record<string, unknown> | null;
  [key: string]: unknown;
}

export interface PaymentRequiredV1 {
  x402Version: 1;
  error?: string;
  accepts: unknown[];
  extensions?: Record<string, unknown> | null;
  [key: string]: unknown;
}

export interface SettleResponse {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  payer?: string;
  transaction?: string;
  network?: string;
  amount?: string;
  extensions?: Record<string, unknown> | null;
  [key: string]: unknown;
}

type Rule = (value: unknown, name: string) => string | undefined;

/** Deepest nesting x402-pay reads in a challenge or settlement; deeper input is refused before any wallet prompt. */
export const MAX_JSON_DEPTH = 32;

/** Is a decoded JSON value nested deeper than `max` objects and arrays? Iterative: no recursion to overflow. */
export function isTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth >= max) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** A JSON object: not null, not an array. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const string: Rule = (v, name) => (typeof v === "string" ? undefined : `${name} must be a string`);
const nonEmpty: Rule = (v, name) => string(v, name) ?? (v === "" ? `${name} must not be empty` : undefined);
const atomic: Rule = (v, name) =>
  string(v, name) ?? (parseAtomicAmount(v) === undefined ? `${name} must be a base-10 integer string within uint256` : undefined);
const caip2: Rule = (v, name) => string(v, name) ?? (isCaip2(v as string) ? undefined : `${name} must be a CAIP-2 id such as eip155:8453`);
const timeout: Rule = (v, name) =>
  typeof v !== "number" ? `${name} must be a number` : Number.isSafeInteger(v) && v > 0 ? undefined : `${name} must be a positive integer`;
const boolean: Rule = (v, name) => (typeof v === "boolean" ? undefined : `${name} must be a boolean`);
const object: Rule = (v, name) => (isObject(v) ? undefined : `${name} must be an object`);
const array: Rule = (v, name) => (Array.isArray(v) ? undefined : `${name} must be an array`);
const optional =
  (rule: Rule, nullable = false): Rule =>
  (v, name) =>
    v === undefined || (nullable && v === null) ? undefined : rule(v, name);
const resource: Rule = (v, name) => object(v, name) ?? nonEmpty((v as Record<string, unknown>).url, `${name}.url`);

/** The first problem `value` has against `rules`, else `undefined`. */
export function validate(value: unknown, rules: Record<string, Rule>): string | undefined {
  if (!isObject(value)) return "must be a JSON object";
  for (const [key, rule] of Object.entries(rules)) {
    const reason = rule(value[key], key);
    if (reason) return reason;
  }
  return undefined;
}

const requirementRules: Record<string, Rule> = {
  asset: nonEmpty,
  payTo: nonEmpty,
  maxTimeoutSeconds: timeout,
  extra: optional(object, true),
};

const paymentRequiredRules: Record<string, Rule> = {
  error: optional(string, true),
  accepts: array,
  extensions: optional(object, true),
};

/** Per protocol version: the rules of a challenge (`x402Version` is checked first, to pick them) and of an element of its `accepts`. */
export const rulesOf = {
  1: {
    challenge: paymentRequiredRules,
    requirement: {
      scheme: nonEmpty,
      network: nonEmpty,
      maxAmountRequired: atomic,
      ...requirementRules,
      // The only descriptive field read (for the same-host check); others are not checked.
      resource: optional(string),
    },
  },
  2: {
    challenge: { ...paymentRequiredRules, resource: optional(resource) },
    requirement: { scheme: nonEmpty, network: caip2, amount: atomic, ...requirementRules },
  },
};

/** Optional text fields of a settlement. Some servers send an absent one as `null` (the Java reference's `"payer": null`). */
export const SETTLEMENT_TEXT_FIELDS = ["errorReason", "errorMessage", "payer", "transaction", "network", "amount"] as const;

export const validateSettleResponse = (value: unknown) =>
  validate(value, {
    success: boolean,
    ...Object.fromEntries(SETTLEMENT_TEXT_FIELDS.map((key) => [key, optional(string, true)])),
    extensions: optional(object, true),
  });
