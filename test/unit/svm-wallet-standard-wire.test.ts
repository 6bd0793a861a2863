// walletStandardSigner's own reading of what a wallet hands back (src/svm/wallet-standard): the wire format it writes
// and reads, checked against kit's transaction codec, at the edges of its lengths; what it makes of answers that are
// not transactions or messages; and which lifetime a signed transaction keeps.
import {
  AccountRole,
  appendTransactionMessageInstruction,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
} from "@solana/kit";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { toSolanaMessageSigner } from "../../src/extensions/sign-in-with-x/wallets";
import { walletStandardSigner } from "../../src/svm";
import { asBytes } from "../../src/svm/wallet-standard/wallet";
import { fromWire, readMessageHeader, toWire } from "../../src/svm/wallet-standard/wire";

const BLOCKHASH = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY" as Blockhash;
const PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr" as Address;

/** A compiled message signed by `signers` (the first pays the fee), legacy or v0. */
async function compiled(signers: number, version: 0 | "legacy" = 0) {
  const keys = await Promise.all(Array.from({ length: signers }, () => generateKeyPairSigner()));
  const message = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayer(keys[0]!.address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 9n }, m),
    (m) =>
      appendTransactionMessageInstruction(
        {
          programAddress: PROGRAM,
          accounts: keys.slice(1).map((k) => ({ address: k.address, role: AccountRole.READONLY_SIGNER })),
          data: Uint8Array.of(1, 2, 3),
        },
        m,
      ),
  );
  return { keys, transaction: compileTransaction(message) };
}

const sig = (fill: number) => new Uint8Array(64).fill(fill);

describe("the wire format walletStandardSigner writes and reads", () => {
  it.each([
    [1, 0],
    [2, 0],
    [3, "legacy"],
  ] as const)("%i signer(s), version %s: written as kit writes it, read back as kit reads it", async (n, version) => {
    const { transaction } = await compiled(n, version);
    // In the message's signer order (kit's encoder writes them in the record's order). The fee payer signed.
    const signers = Object.keys(transaction.signatures);
    const signatures = Object.fromEntries(signers.map((key, i) => [key, i === 0 ? sig(7) : null]));
    const wire = toWire(transaction.messageBytes as unknown as Uint8Array, signatures)!;
    expect(wire).toEqual(new Uint8Array(getTransactionEncoder().encode({ ...transaction, signatures } as never)));

    const distinct = Object.fromEntries(signers.map((key, i) => [key, sig(i + 1)]));
    const kitWire = getTransactionEncoder().encode({ ...transaction, signatures: distinct } as never);
    const read = fromWire(new Uint8Array(kitWire))!;
    expect(read.messageBytes).toEqual(transaction.messageBytes);
    expect(read.signatures).toEqual(distinct);
    expect(read.lifetimeToken).toBe(BLOCKHASH);
    // A signature of zeros is a missing one.
    expect(fromWire(wire)!.signatures).toEqual(signatures);
  });

  it("128 signers: the two-byte length prefix, both ways", () => {
    // A v0 message by hand (kit compiles at most 64 accounts): 128 signers of 129 keys, a blockhash, no instruction,
    // no lookup table.
    const keys = Array.from({ length: 129 }, (_, i) => [...new Uint8Array(32).fill(i + 1)]);
    const head = [0x80, 128, 0, 0, 0x81, 0x01];
    const message = Uint8Array.from([...head, ...keys.flat(), ...new Uint8Array(32).fill(9), 0, 0]);
    const wire = toWire(message, {})!;
    expect([...wire.subarray(0, 2)]).toEqual([0x80, 0x01]);
    expect(wire).toHaveLength(2 + 64 * 128 + message.length);
    // (kit's decoder refuses it: a first byte of 0x80 reads as a version there; no real transaction has 128 signers.)
    expect(wire.subarray(2 + 64 * 128)).toEqual(message);
    const read = fromWire(wire)!;
    expect(Object.values(read.signatures)).toEqual(Array(128).fill(null));
    expect(Object.keys(read.signatures)).toEqual(readMessageHeader(message)!.signers);
    expect(read.messageBytes).toEqual(message);
  });

  it("a message at its shortest (keys and blockhash, nothing after) is read; one byte shorter is not", async () => {
    const { transaction } = await compiled(2);
    const bytes = new Uint8Array(transaction.messageBytes);
    // v0: version, 3 header bytes, 1 length byte, 3 keys (2 signers + the program), the blockhash.
    const end = 1 + 3 + 1 + 32 * 3 + 32;
    expect(readMessageHeader(bytes.subarray(0, end))).toMatchObject({ lifetimeToken: BLOCKHASH });
    expect(readMessageHeader(bytes.subarray(0, end - 1))).toBeUndefined();
  });

  it("signers the message cannot have are refused: none, more than its keys; as many as its keys are fine", async () => {
    const { transaction } = await compiled(2);
    const withRequired = (required: number) => {
      const bytes = new Uint8Array(transaction.messageBytes);
      bytes[1] = required; // after the version byte
      return bytes;
    };
    expect(readMessageHeader(withRequired(0))).toBeUndefined();
    expect(readMessageHeader(withRequired(1))?.signers).toHaveLength(1);
    expect(readMessageHeader(withRequired(3))?.signers).toHaveLength(3);
    expect(readMessageHeader(withRequired(4))).toBeUndefined();
    expect(readMessageHeader(new Uint8Array(0))).toBeUndefined();
    expect(toWire(new Uint8Array(0), {})).toBeUndefined();
  });

  it("a wire transaction whose signatures do not match its message's signers, or no bytes: not read", async () => {
    const { keys, transaction } = await compiled(2);
    const wire = toWire(transaction.messageBytes as unknown as Uint8Array, { [keys[0]!.address]: sig(1) })!;
    const oneSignature = Uint8Array.of(1, ...wire.subarray(1 + 64));
    expect(fromWire(oneSignature)).toBeUndefined();
    expect(fromWire(undefined)).toBeUndefined();
    expect(fromWire(new Uint8Array(0))).toBeUndefined();
  });
});

/** A connected wallet with one account whose features answer as `answers` says. */
function scripted(address: string, answers: { transaction?: unknown; message?: unknown }) {
  return {
    accounts: [{ address, features: ["solana:signTransaction", "solana:signMessage"] }],
    features: {
      "solana:signTransaction": { signTransaction: async () => answers.transaction },
      "solana:signMessage": { signMessage: async () => answers.message },
    },
  };
}

describe("what walletStandardSigner makes of the wallet's answers", () => {
  it("transactions: not a list, another count, no signed bytes, unreadable bytes: SIGNING_FAILED, saying which", async () => {
    const { keys, transaction } = await compiled(1);
    const address = keys[0]!.address;
    const input = { ...transaction, lifetimeConstraint: { blockhash: BLOCKHASH, lastValidBlockHeight: 9n } };
    const cases: [unknown, RegExp][] = [
      [null, /answered 1 transaction\(s\) with something else/],
      [[], /answered 1 transaction\(s\) with something else/],
      [[undefined], /signed transaction that cannot be read/],
      [[{}], /signed transaction that cannot be read/],
      [[{ signedTransaction: Uint8Array.of(1, 2, 3) }], /signed transaction that cannot be read/],
    ];
    for (const [answer, message] of cases) {
      const signer = walletStandardSigner(scripted(address, { transaction: answer }));
      await expect(signer.modifyAndSignTransactions([input as never])).rejects.toMatchObject({
        code: "SIGNING_FAILED",
        message: expect.stringMatching(message),
      });
    }
  });

  it("the lifetime: the one given while the wallet keeps the message or its blockhash; else the wallet's", async () => {
    const { keys, transaction } = await compiled(2);
    const address = keys[0]!.address;
    const given = { blockhash: BLOCKHASH, lastValidBlockHeight: 9n };
    const answer = (messageBytes: Uint8Array) => [{ signedTransaction: toWire(messageBytes, { [address]: sig(3) }) }];
    const sign = async (messageBytes: Uint8Array, lifetimeConstraint?: unknown) => {
      const signer = walletStandardSigner(scripted(address, { transaction: answer(messageBytes) }));
      const [signed] = await signer.modifyAndSignTransactions([{ ...transaction, lifetimeConstraint } as never]);
      return (signed as unknown as { lifetimeConstraint: unknown }).lifetimeConstraint;
    };
    // Unchanged: the lifetime given, as it is.
    expect(await sign(new Uint8Array(transaction.messageBytes), given)).toBe(given);
    // Changed, same blockhash (another instruction byte): still the lifetime given.
    const changed = new Uint8Array(transaction.messageBytes);
    changed[changed.length - 1] = changed.at(-1)! ^ 0xff;
    expect(await sign(changed, given)).toBe(given);
    // Another blockhash: the wallet's, with no known last block height.
    const other = await compiled(2);
    const rehashed = new Uint8Array(transaction.messageBytes);
    rehashed.set(new Uint8Array(32).fill(5), 1 + 3 + 1 + 32 * 3);
    const token = readMessageHeader(rehashed)!.lifetimeToken;
    expect(token).not.toBe(BLOCKHASH);
    expect(await sign(rehashed, given)).toEqual({ blockhash: token, lastValidBlockHeight: (1n << 64n) - 1n });
    // A nonce lifetime kept when the wallet keeps the nonce value in place of the blockhash.
    const nonce = { nonce: BLOCKHASH, nonceAccountAddress: other.keys[0]!.address };
    expect(await sign(changed, nonce)).toBe(nonce);
    // None given: the message's blockhash.
    expect(await sign(new Uint8Array(transaction.messageBytes))).toEqual({
      blockhash: BLOCKHASH,
      lastValidBlockHeight: (1n << 64n) - 1n,
    });
  });

  it("messages: another count, no 64-byte signature, no signed bytes: SIGNING_FAILED; other bytes of the same length are a new message", async () => {
    const { keys } = await compiled(1);
    const address = keys[0]!.address;
    const content = Uint8Array.of(1, 2, 3);
    const bad: unknown[] = [
      null,
      [],
      [undefined],
      [{ signedMessage: content }],
      [{ signedMessage: content, signature: new Uint8Array(63) }],
      [{ signature: sig(1) }],
    ];
    for (const message of bad) {
      const signer = walletStandardSigner(scripted(address, { message }));
      await expect(signer.modifyAndSignMessages([{ content, signatures: {} }])).rejects.toMatchObject({
        code: "SIGNING_FAILED",
      });
    }
    const other = Uint8Array.of(1, 2, 4);
    const signer = walletStandardSigner(scripted(address, { message: [{ signedMessage: other, signature: sig(2) }] }));
    const [signed] = await signer.modifyAndSignMessages([{ content, signatures: { [address]: sig(9) } } as never]);
    expect(signed).toEqual({ content: other, signatures: { [address]: sig(2) } });
    // Fewer bytes (the start of the message) are a new message too.
    const start = content.subarray(0, 2);
    const truncating = walletStandardSigner(
      scripted(address, { message: [{ signedMessage: start, signature: sig(2) }] }),
    );
    const [cut] = await truncating.modifyAndSignMessages([{ content, signatures: {} } as never]);
    expect(cut).toEqual({ content: start, signatures: { [address]: sig(2) } });
  });

  it("bytes from another realm (a wallet's own window) are bytes; other views and arrays are not", async () => {
    const { keys } = await compiled(1);
    const address = keys[0]!.address;
    const content = Uint8Array.of(1, 2, 3);
    const foreign = (code: string) => runInNewContext(code) as unknown;
    const signer = walletStandardSigner(
      scripted(address, {
        message: [{ signedMessage: foreign("new Uint8Array([1, 2, 3])"), signature: foreign("new Uint8Array(64)") }],
      }),
    );
    const [signed] = await signer.modifyAndSignMessages([{ content, signatures: {} } as never]);
    expect(signed!.content).toEqual(content);
    expect(asBytes(foreign("new Uint8Array([7, 8])"))).toEqual(Uint8Array.of(7, 8));
    expect(asBytes(foreign("new Uint16Array(2)"))).toBeUndefined();
    expect(asBytes(new DataView(new ArrayBuffer(2)))).toBeUndefined();
    expect(asBytes([1, 2])).toBeUndefined();
  });

  it("accounts that are not accounts are passed over; one disconnected since says so", async () => {
    const { keys } = await compiled(1);
    const address = keys[0]!.address;
    const wallet = scripted(address, {});
    const signer = walletStandardSigner({ ...wallet, accounts: [null, { address: 42 }, ...wallet.accounts] } as never);
    expect(signer.address).toBe(address);
    const gone = { ...wallet, accounts: [...wallet.accounts] };
    const leaving = walletStandardSigner(gone);
    gone.accounts.length = 0;
    await expect(
      leaving.modifyAndSignMessages([{ content: Uint8Array.of(1), signatures: {} } as never]),
    ).rejects.toThrow(/no longer has .* connected/);
  });

  it("signInWithX refuses a wallet-standard wallet without solana:signMessage when it is made", async () => {
    const { keys } = await compiled(1);
    const { features, accounts } = scripted(keys[0]!.address, {});
    const wallet = { accounts, features: { "solana:signTransaction": features["solana:signTransaction"] } };
    expect(() => toSolanaMessageSigner(wallet)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });
});
