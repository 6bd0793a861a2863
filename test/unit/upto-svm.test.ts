// Solana upto: our payment-channel open against the reference client's (test/vectors/upto-svm.json, made by
// scripts/upto-svm-vectors.mjs with @x402/svm's upto/client), byte for byte; its layout decoded with kit; and each
// refusal `check` makes before anything is signed.
import {
  createKeyPairSignerFromPrivateKeyBytes,
  getAddressEncoder,
  getProgramDerivedAddress,
  getU64Encoder,
  verifySignature,
  type Address,
  type SignatureBytes,
  type TransactionSigner,
} from "@solana/kit";
import { describe, expect, it } from "vitest";
import { encodeBase64Json, parseChallenge, type PaymentRequirement } from "../../src/entries/protocol";
import {
  COMPUTE_BUDGET_PROGRAM,
  MEMO_PROGRAM,
  PAYMENT_CHANNELS_PROGRAM,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  uptoSvm,
  type UptoSvmOptions,
} from "../../src/svm";
import { decodeMessage, type Instruction } from "../../src/svm/transaction";
import { EVENT_AUTHORITY, checkOpen } from "../../src/svm/upto/open";
import vectorFile from "../vectors/upto-svm.json";
import { BLOCKHASH, DEVNET, decodeTransaction, fakeRpc } from "../support/svm";

const { nowMs: NOW_MS, vectors } = vectorFile;
const seed = (byte: number) => createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(byte));
const buyer = await seed(1);
const feePayer = await seed(2);
const receiverAuthorizer = await seed(3);
/** The vectors' randomness: every draw is 1, 2, 3, ... */
const counting = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i + 1) & 0xff);
const base = vectors[0]!.requirement;

/** The requirement as the client hands it to a scheme: parsed from a v2 challenge. */
function parsed(raw: Record<string, unknown>): PaymentRequirement {
  const header = encodeBase64Json({ x402Version: 2, resource: { url: "https://api.example/x" }, accepts: [raw] });
  const challenge = parseChallenge({ header });
  expect(challenge.invalid).toEqual([]);
  return challenge.requirements[0]!;
}

const scheme = (options: Partial<UptoSvmOptions> = {}) =>
  uptoSvm({ signer: buyer, now: () => NOW_MS, randomBytes: counting, ...options });

/** Checks, then signs, as the client does. */
async function pay(raw: Record<string, unknown>, options: Partial<UptoSvmOptions> = {}) {
  const requirement = parsed(raw);
  const upto = scheme(options);
  expect(upto.check(requirement)).toBeUndefined();
  return (await upto.createPayload(requirement, {} as never)).payload as Record<string, unknown> & {
    openTransaction: string;
    channelId: string;
  };
}

const withExtra = (extra: Record<string, unknown>, over: Record<string, unknown> = {}) => ({
  ...base,
  ...over,
  extra: { ...base.extra, ...extra },
});

describe("Solana upto: the reference client's vectors", () => {
  it.each(vectors.map((v) => [v.name, v] as const))("%s: the same payload, byte for byte", async (_, vector) => {
    const payload = await pay(vector.requirement);
    expect(payload).toEqual(vector.payload);
    // The same keys in the same order, so the same JSON text.
    expect(JSON.stringify(payload)).toBe(JSON.stringify(vector.payload));
  });

  it("the vectors cover the cases they name", () => {
    const extras = vectors.map((v) => v.requirement.extra as Record<string, unknown>);
    expect(extras.map((e) => e.memo)).toEqual([undefined, "invoice-42", undefined, undefined]);
    expect(extras[2]!.receiverAuthorizer).toBe(extras[2]!.feePayer);
    expect(extras[3]!.tokenProgram).toBe(TOKEN_2022_PROGRAM);
  });

  it("nothing in extra names the program or adds an instruction: extra.programId and such are ignored", async () => {
    const payload = await pay(
      withExtra({
        programId: MEMO_PROGRAM,
        program: TOKEN_PROGRAM,
        programAddress: TOKEN_PROGRAM,
        instructions: [{ programAddress: TOKEN_PROGRAM, data: "AQ==" }],
        computeUnitLimit: 1_400_000,
        computeUnitPrice: 5_000_000,
        splits: [{ recipient: buyer.address, bps: 10_000 }],
      }),
    );
    expect(payload).toEqual(vectors[0]!.payload);
  });
});

describe("Solana upto: the open transaction", () => {
  it("[limit 90,000, price 1, open, memo], fee payer the facilitator's, signed by the buyer alone", async () => {
    const payload = await pay(base);
    const { tx, compiled, message } = decodeTransaction(payload.openTransaction);
    expect(compiled.version).toBe(0);
    expect((compiled as { addressTableLookups?: unknown[] }).addressTableLookups ?? []).toEqual([]);
    expect(message.feePayer.address).toBe(feePayer.address);
    expect((message.instructions as readonly { programAddress: string }[]).map((i) => i.programAddress)).toEqual([
      COMPUTE_BUDGET_PROGRAM,
      COMPUTE_BUDGET_PROGRAM,
      PAYMENT_CHANNELS_PROGRAM,
      MEMO_PROGRAM,
    ]);
    const [limit, price, open, memo] = message.instructions;
    expect(Buffer.from(limit!.data!).toString("hex")).toBe("02905f0100");
    expect(Buffer.from(price!.data!).toString("hex")).toBe("030100000000000000");
    expect(new TextDecoder().decode(memo!.data)).toBe("0102030405060708090a0b0c0d0e0f10");
    // Two signers: the fee payer's slot empty, the buyer's a valid signature over the message.
    expect(Object.keys(tx.signatures).sort()).toEqual([buyer.address, feePayer.address].sort());
    expect(tx.signatures[feePayer.address as Address]).toBeNull();
    const key = buyer.keyPair.publicKey;
    expect(await verifySignature(key, tx.signatures[buyer.address as Address] as SignatureBytes, tx.messageBytes)).toBe(
      true,
    );

    // The open: accounts in the program's order; deposit = the ceiling, grace period = withdrawDelay.
    const accounts = (open!.accounts as unknown as { address: string }[]).map((a) => a.address);
    expect(accounts[0]).toBe(buyer.address);
    expect(accounts.slice(1, 5)).toEqual([feePayer.address, feePayer.address, base.asset, receiverAuthorizer.address]);
    expect(accounts.slice(8)).toEqual([
      TOKEN_PROGRAM,
      "11111111111111111111111111111111",
      "SysvarRent111111111111111111111111111111111",
      "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
      EVENT_AUTHORITY,
      PAYMENT_CHANNELS_PROGRAM,
    ]);
    const data = Buffer.from(open!.data!);
    expect(data[0]).toBe(1);
    expect(data.readBigUInt64LE(1)).toBe(BigInt(payload.nonce as string));
    expect(data.readBigUInt64LE(9)).toBe(1_000_000n);
    expect(data.readUInt32LE(17)).toBe(900);
    expect(data.readBigUInt64LE(21)).toBe(400_000_000n);
    expect(data.readUInt32LE(29)).toBe(1);
    expect(data.subarray(33, 65)).toEqual(Buffer.from(getAddressEncoder().encode(base.payTo as Address)));
    expect(data.readUInt16LE(65)).toBe(10_000);
    expect(data.length).toBe(67);

    // The channel and the event authority are the program's PDAs, as kit derives them.
    const [channel] = await getProgramDerivedAddress({
      programAddress: PAYMENT_CHANNELS_PROGRAM as Address,
      seeds: [
        "channel",
        ...[buyer.address, feePayer.address, base.asset, receiverAuthorizer.address].map((a) =>
          getAddressEncoder().encode(a as Address),
        ),
        getU64Encoder().encode(BigInt(payload.nonce as string)),
        getU64Encoder().encode(400_000_000n),
      ],
    });
    expect(accounts[5]).toBe(channel);
    expect(payload.channelId).toBe(channel);
    const [eventAuthority] = await getProgramDerivedAddress({
      programAddress: PAYMENT_CHANNELS_PROGRAM as Address,
      seeds: ["event_authority"],
    });
    expect(eventAuthority).toBe(EVENT_AUTHORITY);
  });

  it("the self-check refuses what is not our open: another program, an extra instruction, a fee payer", () => {
    const ours: Instruction[] = [
      [COMPUTE_BUDGET_PROGRAM, [], [2, 1]],
      [PAYMENT_CHANNELS_PROGRAM, [buyer.address], [1]],
    ];
    const message = (instructions: Instruction[], keys = [feePayer.address, buyer.address], signers = 2) => ({
      version: 0 as const,
      lookups: 0,
      requiredSignatures: signers,
      keys,
      instructions,
    });
    const check = (m: ReturnType<typeof message>) => checkOpen(m, ours, feePayer.address, buyer.address);
    expect(check(message(ours))).toBeUndefined();
    expect(check(message([ours[0]!, [TOKEN_PROGRAM, [buyer.address], [1]]]))).toBe(
      `instruction 1 (${TOKEN_PROGRAM}) is not the expected one`,
    );
    expect(check(message([...ours, [MEMO_PROGRAM, [], [1]]]))).toBe("it has 3 instructions, not 2");
    expect(check(message(ours, [buyer.address, feePayer.address]))).toBe("its fee payer is not extra.feePayer");
    expect(check(message(ours, [feePayer.address, buyer.address, receiverAuthorizer.address], 3))).toMatch(
      /^its signers are .*, not the fee payer and the buyer$/,
    );
    expect(check({ ...message(ours), lookups: 1 })).toBe("it is not a v0 message without address lookup tables");
    expect(checkOpen(decodeMessage(new Uint8Array([0x80, 1])), ours, feePayer.address, buyer.address)).toBe(
      "the message cannot be read",
    );
  });

  it("a wallet that changes the open, or does not sign it, is refused: nothing is sent", async () => {
    const requirement = parsed(base);
    type Tx = { messageBytes: Uint8Array; signatures: Record<string, Uint8Array | null> };
    const changing = {
      address: buyer.address,
      async modifyAndSignTransactions(txs: readonly Tx[]) {
        const bytes = Uint8Array.from(txs[0]!.messageBytes);
        bytes[bytes.length - 2]! ^= 1; // the memo's last byte (the message ends with 0 lookup tables)
        return [{ ...txs[0]!, messageBytes: bytes, signatures: { [buyer.address]: new Uint8Array(64).fill(9) } }];
      },
    } as unknown as TransactionSigner;
    await expect(scheme({ signer: changing }).createPayload(requirement, {} as never)).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringMatching(/^The wallet changed the channel open before signing it.*Nothing was sent\.$/),
    });
    const silent = {
      address: buyer.address,
      signTransactions: async (txs: readonly Tx[]) => txs.map(() => ({})),
    } as unknown as TransactionSigner;
    await expect(scheme({ signer: silent }).createPayload(requirement, {} as never)).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: "The wallet did not sign the channel open. Nothing was sent.",
    });
  });
});

describe("Solana upto: refused before signing", () => {
  const offCurve = vectors[0]!.payload.channelId; // a PDA: no key can sign for it
  it.each<[string, Record<string, unknown>, string | RegExp]>([
    [
      "a fee payer that is the buyer",
      withExtra({ feePayer: buyer.address }),
      /^extra\.feePayer is the buyer's own address: the buyer would pay the fees and rent and be the channel's payee/,
    ],
    ["a missing fee payer", withExtra({ feePayer: undefined }), "extra.feePayer is missing, not a Solana address"],
    ["a malformed fee payer", withExtra({ feePayer: "abc" }), 'extra.feePayer is "abc", not a Solana address'],
    [
      "a missing receiver authorizer",
      withExtra({ receiverAuthorizer: undefined }),
      "extra.receiverAuthorizer is missing, not a Solana address",
    ],
    [
      "a receiver authorizer that is a number",
      withExtra({ receiverAuthorizer: 7 }),
      "extra.receiverAuthorizer is 7, not a Solana address",
    ],
    [
      "a receiver authorizer off the ed25519 curve",
      withExtra({ receiverAuthorizer: offCurve }),
      "extra.receiverAuthorizer is off the ed25519 curve: it could never sign a voucher (the program refuses it)",
    ],
    ...[0, -1, 1.5, "900", 2 ** 32, undefined].map((delay): [string, Record<string, unknown>, string] => [
      `withdrawDelay ${JSON.stringify(delay) ?? "missing"}`,
      withExtra({ withdrawDelay: delay }),
      `extra.withdrawDelay is ${delay === undefined ? "missing" : JSON.stringify(delay)}, ` +
        "not a whole number of seconds from 1 to 4294967295",
    ]),
    [
      "a token program hint that is neither Token nor Token-2022",
      withExtra({ tokenProgram: "11111111111111111111111111111111" }),
      'extra.tokenProgram "11111111111111111111111111111111" is neither the SPL Token nor the Token-2022 program',
    ],
    [
      "a memo over 256 bytes",
      withExtra({ memo: "é".repeat(129) }),
      "extra.memo must be a string of at most 256 UTF-8 bytes",
    ],
    ["a memo that is not a string", withExtra({ memo: 42 }), "extra.memo must be a string of at most 256 UTF-8 bytes"],
    ["amount 0", { ...base, amount: "0" }, "amount is 0: a channel cannot open without a deposit"],
    [
      "an amount over u64",
      { ...base, amount: (1n << 64n).toString() },
      "amount 18446744073709551616 does not fit a token deposit (u64)",
    ],
    [
      "a malformed recentSlot",
      withExtra({ recentSlot: "abc" }),
      'extra.recentSlot "abc" is not a slot number (a u64, as an integer or a decimal string)',
    ],
    [
      "a recentSlot over u64",
      withExtra({ recentSlot: (1n << 64n).toString() }),
      'extra.recentSlot "18446744073709551616" is not a slot number (a u64, as an integer or a decimal string)',
    ],
    [
      "a malformed recentBlockhash",
      withExtra({ recentBlockhash: "not-a-hash" }),
      'extra.recentBlockhash "not-a-hash" is not a blockhash (32 bytes in base58)',
    ],
    [
      "a validAfter that is not whole seconds",
      withExtra({ validAfter: "soon" }),
      'extra.validAfter "soon" is not a time in whole seconds',
    ],
    ["payTo the buyer", { ...base, payTo: buyer.address }, "payTo is the buyer's own address"],
    ["an asset that is not an address", { ...base, asset: "USDC" }, 'asset is "USDC", not a Solana address'],
    [
      "a network that is not Solana",
      { ...base, network: "eip155:8453" },
      "network eip155:8453 is not a Solana cluster",
    ],
  ])("%s", (_, raw, reason) => {
    const header = encodeBase64Json({ x402Version: 2, resource: { url: "https://api.example/x" }, accepts: [raw] });
    const challenge = parseChallenge({ header });
    // A requirement the protocol's own schema refuses never reaches the scheme; all of these do.
    expect(challenge.invalid).toEqual([]);
    const problem = scheme().check(challenge.requirements[0]!);
    if (typeof reason === "string") expect(problem).toBe(reason);
    else expect(problem).toMatch(reason);
  });

  it("maxTimeoutSeconds that is not a whole number of seconds from 1 (the protocol's schema refuses it first)", () => {
    for (const bad of [0, 1.5, 2 ** 53])
      expect(scheme().check({ ...parsed(base), maxTimeoutSeconds: bad })).toBe(
        `maxTimeoutSeconds is ${bad}, not a whole number of seconds of at least 1`,
      );
  });
});

describe("Solana upto: what the server did not quote is read over RPC", () => {
  it("the mint's token program (kept), a blockhash and the finalized slot; nothing when all are quoted", async () => {
    const rpc = fakeRpc({ owner: TOKEN_2022_PROGRAM });
    const slots: unknown[] = [];
    const withSlot = {
      ...rpc,
      getSlot: (config: unknown) => ({ send: async () => (slots.push(config), 400_000_123n) }),
    };
    const upto = scheme({ rpc: { [DEVNET]: withSlot } });
    const raw = withExtra({ tokenProgram: undefined, recentBlockhash: undefined, recentSlot: undefined });
    for (let i = 0; i < 2; i++) {
      const requirement = parsed(raw);
      expect(upto.check(requirement)).toBeUndefined();
      const { payload } = await upto.createPayload(requirement, {} as never);
      expect(payload.openSlot).toBe("400000123");
      const { message } = decodeTransaction(payload.openTransaction as string);
      expect(message.lifetimeConstraint).toMatchObject({ blockhash: BLOCKHASH });
      expect(message.instructions[2]!.accounts![8]!.address).toBe(TOKEN_2022_PROGRAM);
    }
    // The mint once (its token program never changes); a blockhash and a slot for each payment.
    expect(rpc.calls).toEqual([`getAccountInfo ${base.asset}`, "getLatestBlockhash", "getLatestBlockhash"]);
    expect(slots).toEqual([{ commitment: "finalized" }, { commitment: "finalized" }]);

    const quoted = fakeRpc();
    await scheme({ rpc: { [DEVNET]: quoted } }).createPayload(parsed(base), {} as never);
    expect(quoted.calls).toEqual([]);
  });

  it.each([null, ""])(
    "a tokenProgram of %j is not quoted (as the reference reads it): the mint is read",
    async (hint) => {
      const rpc = fakeRpc();
      const upto = scheme({ rpc: { [DEVNET]: rpc } });
      const requirement = parsed(withExtra({ tokenProgram: hint }));
      expect(upto.check(requirement)).toBeUndefined();
      const { payload } = await upto.createPayload(requirement, {} as never);
      expect(payload).toEqual(vectors[0]!.payload);
      expect(rpc.calls).toEqual([`getAccountInfo ${base.asset}`]);
    },
  );

  it("a network with no RPC is refused only when something must be read", () => {
    const custom = "solana:localnet1111111111111111111111111";
    const upto = scheme();
    expect(upto.check(parsed({ ...base, network: custom }))).toBeUndefined();
    expect(upto.check(parsed(withExtra({ recentSlot: undefined }, { network: custom })))).toBe(
      `no RPC is known for ${custom}: add it to uptoSvm({ rpc: { "${custom}": url } })`,
    );
  });
});
