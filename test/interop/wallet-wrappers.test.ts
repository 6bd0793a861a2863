// The wallet decides how it signs. A user who wraps a viem account (`{ ...account, signTypedData: withPolicy }`),
// and a server wallet that presents itself as a viem `type: "local"` account with a policy engine behind
// it, must see every payment through the method that carries what is signed: typed data through
// `signTypedData`, messages through `signMessage`, transactions through `signTransaction`, never a raw
// digest through `sign`. For every scheme and extension that signs, against the reference sellers and
// facilitator on anvil and LiteSVM: the wrapper runs once per signature the payment needs, nothing signs
// beside it, and money moves on chain; a wrapper that refuses stops the payment with nothing moved.
import type { Hex, LocalAccount } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt, signInWithX, type PaymentScheme } from "../../src";
import { exactEvm, permit2Allowance, uptoEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import { exactSvm } from "../../src/svm";
import {
  PRICE_ATOMIC,
  approvePermit2,
  fundedBuyer,
  newBuyer,
  startExtensionSeller,
  startInteropStack,
  type ExtensionSeller,
  type InteropStack,
} from "../localnet/index.js";
import { startSolanaStack, type SolanaStack } from "../localnet/svm/index.js";

let evm: InteropStack;
let solana: SolanaStack;
let evmSignIn: ExtensionSeller;
let svmSignIn: ExtensionSeller;

// Each chain's payments settle through its own stack: both facilitators hold the same EVM key, so only
// one of them may send EVM transactions in this process (viem keeps one nonce count per key and chain).
beforeAll(async () => {
  [evm, solana] = await Promise.all([startInteropStack({ sponsored: true }), startSolanaStack()]);
  evmSignIn = await startExtensionSeller({ facilitatorUrl: evm.facilitator.url, payTo: evm.seller.payTo });
  svmSignIn = await startExtensionSeller({
    facilitatorUrl: solana.facilitator.url,
    payTo: solana.seller.evmPayTo!,
    svmPayTo: solana.seller.payTo,
  });
}, 120_000);
afterAll(async () => {
  await Promise.all([evmSignIn?.stop(), svmSignIn?.stop()]);
  await Promise.all([evm?.stop(), solana?.stop()]);
});

const EVM_METHODS = ["sign", "signMessage", "signTypedData", "signTransaction", "signAuthorization"] as const;

/**
 * A viem local account with every signing method wrapped, as a user's policy wrapper or a server wallet
 * would: each call is recorded with what it was asked to sign (the typed data's primary type), and
 * `refuse` makes the typed-data wrapper throw as a policy engine does.
 */
function wrappedAccount(account: LocalAccount, { refuse = false } = {}) {
  const calls: string[] = [];
  const wrapped: Record<string, unknown> = { ...account };
  for (const method of EVM_METHODS) {
    const own = (account as unknown as Record<string, (...args: unknown[]) => Promise<Hex>>)[method];
    wrapped[method] = async (request: { primaryType?: string }) => {
      calls.push(method === "signTypedData" ? `signTypedData ${request.primaryType}` : method);
      if (refuse && method === "signTypedData") throw new Error("policy: this payee is not allowed");
      return own!.call(account, request);
    };
  }
  expect(wrapped.type).toBe("local");
  return { wallet: wrapped as unknown as LocalAccount, calls };
}

const pay = (schemes: PaymentScheme[], url: string, extensions = {}) =>
  wrapFetchWithPayment(fetch, createX402Client({ schemes, ...extensions }))(url);
const permit2 = () => permit2Allowance({ rpc: evm.anvil.rpcUrl });

describe("EVM: a wrapped viem local account signs every payment through its own methods", () => {
  it("exact, EIP-3009: signTypedData once (TransferWithAuthorization), nothing else; the price moves", async () => {
    const buyer = await fundedBuyer(evm.usdc);
    const { wallet, calls } = wrappedAccount(buyer.account);
    const before = await evm.usdc.usdcBalance(buyer.address);
    const response = await pay([exactEvm({ signer: wallet })], `${evm.seller.url}/weather`);
    expect(response.status).toBe(200);
    expect(getPaymentReceipt(response)?.settled).toBe(true);
    expect(calls).toEqual(["signTypedData TransferWithAuthorization"]);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(before - PRICE_ATOMIC);
  });

  it("exact, Permit2: signTypedData once (PermitWitnessTransferFrom)", async () => {
    const buyer = await fundedBuyer(evm.usdc);
    await approvePermit2(evm.anvil.rpcUrl, { account: buyer.account, token: evm.usdc.address });
    const { wallet, calls } = wrappedAccount(buyer.account);
    const before = await evm.usdc.usdcBalance(buyer.address);
    const response = await pay([exactEvm({ signer: wallet })], `${evm.seller.url}/permit2/weather`);
    expect(response.status).toBe(200);
    expect(calls).toEqual(["signTypedData PermitWitnessTransferFrom"]);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(before - PRICE_ATOMIC);
  });

  it("upto: signTypedData once (PermitWitnessTransferFrom); the seller settles what was used", async () => {
    const buyer = await fundedBuyer(evm.usdc);
    await approvePermit2(evm.anvil.rpcUrl, { account: buyer.account, token: evm.usdc.address });
    const { wallet, calls } = wrappedAccount(buyer.account);
    const before = await evm.usdc.usdcBalance(buyer.address);
    const response = await pay([uptoEvm({ signer: wallet })], `${evm.seller.url}/upto/metered?charge=1234`);
    expect(response.status).toBe(200);
    expect(calls).toEqual(["signTypedData PermitWitnessTransferFrom"]);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(before - 1234n);
  });

  it("eip2612GasSponsoring: signTypedData twice, the EIP-2612 Permit and the Permit2 transfer", async () => {
    const buyer = await fundedBuyer(evm.usdc);
    const { wallet, calls } = wrappedAccount(buyer.account);
    const before = await evm.usdc.usdcBalance(buyer.address);
    const response = await pay(
      [exactEvm({ signer: wallet, permit2: permit2() })],
      `${evm.seller.url}/sponsored/permit`,
    );
    expect(response.status).toBe(200);
    expect([...calls].sort()).toEqual(["signTypedData Permit", "signTypedData PermitWitnessTransferFrom"]);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(before - PRICE_ATOMIC);
  });

  it("erc20ApprovalGasSponsoring: signTypedData once and signTransaction once (the approval)", async () => {
    const buyer = newBuyer();
    await evm.plainToken!.mint(buyer.address, 1_000_000n);
    const { wallet, calls } = wrappedAccount(buyer.account);
    const schemes = [exactEvm({ signer: wallet, permit2: permit2() })];
    const assetCaps = [{ network: "eip155:84532", asset: evm.plainToken!.address, maxAmount: String(PRICE_ATOMIC) }];
    const response = await pay(schemes, `${evm.seller.url}/sponsored/plain`, { policy: { assetCaps } });
    expect(response.status).toBe(200);
    expect([...calls].sort()).toEqual(["signTransaction", "signTypedData PermitWitnessTransferFrom"]);
    expect(await evm.plainToken!.balanceOf(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
  });

  it("sign-in-with-x: signMessage once on the second visit, and no typed data", async () => {
    const buyer = await fundedBuyer(evm.usdc);
    const { wallet, calls } = wrappedAccount(buyer.account);
    const extensions = { plugins: [signInWithX({ evm: wallet })] };
    const client = createX402Client({ schemes: [exactEvm({ signer: wallet })], ...extensions });
    const first = await wrapFetchWithPayment(fetch, client)(`${evmSignIn.url}/siwx/weather`);
    expect(first.status).toBe(200);
    const second = await wrapFetchWithPayment(fetch, client)(`${evmSignIn.url}/siwx/weather`);
    expect(second.status).toBe(200);
    expect(getPaymentReceipt(second)).toBeUndefined();
    expect(calls).toEqual(["signTypedData TransferWithAuthorization", "signMessage"]);
  });

  it("a wrapper that refuses stops the payment: nothing is sent and nothing moves", async () => {
    const buyer = await fundedBuyer(evm.usdc);
    const { wallet, calls } = wrappedAccount(buyer.account, { refuse: true });
    const before = await evm.usdc.usdcBalance(buyer.address);
    const error = await pay([exactEvm({ signer: wallet })], `${evm.seller.url}/weather`).catch((e) => e);
    expect(error.code).toBe("SIGNING_FAILED");
    expect(error.message).not.toContain(buyer.privateKey.slice(2));
    expect(calls).toEqual(["signTypedData TransferWithAuthorization"]);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(before);
  });
});

describe("Solana: a wrapped kit signer signs through its own methods", () => {
  it("exact: signTransactions once; sign-in-with-x: signMessages once on the second visit", async () => {
    const buyer = await solana.fundedBuyer();
    const calls: string[] = [];
    const own = buyer.signer;
    const wallet = {
      ...own,
      signTransactions: (transactions: never, config?: never) => (
        calls.push("signTransactions"), own.signTransactions(transactions, config)
      ),
      signMessages: (messages: never, config?: never) => (
        calls.push("signMessages"), own.signMessages(messages, config)
      ),
    };
    const client = createX402Client({
      schemes: [exactSvm({ signer: wallet, rpc: `${solana.rpc.url}/buyer` })],
      plugins: [signInWithX({ solana: wallet })],
    });
    const before = await solana.tokens.balance(solana.tokens.usdc, buyer.address);
    const first = await wrapFetchWithPayment(fetch, client)(`${svmSignIn.url}/siwx/weather`);
    expect(first.status).toBe(200);
    expect(calls).toEqual(["signTransactions"]);
    const second = await wrapFetchWithPayment(fetch, client)(`${svmSignIn.url}/siwx/weather`);
    expect(second.status).toBe(200);
    expect(calls).toEqual(["signTransactions", "signMessages"]);
    expect(await solana.tokens.balance(solana.tokens.usdc, buyer.address)).toBe(before - PRICE_ATOMIC);
  });
});
