/**
 * Errors a program can act on: literal codes, the cause chain kept and walkable, a user's refusal
 * told apart from a failure, key material scrubbed from foreign text only, the signed header kept off
 * the enumerable details, and server reasons read as sentences.
 */
import { UserRejectedRequestError } from "viem";
import { describe, expect, it } from "vitest";
import {
  InvalidConfigError,
  PaymentOutcomeUnknownError,
  PaymentRejectedError,
  SigningError,
  X402Error,
  createX402Client,
  isX402Error,
  parseChallenge,
} from "../../src";
import { exactEvm } from "../../src/evm";
import { describeRejection, toWalletError } from "../../src/errors";
import { ANVIL_KEY_0 } from "../support/vectors";
import { account, encodeHeader, v2Challenge } from "../support/seller";

const request = { url: "https://seller.example/premium", method: "GET" };
const challenge = parseChallenge({ header: encodeHeader(v2Challenge()) });

/** createPayment with a wallet whose signTypedData throws `thrown`. */
async function signingFailure(thrown: unknown) {
  const signer = { address: account.address, signTypedData: () => Promise.reject(thrown) };
  return createX402Client({ schemes: [exactEvm({ signer })] })
    .createPayment(challenge, request)
    .then(() => {
      throw new Error("expected a failure");
    }, (e: unknown) => e as X402Error);
}

describe("a wallet's refusal", () => {
  it.each([
    { name: "viem's UserRejectedRequestError", thrown: () => new UserRejectedRequestError(new Error("denied")) },
    { name: "an EIP-1193 error with code 4001", thrown: () => Object.assign(new Error("User denied message signature"), { code: 4001 }) },
    { name: "a wallet adapter's message", thrown: () => new Error("User rejected the request.") },
    { name: "a 4001 deep in the cause chain", thrown: () => new Error("outer", { cause: { code: 4001, message: "inner" } }) },
  ])("$name → USER_REJECTED, with the wallet's error as the cause", async ({ thrown }) => {
    const original = thrown();
    const error = await signingFailure(original);
    expect(error.code).toBe("USER_REJECTED");
    expect(error.phase).toBe("sign");
    expect(error.cause).toBe(original);
    expect(error.walk((e) => e === original)).toBe(original);
  });

  it("any other wallet failure → SIGNING_FAILED, the original reachable by walk()", async () => {
    const root = new TypeError("ledger disconnected");
    const error = await signingFailure(new Error("signing failed", { cause: root }));
    expect(error).toBeInstanceOf(SigningError);
    expect(error.code).toBe("SIGNING_FAILED");
    expect(error.walk()).toBe(root);
    expect(error.walk((e) => e instanceof TypeError)).toBe(root);
    expect(error.walk((e) => e instanceof RangeError)).toBeNull();
  });
});

describe("redaction covers key material in foreign text, and nothing else", () => {
  const key = ANVIL_KEY_0.slice(2);

  it("a wallet error carrying a key is scrubbed in place: same object, readable fields, no key anywhere", async () => {
    const original = Object.assign(new Error(`cannot sign with ${ANVIL_KEY_0}`), { code: -32000, details: `key=${key}`, metaMessages: [`k ${key}`] });
    const error = await signingFailure(original);
    expect(error.cause).toBe(original);
    expect((error.cause as { code: number }).code).toBe(-32000);
    const everything = [error.message, String(error), error.stack, JSON.stringify(error), original.message, original.stack, original.details, ...original.metaMessages];
    for (const text of everything) expect(String(text).toLowerCase()).not.toContain(key.toLowerCase());
    expect(original.message).toBe("cannot sign with [redacted]");
  });

  it("a frozen error carrying a key is replaced by a scrubbed copy", async () => {
    const original = Object.freeze(new Error(`bad ${key}`));
    const error = await signingFailure(original);
    expect(error.cause).not.toBe(original);
    expect((error.cause as Error).message).toBe("bad [redacted]");
  });

  it("transaction hashes, nonces and signatures in x402-pay's own messages stay readable", () => {
    const tx = `0x${"ab".repeat(32)}`;
    const error = new PaymentRejectedError(describeRejection(`settlement ${tx} reverted`), {
      details: { reason: `settlement ${tx} reverted`, status: 402, requirement: {}, payer: account.address },
    });
    expect(error.message).toContain(tx);
    expect(new PaymentOutcomeUnknownError(`nonce ${tx} is pending`).message).toContain(tx);
  });
});

describe("the signed header", () => {
  it("is reachable on details but not enumerable, so logging details does not log it", () => {
    const paymentHeader = { name: "PAYMENT-SIGNATURE", value: "eyJzaWduZWQiOnRydWV9" };
    const error = new PaymentOutcomeUnknownError("no answer", {
      details: { url: request.url, requirement: {}, payer: account.address },
      hidden: { paymentHeader, payload: { signed: true } },
    });
    expect(error.details.paymentHeader).toEqual(paymentHeader);
    expect(error.details.payload).toEqual({ signed: true });
    expect(Object.keys(error.details)).toEqual(["url", "requirement", "payer"]);
    expect(JSON.stringify(error)).not.toContain(paymentHeader.value);
    expect(JSON.stringify(error.details)).not.toContain(paymentHeader.value);
    expect(Object.isFrozen(error.details)).toBe(true);
  });
});

describe("codes and classes", () => {
  it("each class has its literal code, its phase, its name, and is recognised across copies by isX402Error", () => {
    const error = new InvalidConfigError("bad", { details: { option: "policy.networks" } });
    expect([error.name, error.code, error.phase, error.details.option]).toEqual(["InvalidConfigError", "INVALID_CONFIG", "config", "policy.networks"]);
    expect(isX402Error(error)).toBe(true);
    expect(isX402Error(new Error("x"))).toBe(false);
    expect(isX402Error({ code: "INVALID_CONFIG" })).toBe(false);
  });

  it("toWalletError passes X402Errors through unchanged", () => {
    const error = new InvalidConfigError("bad");
    expect(toWalletError(error, "x")).toBe(error);
  });
});

describe("server rejections read as sentences, the raw code kept", () => {
  it.each([
    ["insufficient_funds", /balance is too low/],
    ["invalid_exact_evm_insufficient_balance", /balance is too low/],
    ["No matching payment requirements", /terms changed after the 402/],
    ["permit2_allowance_required", /Permit2 approval/],
    ["invalid_exact_evm_nonce_already_used", /already used/],
    ["invalid_exact_evm_payload_authorization_valid_before", /clock/],
    ["invalid_exact_evm_payload_signature", /signature did not verify/],
    ["invalid_exact_evm_transaction_simulation_failed", /simulation/],
    ["invalid_exact_svm_payload_recipient_mismatch", /does not match/],
    ["unsupported_scheme", /does not support/],
    ["settle_failed", /nothing was charged/],
  ])("%s", (reason, sentence) => {
    const text = describeRejection(reason);
    expect(text).toMatch(sentence);
    expect(text).toContain(`(${reason})`);
  });

  it("an unknown code is named as it is; no code at all is said plainly", () => {
    expect(describeRejection("vendor_specific_thing")).toBe("The server rejected the payment (vendor_specific_thing).");
    expect(describeRejection(undefined)).toMatch(/gave no reason/);
  });
});
