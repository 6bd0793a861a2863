/**
 * Assets that are not USDC, through the real client (exact on EVM, the msw seller): the policy's per-payment cap,
 * `x402.maxAmount`, budgets and the agent tool's price, each over a table of 0, 2, 6, 8 and 18 decimals and an asset
 * whose decimals are unknown. A price exactly at a limit pays; one base unit more is refused before anything is
 * signed. The policy learns an asset's decimals from the schemes' table (USDC, MegaUSD) or from `policy.assets`, never
 * from the seller (`extra`). Every amount below is written out, not computed: the arithmetic under test is the code's.
 */
import { describe, expect, it } from "vitest";
import { createPaidFetch } from "../../src/agents";
import {
  budget,
  getPaymentReceipt,
  memoryBudgetStore,
  type KnownAsset,
  type PaymentCeiling,
  type SpendPolicy,
  type X402Plugin,
} from "../../src";
import { NoPayableRequirementError } from "../../src/entries/errors";
import { useMswServer } from "../support/msw";
import {
  PATH,
  SELLER,
  TX_HASH,
  USDC_BASE_SEPOLIA,
  createSeller,
  payingClient,
  v1Challenge,
  v1Requirement,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { rejection, wrappers } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const send = wrappers[0]!.send;

/** What $1, $2.5 and $0.37 buy of an asset: [the most that is within it, one base unit more, that one as shown]. */
type Units = Record<"$1" | "$2.5" | "$0.37", readonly [at: string | undefined, over: string, shown: string]>;

interface Row {
  readonly label: string;
  readonly asset: KnownAsset;
  /** In `policy.assets` (else known from the scheme's table). */
  readonly declared: boolean;
  readonly extra: Record<string, unknown>;
  readonly units: Units;
  /** 1 and 37 base units, as shown. */
  readonly one: string;
  readonly thirtySeven: readonly [string, string];
}

/** A token of `decimals` on Base Sepolia, declared in `policy.assets` (a test address of its own per decimals). */
const token = (decimals: number, address: string): KnownAsset => ({
  network: "eip155:84532",
  address,
  decimals,
  symbol: `TOK${decimals}`,
});
const TOKEN_EXTRA = { name: "Token", version: "1" };

const ROWS: readonly Row[] = [
  {
    label: "0 decimals (policy.assets)",
    asset: token(0, "0xa0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0"),
    declared: true,
    extra: TOKEN_EXTRA,
    units: { $1: ["1", "2", "2"], "$2.5": ["2", "3", "3"], "$0.37": [undefined, "1", "1"] },
    one: "1",
    thirtySeven: ["37", "38"],
  },
  {
    label: "2 decimals (policy.assets)",
    asset: token(2, "0xa2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2"),
    declared: true,
    extra: TOKEN_EXTRA,
    units: { $1: ["100", "101", "1.01"], "$2.5": ["250", "251", "2.51"], "$0.37": ["37", "38", "0.38"] },
    one: "0.01",
    thirtySeven: ["0.37", "0.38"],
  },
  {
    label: "6 decimals (USDC, the scheme's table)",
    asset: { network: "eip155:84532", address: USDC_BASE_SEPOLIA, decimals: 6, symbol: "USDC" },
    declared: false,
    extra: { name: "USDC", version: "2" },
    units: {
      $1: ["1000000", "1000001", "1.000001"],
      "$2.5": ["2500000", "2500001", "2.500001"],
      "$0.37": ["370000", "370001", "0.370001"],
    },
    one: "0.000001",
    thirtySeven: ["0.000037", "0.000038"],
  },
  {
    label: "8 decimals (policy.assets)",
    asset: token(8, "0xa8a8a8a8a8a8a8a8a8a8a8a8a8a8a8a8a8a8a8a8"),
    declared: true,
    extra: TOKEN_EXTRA,
    units: {
      $1: ["100000000", "100000001", "1.00000001"],
      "$2.5": ["250000000", "250000001", "2.50000001"],
      "$0.37": ["37000000", "37000001", "0.37000001"],
    },
    one: "0.00000001",
    thirtySeven: ["0.00000037", "0.00000038"],
  },
  {
    label: "18 decimals (policy.assets)",
    asset: token(18, "0xb2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"),
    declared: true,
    extra: TOKEN_EXTRA,
    units: {
      $1: ["1000000000000000000", "1000000000000000001", "1.000000000000000001"],
      "$2.5": ["2500000000000000000", "2500000000000000001", "2.500000000000000001"],
      "$0.37": ["370000000000000000", "370000000000000001", "0.370000000000000001"],
    },
    one: "0.000000000000000001",
    thirtySeven: ["0.000000000000000037", "0.000000000000000038"],
  },
  {
    label: "18 decimals (MegaUSD, the scheme's table; Permit2)",
    asset: {
      network: "eip155:4326",
      address: "0xFAfDdbb3FC7688494971a79cc65DCa3EF82079E7",
      decimals: 18,
      symbol: "MegaUSD",
    },
    declared: false,
    extra: { name: "MegaUSD", version: "1", assetTransferMethod: "permit2" },
    units: {
      $1: ["1000000000000000000", "1000000000000000001", "1.000000000000000001"],
      "$2.5": ["2500000000000000000", "2500000000000000001", "2.500000000000000001"],
      "$0.37": ["370000000000000000", "370000000000000001", "0.370000000000000001"],
    },
    one: "0.000000000000000001",
    thirtySeven: ["0.000000000000000037", "0.000000000000000038"],
  },
];

/** The assets the rows declare: what the policy knows beyond the schemes' table. */
const DECLARED = ROWS.filter((r) => r.declared).map((r) => r.asset);

/** A seller asking `amount` base units of `row`'s asset. */
const sellerOf = (row: Pick<Row, "asset" | "extra">, amount: string) =>
  createSeller({
    challenge: v2Challenge({
      accepts: [v2Requirement({ network: row.asset.network, asset: row.asset.address, amount, extra: row.extra })],
    }),
  });

/** A client of `policy` (the declared tokens added) and its plug-ins. */
const clientOf = (policy: SpendPolicy = {}, plugins: X402Plugin[] = []) =>
  payingClient({ policy: { assets: DECLARED, ...policy }, plugins });

/** Pays `amount` of `row`'s asset once: the one signature verified by the seller, for that amount. */
async function pays(
  row: Pick<Row, "asset" | "extra">,
  amount: string,
  { policy, maxAmount, client: given }: { policy?: SpendPolicy; maxAmount?: PaymentCeiling; client?: Client } = {},
) {
  const seller = sellerOf(row, amount);
  server.use(seller.handler);
  const { client, signs } = given ?? clientOf(policy);
  const before = signs.length;
  const reply = await send(client, { url, x402: { maxAmount } });
  expect(reply.status, reply.text).toBe(200);
  expect(signs.length - before).toBe(1);
  expect(seller.verdicts).toEqual([expect.objectContaining({ ok: true })]);
  expect(seller.payments[0].accepted.amount).toBe(amount);
  return reply;
}
type Client = ReturnType<typeof clientOf>;

/** Asks `amount` of `row`'s asset once: refused before anything is signed; the error. */
async function refuses(
  row: Pick<Row, "asset" | "extra">,
  amount: string,
  { policy, maxAmount, client: given }: { policy?: SpendPolicy; maxAmount?: PaymentCeiling; client?: Client } = {},
) {
  const seller = sellerOf(row, amount);
  server.use(seller.handler);
  const { client, signs } = given ?? clientOf(policy);
  const before = signs.length;
  const error = await rejection(send(client, { url, x402: { maxAmount } }));
  expect(signs.length - before).toBe(0);
  expect(seller.payments).toHaveLength(0);
  return error;
}

/** The one reason a NO_PAYABLE_REQUIREMENT gives. */
async function refusedFor(...args: Parameters<typeof refuses>) {
  const error = await refuses(...args);
  expect(error).toBeInstanceOf(NoPayableRequirementError);
  expect(error.details.rejected).toHaveLength(1);
  expect(error.details.rejected[0]).toMatchObject({ code: "policy", asset: args[0].asset.address, amount: args[1] });
  return error.details.rejected[0].reason as string;
}

describe.each(ROWS)("$label", (row) => {
  const { units, asset } = row;
  const shown = (amount: string) => `${amount} ${asset.symbol}`;

  it("the default cap ($1): the price of exactly $1 pays, one base unit more is refused in the asset's units", async () => {
    await pays(row, units.$1[0]!);
    expect(await refusedFor(row, units.$1[1])).toBe(`${shown(units.$1[2])} is over policy.maxAmountPerPayment ($1)`);
  });

  it("a cap set above the default ($2.5): at it pays, one base unit more is refused", async () => {
    const policy = { maxAmountPerPayment: "$2.5" };
    await pays(row, units["$2.5"][0]!, { policy });
    expect(await refusedFor(row, units["$2.5"][1], { policy })).toBe(
      `${shown(units["$2.5"][2])} is over policy.maxAmountPerPayment ($2.5)`,
    );
  });

  it("a cap set below the default ($0.37): at it pays, one base unit more is refused", async () => {
    const policy = { maxAmountPerPayment: "$0.37" };
    const [at, over, overShown] = units["$0.37"];
    // 0 decimals: $0.37 buys no whole unit, so there is no price at the cap.
    if (at !== undefined) {
      const reply = await pays(row, at, { policy });
      // The receipt shows what was paid in the asset's units too.
      expect(getPaymentReceipt(reply.raw)?.displayAmount).toBe(shown("0.37"));
    }
    expect(await refusedFor(row, over, { policy })).toBe(
      `${shown(overShown)} is over policy.maxAmountPerPayment ($0.37)`,
    );
  });

  it("x402.maxAmount in USD ($0.37): at it pays, one base unit more is refused, named in the asset's units", async () => {
    const [at, over, overShown] = units["$0.37"];
    if (at !== undefined) await pays(row, at, { maxAmount: "$0.37" });
    expect(await refusedFor(row, over, { maxAmount: "$0.37" })).toBe(
      `${shown(overShown)} is over x402.maxAmount ($0.37)`,
    );
  });

  it("x402.maxAmount in base units (37, whatever the decimals): 37 pays, 38 is refused, both shown in the asset's units", async () => {
    const maxAmount = { network: asset.network, asset: asset.address, amount: "37" };
    // Without the policy's USD cap, which 38 whole units (0 decimals) would be over: the ceiling alone decides.
    const policy = { maxAmountPerPayment: false } as const;
    await pays(row, "37", { policy, maxAmount });
    const [at, over] = row.thirtySeven;
    expect(await refusedFor(row, "38", { policy, maxAmount })).toBe(
      `${shown(over)} is over x402.maxAmount (${shown(at)})`,
    );
  });

  it("a budget ($1.37): $1 and then $0.37 fill it exactly; one base unit more is BUDGET_EXCEEDED, counted as at least $0.000001", async () => {
    const store = memoryBudgetStore();
    const client = clientOf({}, [budget({ limit: "$1.37", store })]);
    await pays(row, units.$1[0]!, { client });
    const rest = units["$0.37"][0];
    if (rest !== undefined) await pays(row, rest, { client });
    const error = await refuses(row, "1", { client });
    const spent = rest === undefined ? "$1" : "$1.37";
    // One base unit, valued rounded up to the micro-dollar: never nothing.
    const amount = { 0: "$1", 2: "$0.01" }[asset.decimals as 0 | 2] ?? "$0.000001";
    expect(error).toMatchObject({
      code: "BUDGET_EXCEEDED",
      details: { limit: "$1.37", spent, reserved: "$0", amount },
    });
    const usage = await store.usage({ key: "client/life:client", limit: 1_370_000, windowMs: undefined });
    expect(usage).toEqual({ spent: rest === undefined ? 1_000_000 : 1_370_000, reserved: 0 });
  });

  it("a budget ($2.5, no USD cap): a price of exactly its limit is payable, one base unit more is more than it allows in all", async () => {
    const policy = { maxAmountPerPayment: false } as const;
    const limited = () => clientOf(policy, [budget({ limit: "$2.5" })]);
    await pays(row, units["$2.5"][0]!, { client: limited() });
    const valued = { 0: "$3", 2: "$2.51" }[asset.decimals as 0 | 2] ?? "$2.500001";
    expect(await refusedFor(row, units["$2.5"][1], { client: limited() })).toBe(
      `${valued} is more than budget client/life allows in all ($2.5)`,
    );
  });

  describe("the agent tool", () => {
    it("paid: the model is told the amount in the asset's own decimals (1 base unit)", async () => {
      server.use(sellerOf(row, "1").handler);
      const { client } = clientOf();
      const answer = await createPaidFetch(client).run({ url });
      expect(answer.paid).toBe(`${shown(row.one)} on ${asset.network} (transaction ${TX_HASH})`);
    });

    it("maxPrice ($0.37): at it pays, one base unit more pays nothing and says why in the asset's units", async () => {
      const [at, over, overShown] = units["$0.37"];
      if (at !== undefined) {
        server.use(sellerOf(row, at).handler);
        const paid = await createPaidFetch(clientOf().client).run({ url, maxPrice: "$0.37" });
        expect(paid).toMatchObject({ ok: true, paid: `${shown("0.37")} on ${asset.network} (transaction ${TX_HASH})` });
      }
      const seller = sellerOf(row, over);
      server.use(seller.handler);
      const { client, signs } = clientOf();
      const refused = await createPaidFetch(client).run({ url, maxPrice: "$0.37" });
      expect(refused).toMatchObject({ ok: false, paid: "nothing", error: { code: "NO_PAYABLE_REQUIREMENT" } });
      expect(refused.error!.message).toContain(`${shown(overShown)} is over x402.maxAmount ($0.37)`);
      expect(signs).toHaveLength(0);
    });

    it('approval above "$0.37": a price at it is not asked; one base unit more is, with the price in the asset\'s units', async () => {
      const [at, over, overShown] = units["$0.37"];
      const policy = { maxAmountPerPayment: "$5" };
      if (at !== undefined) {
        server.use(sellerOf(row, at).handler);
        const tool = createPaidFetch(clientOf(policy).client, { approval: "$0.37" });
        expect(await tool.needsApproval({ url }, { callId: "at" })).toBe(false);
      }
      server.use(sellerOf(row, over).handler);
      const { client, signs } = clientOf(policy);
      const tool = createPaidFetch(client, { approval: "$0.37" });
      expect(await tool.needsApproval({ url }, { callId: "over" })).toBe(true);
      expect(await tool.approvalOf("over")).toMatchObject({ price: shown(overShown), amount: over });
      // Approved (the framework's step), it pays the quoted price.
      const answer = await tool.run({ url }, { callId: "over" });
      expect(answer.paid).toBe(`${shown(overShown)} on ${asset.network} (transaction ${TX_HASH})`);
      expect(signs).toHaveLength(1);
    });
  });
});

describe("an asset whose decimals the client does not know", () => {
  const MYSTERY = "0xc0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0";
  // The seller says 18 decimals in `extra`: a seller's word is not how the policy learns an asset's value.
  const row = { asset: token(18, MYSTERY), extra: { ...TOKEN_EXTRA, decimals: 18 } };
  const unknownReason =
    `asset ${MYSTERY} on eip155:84532 is not a known stablecoin (add it to policy.assets or policy.assetCaps, or ` +
    "set policy.allowUnknownAssets)";

  it("the policy refuses it, whatever it asks and whatever the seller says of it (1 base unit)", async () => {
    expect(await refusedFor(row, "1")).toBe(unknownReason);
    expect(await refusedFor(row, "1", { policy: { maxAmountPerPayment: false } })).toBe(unknownReason);
  });

  it("an assetCaps entry makes it payable up to the cap, in base units; one more is refused", async () => {
    const policy = { assetCaps: [{ network: "eip155:84532", asset: MYSTERY, maxAmount: "37" }] };
    await pays(row, "37", { policy });
    expect(await refusedFor(row, "38", { policy })).toBe(
      `38 base units of ${MYSTERY} is over its policy.assetCaps entry (37)`,
    );
  });

  it("x402.maxAmount in USD refuses it even where the policy allows unknown assets; in its base units it holds", async () => {
    const policy = { allowUnknownAssets: true };
    expect(await refusedFor(row, "1", { policy, maxAmount: "$1000" })).toBe(
      `asset ${MYSTERY} on eip155:84532 has no known USD value, so it cannot be held to x402.maxAmount ($1000)`,
    );
    const maxAmount = { network: "eip155:84532", asset: MYSTERY, amount: "37" };
    await pays(row, "37", { policy, maxAmount });
    expect(await refusedFor(row, "38", { policy, maxAmount })).toBe(
      `38 base units of ${MYSTERY} is over x402.maxAmount (37 base units)`,
    );
  });

  it("a budget cannot value it (refused) unless its value function does; then at its limit it pays, over it not", async () => {
    const policy = { allowUnknownAssets: true };
    const plain = clientOf(policy, [budget({ limit: "$1" })]);
    expect(await refusedFor(row, "1", { client: plain })).toBe(
      `budget client/life cannot value asset ${MYSTERY} on eip155:84532 (give the budget a value function, or add ` +
        "the asset to policy.assets)",
    );
    const value = ({ amount }: { amount: string }) => `$${amount}`;
    const valued = clientOf(policy, [budget({ limit: "$37", value })]);
    await pays(row, "37", { client: valued });
    expect(await refusedFor(row, "38", { client: clientOf(policy, [budget({ limit: "$37", value })]) })).toBe(
      "$38 is more than budget client/life allows in all ($37)",
    );
  });

  it("the agent tool says what was paid, and asks approval for it, in base units", async () => {
    const policy = { allowUnknownAssets: true };
    server.use(sellerOf(row, "37").handler);
    const paid = await createPaidFetch(clientOf(policy).client).run({ url });
    expect(paid.paid).toBe(`37 base units of ${MYSTERY} on eip155:84532 (transaction ${TX_HASH})`);
    // A price the tool cannot read in USD is asked about, however small.
    const tool = createPaidFetch(clientOf(policy).client, { approval: "$1000" });
    expect(await tool.needsApproval({ url }, { callId: "mystery" })).toBe(true);
    expect(await tool.approvalOf("mystery")).toMatchObject({ price: `37 base units of ${MYSTERY}` });
    const refused = await createPaidFetch(clientOf(policy).client).run({ url, maxPrice: "$1000" });
    expect(refused.error?.message).toContain("has no known USD value, so it cannot be held to x402.maxAmount ($1000)");
  });
});

describe("a protocol v1 seller (a network name, not a CAIP-2 id)", () => {
  const declared18 = ROWS.find((r) => r.declared && r.asset.decimals === 18)!;
  /** A v1 seller on base-sepolia asking `amount` base units of `row`'s asset. */
  const v1SellerOf = (row: Row, amount: string) =>
    createSeller({
      challenge: v1Challenge({
        accepts: [v1Requirement({ asset: row.asset.address, maxAmountRequired: amount, extra: row.extra })],
      }),
    });

  it("the policy prices a declared 18-decimals token by the network's CAIP-2 id: $1 pays, one base unit more is refused", async () => {
    const [at, over, overShown] = declared18.units.$1;
    const seller = v1SellerOf(declared18, at!);
    server.use(seller.handler);
    const { client, signs } = clientOf();
    expect((await send(client, { url })).status).toBe(200);
    expect(seller.verdicts).toEqual([expect.objectContaining({ ok: true })]);
    server.use(v1SellerOf(declared18, over).handler);
    const error = await rejection(send(client, { url }));
    expect(error.details.rejected.map((r: { reason: string }) => r.reason)).toEqual([
      `${overShown} TOK18 is over policy.maxAmountPerPayment ($1)`,
    ]);
    expect(signs).toHaveLength(1);
  });

  it("with an approval rule, the agent tool tells the model what was paid in the asset's units", async () => {
    server.use(v1SellerOf(declared18, "1").handler);
    const answer = await createPaidFetch(clientOf().client, { approval: "$5" }).run({ url }, { callId: "v1" });
    expect(answer.paid).toBe(`0.000000000000000001 TOK18 on base-sepolia (transaction ${TX_HASH})`);
  });

  // Without an approval rule the tool finds the paid asset by the receipt's network, which for v1 is the name
  // ("base-sepolia"): it was told "1 base units of 0xb2b2…" before the name was turned into its CAIP-2 id.
  it.each([
    ["a declared 18-decimals token", declared18, "1", "0.000000000000000001 TOK18"],
    ["USDC (6 decimals, the scheme's table)", ROWS.find((r) => r.asset.symbol === "USDC")!, "10000", "0.01 USDC"],
  ])(
    "without one, the agent tool tells the model what was paid in the asset's units too: %s",
    async (_, row, amount, paid) => {
      server.use(v1SellerOf(row, amount).handler);
      const answer = await createPaidFetch(clientOf().client).run({ url });
      expect(answer.paid).toBe(`${paid} on base-sepolia (transaction ${TX_HASH})`);
    },
  );
});
