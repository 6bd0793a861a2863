/**
 * Evaluation and signing: for mutated challenges, random policies and random hooks, the wallet is
 * asked to sign exactly when the test's own oracle (wire rules, what EIP-3009 `exact` can pay, the
 * README's spend policy) says the selected requirement is valid and allowed, and then it signs
 * exactly that requirement. Every refusal is an X402Error with the code the case calls for.
 */
import fc from "fast-check";
import { getAddress } from "viem";
import { describe, expect, it } from "vitest";
import { createX402Client, isX402Error, type PaymentOption } from "../../src";
import { parseChallenge, type PaymentChallenge } from "../../src/entries/protocol";
import type { PreparedPayment } from "../../src/client";
import { exactEvm, type TypedDataRequest } from "../../src/evm";
import { HOSTILE, RESOURCE, challenge } from "./arbitraries";
import {
  caip2Of,
  evmChainId,
  exactEvmCanPay,
  isWireRequirement,
  originAllowed,
  policyAllows,
  type PolicyModel,
} from "./oracle";
import { check, ensure } from "./params";
import { approval, policy, requestUrl, selector, wallet, type Approval, type Selector, type Wallet } from "./policies";
import { v2Challenge, v2Requirement } from "../support/seller";
import { ANVIL_ADDRESS_0 } from "../support/vectors";
import { engineOf } from "../../src/client";

/** The clock exactEvm signs with: the vectors' 2025-02-27T16:00:00Z. */
const NOW_MS = 1740672000000;
const NOW_S = BigInt(NOW_MS / 1000);
/** A well-formed 65-byte signature: the property is about what is signed, not the cryptography. */
const SIGNATURE = `0x${"11".repeat(64)}1b` as const;

/** Mostly well-formed challenges, so most runs get as far as the policy and the wallet. */
const payable = challenge({ field: 200, envelope: 1_000, typical: 12 }, 4);

const show = (v: unknown) => JSON.stringify(v)?.slice(0, 400);
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const decodeHeader = (value: string) => JSON.parse(Buffer.from(value, "base64").toString("utf8"));

export interface Scenario {
  readonly wire: Record<string, unknown>;
  readonly generated: { policy: Record<string, unknown> | undefined; model: PolicyModel; valid: boolean };
  readonly url: string;
  readonly selector: Selector;
  readonly approval: Approval;
  readonly wallet: Wallet;
}

export const scenario: fc.Arbitrary<Scenario> = fc.record({
  // The wire form of the challenge: what a header would carry (JSON has no undefined, no -0).
  wire: payable.map((c) => JSON.parse(JSON.stringify(c) ?? "null")),
  generated: policy,
  url: requestUrl,
  selector,
  approval,
  wallet,
});

/** The client for a scenario: exactEvm with a counting signer, the scenario's policy and hooks. */
export function clientFor(s: Scenario) {
  const calls: TypedDataRequest[] = [];
  const offered: (readonly PaymentOption[])[] = [];
  const approvals: unknown[] = [];
  const signer = {
    address: ANVIL_ADDRESS_0,
    signTypedData: async (request: TypedDataRequest) => {
      calls.push(request);
      if (s.wallet === "rejects") throw Object.assign(new Error("User rejected the request."), { code: 4001 });
      if (s.wallet === "throws") throw new Error("the wallet is locked");
      return (s.wallet === "garbage" ? "not a signature" : SIGNATURE) as `0x${string}`;
    },
  };
  const selectRequirement =
    s.selector.kind === "default"
      ? undefined
      : (options: readonly PaymentOption[]) => {
          offered.push(options);
          if (s.selector.kind === "pick") return options[s.selector.index % options.length];
          if (s.selector.kind === "foreign") return { ...options[0]! };
          if (s.selector.kind === "throws") throw new Error("selector failed");
          return undefined;
        };
  const onBeforePayment =
    s.approval === "absent"
      ? undefined
      : (snapshot: unknown) => {
          approvals.push(snapshot);
          if (s.approval === "throws") throw new Error("hook failed");
          return { true: true, void: undefined, false: false, abort: { abort: true as const, reason: "no" } }[
            s.approval as Exclude<Approval, "absent" | "throws">
          ];
        };
  const client = createX402Client({
    schemes: [exactEvm({ signer, now: () => NOW_MS, randomBytes: (n) => new Uint8Array(n).fill(7) })],
    policy: s.generated.policy,
    ...(selectRequirement ? { selectRequirement } : {}),
    ...(onBeforePayment ? { onBeforePayment } : {}),
  });
  return { client, calls, offered, approvals };
}

/** The oracle's verdict on each requirement: payable, or the kind of rejection the client must report. */
export function classify(
  wire: Record<string, unknown>,
  model: PolicyModel,
  url: string,
): ("payable" | "invalid" | "unsupported" | "policy")[] {
  const version = wire.x402Version as 1 | 2;
  const originOk = originAllowed(model, url);
  return (wire.accepts as unknown[]).map((r) => {
    if (!isWireRequirement(r, version)) return "invalid";
    // A refused origin refuses everything valid, before schemes are asked.
    if (!originOk) return "policy";
    if (!exactEvmCanPay(r, version)) return "unsupported";
    return policyAllows(model, r, version, wire.resource, url) ? "payable" : "policy";
  });
}

/** The indices of the requirements the client may pay, in server order. */
export function allowedIndices(wire: Record<string, unknown>, model: PolicyModel, url: string): number[] {
  return classify(wire, model, url).flatMap((verdict, i) => (verdict === "payable" ? [i] : []));
}

function expectCode(error: unknown, code: string, what: string) {
  ensure(isX402Error(error), () => `${what}: threw a non-X402Error ${String(error)}`);
  ensure(error.code === code, () => `${what}: expected ${code}, got ${error.code}: ${error.message}`);
}

/** Runs one scenario through evaluate + createPayment and checks it against the oracle. */
export async function checkScenario(s: Scenario): Promise<void> {
  // A policy with any invalid option is refused when the client is made, before any 402.
  let made: ReturnType<typeof clientFor> | undefined;
  let thrown: unknown;
  try {
    made = clientFor(s);
  } catch (error) {
    thrown = error;
  }
  if (!s.generated.valid) return expectCode(thrown, "INVALID_CONFIG", `policy ${show(s.generated.policy)}`);
  ensure(made, () => `a valid policy was refused: ${String(thrown)} ${show(s.generated.policy)}`);
  const { client, calls, offered, approvals } = made;

  let parsed: PaymentChallenge;
  try {
    parsed = parseChallenge({ header: Buffer.from(JSON.stringify(s.wire)).toString("base64") });
  } catch {
    return; // Not a challenge at all: the parse property covers it.
  }
  const request = { url: s.url, method: "GET" };
  const verdicts = classify(s.wire, s.generated.model, s.url);
  const allowed = verdicts.flatMap((verdict, i) => (verdict === "payable" ? [i] : []));

  const evaluated = engineOf(client).evaluate(parsed, request);
  ensure(
    sameJson(
      evaluated.options.map((o) => o.requirement.index),
      allowed,
    ),
    () =>
      `payable ${show(evaluated.options.map((o) => o.requirement.index))}, oracle ${show(allowed)} for ${show(s.wire)} policy ${show(s.generated.model)} url ${s.url}`,
  );
  // Every other requirement is rejected, once, with the kind of reason the oracle gives.
  const expectedRejections = verdicts.flatMap((code, index) => (code === "payable" ? [] : [{ index, code }]));
  ensure(
    sameJson(
      evaluated.rejected.map(({ index, code }) => ({ index, code })),
      expectedRejections,
    ),
    () =>
      `rejected ${show(evaluated.rejected.map(({ index, code }) => [index, code]))}, oracle ${show(expectedRejections.map(({ index, code }) => [index, code]))}`,
  );
  ensure(
    evaluated.rejected.every((r) => typeof r.reason === "string" && r.reason !== ""),
    "every rejection has a reason",
  );

  let payment: PreparedPayment | undefined;
  thrown = undefined;
  try {
    payment = await engineOf(client).createPayment(parsed, request);
  } catch (error) {
    thrown = error;
  }
  const refuse = (code: string, what: string) => {
    ensure(calls.length === 0, () => `${what}: the wallet was called`);
    expectCode(thrown, code, what);
  };
  if (allowed.length === 0) return refuse("NO_PAYABLE_REQUIREMENT", "nothing allowed");
  if (s.selector.kind !== "default") {
    ensure(
      offered.length === 1 &&
        sameJson(
          offered[0]!.map((o) => o.requirement.index),
          allowed,
        ),
      "the selector sees exactly the allowed requirements",
    );
    if (s.selector.kind === "none" || s.selector.kind === "throws")
      return refuse("PAYMENT_REFUSED", `selector ${s.selector.kind}`);
    if (s.selector.kind === "foreign") return refuse("INVALID_CONFIG", "selector returned a copy");
  }
  const chosen = s.selector.kind === "pick" ? allowed[s.selector.index % allowed.length]! : allowed[0]!;
  const raw = (s.wire.accepts as Record<string, unknown>[])[chosen]!;
  const version = s.wire.x402Version as 1 | 2;
  const amount = (version === 2 ? raw.amount : raw.maxAmountRequired) as string;
  if (s.approval !== "absent") {
    const snapshot = approvals[0] as { amount: string; payTo: string; network: string } | undefined;
    ensure(
      approvals.length === 1 && snapshot?.amount === amount && snapshot.payTo === raw.payTo,
      "onBeforePayment sees the chosen requirement",
    );
    if (s.approval === "false" || s.approval === "abort" || s.approval === "throws")
      return refuse("PAYMENT_REFUSED", `onBeforePayment ${s.approval}`);
  }

  // The wallet is asked once, for exactly the chosen requirement.
  ensure(calls.length === 1, () => `wallet called ${calls.length} times`);
  const typed = calls[0]!;
  const message = typed.message as Record<string, bigint | string>;
  const chainId = evmChainId(caip2Of(raw, version));
  const extra = raw.extra as { name: string; version: string };
  ensure(
    message.to === getAddress(raw.payTo as string),
    () => `signed to ${String(message.to)}, requirement payTo ${String(raw.payTo)}`,
  );
  ensure(message.value === BigInt(amount), () => `signed value ${String(message.value)}, requirement ${amount}`);
  const validFor = (message.validBefore as bigint) - NOW_S;
  const limit = s.generated.model.maxTimeoutSeconds ?? 900;
  ensure(
    validFor === BigInt(raw.maxTimeoutSeconds as number),
    "validBefore = now + the requirement's maxTimeoutSeconds",
  );
  ensure(limit === false || validFor <= BigInt(limit), () => `valid for ${validFor} s, policy allows ${String(limit)}`);
  ensure(
    (message.validAfter as bigint) <= NOW_S && message.from === ANVIL_ADDRESS_0,
    "validAfter not in the future; from the payer",
  );
  ensure(
    typed.domain.chainId === chainId &&
      typed.domain.verifyingContract === getAddress(raw.asset as string) &&
      typed.domain.name === extra.name &&
      typed.domain.version === extra.version,
    () => `domain ${show(typed.domain)} for ${show(raw)}`,
  );
  if (s.wallet === "rejects") return expectCode(thrown, "USER_REJECTED", "the wallet refused");
  if (s.wallet !== "signs") return expectCode(thrown, "SIGNING_FAILED", `the wallet ${s.wallet}`);
  ensure(payment && thrown === undefined, () => `signed, then threw ${String(thrown)}`);

  // The header carries what was signed, and echoes the requirement verbatim (v2).
  const sent = decodeHeader(payment.headerValue);
  const authorization = sent.payload.authorization;
  ensure(
    authorization.to === message.to &&
      authorization.value === amount &&
      authorization.validBefore === String(message.validBefore),
    "the header's authorization is the signed one",
  );
  if (version === 2) {
    ensure(
      payment.headerName === "PAYMENT-SIGNATURE" && sent.x402Version === 2 && sameJson(sent.accepted, raw),
      "v2: PAYMENT-SIGNATURE, accepted verbatim",
    );
    ensure(
      s.wire.resource === undefined ? !("resource" in sent) : sameJson(sent.resource, s.wire.resource),
      "v2: resource echoed",
    );
  } else {
    ensure(
      payment.headerName === "X-PAYMENT" &&
        sent.x402Version === 1 &&
        sent.scheme === raw.scheme &&
        sent.network === raw.network,
      "v1: X-PAYMENT, scheme and network",
    );
  }
}

describe("fuzz: evaluate + createPayment", () => {
  it("the wallet signs exactly when the selected requirement is valid and allowed, and signs exactly it", async () => {
    await check("createPayment vs policy oracle", fc.asyncProperty(scenario, checkScenario), 200);
  });

  it("regression: validBefore is exact for a maxTimeoutSeconds near 2^53 (was: a float sum, rounded past the requirement's limit)", async () => {
    const { client, calls } = clientFor({
      wire: {},
      generated: { policy: { maxTimeoutSeconds: false }, model: {}, valid: true },
      url: RESOURCE,
      selector: { kind: "default" },
      approval: "absent",
      wallet: "signs",
    });
    const accepted = { ...v2Requirement(), maxTimeoutSeconds: Number.MAX_SAFE_INTEGER };
    const challenge = parseChallenge({
      header: Buffer.from(JSON.stringify(v2Challenge({ accepts: [accepted] }))).toString("base64"),
    });
    const payment = await engineOf(client).createPayment(challenge, { url: RESOURCE, method: "GET" });
    const validBefore = NOW_S + BigInt(Number.MAX_SAFE_INTEGER);
    expect(calls[0]!.message.validBefore).toBe(validBefore);
    expect(decodeHeader(payment.headerValue).payload.authorization.validBefore).toBe(String(validBefore));
  });

  it("hostile challenges never reach the wallet unless valid and allowed", async () => {
    const hostile = fc
      .tuple(scenario, challenge(HOSTILE, 4))
      .map(([s, c]) => ({ ...s, wire: JSON.parse(JSON.stringify(c) ?? "null") }));
    await check("createPayment on hostile challenges", fc.asyncProperty(hostile, checkScenario), 150);
  });
});
