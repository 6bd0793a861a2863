/**
 * Errors a program can act on: literal codes, the cause chain kept and walkable, a user's refusal
 * told apart from a failure, key material scrubbed from foreign text only, the signed header kept off
 * the enumerable details, and server reasons read as sentences.
 */
import { getBase58Decoder } from "@solana/kit";
import { UserRejectedRequestError } from "viem";
import { describe, expect, it } from "vitest";
import { getEventListeners } from "node:events";
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { fileURLToPath } from "node:url";
import * as entries from "../../src/entries/errors";
import {
  InvalidConfigError,
  NoPayableRequirementError,
  PaymentOutcomeUnknownError,
  PaymentRejectedError,
  SigningError,
  redactSecrets,
} from "../../src/entries/errors";
import { type X402Error, builderCode, createX402Client, isX402Error, type X402ErrorCode } from "../../src";
import { parseChallenge } from "../../src/entries/protocol";
import { exactEvm, permit2Allowance, permit2ApprovalTransaction } from "../../src/evm";
import { exactSvm } from "../../src/svm";
import { DEVNET, buyer } from "../support/svm";
import {
  describeRejection,
  raceAbort,
  throwIfAborted,
  toWalletError,
  type RejectedRequirement,
} from "../../src/errors";
import { ANVIL_KEY_0 } from "../support/vectors";
import { account, encodeHeader, v2Challenge } from "../support/seller";
import { engineOf } from "../../src/client";
import { exitCodeOf } from "../../src/cli/exit";

const request = { url: "https://seller.example/premium", method: "GET" };
const challenge = parseChallenge({ header: encodeHeader(v2Challenge()) });

/** createPayment with a wallet whose signTypedData throws `thrown`. */
async function signingFailure(thrown: unknown) {
  const signer = { address: account.address, signTypedData: () => Promise.reject(thrown) };
  return engineOf(createX402Client({ schemes: [exactEvm({ signer })] }))
    .createPayment(challenge, request)
    .then(
      () => {
        throw new Error("expected a failure");
      },
      (e: unknown) => e as X402Error,
    );
}

describe("a wallet's refusal", () => {
  it.each([
    { name: "viem's UserRejectedRequestError", thrown: () => new UserRejectedRequestError(new Error("denied")) },
    {
      name: "an EIP-1193 error with code 4001",
      thrown: () => Object.assign(new Error("User denied message signature"), { code: 4001 }),
    },
    { name: "a wallet adapter's message", thrown: () => new Error("User rejected the request.") },
    {
      name: "a 4001 deep in the cause chain",
      thrown: () => new Error("outer", { cause: { code: 4001, message: "inner" } }),
    },
    {
      name: "ethers' ACTION_REJECTED, whatever its message",
      thrown: () => Object.assign(new Error("Aktion abgelehnt"), { code: "ACTION_REJECTED" }),
    },
    { name: "a message saying it was denied by user", thrown: () => new Error("Request denied by user") },
    { name: "a message saying it was rejected by the user", thrown: () => new Error("Signature rejected by the user") },
  ])("$name → USER_REJECTED, with the wallet's error as the cause", async ({ thrown }) => {
    const original = thrown();
    const error = await signingFailure(original);
    expect(error.code).toBe("USER_REJECTED");
    expect(error.phase).toBe("sign");
    expect(error.cause).toBe(original);
    expect(error.walk((e) => e === original)).toBe(original);
  });

  it("the message says what was declined and that nothing was paid", () => {
    expect(toWalletError(new Error("User rejected the request."), "the payment").message).toBe(
      "The wallet's user declined to sign the payment: nothing was paid.",
    );
    expect(toWalletError(new Error("ledger disconnected"), "the payment").message).toBe(
      "Signing the payment failed: nothing was paid.",
    );
  });

  it("a wallet error whose cause chain is a cycle is SIGNING_FAILED, and the check ends", () => {
    const a: Error & { cause?: unknown } = new Error("a");
    const b = new Error("b", { cause: a });
    a.cause = b;
    expect(toWalletError(a, "the payment").code).toBe("SIGNING_FAILED");
  });

  it("a refusal is looked for 16 errors deep, no deeper", () => {
    const chain = (depth: number) => {
      let error: Error = Object.assign(new Error("refused"), { code: 4001 });
      for (let i = 1; i < depth; i++) error = new Error(`wrapper ${i}`, { cause: error });
      return error;
    };
    expect(toWalletError(chain(16), "the payment").code).toBe("USER_REJECTED");
    expect(toWalletError(chain(17), "the payment").code).toBe("SIGNING_FAILED");
  });

  it("a thrown function is not read as a wallet's error, even one named like a refusal (a class thrown without new)", () => {
    expect(toWalletError(UserRejectedRequestError, "the payment").code).toBe("SIGNING_FAILED");
    expect(
      toWalletError(
        Object.assign(() => {}, { code: 4001 }),
        "the payment",
      ).code,
    ).toBe("SIGNING_FAILED");
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
    const original = Object.assign(new Error(`cannot sign with ${ANVIL_KEY_0}`), {
      code: -32000,
      details: `key=${key}`,
      metaMessages: [`k ${key}`],
    });
    const error = await signingFailure(original);
    expect(error.cause).toBe(original);
    expect((error.cause as { code: number }).code).toBe(-32000);
    const everything = [
      error.message,
      String(error),
      error.stack,
      JSON.stringify(error),
      original.message,
      original.stack,
      original.details,
      ...original.metaMessages,
    ];
    for (const text of everything) expect(String(text).toLowerCase()).not.toContain(key.toLowerCase());
    expect(original.message).toBe("cannot sign with [redacted]");
  });

  it("a frozen error carrying a key is replaced by a scrubbed copy, with its name", async () => {
    const original = Object.freeze(new TypeError(`bad ${key}`));
    const error = await signingFailure(original);
    expect(error.cause).not.toBe(original);
    expect((error.cause as Error).message).toBe("bad [redacted]");
    expect((error.cause as Error).name).toBe("TypeError");
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

describe("a key given where an option goes is never repeated in the configuration error", () => {
  const key = ANVIL_KEY_0;
  const solanaKey = getBase58Decoder().decode(new Uint8Array(64).fill(7));
  const keyFile = `[${Array.from({ length: 64 }, (_, i) => i + 100).join(",")}]`;
  const signer = { address: account.address, signTypedData: async () => "0x" as const };
  const client = (options: object) => () => createX402Client({ schemes: [exactEvm({ signer })], ...options });

  it.each<{ where: string; make: () => unknown }>([
    { where: "policy.origins", make: client({ policy: { origins: [key] } }) },
    { where: "policy.networks", make: client({ policy: { networks: [key] } }) },
    { where: "policy.maxAmountPerPayment", make: client({ policy: { maxAmountPerPayment: solanaKey } }) },
    {
      where: "policy.assetCaps",
      make: client({ policy: { assetCaps: [{ network: "eip155:1", asset: key, maxAmount: keyFile }] } }),
    },
    { where: "an unknown option's value", make: client({ policy: { maxAmountPerPayment: [key] } }) },
    { where: "the permit2 rpc", make: () => permit2Allowance({ rpc: key }) },
    { where: "the exactSvm rpc", make: () => exactSvm({ signer: buyer, rpc: { [DEVNET]: solanaKey } as never }) },
    { where: "a builder code", make: () => builderCode([key]) },
    {
      where: "permit2ApprovalTransaction's token",
      make: () => permit2ApprovalTransaction({ token: key, amount: "1" }),
    },
  ])("$where", async ({ make }) => {
    const error = await Promise.resolve()
      .then(make)
      .then(
        () => undefined,
        (e: X402Error) => e,
      );
    expect(error).toMatchObject({ code: "INVALID_CONFIG" });
    const shown = [error!.message, error!.shortMessage, String(error), error!.stack, JSON.stringify(error)].join(" ");
    for (const secret of [key.slice(2), solanaKey, keyFile.slice(1, -1)]) expect(shown).not.toContain(secret);
  });
});

describe("redactSecrets: key-shaped text is replaced whole, and nothing else is touched", () => {
  const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";
  // A payment header's shape: base64 JSON of a payload, with `+` and `/` in it.
  const HEADER = btoa(JSON.stringify({ x402Version: 2, payload: { signature: `0x${"fb".repeat(65)}` }, n: "~~~???" }));
  const hex = ANVIL_KEY_0.slice(2);
  // A fresh 64-byte secret (a Solana key file's shape), with three-digit bytes at both ends.
  const secret = crypto.getRandomValues(new Uint8Array(64));
  secret[0] = 201;
  secret[63] = 187;
  const base58 = getBase58Decoder().decode(secret);

  it.each([
    ["a 0x-prefixed 32-byte hex key", `key=${ANVIL_KEY_0};`, "key=[redacted];"],
    ["a bare hex key in upper case", `key ${hex.toUpperCase()} end`, "key [redacted] end"],
    ["a 64-byte key in base58", `keypair ${base58} is locked`, "keypair [redacted] is locked"],
    ["a key file's JSON array", `secret [${[...secret].join(",")}] loaded`, "secret [[redacted]] loaded"],
    ["a pretty-printed JSON array", JSON.stringify([...secret], null, 2), "[\n  [redacted]\n]"],
    ["a Uint8Array's text", `bytes:${secret.toString()} end`, "bytes:[redacted] end"],
    [
      "32 byte values, the fewest that make a key",
      `seed ${Array.from({ length: 32 }, (_, i) => 100 + i).join(", ")} end`,
      "seed [redacted] end",
    ],
    ["a twelve-word mnemonic", `mnemonic "${ANVIL_MNEMONIC}" refused`, 'mnemonic "[redacted]" refused'],
    [
      "a 24-word mnemonic, words of three and eight letters",
      `phrase: ${Array.from({ length: 24 }, (_, i) => (i % 2 ? "zoo" : "absolute")).join(" ")}.`,
      "phrase: [redacted].",
    ],
    ["a signed payment header's value", `sent ${HEADER} and lost`, "sent [redacted] and lost"],
    [
      "a URL-safe, unpadded header",
      `x=${HEADER.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")}`,
      "x=[redacted]",
    ],
  ])("%s", (_, text, redacted) => {
    expect(redactSecrets(text)).toBe(redacted);
  });

  it.each([
    ["31 hex bytes", `id 0x${"ab".repeat(31)}`],
    ["a 65-byte signature in hex", `signature 0x${"1c".repeat(65)}`],
    ["31 comma-separated numbers", `chains ${Array.from({ length: 31 }, (_, i) => 100 + i).join(", ")}`],
    ["a few numbers", "versions 1, 2 and 10,20"],
    ["base58 text longer than a key", `blob ${"3".repeat(91)}`],
    ["base58 text shorter than a key", `address ${"3".repeat(85)}`],
    ["eleven words in a row", `said: ${ANVIL_MNEMONIC.split(" ").slice(1).join(" ")}`],
    ["a sentence broken by short words", "the seller is not able to settle this payment now so try again in a minute"],
    ["words of nine letters break a run", `${"test ".repeat(6)}signature ${"test ".repeat(6)}`],
    ["Capitalised words break a run", "Test test test test test test Test test test test test test"],
    ["a short base64 JSON", "eyJhIjoxfQ=="],
    ["base64 JSON inside a word", `x${HEADER}`],
  ])("%s stays as it is", (_, text) => {
    expect(redactSecrets(text)).toBe(text);
  });
});

describe("scrubbing a wallet's error keeps what is not a key", () => {
  const key = ANVIL_KEY_0;

  it("a thrown string becomes an Error with that text", async () => {
    const error = await signingFailure("ledger locked");
    expect(error.code).toBe("SIGNING_FAILED");
    expect(error.cause).toBeInstanceOf(Error);
    expect((error.cause as Error).message).toBe("ledger locked");
  });

  it.each([
    ["null", null],
    ["undefined", undefined],
  ])("a rejection with %s is SIGNING_FAILED with that cause, and walk() ends at the error", async (_, thrown) => {
    const error = await signingFailure(thrown);
    expect(error.code).toBe("SIGNING_FAILED");
    expect(error.cause).toBe(thrown);
    expect(error.walk()).toBe(error);
    expect(error.walk((e) => e === thrown)).toBeNull();
  });

  it("string arrays are scrubbed entry by entry; an array with nothing to scrub is the same array", async () => {
    const hints = ["try again", "unlock the device"];
    const original = Object.assign(new Error("signing failed"), { metaMessages: ["wallet:", `secret ${key}`], hints });
    const error = await signingFailure(original);
    expect(error.cause).toBe(original);
    expect(original.metaMessages).toEqual(["wallet:", "secret [redacted]"]);
    expect(original.hints).toBe(hints);
    expect(hints).toEqual(["try again", "unlock the device"]);
  });

  it("an AggregateError's errors are scrubbed in place, strings beside them too", async () => {
    const first = new Error(`wallet 1: ${key}`);
    const original = new AggregateError([first, `wallet 2: ${key}`], "every wallet failed");
    const error = await signingFailure(original);
    expect(error.cause).toBe(original);
    expect(original.errors).toEqual([first, "wallet 2: [redacted]"]);
    expect(original.errors[0]).toBe(first);
    expect(first.message).toBe("wallet 1: [redacted]");
  });

  it("fields that are not text are left as they are: same values, same arrays", async () => {
    const args = [1, { a: 1 }, "x", null];
    const data = Object.assign(Object.create(null) as object, { raw: "0x1234" });
    const original = Object.assign(new Error(`cannot sign with ${key}`), { args, data, code: 4100 });
    const error = await signingFailure(original);
    expect(error.cause).toBe(original);
    expect(original.args).toBe(args);
    expect(args).toEqual([1, { a: 1 }, "x", null]);
    expect(original.data).toBe(data);
    expect(original.message).toBe("cannot sign with [redacted]");
  });

  it("a field whose setter ignores the scrubbed text: the error is replaced by a scrubbed copy", async () => {
    const original = new Error("signing failed");
    Object.defineProperty(original, "details", { get: () => `key ${key}`, set: () => {}, enumerable: true });
    const error = await signingFailure(original);
    expect(error.code).toBe("SIGNING_FAILED");
    expect(error.cause).not.toBe(original);
    expect(error.cause).toBeInstanceOf(Error);
    expect((error.cause as Error).message).toBe("signing failed");
    expect((error.cause as { details?: unknown }).details).toBeUndefined();
  });

  it("a frozen object without a prototype or a message: a scrubbed copy named Error", async () => {
    const original = Object.freeze(Object.assign(Object.create(null) as object, { reason: `key ${key}` }));
    const error = await signingFailure(original);
    expect(error.code).toBe("SIGNING_FAILED");
    const cause = error.cause as Error;
    expect(cause).toBeInstanceOf(Error);
    expect([cause.name, cause.message]).toEqual(["Error", "[object Object]"]);
  });

  it.each(["message", "name"])(
    "an error whose %s getter throws: SIGNING_FAILED with a scrubbed copy, not the getter's error",
    async (field) => {
      const original = new Error(`cannot sign with ${key}`);
      Object.defineProperty(original, field, {
        get() {
          throw new Error("getter failed");
        },
      });
      const error = await signingFailure(original);
      expect(error).toBeInstanceOf(SigningError);
      expect(error.cause).toBeInstanceOf(Error);
      // Compared by hand: vitest would read the throwing getter to describe `original`.
      expect(error.cause === original).toBe(false);
      expect(String((error.cause as Error).message)).not.toContain(key.slice(2));
    },
  );

  it("a cause chain is scrubbed nine errors deep; past that it is cut, so nothing unscrubbed stays reachable", async () => {
    let chain = new Error(`bottom ${key}`);
    for (let i = 11; i > 0; i--) chain = new Error(`level ${i}`, { cause: chain });
    const error = await signingFailure(chain);
    const reached: unknown[] = [];
    error.walk((e) => (reached.push(e), false));
    expect(reached).toHaveLength(1 + 9);
    expect(reached.map((e) => (e as Error).message).slice(1)).toEqual(
      Array.from({ length: 9 }, (_, i) => `level ${i + 1}`),
    );
  });

  it("so are errors held by AggregateErrors", async () => {
    let nested: Error = new Error(`bottom ${key}`);
    for (let i = 0; i < 11; i++) nested = new AggregateError([nested], `level ${i}`);
    const error = await signingFailure(nested);
    let depth = 0;
    for (let e: unknown = error.cause; e instanceof AggregateError; e = e.errors[0]) depth++;
    expect(depth).toBe(9);
  });

  it("an X402Error as a cause is kept as it is: x402-pay's own words are not scrubbed", () => {
    const tx = `0x${"ab".repeat(32)}`;
    const rejected = new PaymentRejectedError(describeRejection(`settlement ${tx} reverted`), {
      details: { reason: `settlement ${tx} reverted`, status: 402, requirement: {}, payer: account.address },
    });
    const error = new PaymentOutcomeUnknownError("the retry failed", { cause: rejected });
    expect(error.cause).toBe(rejected);
    expect(rejected.message).toContain(tx);
  });
});

describe("walk() and isX402Error", () => {
  it("walk() ends on a cycle", () => {
    const a = new SigningError("a");
    const b = new SigningError("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(b.walk(() => false)).toBeNull();
    expect([a, b]).toContain(b.walk());
  });

  it("walk(fn) asks once about an error that is its own cause", () => {
    const error = new SigningError("a");
    (error as { cause?: unknown }).cause = error;
    let asked = 0;
    expect(error.walk(() => (asked++, false))).toBeNull();
    expect(asked).toBe(1);
    expect(error.walk()).toBe(error);
  });

  it("on a long chain, walk() stops 16 causes down and walk(fn) asks about the 16 errors above that", () => {
    const chain = [new SigningError("0")];
    for (let i = 1; i < 20; i++) chain.push(new SigningError(String(i), { cause: chain[i - 1] }));
    const top = chain[19]!;
    expect(top.walk()).toBe(chain[19 - 16]);
    expect(top.walk((e) => e === chain[19 - 15])).toBe(chain[19 - 15]);
    expect(top.walk((e) => e === chain[19 - 16])).toBeNull();
  });

  it("an error from another copy of x402-pay (ESM beside CJS, a bundle) is recognised by its global brand", () => {
    const foreign = Object.assign(new Error("from another copy"), { code: "PAYMENT_REJECTED" });
    Object.defineProperty(foreign, Symbol.for("x402-pay.error"), { value: true });
    expect(isX402Error(foreign)).toBe(true);
  });

  it.each([null, undefined, "PAYMENT_REJECTED", 402])("isX402Error(%j) is false", (value) => {
    expect(isX402Error(value)).toBe(false);
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
    expect([error.name, error.code, error.phase, error.details.option]).toEqual([
      "InvalidConfigError",
      "INVALID_CONFIG",
      "config",
      "policy.networks",
    ]);
    expect(isX402Error(error)).toBe(true);
    expect(isX402Error(new Error("x"))).toBe(false);
    expect(isX402Error({ code: "INVALID_CONFIG" })).toBe(false);
  });

  it("PaymentRejectedError is named as its class", () => {
    const error = new PaymentRejectedError("rejected", {
      details: { reason: "settle_failed", status: 402, requirement: {}, payer: account.address },
    });
    expect([error.name, error.code, error.phase, error.reason]).toEqual([
      "PaymentRejectedError",
      "PAYMENT_REJECTED",
      "settle",
      "settle_failed",
    ]);
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

describe("NoPayableRequirementError names what was refused", () => {
  const rejected = (index: number, more: Partial<RejectedRequirement> = {}): RejectedRequirement => ({
    index,
    scheme: "exact",
    network: "eip155:8453",
    amount: "1000",
    asset: "USDC",
    payTo: "0x1",
    code: "policy",
    reason: "over the limit",
    ...more,
  });

  it("an empty accepts list is said plainly", () => {
    const error = new NoPayableRequirementError([]);
    expect([error.name, error.code, error.phase]).toEqual([
      "NoPayableRequirementError",
      "NO_PAYABLE_REQUIREMENT",
      "select",
    ]);
    expect(error.message).toBe("Nothing payable: the server offered no payment requirements.");
    expect(error.details.rejected).toEqual([]);
  });

  it("up to three requirements are each named, with no count of the rest", () => {
    const error = new NoPayableRequirementError([rejected(0), rejected(1, { reason: "no scheme" })]);
    expect(error.message).toBe(
      "Nothing payable: #0 exact on eip155:8453 (1000 of USDC): over the limit; #1 exact on eip155:8453 (1000 of USDC): no scheme.",
    );
  });

  it("past three, the rest are counted", () => {
    const error = new NoPayableRequirementError([0, 1, 2, 3, 4].map((i) => rejected(i)));
    expect(error.message).toMatch(/#2 exact on eip155:8453 \(1000 of USDC\): over the limit; and 2 more\.$/);
    expect(error.message).not.toContain("#3");
    expect(error.rejected).toHaveLength(5);
  });

  it("a value is shown whole up to 66 characters, and cut past that", () => {
    const asset = "a".repeat(66);
    expect(new NoPayableRequirementError([rejected(0, { asset })]).message).toContain(`of ${asset})`);
    expect(new NoPayableRequirementError([rejected(0, { asset: `${asset}b` })]).message).toContain(`of ${asset}…)`);
  });
});

describe("cancellation", () => {
  it("an abort before sending says nothing was paid, with the signal's reason as cause", () => {
    const controller = new AbortController();
    controller.abort(new Error("user navigated away"));
    let thrown: unknown;
    try {
      throwIfAborted(controller.signal);
    } catch (e) {
      thrown = e;
    }
    const error = thrown as X402Error;
    expect([error.name, error.code]).toEqual(["AbortError", "ABORTED"]);
    expect(error.message).toBe("The request was aborted before the payment was sent: nothing was paid.");
    expect(error.cause).toBe(controller.signal.reason);
  });

  it("raceAbort leaves no listener on a signal that outlives the work (one signal for many requests)", async () => {
    const controller = new AbortController();
    for (let i = 0; i < 3; i++) await expect(raceAbort(Promise.resolve(i), controller.signal)).resolves.toBe(i);
    await expect(raceAbort(Promise.reject(new Error("failed")), controller.signal)).rejects.toThrow("failed");
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("raceAbort rejects at once on abort and lets go of the signal, even while the work never settles", async () => {
    const controller = new AbortController();
    const pending = raceAbort(new Promise<never>(() => {}), controller.signal);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: "ABORTED" });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});

describe("every error class", () => {
  it("is named as it is exported: constructor.name, and the name a new error of it carries", async () => {
    const errors = await import("../../src/errors");
    const classes = Object.entries(errors).filter(
      ([name, value]) => typeof value === "function" && /^[A-Z]\w*Error$/.test(name) && name !== "X402Error",
    );
    expect(classes.length).toBeGreaterThan(20);
    for (const [exported, ErrorClass] of classes) {
      expect((ErrorClass as { name: string }).name, exported).toBe(exported);
      const made =
        exported === "NoPayableRequirementError"
          ? new NoPayableRequirementError([])
          : new (ErrorClass as new (m: string, o: object) => Error)("m", { details: { reason: "r" } });
      expect(made.constructor.name, exported).toBe(exported);
      // `name` is what the error says it is: the class's, but an abort's is fetch's "AbortError".
      expect(made.name, exported).toBe(exported === "PaymentAbortedError" ? "AbortError" : exported);
    }
  });
});

describe("every error names its section of docs/errors.md", () => {
  // The compiler holds this to the full list of codes: a new code fails the type check until it is here.
  const CODES: Record<X402ErrorCode, true> = {
    INVALID_CONFIG: true,
    INVALID_CHALLENGE: true,
    CHALLENGE_NOT_FOUND: true,
    NO_PAYABLE_REQUIREMENT: true,
    PAYMENT_REFUSED: true,
    USER_REJECTED: true,
    SIGNING_FAILED: true,
    RPC_FAILED: true,
    UNPAYABLE_REQUIREMENT: true,
    PAYMENT_ALREADY_ATTEMPTED: true,
    BODY_NOT_REPLAYABLE: true,
    ABORTED: true,
    PAYMENT_NOT_SENT: true,
    PAYMENT_REJECTED: true,
    PERMIT2_ALLOWANCE_REQUIRED: true,
    PAYMENT_ID_CONFLICT: true,
    PAYMENT_OUTCOME_UNKNOWN: true,
    PAYMENT_PENDING: true,
    SIGN_IN_REFUSED: true,
    BUDGET_EXCEEDED: true,
    BUDGET_UNAVAILABLE: true,
    DISCOVERY_FAILED: true,
    CHANNEL_DISPUTED: true,
  };
  const codes = Object.keys(CODES) as X402ErrorCode[];
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const page = readFileSync(`${root}docs/errors.md`, "utf8");
  /** The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
  const slug = (heading: string) =>
    heading
      .trim()
      .toLowerCase()
      .replace(/[^\w\- ]/g, "")
      .replace(/ /g, "-");
  const anchors = [...page.matchAll(/^#{2,3} (.+)$/gm)].map(([, heading]) => slug(heading!));
  /** docs/errors.md in the repository package.json names: what every message links to. */
  const { repository } = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { repository: { url: string } };
  const docs = `${repository.url.replace(/^git\+/, "").replace(/\.git$/, "")}/blob/main/docs/errors.md#`;
  /** One error of each class, made as x402-pay makes them. */
  const errors = Object.entries(entries)
    .filter(([name, value]) => typeof value === "function" && /^[A-Z]\w*Error$/.test(name) && name !== "X402Error")
    .map(([name, ErrorClass]) =>
      name === "NoPayableRequirementError"
        ? new NoPayableRequirementError([])
        : new (ErrorClass as new (m: string, o: object) => X402Error)("It went wrong.", { details: { reason: "r" } }),
    );

  it.each(codes)("%s has a section headed by its code, whose anchor is the code in lower case", (code) => {
    expect(anchors).toContain(code.toLowerCase());
  });

  /** The table's rows: code, what it says of money, and the CLI's exit code (the first number). */
  const rows = new Map(
    [...page.matchAll(/^\| \[`([A-Z0-9_]+)`\]\(#([a-z0-9_]+)\) +\| [^|]+\| (\d+)[^|]*\|$/gm)].map(
      ([, code, anchor, exit]) => [code!, { anchor, exit: Number(exit) }],
    ),
  );

  it.each(codes)("%s has a row in the table, linking to its section, with the CLI's exit code", (code) => {
    // DISCOVERY_FAILED's first number: the endpoint was not reached (no status).
    const exit = exitCodeOf(errors.find((e) => e.code === code));
    expect(rows.get(code)).toEqual({ anchor: code.toLowerCase(), exit });
  });

  it("the table has no row for a code that is not one", () => {
    expect([...rows.keys()].filter((code) => !codes.includes(code as X402ErrorCode))).toEqual([]);
  });

  it("every class is one of those codes, and every code has its class", () => {
    expect(errors.map((e) => e.code).sort()).toEqual([...codes].sort());
  });

  it("each error's docsUrl is its code's section of the repository's docs; the message is unchanged", () => {
    for (const error of errors) {
      expect(error.docsUrl, error.code).toBe(`${docs}${error.code.toLowerCase()}`);
      expect(error.message, error.code).not.toContain("docs/errors.md");
    }
    expect(new PaymentRejectedError("Refused.", { details: { reason: "r" } as never }).docsUrl).toBe(
      "https://github.com/x402-pay/x402-pay/blob/main/docs/errors.md#payment_rejected",
    );
  });

  it("a logged or serialised error shows the link: an enumerable field, not part of details", () => {
    const error = new InvalidConfigError("Bad option.", { hint: "Do this instead.", details: { option: "x" } });
    expect(error.message).toBe("Bad option. Do this instead.");
    expect(JSON.parse(JSON.stringify(error)).docsUrl).toBe(`${docs}invalid_config`);
    expect(inspect(error)).toContain(`${docs}invalid_config`);
    expect(error.details).toEqual({ option: "x" });
  });
});
