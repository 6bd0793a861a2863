// walletStandardSigner: a wallet-standard wallet (as getWallets() of @wallet-standard/app hands it to a dapp) as a kit
// signer. The wallet is test/support/wallet-standard-wallet.ts, which signs for real with its own key: which account
// signs, what the wallet is given and gives back, the user's refusal, an abort, a wallet that changes the transaction.
import {
  getBase58Encoder,
  getTransactionDecoder,
  signatureBytes,
  verifySignature,
  type MessageModifyingSigner,
  type TransactionSigner,
} from "@solana/kit";
import type { SolanaSignMessageFeature, SolanaSignTransactionFeature } from "@solana/wallet-standard-features";
import { getWallets } from "@wallet-standard/app";
import type { Wallet, WalletAccount, WalletWithFeatures } from "@wallet-standard/base";
import { describe, expect, expectTypeOf, it } from "vitest";
import { createX402Client, type signInWithX } from "../../src";
import { engineOf } from "../../src/client";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { toSolanaMessageSigner } from "../../src/extensions/sign-in-with-x/wallets";
import {
  exactSvm,
  uptoSvm,
  walletStandardSigner,
  type WalletStandardSigner,
  type WalletStandardWalletLike,
} from "../../src/svm";
import { decodeTransaction, fakeRpc, svmRequirement } from "../support/svm";
import { TestSolanaWallet, phantomRejection } from "../support/wallet-standard-wallet";
import vectorFile from "../vectors/upto-svm.json";

const connected = () => TestSolanaWallet.create({ connected: true });
const url = "https://api.example/x";

/** The payment exactSvm signs through `signer` for a v2 challenge, as the client makes it. */
async function payExact(signer: TransactionSigner, signal?: AbortSignal) {
  const client = createX402Client({ schemes: [exactSvm({ signer, rpc: fakeRpc() })] });
  const header = encodeBase64Json({ x402Version: 2, resource: { url }, accepts: [svmRequirement()] });
  const payment = await engineOf(client).createPayment(parseChallenge({ header }), { url, method: "GET", signal });
  return (payment.payload as { payload: { transaction: string } }).payload.transaction;
}

/** The channel open uptoSvm signs through `signer` for the reference vector's requirement. */
async function payUpto(signer: TransactionSigner, signal?: AbortSignal) {
  const header = encodeBase64Json({ x402Version: 2, resource: { url }, accepts: [vectorFile.vectors[0]!.requirement] });
  const [requirement] = parseChallenge({ header }).requirements;
  const scheme = uptoSvm({ signer, now: () => vectorFile.nowMs });
  expect(scheme.check(requirement!)).toBeUndefined();
  return scheme.createPayload(requirement!, { signal } as never);
}

const signatureOf = (transaction: string, address: string) =>
  (decodeTransaction(transaction).tx.signatures as Record<string, Uint8Array | null>)[address];
const publicKey = (wallet: TestSolanaWallet) =>
  crypto.subtle.importKey("raw", wallet.account.publicKey as Uint8Array<ArrayBuffer>, "Ed25519", true, ["verify"]);

describe("walletStandardSigner: the types", () => {
  it("takes a wallet-standard Wallet and WalletAccount; gives a signer exactSvm, uptoSvm and signInWithX take", () => {
    expectTypeOf<Wallet>().toExtend<WalletStandardWalletLike>();
    expectTypeOf<
      WalletWithFeatures<SolanaSignTransactionFeature & SolanaSignMessageFeature>
    >().toExtend<WalletStandardWalletLike>();
    expectTypeOf<TestSolanaWallet>().toExtend<Wallet>();
    expectTypeOf(walletStandardSigner).toBeCallableWith({} as Wallet, {} as WalletAccount);
    expectTypeOf(walletStandardSigner).toBeCallableWith({} as Wallet, "address");
    expectTypeOf<WalletStandardSigner>().toExtend<TransactionSigner>();
    expectTypeOf<WalletStandardSigner>().toExtend<MessageModifyingSigner>();
    expectTypeOf<WalletStandardSigner>().toExtend<Parameters<typeof signInWithX>[0]["solana"]>();
    // @ts-expect-error: an object with no accounts is no wallet
    expectTypeOf(walletStandardSigner).toBeCallableWith({ features: {} });
  });

  it("the wallets getWallets() hands out, registered as an extension registers itself", async () => {
    const wallet = await connected();
    const unregister = getWallets().register(wallet);
    try {
      const found = getWallets()
        .get()
        .find((w) => w.name === wallet.name && "solana:signTransaction" in w.features)!;
      expect(walletStandardSigner(found).address).toBe(wallet.address);
    } finally {
      unregister();
    }
  });
});

describe("walletStandardSigner: which account signs", () => {
  it("refuses a wallet without solana:signTransaction, and anything that is not a wallet", async () => {
    const noTransactions = await TestSolanaWallet.create({ connected: true, without: ["solana:signTransaction"] });
    for (const wallet of [noTransactions, {}, null, undefined, { accounts: [], features: null }]) {
      expect(() => walletStandardSigner(wallet as never)).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringMatching(/solana:signTransaction/) }),
      );
    }
  });

  it("refuses a wallet with no connected account: connect it first", async () => {
    const wallet = await TestSolanaWallet.create();
    expect(() => walletStandardSigner(wallet)).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringMatching(/standard:connect/) }),
    );
    await wallet.features["standard:connect"].connect();
    expect(walletStandardSigner(wallet).address).toBe(wallet.address);
  });

  it("refuses an account the wallet has not connected, and a value that is no account", async () => {
    const [wallet, other] = await Promise.all([connected(), connected()]);
    for (const account of [other.account, other.address]) {
      expect(() => walletStandardSigner(wallet, account)).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining(other.address) }),
      );
    }
    for (const account of ["not an address", { address: 42 }, null]) {
      expect(() => walletStandardSigner(wallet, account as never)).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG", details: { option: "account" } }),
      );
    }
  });

  it("default: the first account with solana:signTransaction; else the one given, or its address", async () => {
    const [first, second] = await Promise.all([connected(), connected()]);
    const asked: unknown[] = [];
    const two = {
      accounts: [
        { ...first.account, features: ["solana:signMessage"] },
        second.account,
        { ...first.account, address: first.address },
      ],
      features: {
        "solana:signTransaction": {
          signTransaction: (...inputs: { account: WalletAccount }[]) => {
            asked.push(...inputs.map((i) => i.account.address));
            return inputs.at(0)!.account.address === second.address
              ? second.features["solana:signTransaction"].signTransaction(...(inputs as never[]))
              : first.features["solana:signTransaction"].signTransaction(...(inputs as never[]));
          },
        },
      },
    };
    expect(walletStandardSigner(two).address).toBe(second.address);
    expect(walletStandardSigner(two, first.address).address).toBe(first.address);
    expect(walletStandardSigner(two, second.account).address).toBe(second.address);
    const transaction = await payExact(walletStandardSigner(two, first.address));
    expect(asked).toEqual([first.address]);
    expect(signatureOf(transaction, first.address)).toBeDefined();
  });

  it("an account disconnected since is not signed with: SIGNING_FAILED, and the wallet is not asked", async () => {
    const wallet = await connected();
    const signer = walletStandardSigner(wallet);
    wallet.disconnect();
    await expect(payExact(signer)).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      message: expect.stringMatching(/no longer has .* connected/),
    });
    expect(wallet.calls.signTransaction).toBe(0);
  });
});

describe("walletStandardSigner: transactions through solana:signTransaction", () => {
  it("exactSvm: the wallet gets the wire transaction, no chain, and signs it with its own key", async () => {
    const wallet = await connected();
    const transaction = await payExact(walletStandardSigner(wallet));
    const [input] = wallet.inputs.transactions;
    expect(input!.account).toBe(wallet.account);
    expect(input!.chain).toBeUndefined();
    const given = getTransactionDecoder().decode(input!.transaction);
    const { tx } = decodeTransaction(transaction);
    expect(tx.messageBytes).toEqual(given.messageBytes);
    expect(given.signatures[wallet.address]).toBeNull(); // the wallet was given it unsigned
    const signature = tx.signatures[wallet.address]!;
    expect(await verifySignature(await publicKey(wallet), signatureBytes(signature), tx.messageBytes)).toBe(true);
  });

  it("uptoSvm: the channel open, signed by the wallet", async () => {
    const wallet = await connected();
    const { payload } = await payUpto(walletStandardSigner(wallet));
    const { tx } = decodeTransaction((payload as { openTransaction: string }).openTransaction);
    const signature = tx.signatures[wallet.address]!;
    expect(await verifySignature(await publicKey(wallet), signatureBytes(signature), tx.messageBytes)).toBe(true);
    expect(wallet.calls.signTransaction).toBe(1);
  });

  it("used as a kit signer: the decoded signed transaction, with the lifetime it was given", async () => {
    const wallet = await connected();
    // A transaction for the wallet to sign: an exact payment's, its signature cleared.
    const transaction = decodeTransaction(await payExact(walletStandardSigner(wallet))).tx;
    const lifetimeConstraint = { blockhash: "x", lastValidBlockHeight: 7n };
    const input = { ...transaction, signatures: { ...transaction.signatures, [wallet.address]: null } };
    const [signed] = await walletStandardSigner(wallet).modifyAndSignTransactions([
      { ...input, lifetimeConstraint } as never,
    ]);
    expect(signed!.messageBytes).toEqual(transaction.messageBytes);
    expect(signed!.signatures).toEqual(transaction.signatures); // Ed25519 signs the same bytes the same way
    expect(signed!.lifetimeConstraint).toBe(lifetimeConstraint);
  });

  it("a wallet that adds an instruction is refused before anything is sent (exact and upto)", async () => {
    const wallet = await connected();
    wallet.switches.tamper = true;
    await expect(payExact(walletStandardSigner(wallet))).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(
        /calls 11111111111111111111111111111111, which facilitators refuse.*Nothing was sent/,
      ),
    });
    await expect(payUpto(walletStandardSigner(wallet))).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/changed the channel open/),
    });
    expect(wallet.calls.signTransaction).toBe(2);
  });

  it("a wallet answering with unreadable bytes, or no answer for the transaction: SIGNING_FAILED", async () => {
    const wallet = await connected();
    for (const answer of [[{ signedTransaction: new Uint8Array([1, 2, 3]) }], [], [{}], null]) {
      const odd = {
        ...wallet,
        accounts: wallet.accounts,
        features: { "solana:signTransaction": { signTransaction: async () => answer } },
      };
      await expect(payExact(walletStandardSigner(odd))).rejects.toMatchObject({ code: "SIGNING_FAILED" });
    }
  });
});

describe("walletStandardSigner: the user's refusal, an abort", () => {
  it("Phantom's refusal (4001) is USER_REJECTED, through the client and used alone", async () => {
    const wallet = await connected();
    wallet.switches.reject = true;
    const signer = walletStandardSigner(wallet);
    await expect(payExact(signer)).rejects.toMatchObject({ code: "USER_REJECTED", cause: { code: 4001 } });
    await expect(payUpto(signer)).rejects.toMatchObject({ code: "USER_REJECTED" });
    const alone = signer.modifyAndSignTransactions([{ messageBytes: new Uint8Array(), signatures: {} } as never]);
    await expect(alone).rejects.toMatchObject({ code: "SIGNING_FAILED" }); // unreadable: the wallet is not asked
    await expect(
      signer.modifyAndSignMessages([{ content: new Uint8Array([1]), signatures: {} }]),
    ).rejects.toMatchObject({ code: "USER_REJECTED", name: "UserRejectedError" });
  });

  it("a wallet adapter's WalletSignTransactionError (the wallet's error in `error`) is USER_REJECTED too", async () => {
    const wallet = await connected();
    class WalletSignTransactionError extends Error {
      override name = "WalletSignTransactionError";
      constructor(readonly error: unknown) {
        super("");
      }
    }
    const adapter = {
      accounts: wallet.accounts,
      features: {
        "solana:signTransaction": {
          signTransaction: async () => {
            throw new WalletSignTransactionError(phantomRejection());
          },
        },
      },
    };
    await expect(payExact(walletStandardSigner(adapter))).rejects.toMatchObject({ code: "USER_REJECTED" });
  });

  it("any other failure is SIGNING_FAILED", async () => {
    const wallet = await connected();
    const broken = {
      accounts: wallet.accounts,
      features: { "solana:signTransaction": { signTransaction: () => Promise.reject(new Error("Ledger unplugged")) } },
    };
    await expect(payExact(walletStandardSigner(broken))).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      cause: { message: "Ledger unplugged" },
    });
  });

  it("config.abortSignal already aborted: the wallet is never asked", async () => {
    const wallet = await connected();
    const signer = walletStandardSigner(wallet);
    const transaction = decodeTransaction(await payExact(signer)).tx;
    wallet.calls.signTransaction = 0;
    const abortSignal = AbortSignal.abort();
    await expect(signer.modifyAndSignTransactions([transaction], { abortSignal })).rejects.toMatchObject({
      code: "ABORTED",
    });
    const message = { content: new Uint8Array([1]), signatures: {} };
    await expect(signer.modifyAndSignMessages([message], { abortSignal })).rejects.toMatchObject({ code: "ABORTED" });
    expect(wallet.calls).toMatchObject({ signTransaction: 0, signMessage: 0 });
  });

  it("aborted while the wallet is open: the promise rejects at once, the wallet never answering", async () => {
    const wallet = await connected();
    const signer = walletStandardSigner(wallet);
    const transaction = decodeTransaction(await payExact(signer)).tx;
    wallet.switches.hang = true;
    for (const sign of [
      (abortSignal: AbortSignal) => signer.modifyAndSignTransactions([transaction], { abortSignal }),
      (abortSignal: AbortSignal) =>
        signer.modifyAndSignMessages([{ content: new Uint8Array([1]), signatures: {} }], { abortSignal }),
    ]) {
      const controller = new AbortController();
      const asked = wallet.nextRequest();
      const signing = sign(controller.signal);
      await asked;
      controller.abort();
      await expect(signing).rejects.toMatchObject({ code: "ABORTED" });
    }
  });

  it("exactSvm and uptoSvm hand the request's signal to the kit signer as { abortSignal }", async () => {
    const wallet = await connected();
    const own = walletStandardSigner(wallet);
    const configs: unknown[] = [];
    const recording: WalletStandardSigner = {
      ...own,
      modifyAndSignTransactions: (transactions, config) => (
        configs.push(config), own.modifyAndSignTransactions(transactions, config)
      ),
    };
    const signal = new AbortController().signal;
    await payExact(recording, signal);
    await payUpto(recording, signal);
    expect(configs).toEqual([{ abortSignal: signal }, { abortSignal: signal }]);
  });
});

describe("walletStandardSigner: messages through solana:signMessage (sign-in-with-x)", () => {
  it("signs the very bytes given, with the wallet's key; signInWithX signs in through it", async () => {
    const wallet = await connected();
    const signer = walletStandardSigner(wallet);
    const content = new TextEncoder().encode("example.com wants you to sign in with your Solana account");
    const [signed] = await signer.modifyAndSignMessages([{ content, signatures: {} }]);
    expect(wallet.inputs.messages).toEqual([{ account: wallet.account, message: content }]);
    expect(signed!.content).toEqual(content);
    const signature = signed!.signatures[wallet.address]!;
    expect(await verifySignature(await publicKey(wallet), signatureBytes(signature), content)).toBe(true);

    const text = "sign-in message";
    const base58 = await toSolanaMessageSigner(signer).sign(text);
    expect(wallet.inputs.messages[1]!.message).toEqual(new TextEncoder().encode(text));
    const bytes = signatureBytes(new Uint8Array(getBase58Encoder().encode(base58)));
    expect(await verifySignature(await publicKey(wallet), bytes, new TextEncoder().encode(text))).toBe(true);
  });

  it("a wallet that signs other bytes returns them, without the signatures that were over the old ones", async () => {
    const wallet = await connected();
    const prefixing = {
      accounts: wallet.accounts,
      features: {
        ...wallet.features,
        "solana:signMessage": {
          signMessage: async ({ message }: { message: Uint8Array }) => [
            { signedMessage: Uint8Array.of(0xff, ...message), signature: new Uint8Array(64).fill(1) },
          ],
        },
      },
    };
    const [signed] = await walletStandardSigner(prefixing).modifyAndSignMessages([
      { content: Uint8Array.of(1, 2), signatures: { "11111111111111111111111111111111": new Uint8Array(64) } as never },
    ]);
    expect(signed).toEqual({
      content: Uint8Array.of(0xff, 1, 2),
      signatures: { [wallet.address]: new Uint8Array(64).fill(1) },
    });
    // and sign-in refuses it: a wallet may not rewrite a sign-in message
    await expect(toSolanaMessageSigner(walletStandardSigner(prefixing)).sign("x")).rejects.toMatchObject({
      code: "SIGNING_FAILED",
    });
  });

  it("an account that does not offer solana:signMessage: SIGNING_FAILED, and the wallet is not asked", async () => {
    const wallet = await connected();
    const transactionsOnly = {
      accounts: [{ ...wallet.account, features: ["solana:signTransaction"] }],
      features: wallet.features,
    };
    await expect(
      walletStandardSigner(transactionsOnly).modifyAndSignMessages([{ content: new Uint8Array([1]), signatures: {} }]),
    ).rejects.toMatchObject({
      code: "SIGNING_FAILED",
      message: expect.stringMatching(/does not offer solana:signMessage/),
    });
    expect(wallet.calls.signMessage).toBe(0);
  });

  it("a wallet without solana:signMessage: SIGNING_FAILED when asked, naming the feature", async () => {
    const wallet = await TestSolanaWallet.create({ connected: true, without: ["solana:signMessage"] });
    await expect(
      walletStandardSigner(wallet).modifyAndSignMessages([{ content: new Uint8Array([1]), signatures: {} }]),
    ).rejects.toMatchObject({ code: "SIGNING_FAILED", message: expect.stringMatching(/solana:signMessage/) });
  });
});
