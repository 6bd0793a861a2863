/** Options checked at construction, by one mechanism for the client, its policy, the schemes and the plug-ins. */
import { InvalidConfigError } from "../errors";
import { isPaymentId } from "../protocol";

/** What is wrong with a value (`"5" is not a function`), or `undefined` when it is fine. */
// biome-ignore lint/suspicious/noExplicitAny: a check is given whatever the user passed, of any type
export type Check = (value: any) => string | undefined;

/** A value as a message shows it; bigints (`2_000_000n`, which JSON cannot write) as `"2000000n"`. */
export const show = (value: unknown) =>
  JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${v}n` : v)) ?? String(value);

export const nonEmpty = (value: unknown) => typeof value === "string" && value.length > 0;

/** A check from a test, and what the value should have been. */
export const is =
  // biome-ignore lint/suspicious/noExplicitAny: as Check
    (test: (value: any) => unknown, expected: string): Check =>
    (value) =>
      test(value) ? undefined : `${show(value)} is not ${expected}`;

/** A function. */
export const isFunction: Check = is((value) => typeof value === "function", "a function");

/** A list whose every entry passes `check`; the problem named is the first entry's that does not. */
export const every =
  (check: Check): Check =>
  (value) =>
    Array.isArray(value) ? value.map(check).find(Boolean) : "must be a list";

/** A payment-identifier id given by the caller (`x402.paymentId`). */
export const checkPaymentId: Check = is(isPaymentId, "a payment id: 16 to 128 characters of a-z, A-Z, 0-9, _ and -");

export function fail(option: string, problem: string): never {
  throw new InvalidConfigError(`${option}: ${problem}.`, { details: { option } });
}

/**
 * Throws `InvalidConfigError`, naming the option (`policy.networks`), for a key that is no option or
 * a value its check refuses. `undefined` means "not given" and is never checked.
 */
export function checkOptions(prefix: string, options: object, checks: Readonly<Record<string, Check>>): void {
  for (const [key, value] of Object.entries(options)) {
    const check = checks[key];
    const problem = !check
      ? `is not an option (options: ${Object.keys(checks).join(", ")})`
      : value === undefined
        ? undefined
        : check(value);
    if (problem) fail(prefix + key, problem);
  }
}
