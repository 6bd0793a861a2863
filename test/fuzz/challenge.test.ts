/**
 * parseChallenge on arbitrary input: it returns a challenge whose requirements all follow the wire
 * rules (judged by the test's own predicate), or throws InvalidChallengeError / ChallengeNotFoundError
 * exactly when the oracle says so. Never another exception, never unbounded time.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { isX402Error } from "../../src";
import { parseChallenge, type PaymentChallenge } from "../../src/entries/protocol";
import { challengeInput, type ChallengeInput } from "./arbitraries";
import { expectedChallenge, isChainId, isWireRequirement } from "./oracle";
import { bounded, check, ensure } from "./params";

const show = (v: unknown) =>
  typeof v === "string" ? JSON.stringify(v.slice(0, 200)) : (JSON.stringify(v)?.slice(0, 300) ?? String(v));
/** Equal JSON values; not recursive in JS, so values nested thousands deep compare too. */
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Checks one parse against the oracle; throws (fails the run) on any disagreement. */
export function checkParse(input: ChallengeInput): void {
  const want = expectedChallenge(input);
  let got: PaymentChallenge | undefined;
  let thrown: unknown;
  bounded(() => {
    try {
      got = parseChallenge(input);
    } catch (error) {
      thrown = error;
    }
  });
  if (!want.ok) {
    ensure(
      thrown !== undefined,
      () => `accepted a challenge the wire rules refuse (${want.code}): ${show(input.header ?? input.body)}`,
    );
    ensure(isX402Error(thrown), () => `threw a non-X402Error: ${String(thrown)}`);
    ensure(
      thrown.code === want.code,
      () => `threw ${thrown && (thrown as { code: string }).code}, expected ${want.code}: ${(thrown as Error).message}`,
    );
    return;
  }
  ensure(thrown === undefined, () => `refused a valid challenge: ${String(thrown)}`);
  const challenge = got!;
  const wire = want.challenge;
  const version = wire.x402Version;
  ensure(challenge.x402Version === version && challenge.source === want.source, "version and source");
  ensure(challenge.error === (wire.error ?? undefined), "error is passed through (null read as none)");
  ensure(
    want.source === "header" || challenge.raw === wire || sameJson(challenge.raw, wire),
    "raw is the challenge as received",
  );

  // Every element of `accepts` lands in exactly one of the two lists, in order, by the wire rules.
  const valid: number[] = [];
  const invalid: number[] = [];
  for (const [i, r] of wire.accepts.entries()) (isWireRequirement(r, version) ? valid : invalid).push(i);
  ensure(
    sameJson(
      challenge.requirements.map((r) => r.index),
      valid,
    ),
    "the valid requirements, in order",
  );
  ensure(
    sameJson(
      challenge.invalid.map((r) => r.index),
      invalid,
    ),
    "the invalid requirements, in order",
  );
  for (const bad of challenge.invalid)
    ensure(typeof bad.reason === "string" && bad.reason !== "", "each invalid requirement has a reason");

  for (const r of challenge.requirements) {
    const raw = wire.accepts[r.index] as Record<string, unknown>;
    ensure(isWireRequirement(r.raw, version), () => `requirement #${r.index} breaks the wire rules: ${show(r.raw)}`);
    ensure(sameJson(r.raw, raw), "raw is the element as received");
    ensure(r.x402Version === version, "version");
    ensure(
      r.scheme === raw.scheme && r.network === raw.network && r.asset === raw.asset && r.payTo === raw.payTo,
      "fields as offered",
    );
    ensure(r.amount === (version === 2 ? raw.amount : raw.maxAmountRequired), "amount (v1: maxAmountRequired)");
    ensure(r.maxTimeoutSeconds === raw.maxTimeoutSeconds, "maxTimeoutSeconds");
    ensure(sameJson(r.extra, raw.extra ?? {}), "extra, {} when absent or null");
    ensure(r.caip2 === (isChainId(raw.network) ? raw.network : undefined), "caip2: the network when it is CAIP-2");
  }
}

describe("fuzz: parseChallenge", () => {
  it("returns only wire-valid requirements or throws INVALID_CHALLENGE / CHALLENGE_NOT_FOUND, as the oracle says", async () => {
    await check("parseChallenge", fc.property(challengeInput, checkParse), 300);
  });
});
