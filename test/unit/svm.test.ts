// Solana exact: the transaction is decoded with the official program clients and checked field by
// field. The RPC here is a stand-in object (the mint account and a blockhash); the interop tests
// run the same code against a LiteSVM-backed RPC and the reference facilitator.
import {
  AccountRole,
  address,
  compileTransaction,
  decompileTransactionMessage,
  getCompiledTransactionMessageDecoder,
  verifySignature,
  type TransactionSigner,
} from "@solana/kit";
import {
  parseSetComputeUnitLimitInstruction,
  parseSetComputeUnitPriceInstruction,
} from "@solana-program/compute-budget";
import { findAssociatedTokenPda, parseTransferCheckedInstruction } from "@solana-program/token";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { exactSvm, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../src/svm";
import {
  BLOCKHASH,
  FEE_PAYER,
  PAY_TO,
  USDC_DEVNET,
  buyer,
  decodeTransaction,
  fakeRpc,
  svmRequirement,
} from "../support/svm";
import { countingSvmSigner, rewritingSvmSigner, type WalletTransaction } from "../support/wallets";
import { engineOf } from "../../src/client";

async function pay(
  accepts: unknown[],
  options: { rpc?: ReturnType<typeof fakeRpc>; signer?: TransactionSigner; version?: 1 | 2 } = {},
) {
  const rpc = options.rpc ?? fakeRpc();
  const client = createX402Client({
    schemes: [exactSvm({ signer: options.signer ?? buyer, rpc, randomBytes: (n) => new Uint8Array(n).fill(0xab) })],
  });
  const version = options.version ?? 2;
  const challenge = parseChallenge(
    version === 2
      ? { header: encodeBase64Json({ x402Version: 2, resource: { url: "https://api.example/x" }, accepts }) }
      : { header: null, body: { x402Version: 1, accepts } },
  );
  return engineOf(client).createPayment(challenge, { url: "https://api.example/x", method: "GET" });
}

const decode = decodeTransaction;
const requirement = svmRequirement;

describe("Solana exact transaction", () => {
  it("lays out [limit, price, TransferChecked, memo] exactly, signed by the buyer only", async () => {
    const payment = await pay([requirement()]);
    const { tx, compiled, message } = decode((payment.payload.payload as { transaction: string }).transaction);
    expect(compiled.version).toBe(0);
    expect(message.feePayer.address).toBe(FEE_PAYER);
    expect(message.lifetimeConstraint).toMatchObject({ blockhash: BLOCKHASH });
    const [limit, price, transfer, memo, ...rest] = message.instructions;
    expect(rest).toEqual([]);
    expect(parseSetComputeUnitLimitInstruction(limit as never).data.units).toBe(20_000);
    expect(parseSetComputeUnitPriceInstruction(price as never).data.microLamports).toBe(1n);

    const parsed = parseTransferCheckedInstruction(transfer as never);
    expect(transfer!.programAddress).toBe(TOKEN_PROGRAM);
    expect(parsed.data).toMatchObject({ amount: 1000n, decimals: 6 });
    const [source] = await findAssociatedTokenPda({
      owner: buyer.address,
      mint: address(USDC_DEVNET),
      tokenProgram: address(TOKEN_PROGRAM),
    });
    const [destination] = await findAssociatedTokenPda({
      owner: address(PAY_TO),
      mint: address(USDC_DEVNET),
      tokenProgram: address(TOKEN_PROGRAM),
    });
    expect(parsed.accounts.source.address).toBe(source);
    expect(parsed.accounts.destination.address).toBe(destination);
    expect(parsed.accounts.mint.address).toBe(USDC_DEVNET);
    expect(parsed.accounts.authority).toMatchObject({ address: buyer.address, role: AccountRole.READONLY_SIGNER });

    expect(memo!.programAddress).toBe("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
    expect(memo!.accounts ?? []).toEqual([]);
    expect(new TextDecoder().decode(memo!.data)).toBe("ab".repeat(16));

    expect(Object.keys(tx.signatures)).toEqual([FEE_PAYER, buyer.address]);
    expect(tx.signatures[FEE_PAYER as never]).toBeNull();
    const signature = tx.signatures[buyer.address]!;
    expect(await verifySignature(buyer.keyPair.publicKey, signature, tx.messageBytes)).toBe(true);
  });

  it("echoes the requirement as accepted and uses the v1 envelope for v1", async () => {
    const v2 = await pay([requirement()]);
    expect(v2.payload.accepted).toEqual(requirement());
    const v1req = {
      ...requirement(),
      network: "solana-devnet",
      maxAmountRequired: "1000",
      amount: undefined,
      resource: "https://api.example/x",
      description: "",
    };
    const v1 = await pay([v1req], { version: 1 });
    expect(v1.headerName).toBe("X-PAYMENT");
    expect(Object.keys(v1.payload)).toEqual(["x402Version", "scheme", "network", "payload"]);
    expect(v1.payload).toMatchObject({ x402Version: 1, scheme: "exact", network: "solana-devnet" });
  });

  it("uses the server's memo and recent blockhash when given (no blockhash RPC call)", async () => {
    const rpc = fakeRpc();
    const recent = "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn";
    const payment = await pay([requirement({ memo: "order-42", recentBlockhash: recent })], { rpc });
    const { message } = decode((payment.payload.payload as { transaction: string }).transaction);
    expect(new TextDecoder().decode(message.instructions[3]!.data)).toBe("order-42");
    expect(message.lifetimeConstraint).toMatchObject({ blockhash: recent });
    expect(rpc.calls.sort()).toEqual([`getAccountInfo ${USDC_DEVNET}`, "getGenesisHash"]);
  });

  it("reads the token program from the mint's owner (Token-2022)", async () => {
    const payment = await pay([requirement()], { rpc: fakeRpc({ owner: TOKEN_2022_PROGRAM, decimals: 9 }) });
    const { message } = decode((payment.payload.payload as { transaction: string }).transaction);
    expect(message.instructions[2]!.programAddress).toBe(TOKEN_2022_PROGRAM);
    const [destination] = await findAssociatedTokenPda({
      owner: address(PAY_TO),
      mint: address(USDC_DEVNET),
      tokenProgram: address(TOKEN_2022_PROGRAM),
    });
    expect(message.instructions[2]!.accounts![2]!.address).toBe(destination);
    expect(message.instructions[2]!.data![9]).toBe(9);
  });

  it.each([
    ["fee payer missing", requirement({ feePayer: undefined }), /extra.feePayer is missing/],
    ["fee payer is the buyer", requirement({ feePayer: buyer.address }), /buyer's own address/],
    [
      "destination not an address",
      requirement({}, { payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C" }),
      /not a Solana address/,
    ],
    ["amount beyond u64", requirement({}, { amount: (1n << 64n).toString() }), /does not fit/],
    ["amount not base-10", requirement({}, { amount: "1e3" }), /base-10 integer/],
    ["network not Solana", requirement({}, { network: "eip155:8453" }), /no registered scheme/],
    ["memo too long", requirement({ memo: "x".repeat(257) }), /extra.memo/],
  ])("refuses before signing: %s", async (_, req, reason) => {
    const { signer, calls: signed } = countingSvmSigner();
    const error = await pay([req], { signer }).catch((e) => e);
    expect(error.code).toBe("NO_PAYABLE_REQUIREMENT");
    expect(error.message).toMatch(reason);
    expect(signed).toEqual([]);
  });

  it("refuses a mint that no token program owns, or that does not exist", async () => {
    await expect(
      pay([requirement()], { rpc: fakeRpc({ owner: "11111111111111111111111111111111" }) }),
    ).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/not a mint of the SPL Token or Token-2022 program/),
    });
    await expect(pay([requirement()], { rpc: fakeRpc({ exists: false }) })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
    });
  });

  it("prices devnet USDC in the spend policy (6 decimals)", async () => {
    await expect(pay([requirement({}, { amount: "1000001" })])).rejects.toThrow(
      /1.000001 USDC is over policy.maxAmountPerPayment/,
    );
  });
});

describe("exactSvm options", () => {
  it.each([
    ["no signer", { signer: undefined }],
    ["a signer whose address is not one", { signer: { address: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C" } }],
    ["a negative compute-unit price", { computeUnitPrice: -1 }],
    ["a compute-unit price over the facilitators' cap", { computeUnitPrice: 5_000_001n }],
    ["a fractional compute-unit limit", { computeUnitLimit: 1.5 }],
    ["a compute-unit limit over 1,400,000", { computeUnitLimit: 1_400_001 }],
  ])("refuses %s with INVALID_CONFIG", (_, options) => {
    expect(() => exactSvm({ signer: buyer, ...options } as never)).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG" }),
    );
  });

  it("writes the configured compute-unit limit and price", async () => {
    const client = createX402Client({
      schemes: [exactSvm({ signer: buyer, rpc: fakeRpc(), computeUnitLimit: 30_000, computeUnitPrice: 7n })],
    });
    const challenge = parseChallenge({
      header: encodeBase64Json({
        x402Version: 2,
        resource: { url: "https://api.example/x" },
        accepts: [requirement()],
      }),
    });
    const payment = await engineOf(client).createPayment(challenge, { url: "https://api.example/x", method: "GET" });
    const [limit, price] = decode((payment.payload.payload as { transaction: string }).transaction).message
      .instructions;
    expect(parseSetComputeUnitLimitInstruction(limit as never).data.units).toBe(30_000);
    expect(parseSetComputeUnitPriceInstruction(price as never).data.microLamports).toBe(7n);
  });
});

describe("wallets that modify the transaction", () => {
  const modifyingSigner = (edit: (instructions: unknown[]) => unknown[]) => rewritingSvmSigner({ instructions: edit });
  const lighthouse = {
    programAddress: address("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95"),
    data: new Uint8Array([1]),
  };
  const system = { programAddress: address("11111111111111111111111111111111"), data: new Uint8Array([2, 0, 0, 0]) };

  it("accepts a wallet that appends a Lighthouse assertion", async () => {
    const payment = await pay([requirement()], { signer: modifyingSigner((ixs) => [...ixs, lighthouse]) });
    const { message } = decode((payment.payload.payload as { transaction: string }).transaction);
    expect(message.instructions.at(-1)?.programAddress).toBe(lighthouse.programAddress);
  });

  it("refuses, before sending, a wallet that adds an instruction facilitators reject", async () => {
    await expect(pay([requirement()], { signer: modifyingSigner((ixs) => [...ixs, system]) })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/instruction 4 calls 11111111111111111111111111111111/),
    });
  });

  const computePrice = (price: bigint) => {
    const data = new Uint8Array(9);
    data[0] = 3;
    new DataView(data.buffer).setBigUint64(1, price, true);
    return { programAddress: address("ComputeBudget111111111111111111111111111111"), data };
  };
  const otherFeePayer = address("11111111111111111111111111111112");
  it.each([
    [
      "raises the compute-unit price over the facilitators' cap",
      (ixs: unknown[]) => [ixs[0], computePrice(5_000_001n), ...ixs.slice(2)],
      /compute-unit price is over/,
    ],
    [
      "moves the transfer after the memo",
      (ixs: unknown[]) => [ixs[0], ixs[1], ixs[3], ixs[2]],
      /instruction 2 is not the expected TransferChecked/,
    ],
    ["drops the compute-unit limit", (ixs: unknown[]) => ixs.slice(1), /instruction 0 is not SetComputeUnitLimit/],
    [
      "appends four Lighthouse assertions (7 instructions)",
      (ixs: unknown[]) => [...ixs, lighthouse, lighthouse, lighthouse],
      /7 instructions \(3 to 6 allowed\)/,
    ],
    [
      "adds an instruction that touches the fee payer's account",
      (ixs: unknown[]) => [...ixs, { ...lighthouse, accounts: [{ address: FEE_PAYER, role: AccountRole.WRITABLE }] }],
      /uses the fee payer's account/,
    ],
  ])("refuses a wallet that %s", async (_, edit, reason) => {
    await expect(pay([requirement()], { signer: modifyingSigner(edit) })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(reason),
    });
  });

  it("refuses a wallet that changes the fee payer or does not sign", async () => {
    const replacing = (change: (tx: WalletTransaction) => object) => rewritingSvmSigner({ signed: change });
    const withFeePayer = replacing((tx) => {
      const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(tx.messageBytes));
      return compileTransaction({ ...message, feePayer: { address: otherFeePayer } } as never);
    });
    await expect(pay([requirement()], { signer: withFeePayer })).rejects.toThrow(
      /the fee payer is not the facilitator's/,
    );
    const unsigned = replacing((tx) => ({ ...tx, signatures: { ...tx.signatures, [buyer.address]: null } }));
    await expect(pay([requirement()], { signer: unsigned })).rejects.toThrow(/the wallet did not sign/);
    const legacy = replacing((tx) => {
      const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(tx.messageBytes));
      return compileTransaction({ ...message, version: "legacy" } as never);
    });
    await expect(pay([requirement()], { signer: legacy })).rejects.toThrow(/not a v0 message/);
    const truncated = replacing((tx) => ({ ...tx, messageBytes: tx.messageBytes.subarray(0, 40) }));
    await expect(pay([requirement()], { signer: truncated })).rejects.toThrow(/message cannot be read/);
  });

  it("refuses a wallet that changes the transfer amount", async () => {
    const tamper = (ixs: unknown[]) => {
      const copy = [...ixs] as { data: Uint8Array }[];
      const data = new Uint8Array(copy[2]!.data);
      data[1] = 0xff;
      copy[2] = { ...copy[2]!, data };
      return copy;
    };
    await expect(pay([requirement()], { signer: modifyingSigner(tamper) })).rejects.toThrow(
      /not the expected TransferChecked/,
    );
  });
});
