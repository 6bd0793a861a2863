/**
 * Random spend policies and client hooks for the evaluation property. Each policy option is absent,
 * a valid value, or (rarely) an invalid one; the generator knows which, so the test can expect
 * INVALID_CONFIG exactly when some option is invalid.
 */
import fc from "fast-check";
import {
  ABSENT,
  MEGA_USD,
  MINT,
  OTHER_PAY_TO,
  PAY_TO,
  RESOURCE,
  SELLER,
  USDC_BASE,
  USDC_BASE_SEPOLIA,
  addressVariant,
  object,
} from "./arbitraries";
import type { PolicyModel } from "./oracle";

type Tagged = { value: unknown; valid: boolean } | typeof ABSENT;

/** Absent (the default), a valid value, or now and then an invalid one. */
function option(valid: fc.Arbitrary<unknown>, invalid: fc.Arbitrary<unknown>): fc.Arbitrary<Tagged> {
  return fc.oneof(
    { arbitrary: fc.constant(ABSENT), weight: 75 },
    { arbitrary: valid.map((value) => ({ value, valid: true })), weight: 25 },
    { arbitrary: invalid.map((value) => ({ value, valid: false })), weight: 1 },
  );
}

const list = <T>(arb: fc.Arbitrary<T>) => fc.array(arb, { maxLength: 2 });

const usd = fc.oneof(
  fc.constantFrom("$1", "$0.01", "0.10", "$0.005", "$1000", "$0", "$0.999999", "1", "$0.000000000000000001"),
  fc.tuple(fc.nat(2), fc.nat(999_999)).map(([d, f]) => `$${d}.${String(f).padStart(6, "0")}`),
);

const capAsset = fc.oneof(
  fc.constantFrom(USDC_BASE_SEPOLIA, USDC_BASE_SEPOLIA.toLowerCase(), USDC_BASE, MEGA_USD, MINT),
  addressVariant(fc.constant(USDC_BASE_SEPOLIA)),
);

const options = {
  maxAmountPerPayment: option(
    fc.oneof(usd, fc.constant(false)),
    fc.constantFrom("1e6", 1, "-1", "$", "abc", `$1.${"0".repeat(19)}`, true),
  ),
  allowUnknownAssets: option(fc.boolean(), fc.constantFrom("yes", 1)),
  assets: option(
    list(
      fc.oneof(
        fc.record({
          network: fc.constantFrom("eip155:84532", "eip155:8453", "eip155:1234"),
          address: fc.oneof(
            capAsset,
            fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString("hex")}`),
          ),
          decimals: fc.constantFrom(0, 2, 6, 18, 36),
          symbol: fc.constantFrom("TKN", "EURC"),
        }),
        // The same token as a known one, with other decimals: the policy's own entry wins.
        fc.constant({
          network: "eip155:84532",
          address: USDC_BASE_SEPOLIA.toLowerCase(),
          decimals: 18,
          symbol: "USDC18",
        }),
      ),
    ),
    fc.constantFrom(
      [{ network: "base-sepolia", address: USDC_BASE_SEPOLIA, decimals: 6, symbol: "USDC" }],
      [{ network: "eip155:84532", address: USDC_BASE_SEPOLIA, decimals: 37, symbol: "USDC" }],
      [{ network: "eip155:84532", address: USDC_BASE_SEPOLIA, decimals: 1.5, symbol: "USDC" }],
      [null],
      "USDC",
    ),
  ),
  assetCaps: option(
    list(
      fc.record({
        network: fc.constantFrom("eip155:84532", "eip155:8453", "eip155:4326"),
        asset: capAsset,
        maxAmount: fc.oneof(
          fc.bigInt({ min: 0n, max: 2_000_000n }).map(String),
          fc.constantFrom("0", "1000000", (2n ** 256n - 1n).toString()),
        ),
      }),
    ),
    fc.constantFrom(
      [{ network: "eip155:84532", asset: USDC_BASE_SEPOLIA, maxAmount: "1.5" }],
      [{ network: "base", asset: USDC_BASE_SEPOLIA, maxAmount: "1" }],
      [{ network: "eip155:84532", asset: "", maxAmount: "1" }],
      [{ network: "eip155:84532", asset: USDC_BASE_SEPOLIA, maxAmount: 1 }],
      {},
    ),
  ),
  maxTimeoutSeconds: option(
    fc.oneof(fc.constantFrom(false, 60, 300, 900, 3600, 3599, 10, 7), fc.integer({ min: 1, max: 100_000 })),
    fc.constantFrom(0, -5, 1.5, "60", true),
  ),
  networks: option(
    list(
      fc.constantFrom(
        "eip155:*",
        "eip155:8453",
        "eip155:84532",
        "*",
        "solana:*",
        "eip155:8*",
        "eip155:4326",
        "eip155:1",
      ),
    ),
    fc.constantFrom(["base-sepolia"], ["Eip155:1"], [5], "eip155:*", ["eip155"]),
  ),
  payees: option(
    list(fc.constantFrom(PAY_TO, PAY_TO.toLowerCase(), `0X${PAY_TO.slice(2)}`, OTHER_PAY_TO, MINT)),
    fc.constantFrom([""], [5], PAY_TO),
  ),
  origins: option(
    list(
      fc.constantFrom(
        SELLER,
        "https://*.example",
        "https://*.seller.example",
        "HTTPS://SELLER.EXAMPLE:443",
        "https://seller.example:8443",
        "http://localhost:4021",
        "http://localhost:*",
        "https://*",
        "http://seller.example:80",
      ),
    ),
    fc.constantFrom(["seller.example"], ["https://seller.example/path"], ["*"], [5], SELLER),
  ),
  requireSameHostResource: option(fc.boolean(), fc.constantFrom("no", 0)),
};

export interface GeneratedPolicy {
  /** What is passed to createX402Client. */
  readonly policy: Record<string, unknown> | undefined;
  /** The same, for the oracle (only meaningful when `valid`). */
  readonly model: PolicyModel;
  readonly valid: boolean;
}

export const policy: fc.Arbitrary<GeneratedPolicy> = fc
  .tuple(
    fc.record(options),
    fc.oneof({ arbitrary: fc.constant(false), weight: 60 }, { arbitrary: fc.constant(true), weight: 1 }),
    fc.boolean(),
  )
  .map(([tagged, unknownOption, passUndefined]) => {
    const entries = Object.entries(tagged).filter(
      (e): e is [string, { value: unknown; valid: boolean }] => e[1] !== ABSENT,
    );
    const chosen = object(entries.map(([k, t]) => [k, t.value]));
    if (unknownOption) chosen.maxAmount = "$1";
    const valid = !unknownOption && entries.every(([, t]) => t.valid);
    // No options at all: sometimes `policy: undefined`, the defaults.
    const asGiven = entries.length === 0 && !unknownOption && passUndefined ? undefined : chosen;
    return { policy: asGiven, model: chosen as PolicyModel, valid };
  });

/** The request being paid for: mostly the resource the challenges name. */
export const requestUrl = fc.oneof(
  { arbitrary: fc.constant(RESOURCE), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      "https://other.example/premium",
      "https://api.seller.example/premium",
      "https://seller.example:8443/premium",
      "http://localhost:4021/premium",
      "http://seller.example/premium",
    ),
    weight: 3,
  },
);

export type Selector =
  | { kind: "default" }
  | { kind: "pick"; index: number }
  | { kind: "none" }
  | { kind: "foreign" }
  | { kind: "throws" };
export type Approval = "absent" | "true" | "void" | "false" | "abort" | "throws";
export type Wallet = "signs" | "rejects" | "throws" | "garbage";

export const selector: fc.Arbitrary<Selector> = fc.oneof(
  { arbitrary: fc.constant({ kind: "default" as const }), weight: 8 },
  { arbitrary: fc.nat(7).map((index) => ({ kind: "pick" as const, index })), weight: 4 },
  {
    arbitrary: fc.constantFrom({ kind: "none" as const }, { kind: "foreign" as const }, { kind: "throws" as const }),
    weight: 1,
  },
);
export const approval: fc.Arbitrary<Approval> = fc.oneof(
  { arbitrary: fc.constant("absent" as const), weight: 8 },
  { arbitrary: fc.constantFrom("true" as const, "void" as const), weight: 2 },
  { arbitrary: fc.constantFrom("false" as const, "abort" as const, "throws" as const), weight: 1 },
);
export const wallet: fc.Arbitrary<Wallet> = fc.oneof(
  { arbitrary: fc.constant("signs" as const), weight: 12 },
  { arbitrary: fc.constantFrom("rejects" as const, "throws" as const, "garbage" as const), weight: 1 },
);
