// A Solana browser wallet, as a dapp reaches it: the test wallet registers itself through @wallet-standard/app, the
// dapp finds it with getWallets(), connects it and pays through walletStandardSigner, against the reference seller
// and facilitator on LiteSVM. The wallet signs with its own key. A paid request settles (balances read on chain);
// sign-in-with-x signs in through the same wallet; a refusal and an abort pay nothing and send nothing.
import { getWallets } from "@wallet-standard/app";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  budget,
  createX402Client,
  getPaymentReceipt,
  memoryBudgetStore,
  signInWithX,
  type BudgetEntry,
  type BudgetStore,
} from "../../src";
import { wrapFetchWithPayment } from "../../src/fetch";
import { exactSvm, walletStandardSigner } from "../../src/svm";
import { PRICE_ATOMIC, WEATHER, startExtensionSeller, type ExtensionSeller } from "../localnet/index.js";
import { ONE_TOKEN, startSolanaStack, type SolanaStack } from "../localnet/svm/index.js";
import { TestSolanaWallet } from "../support/wallet-standard-wallet";

let stack: SolanaStack;
let signInSeller: ExtensionSeller;

beforeAll(async () => {
  stack = await startSolanaStack();
  signInSeller = await startExtensionSeller({
    facilitatorUrl: stack.facilitator.url,
    payTo: stack.seller.evmPayTo!,
    svmPayTo: stack.seller.payTo,
  });
}, 120_000);
afterAll(async () => {
  await signInSeller?.stop();
  await stack?.stop();
});

/**
 * What a dapp does: the wallet announces itself, the page finds it among getWallets(), asks it to connect and makes
 * a signer of it. The wallet holds 1 USDC.
 */
async function connectWallet() {
  const installed = await TestSolanaWallet.create({ name: `Test Wallet ${crypto.randomUUID()}` });
  getWallets().register(installed);
  const wallet = getWallets()
    .get()
    .find((w) => w.name === installed.name)!;
  await (wallet.features["standard:connect"] as TestSolanaWallet["features"]["standard:connect"]).connect();
  await stack.tokens.mintTo(stack.tokens.usdc, installed.address, ONE_TOKEN);
  return { wallet, installed, signer: walletStandardSigner(wallet) };
}

/** A fetch that records the payment headers of what it sends. */
function recordingFetch() {
  const payments: string[] = [];
  const transport: typeof fetch = (input, init) => {
    const headers = new Headers(input instanceof Request ? input.headers : undefined);
    for (const [name, value] of new Headers(init?.headers)) headers.set(name, value);
    const payment = headers.get("payment-signature") ?? headers.get("x-payment");
    if (payment) payments.push(payment);
    return fetch(input, init);
  };
  return { transport, payments };
}

const balance = (owner: string) => stack.tokens.balance(stack.tokens.usdc, owner as never);
const rpc = () => `${stack.rpc.url}/buyer`;

describe("a wallet-standard wallet pays on Solana (LiteSVM, reference facilitator and seller)", () => {
  it("exact: the wallet signs once, the payment settles, the price moves", async () => {
    const { installed, signer } = await connectWallet();
    const before = await Promise.all([balance(installed.address), balance(stack.seller.payTo)]);
    const { transport, payments } = recordingFetch();
    const pay = wrapFetchWithPayment(transport, createX402Client({ schemes: [exactSvm({ signer, rpc: rpc() })] }));
    const response = await pay(`${stack.seller.url}/weather`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(WEATHER);
    const receipt = getPaymentReceipt(response);
    expect(receipt).toMatchObject({
      settled: true,
      payer: installed.address,
      network: expect.stringMatching(/^solana:/),
    });
    expect(installed.calls.signTransaction).toBe(1);
    expect(payments).toHaveLength(1);
    expect(await balance(installed.address)).toBe(before[0] - PRICE_ATOMIC);
    expect(await balance(stack.seller.payTo)).toBe(before[1] + PRICE_ATOMIC);
  });

  it("sign-in-with-x: pays once, then signs in through solana:signMessage and moves no money", async () => {
    const { installed, signer } = await connectWallet();
    const client = createX402Client({
      schemes: [exactSvm({ signer, rpc: rpc() })],
      plugins: [signInWithX({ solana: signer })],
    });
    const pay = wrapFetchWithPayment(fetch, client);
    const before = await balance(installed.address);
    const first = await pay(`${signInSeller.url}/siwx/weather`);
    expect(first.status).toBe(200);
    expect(await balance(installed.address)).toBe(before - PRICE_ATOMIC);

    const second = await pay(`${signInSeller.url}/siwx/weather`);
    expect(second.status).toBe(200);
    expect(getPaymentReceipt(second)).toBeUndefined();
    expect(installed.calls).toMatchObject({ signTransaction: 1, signMessage: 1 });
    expect(signInSeller.signIns).toContainEqual({ path: "/siwx/weather", address: installed.address });
    expect(await balance(installed.address)).toBe(before - PRICE_ATOMIC);
  });

  it("the user declines in the wallet: USER_REJECTED, nothing sent, nothing paid", async () => {
    const { installed, signer } = await connectWallet();
    installed.switches.reject = true;
    const { transport, payments } = recordingFetch();
    const pay = wrapFetchWithPayment(transport, createX402Client({ schemes: [exactSvm({ signer, rpc: rpc() })] }));
    const before = await balance(installed.address);
    const error = await pay(`${stack.seller.url}/weather`).catch((e) => e);
    expect(error).toMatchObject({ code: "USER_REJECTED", name: "UserRejectedError" });
    expect(installed.calls.signTransaction).toBe(1);
    expect(payments).toEqual([]);
    expect(await balance(installed.address)).toBe(before);
  });

  it("an abort while the wallet is open: ABORTED, nothing sent, the budget's reservation released", async () => {
    const { installed, signer } = await connectWallet();
    installed.switches.hang = true;
    const store = memoryBudgetStore();
    const entries: BudgetEntry[] = [];
    const recording: BudgetStore = {
      ...store,
      reserve: (entry, id, amount) => (entries.push(entry), store.reserve(entry, id, amount)),
    };
    const client = createX402Client({
      schemes: [exactSvm({ signer, rpc: rpc() })],
      plugins: [budget({ limit: "$1", store: recording })],
    });
    const { transport, payments } = recordingFetch();
    const controller = new AbortController();
    const before = await balance(installed.address);
    const asked = installed.nextRequest();
    const paying = wrapFetchWithPayment(transport, client)(`${stack.seller.url}/weather`, {
      signal: controller.signal,
    });
    await asked;
    // $0.001 held while the wallet is open
    expect(await store.usage(entries[0]!)).toEqual({ spent: 0, reserved: 1000 });
    controller.abort();
    await expect(paying).rejects.toMatchObject({ code: "ABORTED" });
    expect(payments).toEqual([]);
    expect(await store.usage(entries[0]!)).toEqual({ spent: 0, reserved: 0 });
    expect(await balance(installed.address)).toBe(before);
  });
});
