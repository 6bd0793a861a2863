// Proves the Solana harness (localnet/svm) with the REFERENCE buyer client (@x402/fetch +
// @x402/svm exact client, kit KeyPairSigner): paid requests against the reference v2 and v1
// sellers settle in LiteSVM through the unmodified reference facilitator, which also serves EVM.
// Tests in this file run in order on one chain (later ones reuse the first payment's header).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { ExactSvmSchemeV1 } from "@x402/svm/exact/v1/client";
import {
  createSolanaRpc,
  devnet,
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
  type Signature,
} from "@solana/kit";
import { PRICE_ATOMIC, WEATHER, fundedBuyer } from "../localnet/index.js";
import {
  DEVNET_GENESIS_HASH,
  SOLANA_DEVNET,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  USDC_DEVNET_MINT,
  startSolanaStack,
  type SolanaBuyer,
  type SolanaStack,
  type SplMint,
} from "../localnet/svm/index.js";
import { recordingFetch } from "../support/fetches";

const COMPUTE_BUDGET = "ComputeBudget111111111111111111111111111111";
const MEMO = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";

let stack: SolanaStack;
let buyer: SolanaBuyer;
let payingFetch: typeof fetch;
const recorder = recordingFetch();
/** PAYMENT-SIGNATURE / X-PAYMENT headers the paying fetch sent, latest last. */
const sentPayments = recorder.paymentHeaders;
beforeAll(async () => {
  stack = await startSolanaStack({ v1: true });
  buyer = await stack.fundedBuyer();
  // The reference client would use the public devnet RPC unless given rpcUrl; the `/buyer` path
  // labels its calls in stack.rpc.calls.
  const rpcUrl = `${stack.rpc.url}/buyer`;
  const client = new x402Client()
    .register("solana:*", new ExactSvmScheme(buyer.signer, { rpcUrl }))
    .registerV1("solana-devnet" as Network, new ExactSvmSchemeV1(buyer.signer, { rpcUrl }))
    // The reference client refuses assets it does not know (spend controls) unless allowed.
    .setSpendControls({ allowedAssets: [{ network: SOLANA_DEVNET, asset: stack.tokens.token2022.address }] });
  payingFetch = wrapFetchWithPayment(recorder.fetch, client);
});

afterAll(async () => {
  await stack?.stop();
});

async function balances(mint: SplMint): Promise<{ buyer: bigint; payTo: bigint }> {
  const [b, p] = await Promise.all([
    stack.tokens.balance(mint, buyer.address),
    stack.tokens.balance(mint, stack.seller.payTo),
  ]);
  return { buyer: b, payTo: p };
}

function decodeWireTransaction(base64: string) {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  if (!("instructions" in message)) throw new Error(`unexpected message version ${message.version}`);
  return { transaction, message };
}

/** The wire transaction inside a PAYMENT-SIGNATURE header. */
function transactionOf(header: string): string {
  const { payload } = decodePaymentSignatureHeader(header);
  if (typeof payload.transaction !== "string") throw new Error("no payload.transaction");
  return payload.transaction;
}

async function expectLanded(signature: string): Promise<void> {
  const client = createSolanaRpc(devnet(stack.rpc.url));
  const { value } = await client.getSignatureStatuses([signature as Signature]).send();
  expect(value[0]).not.toBeNull();
  expect(value[0]?.err).toBeNull();
  expect(["confirmed", "finalized"]).toContain(value[0]?.confirmationStatus);
}

// How fast it starts is not asserted here (a loaded machine is slower): timings live in bench/.
describe("harness setup", () => {
  it("serves devnet USDC at its real address and a Token-2022 mint, read through kit's RPC client", async () => {
    const client = createSolanaRpc(devnet(stack.rpc.url));
    expect(await client.getGenesisHash().send()).toBe(DEVNET_GENESIS_HASH);
    const usdc = await client.getAccountInfo(USDC_DEVNET_MINT, { encoding: "base64" }).send();
    expect(usdc.value?.owner).toBe(TOKEN_PROGRAM);
    const data = Buffer.from(usdc.value?.data[0] ?? "", "base64");
    expect(data.length).toBe(82);
    expect(data[44]).toBe(6); // decimals
    const mint2022 = await client.getAccountInfo(stack.tokens.token2022.address, { encoding: "base64" }).send();
    expect(mint2022.value?.owner).toBe(TOKEN_2022_PROGRAM);

    const ata = await stack.tokens.ata(stack.tokens.usdc, buyer.address);
    const balance = await client.getTokenAccountBalance(ata).send();
    expect(balance.value).toMatchObject({ amount: "1000000", decimals: 6, uiAmountString: "1" });
    expect(await stack.tokens.balance(stack.tokens.token2022, buyer.address)).toBe(1_000_000n);
  });

  it("one facilitator advertises Solana (v2 devnet, v1 solana-devnet) with a feePayer, and EVM", async () => {
    const supported = (await (await fetch(`${stack.facilitator.url}/supported`)).json()) as {
      kinds: { x402Version: number; scheme: string; network: string; extra?: Record<string, unknown> }[];
      signers: Record<string, string[]>;
    };
    expect(supported.kinds).toEqual(
      expect.arrayContaining([
        { x402Version: 2, scheme: "exact", network: SOLANA_DEVNET, extra: { feePayer: stack.facilitator.feePayer } },
        { x402Version: 1, scheme: "exact", network: "solana-devnet", extra: { feePayer: stack.facilitator.feePayer } },
        expect.objectContaining({ x402Version: 2, network: "eip155:84532" }),
        expect.objectContaining({ x402Version: 1, network: "base-sepolia" }),
      ]),
    );
    expect(supported.signers["solana:*"]).toEqual([stack.facilitator.feePayer]);
  });

  it("/weather offers Base Sepolia and Solana devnet USDC; /free needs no payment", async () => {
    const unpaid = await fetch(`${stack.seller.url}/weather`);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.accepts.map((a) => a.network)).toEqual(["eip155:84532", SOLANA_DEVNET]);
    expect(required.accepts[1]).toEqual({
      scheme: "exact",
      network: SOLANA_DEVNET,
      amount: "1000",
      asset: USDC_DEVNET_MINT,
      payTo: stack.seller.payTo,
      maxTimeoutSeconds: 300,
      extra: { feePayer: stack.facilitator.feePayer },
    });
    expect((await fetch(`${stack.seller.url}/free`)).status).toBe(200);
  });
});

describe("reference client pays the reference sellers on Solana", () => {
  let firstPayment: string;
  let firstSignature: string;

  it("v2 GET /weather: exactly the price moves buyer ATA → seller ATA; the signature has landed", async () => {
    const before = await balances(stack.tokens.usdc);
    const feePayerBefore = stack.rpc.svm.getBalance(stack.facilitator.feePayer as Address) ?? 0n;
    const callsBefore = stack.rpc.calls.length;

    const response = await payingFetch(`${stack.seller.url}/weather`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(WEATHER);

    const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    expect(settlement).toMatchObject({ success: true, network: SOLANA_DEVNET, payer: buyer.address });
    await expectLanded(settlement.transaction);
    firstSignature = settlement.transaction;
    firstPayment = sentPayments.at(-1) ?? "";

    const after = await balances(stack.tokens.usdc);
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.payTo - before.payTo).toBe(PRICE_ATOMIC);

    // The fee payer paid the fee (2 signatures × 5000 + ceil(20000 CU × 1 µlamport) = 10001).
    const landed = stack.rpc.getTransaction(firstSignature);
    expect(landed?.fee).toBe(10_001n);
    expect(feePayerBefore - (stack.rpc.svm.getBalance(stack.facilitator.feePayer as Address) ?? 0n)).toBe(landed?.fee);

    // Who called what: the client reads the mint and a blockhash; the facilitator simulates at
    // verify and again at settle, sends with skipPreflight, then polls the status.
    const calls = stack.rpc.calls.slice(callsBefore);
    expect(calls.filter((c) => c.path === "/buyer").map((c) => c.method)).toEqual([
      "getAccountInfo",
      "getLatestBlockhash",
    ]);
    expect(calls.filter((c) => c.path === "/facilitator").map((c) => c.method)).toEqual([
      "simulateTransaction",
      "simulateTransaction",
      "sendTransaction",
      "getSignatureStatuses",
    ]);
    expect(calls.find((c) => c.method === "simulateTransaction")?.params[1]).toMatchObject({
      sigVerify: false,
      replaceRecentBlockhash: false,
      encoding: "base64",
    });
    expect(calls.find((c) => c.method === "sendTransaction")?.params[1]).toMatchObject({
      encoding: "base64",
      skipPreflight: true,
    });
  });

  it("reference client's tx: v0, [CU limit 20000, CU price 1, TransferChecked, Memo], fee-payer slot empty", () => {
    const { transaction, message } = decodeWireTransaction(transactionOf(firstPayment));
    expect(message.version).toBe(0);
    expect("addressTableLookups" in message ? message.addressTableLookups : []).toEqual([]);
    expect(message.staticAccounts[0]).toBe(stack.facilitator.feePayer);
    expect(message.staticAccounts[1]).toBe(buyer.address);
    expect(message.header).toEqual({
      numSignerAccounts: 2,
      numReadonlySignerAccounts: 1,
      numReadonlyNonSignerAccounts: 4,
    });
    // kit decodes the all-zero fee-payer signature as null.
    expect(transaction.signatures[stack.facilitator.feePayer as Address]).toBeNull();
    expect(transaction.signatures[buyer.address]).not.toBeNull();

    const ix = message.instructions.map((one) => ({
      program: message.staticAccounts[one.programAddressIndex],
      accounts: (one.accountIndices ?? []).map((i) => message.staticAccounts[i]),
      data: Buffer.from(one.data ?? new Uint8Array()),
    }));
    expect(ix.map((one) => one.program)).toEqual([COMPUTE_BUDGET, COMPUTE_BUDGET, TOKEN_PROGRAM, MEMO]);
    expect(ix[0]?.data.toString("hex")).toBe("02204e0000"); // SetComputeUnitLimit(20000)
    expect(ix[1]?.data.toString("hex")).toBe("030100000000000000"); // SetComputeUnitPrice(1)
    // TransferChecked: 12, u64 amount 1000, u8 decimals 6; source, mint, destination, authority.
    expect(ix[2]?.data.toString("hex")).toBe("0ce80300000000000006");
    expect(ix[2]?.accounts[1]).toBe(USDC_DEVNET_MINT);
    expect(ix[2]?.accounts[3]).toBe(buyer.address);
    // Memo: no accounts, 32 lowercase hex chars (16 random bytes).
    expect(ix[3]?.accounts).toEqual([]);
    expect(ix[3]?.data.toString("utf8")).toMatch(/^[0-9a-f]{32}$/);
    // The settled transaction is the same message, now also signed by the fee payer.
    const wire = stack.rpc.getTransaction(firstSignature)?.wire ?? new Uint8Array();
    const settled = getTransactionDecoder().decode(wire);
    expect(Buffer.from(settled.messageBytes)).toEqual(Buffer.from(transaction.messageBytes));
    const feePayerSignature = settled.signatures[stack.facilitator.feePayer as Address] ?? new Uint8Array();
    expect(getBase58Decoder().decode(feePayerSignature)).toBe(firstSignature);
  });

  it("v2 GET /weather-2022: paid in the Token-2022 mint", async () => {
    const unpaid = await fetch(`${stack.seller.url}/weather-2022`);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.accepts).toEqual([
      {
        scheme: "exact",
        network: SOLANA_DEVNET,
        amount: "1000",
        asset: stack.tokens.token2022.address,
        payTo: stack.seller.payTo,
        maxTimeoutSeconds: 300,
        extra: { feePayer: stack.facilitator.feePayer },
      },
    ]);

    const before = await balances(stack.tokens.token2022);
    const response = await payingFetch(`${stack.seller.url}/weather-2022`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(WEATHER);
    const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    expect(settlement).toMatchObject({ success: true, network: SOLANA_DEVNET, payer: buyer.address });
    await expectLanded(settlement.transaction);

    const after = await balances(stack.tokens.token2022);
    expect(before.buyer - after.buyer).toBe(1000n);
    expect(after.payTo - before.payTo).toBe(1000n);
    const { message } = decodeWireTransaction(transactionOf(sentPayments.at(-1) ?? ""));
    const transfer = message.instructions[2];
    expect(transfer && message.staticAccounts[transfer.programAddressIndex]).toBe(TOKEN_2022_PROGRAM);
  });

  it("replaying the captured PAYMENT-SIGNATURE is refused and moves nothing", async () => {
    const before = await balances(stack.tokens.usdc);
    const response = await fetch(`${stack.seller.url}/weather`, { headers: { "PAYMENT-SIGNATURE": firstPayment } });
    expect(response.status).toBe(402);
    expect(response.headers.get("PAYMENT-RESPONSE")).toBeNull();
    const required = decodePaymentRequiredHeader(response.headers.get("PAYMENT-REQUIRED") ?? "");
    // The facilitator's simulation hits the status cache: "This transaction has already been processed".
    expect(required.error).toBe("invalid_exact_svm_transaction_simulation_failed");
    expect(await balances(stack.tokens.usdc)).toEqual(before);
  });

  it("a payment whose blockhash expired before it reached the seller is refused", async () => {
    const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer.signer, { rpcUrl: stack.rpc.url }));
    const unpaid = await fetch(`${stack.seller.url}/weather`);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
    const payload = await client.createPaymentPayload(required);
    stack.rpc.expireBlockhashes();

    const before = await balances(stack.tokens.usdc);
    const response = await fetch(`${stack.seller.url}/weather`, {
      headers: { "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) },
    });
    expect(response.status).toBe(402);
    const refused = decodePaymentRequiredHeader(response.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(refused.error).toBe("invalid_exact_svm_transaction_simulation_failed");
    expect(await balances(stack.tokens.usdc)).toEqual(before);
  });

  it("v1 GET /weather on x402-express (solana-devnet), X-PAYMENT-RESPONSE names a landed tx", async () => {
    const v1Seller = stack.v1Seller!;
    const before = await balances(stack.tokens.usdc);
    const response = await payingFetch(`${v1Seller.url}/weather`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(WEATHER);
    const settlement = decodePaymentResponseHeader(response.headers.get("X-PAYMENT-RESPONSE") ?? "");
    expect(settlement).toMatchObject({ success: true, network: "solana-devnet", payer: buyer.address });
    await expectLanded(settlement.transaction);
    const after = await balances(stack.tokens.usdc);
    expect(before.buyer - after.buyer).toBe(PRICE_ATOMIC);
    expect(after.payTo - before.payTo).toBe(PRICE_ATOMIC);
  });

  it("the same /weather and facilitator also settle an EVM buyer on Base Sepolia", async () => {
    const evmBuyer = await fundedBuyer(stack.usdc!);
    const client = new x402Client().register("eip155:*", new ExactEvmScheme(evmBuyer.account));
    const response = await wrapFetchWithPayment(fetch, client)(`${stack.seller.url}/weather`);
    expect(response.status).toBe(200);
    const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    expect(settlement).toMatchObject({ success: true, network: "eip155:84532" });
    expect(await stack.usdc!.usdcBalance(stack.seller.evmPayTo!)).toBe(PRICE_ATOMIC);
  });
});
