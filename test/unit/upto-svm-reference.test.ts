/**
 * The reference facilitator's checks (@x402/svm `upto/facilitator`, UptoSvmScheme.verify) on open transactions
 * uptoSvm signed with live randomness and the real clock: the payload's shape and amounts, the channel seeds and
 * address, the instruction layout, every account of the open, the signers and the buyer's Ed25519 signature.
 *
 * The facilitator's signer here is a stub (its addresses, a noop kit signer, no channel account yet, a blockhash,
 * a slot): it stands in for a chain, because the payment-channel program cannot be had or built on these machines,
 * so nothing here executes the open. What a validator would add (the program's own checks, the token movements) is
 * not proven here; docs/solana.md says so.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  createKeyPairSignerFromPrivateKeyBytes,
  createNoopSigner,
  getBase64Decoder,
  getBase64Encoder,
  type Address,
} from "@solana/kit";
import { UptoSvmScheme } from "@x402/svm/upto/facilitator";
import { describe, expect, it } from "vitest";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { uptoSvm } from "../../src/svm";
import vectorFile from "../vectors/upto-svm.json";

const seed = (byte: number) => createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(byte));
const buyer = await seed(1);
const feePayer = await seed(2);
const other = await seed(5);
const base: Requirement = vectorFile.vectors[0]!.requirement;
type Requirement = Omit<(typeof vectorFile.vectors)[0]["requirement"], "extra"> & { extra: Record<string, unknown> };

/** A facilitator whose own fee payers are `addresses`, over a stub chain at slot 400,000,000. */
function facilitator(addresses: string[] = [feePayer.address]) {
  return new UptoSvmScheme({
    getAddresses: () => addresses as Address[],
    getSigner: (address: string) => createNoopSigner(address as Address),
    getAccountInfo: async () => null,
    getLatestBlockhash: async () => ({ blockhash: base.extra.recentBlockhash, lastValidBlockHeight: 123_456n }),
    getSlot: async () => 400_000_000n,
  } as never);
}

/** What our client sends for `requirement`: the PaymentPayload the facilitator verifies. */
async function ourPayment(requirement: Requirement) {
  const header = encodeBase64Json({
    x402Version: 2,
    resource: { url: "https://api.example/x" },
    accepts: [requirement],
  });
  const [parsed] = parseChallenge({ header }).requirements;
  const upto = uptoSvm({ signer: buyer });
  expect(upto.check(parsed!)).toBeUndefined();
  const { payload } = await upto.createPayload(parsed!, {} as never);
  return { x402Version: 2, resource: { url: "https://api.example/x" }, accepted: requirement, payload };
}

const verify = (payment: Awaited<ReturnType<typeof ourPayment>>, requirement: Requirement, addresses?: string[]) =>
  facilitator(addresses).verify(payment as never, requirement as never);

describe("the reference facilitator verifies uptoSvm's open transactions", () => {
  it.each(vectorFile.vectors.map((v) => [v.name, v.requirement as Requirement] as const))(
    "%s: valid",
    async (_, requirement) => {
      const payment = await ourPayment(requirement);
      expect(await verify(payment, requirement)).toEqual({ isValid: true, payer: buyer.address });
    },
  );

  it("the vectors are what the installed reference client makes (scripts/upto-svm-vectors.mjs --check)", () => {
    const root = fileURLToPath(new URL("../../", import.meta.url));
    expect(
      execFileSync(process.execPath, ["scripts/upto-svm-vectors.mjs", "--check"], { cwd: root, encoding: "utf8" }),
    ).toMatch(/is what the reference makes/);
  });

  it("and rejects them changed: a ceiling, a signature, a memo, another authorizer, another fee payer", async () => {
    const payment = await ourPayment(base);
    const reason = async (p: typeof payment, r: Requirement = base, addresses?: string[]) => {
      const result = await verify(p, r, addresses);
      expect(result.isValid).toBe(false);
      return result.invalidReason;
    };
    expect(await reason({ ...payment, payload: { ...payment.payload, maxAmount: "999" } })).toBe(
      "invalid_upto_svm_payload_amount_mismatch",
    );
    // One bit of the buyer's signature (the second of two, after the fee payer's empty slot).
    const wire = Uint8Array.from(getBase64Encoder().encode(payment.payload.openTransaction as string));
    wire[1 + 64 + 10]! ^= 1;
    const forged = { ...payment.payload, openTransaction: getBase64Decoder().decode(wire) };
    expect(await reason({ ...payment, payload: forged })).toBe("invalid_upto_svm_payload_open_transaction");
    // The server asked for a memo the transaction does not carry.
    const memo = { ...base, extra: { ...base.extra, memo: "invoice-42" } };
    expect(await reason({ ...payment, accepted: memo }, memo)).toBe("invalid_upto_svm_payload_open_transaction");
    const authorizer = { ...base, extra: { ...base.extra, receiverAuthorizer: other.address } };
    expect(await reason({ ...payment, accepted: authorizer }, authorizer)).toBe(
      "invalid_upto_svm_payload_receiver_authorizer",
    );
    expect(await reason(payment, base, [other.address])).toBe("facilitator_mismatch");
  });
});
