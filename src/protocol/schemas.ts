/** Wire shapes of x402 v1 and v2, as zod/mini schemas. Unknown fields are kept (`looseObject`). */
import * as z from "zod/mini";
import { isCaip2 } from "./networks";
import { parseAtomicAmount } from "./money";

const text = (what: string) => z.string({ error: `${what} must be a string` });
const nonEmpty = (what: string) => text(what).check(z.minLength(1, `${what} must not be empty`));
const atomic = (what: string) =>
  text(what).check(z.refine((v) => parseAtomicAmount(v) !== undefined, `${what} must be a base-10 integer string within uint256`));
// Objects with any keys; `looseObject({})` rather than `record` keeps the browser bundle smaller.
const looseRecord = z.looseObject({});

const maxTimeoutSeconds = z
  .number({ error: "maxTimeoutSeconds must be a number" })
  .check(z.refine((v) => Number.isSafeInteger(v) && v > 0, "maxTimeoutSeconds must be a positive integer"));

export const ResourceInfoSchema = z.looseObject({
  url: nonEmpty("resource.url"),
  description: z.optional(z.string()),
  mimeType: z.optional(z.string()),
});

export const PaymentRequirementsV2Schema = z.looseObject({
  scheme: nonEmpty("scheme"),
  network: text("network").check(z.refine(isCaip2, "network must be a CAIP-2 id such as eip155:8453")),
  amount: atomic("amount"),
  asset: nonEmpty("asset"),
  payTo: nonEmpty("payTo"),
  maxTimeoutSeconds,
  extra: z.optional(z.nullable(looseRecord)),
});

export const PaymentRequirementsV1Schema = z.looseObject({
  scheme: nonEmpty("scheme"),
  network: nonEmpty("network"),
  maxAmountRequired: atomic("maxAmountRequired"),
  resource: z.optional(z.string()),
  description: z.optional(z.string()),
  mimeType: z.optional(z.string()),
  asset: nonEmpty("asset"),
  payTo: nonEmpty("payTo"),
  maxTimeoutSeconds,
  extra: z.optional(z.nullable(looseRecord)),
});

const accepts = z.array(z.unknown(), { error: "accepts must be an array" });

// `x402Version` is checked before these run, to pick the schema.
export const PaymentRequiredV2Schema = z.looseObject({
  error: z.optional(z.string()),
  resource: z.optional(ResourceInfoSchema),
  accepts,
  extensions: z.optional(z.nullable(looseRecord)),
});

export const PaymentRequiredV1Schema = z.looseObject({
  error: z.optional(z.string()),
  accepts,
  extensions: z.optional(z.nullable(looseRecord)),
});

export const SettleResponseSchema = z.looseObject({
  success: z.boolean(),
  errorReason: z.optional(z.string()),
  errorMessage: z.optional(z.string()),
  payer: z.optional(z.string()),
  transaction: z.optional(z.string()),
  network: z.optional(z.string()),
  amount: z.optional(z.string()),
  extensions: z.optional(z.nullable(looseRecord)),
});

export type ResourceInfo = z.infer<typeof ResourceInfoSchema>;
export type PaymentRequirementsV2 = z.infer<typeof PaymentRequirementsV2Schema>;
export type PaymentRequirementsV1 = z.infer<typeof PaymentRequirementsV1Schema>;
export type PaymentRequiredV2 = z.infer<typeof PaymentRequiredV2Schema>;
export type PaymentRequiredV1 = z.infer<typeof PaymentRequiredV1Schema>;
export type SettleResponse = z.infer<typeof SettleResponseSchema>;

/** The first problem zod found, as `path: message`. */
export function describeIssue(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "is malformed";
  const path = issue.path.join(".");
  return path && !issue.message.startsWith(path) ? `${path}: ${issue.message}` : issue.message;
}
