// Solana exact, each guard at its bound: the last value it lets through and the first it refuses,
// so a guard removed, flipped or moved by one fails here (the requirement's checks, the options,
// and what a wallet that rewrites the transaction may do). svm.test.ts covers the layout itself.
import { address } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { engineOf } from "../../src/client";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { exactSvm, MEMO_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, type ExactSvmOptions } from "../../src/svm";
import { FEE_PAYER, buyer, decodeTransaction, fakeRpc, svmRequirement } from "../support/svm";
import { countingSvmSigner, rewritingSvmSigner, type WalletInstruction } from "../support/wallets";

const U64_MAX = (1n << 64n) - 1n;
const url = "https://api.example/x";

function client(options: Partial<ExactSvmOptions> = {}) {
  return createX402Client({
    schemes: [
      exactSvm({ signer: buyer, rpc: fakeRpc(), randomBytes: (n) => new Uint8Array(n).fill(0xab), ...options }),
    ],
    policy: { maxAmountPerPayment: false },
  });
}

const challengeOf = (requirement: object) =>
  parseChallenge({ header: encodeBase64Json({ x402Version: 2, resource: { url }, accepts: [requirement] }) });

/** "payable", or the reason the requirement is refused. */
function verdict(requirement: object, options: Partial<ExactSvmOptions> = {}) {
  const { options: payable, rejected } = engineOf(client(options)).evaluate(challengeOf(requirement), {
    url,
    method: "GET",
  });
  return payable.length > 0 ? "payable" : rejected[0]!.reason;
}

async function pay(requirement: object, options: Partial<ExactSvmOptions> = {}) {
  const payment = await engineOf(client(options)).createPayment(challengeOf(requirement), { url, method: "GET" });
  return decodeTransaction((payment.payload.payload as { transaction: string }).transaction).message;
}

describe("exactSvm's checks of a requirement, at their bounds", () => {
  it("extra.memo: 256 UTF-8 bytes are written as given; 257 are refused; multi-byte characters count as their bytes", async () => {
    const memoOf = async (memo: string) =>
      new TextDecoder().decode((await pay(svmRequirement({ memo }))).instructions[3]!.data);
    expect(await memoOf("m".repeat(256))).toBe("m".repeat(256));
    expect(await memoOf("é".repeat(128))).toBe("é".repeat(128));
    expect(verdict(svmRequirement({ memo: "m".repeat(257) }))).toBe(
      "extra.memo must be a string of at most 256 UTF-8 bytes",
    );
    expect(verdict(svmRequirement({ memo: "é".repeat(129) }))).toBe(
      "extra.memo must be a string of at most 256 UTF-8 bytes",
    );
    expect(verdict(svmRequirement({ memo: 42 }))).toBe("extra.memo must be a string of at most 256 UTF-8 bytes");
    expect(await memoOf("")).toBe("");
  });

  it("amount: the largest u64 is paid; one more does not fit a token transfer", () => {
    expect(verdict(svmRequirement({}, { amount: U64_MAX.toString() }))).toBe("payable");
    expect(verdict(svmRequirement({}, { amount: (U64_MAX + 1n).toString() }))).toBe(
      `amount ${U64_MAX + 1n} does not fit a token transfer (u64)`,
    );
  });

  it("payTo and the fee payer may not be the buyer; every address must be one", () => {
    expect(verdict(svmRequirement({}, { payTo: buyer.address }))).toBe("payTo is the buyer's own address");
    expect(verdict(svmRequirement({ feePayer: buyer.address }))).toBe("extra.feePayer is the buyer's own address");
    expect(verdict(svmRequirement({}, { payTo: "not-an-address" }))).toBe(
      'payTo is "not-an-address", not a Solana address',
    );
    expect(verdict(svmRequirement({}, { asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }))).toBe(
      'asset is "0x036CbD53842c5426634e7929541eC2318f3dCF7e", not a Solana address',
    );
    expect(verdict(svmRequirement({ feePayer: undefined }))).toBe("extra.feePayer is missing");
  });

  it("a network outside Solana, or a cluster with no RPC, is refused", () => {
    const onBase = { ...svmRequirement(), network: "eip155:84532" };
    expect(verdict(onBase, { networks: ["*"] })).toBe("network eip155:84532 is not a Solana cluster");
    const other = "solana:11111111111111111111111111111111";
    expect(verdict({ ...svmRequirement(), network: other }, { rpc: undefined })).toBe(
      `no RPC is known for ${other}: add it to exactSvm({ rpc: { "${other}": url } })`,
    );
    expect(verdict(svmRequirement(), { rpc: undefined })).toBe("payable");
  });
});

describe("the mint exactSvm reads before signing, at its bounds", () => {
  const mintOf = (over: Parameters<typeof fakeRpc>[0]) => pay(svmRequirement(), { rpc: fakeRpc(over) });

  it("82 bytes (an SPL Token mint) or more (a Token-2022 mint with extensions) are paid; 81 bytes are not a mint", async () => {
    expect(await mintOf({})).toBeDefined();
    expect(await mintOf({ owner: TOKEN_2022_PROGRAM, dataLength: 234 })).toBeDefined();
    await expect(mintOf({ dataLength: 81 })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringContaining(
        `is not a mint of the SPL Token or Token-2022 program (owner ${TOKEN_PROGRAM}, 81 bytes)`,
      ),
    });
    await expect(mintOf({ owner: TOKEN_2022_PROGRAM, dataLength: 81 })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
    });
  });

  it("an account of either token program's size owned by any other program is not a mint; nor is no account", async () => {
    await expect(mintOf({ owner: MEMO_PROGRAM })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringContaining(`(owner ${MEMO_PROGRAM}, 82 bytes)`),
    });
    await expect(mintOf({ exists: false })).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringContaining("(no such account)"),
    });
  });
});

describe("the server's recent blockhash: its last valid height handed to the wallet", () => {
  const recentBlockhash = "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn";
  async function heightSeen(lastValidBlockHeight: unknown) {
    const { calls, signer } = countingSvmSigner();
    await pay(svmRequirement({ recentBlockhash, lastValidBlockHeight }), { signer });
    return (calls[0]![0] as unknown as { lifetimeConstraint: { blockhash: string; lastValidBlockHeight: bigint } })
      .lifetimeConstraint;
  }

  it("digits only are the height, as given; anything else is no limit (the largest u64), never a negative or partial number", async () => {
    expect(await heightSeen("150")).toEqual({ blockhash: recentBlockhash, lastValidBlockHeight: 150n });
    expect(await heightSeen(150)).toEqual({ blockhash: recentBlockhash, lastValidBlockHeight: 150n });
    for (const height of ["-5", "12a", "a12", "1e3", 12.5, "", undefined]) {
      expect((await heightSeen(height)).lastValidBlockHeight).toBe(U64_MAX);
    }
  });
});

describe("exactSvm's options, at their bounds", () => {
  it.each([
    {
      option: "computeUnitPrice",
      fits: [0, 5_000_000n],
      refused: [-1, 5_000_001n],
      says: () => "computeUnitPrice must be from 0 to 5000000 µlamports: facilitators refuse more.",
    },
    {
      option: "computeUnitLimit",
      fits: [1, 1_400_000],
      refused: [0, 1_400_001],
      says: (v: unknown) => `computeUnitLimit must be an integer from 1 to 1,400,000, not ${v}.`,
    },
    {
      option: "rpcTimeoutMs",
      fits: [1, 2 ** 31 - 1],
      refused: [0, 2 ** 31],
      says: (v: unknown) => `rpcTimeoutMs must be a whole number of milliseconds from 1 to 2^31 - 1, not ${v}.`,
    },
  ])("$option: $fits accepted, $refused refused, saying why", ({ option, fits, refused, says }) => {
    for (const value of fits) expect(() => exactSvm({ signer: buyer, [option]: value })).not.toThrow();
    for (const value of refused) {
      expect(() => exactSvm({ signer: buyer, [option]: value })).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG", message: says(value) }),
      );
    }
  });

  it("a signer without an address: INVALID_CONFIG saying what is needed", () => {
    const message =
      "exactSvm needs a @solana/kit TransactionSigner with an address (e.g. createKeyPairSignerFromBytes).";
    for (const signer of [undefined, {}, { address: "not an address" }]) {
      expect(() => exactSvm({ signer: signer as never })).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG", message }),
      );
    }
  });

  it("the bounds written are the ones paid with", async () => {
    const [limit, price] = (await pay(svmRequirement(), { computeUnitLimit: 1_400_000, computeUnitPrice: 5_000_000n }))
      .instructions;
    expect(Array.from(limit!.data!)).toEqual([2, 0xc0, 0x5c, 0x15, 0]);
    expect(new DataView(price!.data!.buffer, price!.data!.byteOffset).getBigUint64(1, true)).toBe(5_000_000n);
  });
});

describe("what a wallet that rewrites the transaction may do, at the bounds", () => {
  const lighthouse = {
    programAddress: address("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95"),
    data: new Uint8Array([1]),
  };
  const computePrice = (price: bigint, length = 9) => {
    const data = new Uint8Array(length);
    data[0] = 3;
    if (length >= 9) new DataView(data.buffer).setBigUint64(1, price, true);
    return { programAddress: address("ComputeBudget111111111111111111111111111111"), data };
  };
  const rewrite = (edit: (ixs: WalletInstruction[]) => unknown[], requirement = svmRequirement()) =>
    pay(requirement, { signer: rewritingSvmSigner({ instructions: edit }) }).then(
      () => "signed",
      (error) => error.message as string,
    );

  it("six instructions pass, seven do not; three pass, two do not", async () => {
    expect(await rewrite((ixs) => [...ixs, lighthouse, lighthouse])).toBe("signed");
    expect(await rewrite((ixs) => [...ixs, lighthouse, lighthouse, lighthouse])).toMatch(
      /has 7 instructions \(3 to 6 allowed\)/,
    );
    expect(await rewrite((ixs) => ixs.slice(0, 3))).toBe("signed");
    expect(await rewrite((ixs) => ixs.slice(2, 4))).toMatch(/has 2 instructions \(3 to 6 allowed\)/);
  });

  it("a compute-unit price of exactly 5,000,000 µlamports passes, one more does not; a short price instruction is refused", async () => {
    expect(await rewrite((ixs) => [ixs[0], computePrice(5_000_000n), ...ixs.slice(2)])).toBe("signed");
    expect(await rewrite((ixs) => [ixs[0], computePrice(5_000_001n), ...ixs.slice(2)])).toMatch(
      /compute-unit price is over 5,000,000/,
    );
    expect(await rewrite((ixs) => [ixs[0], computePrice(0n, 8), ...ixs.slice(2)])).toMatch(
      /instruction 1 is not SetComputeUnitPrice/,
    );
    expect(await rewrite((ixs) => [ixs[0], { ...ixs[0] }, ...ixs.slice(2)])).toMatch(
      /instruction 1 is not SetComputeUnitPrice/,
    );
    expect(await rewrite((ixs) => [ixs[1], ixs[1], ...ixs.slice(2)])).toMatch(
      /instruction 0 is not SetComputeUnitLimit/,
    );
  });

  it("the two compute-budget instructions: the Compute Budget program's, each with its own discriminator", async () => {
    const other = lighthouse.programAddress;
    expect(await rewrite((ixs) => [{ ...ixs[0], programAddress: other }, ...ixs.slice(1)])).toMatch(
      /instruction 0 is not SetComputeUnitLimit/,
    );
    expect(await rewrite((ixs) => [ixs[0], { ...computePrice(1n), programAddress: other }, ...ixs.slice(2)])).toMatch(
      /instruction 1 is not SetComputeUnitPrice/,
    );
    const limitAsPrice = computePrice(1n);
    limitAsPrice.data[0] = 2;
    expect(await rewrite((ixs) => [ixs[0], limitAsPrice, ...ixs.slice(2)])).toMatch(
      /instruction 1 is not SetComputeUnitPrice/,
    );
  });

  it("a wallet that returns its signature as 64 zero bytes did not sign", async () => {
    const zeroed = rewritingSvmSigner({
      signed: (tx) => ({ ...tx, signatures: { ...tx.signatures, [buyer.address]: new Uint8Array(64) } }),
    });
    await expect(pay(svmRequirement(), { signer: zeroed })).rejects.toMatchObject({
      message: expect.stringMatching(/the wallet did not sign/),
    });
  });

  it("the random memo may go, or be doubled; the server's may not, and a memo after a Lighthouse assertion counts", async () => {
    const withoutMemo = (ixs: WalletInstruction[]) => ixs.filter((ix) => ix.programAddress !== MEMO_PROGRAM);
    expect(await rewrite(withoutMemo)).toBe("signed");
    expect(await rewrite((ixs) => [...ixs, ixs[3]])).toBe("signed");
    const served = svmRequirement({ memo: "order-42" });
    expect(await rewrite((ixs) => [...withoutMemo(ixs), lighthouse, ixs[3]], served)).toBe("signed");
    expect(await rewrite((ixs) => [...withoutMemo(ixs), lighthouse], served)).toMatch(/has 0 memos, not 1/);
    expect(await rewrite((ixs) => [...ixs, lighthouse, ixs[3]], served)).toMatch(/has 2 memos, not 1/);
  });

  it("the transfer itself is compared whole: another destination, mint or decimals is refused", async () => {
    const changed = (at: number, value: number) => (ixs: WalletInstruction[]) => {
      const data = new Uint8Array(ixs[2]!.data!);
      data[at] = value;
      return [ixs[0], ixs[1], { ...ixs[2], data }, ...ixs.slice(3)];
    };
    expect(await rewrite(changed(9, 7))).toMatch(/instruction 2 is not the expected TransferChecked/);
    expect(await rewrite(changed(0, 3))).toMatch(/instruction 2 is not the expected TransferChecked/);
    const swapped = (ixs: WalletInstruction[]) => {
      const accounts = [...(ixs[2]!.accounts as object[])];
      [accounts[0], accounts[2]] = [accounts[2]!, accounts[0]!];
      return [ixs[0], ixs[1], { ...ixs[2], accounts }, ...ixs.slice(3)];
    };
    expect(await rewrite(swapped)).toMatch(/instruction 2 is not the expected TransferChecked/);
  });

  it("the fee payer's account in any instruction is refused, a Lighthouse one included", async () => {
    const touching = { ...lighthouse, accounts: [{ address: address(FEE_PAYER), role: 0 }] };
    expect(await rewrite((ixs) => [...ixs, touching])).toMatch(/uses the fee payer's account/);
  });
});
