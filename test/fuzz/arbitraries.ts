/**
 * fast-check generators for x402 challenges: valid v1/v2 challenges whose every field may be dropped,
 * retyped or overwritten with a hostile value, unknown fields, deep nesting and huge arrays; and the
 * ways a challenge reaches the client (header encodings, corrupted base64, bodies).
 */
import fc from "fast-check";
import { getAddress } from "viem";
import { KNOWN_EVM_ASSETS, V1_CHAIN_IDS, type Json } from "./oracle";

import { OTHER_PAY_TO, PATH, PAY_TO, SELLER, USDC_BASE, USDC_BASE_SEPOLIA } from "../support/seller";

export { OTHER_PAY_TO, PAY_TO, SELLER, USDC_BASE, USDC_BASE_SEPOLIA };
export const RESOURCE = `${SELLER}${PATH}`;
export const MEGA_USD = "0xFAfDdbb3FC7688494971a79cc65DCa3EF82079E7";
export const ZERO = `0x${"0".repeat(40)}`;
export const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
export const MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC2G4wEGkZwyTDt1v";

/** Marks a field left out of an object. */
export const ABSENT: unique symbol = Symbol("absent");
type Maybe = unknown;

/**
 * Builds a plain object from entries, leaving out ABSENT values; `__proto__` becomes an own key, as JSON.parse makes
 * it.
 */
export function object(entries: [string, Maybe][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    if (value !== ABSENT)
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A field: usually one of `valid`, sometimes `invalid`, sometimes absent. `bias` is the weight of valid. */
function field(valid: fc.Arbitrary<unknown>, invalid: fc.Arbitrary<unknown>, bias: number): fc.Arbitrary<Maybe> {
  return fc.oneof(
    { arbitrary: valid, weight: bias },
    { arbitrary: invalid, weight: 1 },
    { arbitrary: fc.constant(ABSENT), weight: 1 },
  );
}

// ------------------------------------------------------------------------------ values

const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 8 }),
);

/** Strings of any UTF-16 code units, lone surrogates included. */
export const anyText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
);

/** Any JSON value, a little nested. */
export const anyJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;

/** `{a: {a: ... leaf}}` or `[[...leaf]]`, built iteratively. */
export function nest(depth: number, array: boolean, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = array ? [value] : { a: value };
  // fast-check prints counterexamples recursively: name deep values instead (not enumerable, so
  // JSON, Object.values and deep equality ignore it).
  Object.defineProperty(value, fc.toStringMethod, {
    value: () => `nest(${depth}, ${array ? "[]" : "{}"}, ${JSON.stringify(leaf)})`,
  });
  return value;
}

/** Nesting around the 32-level limit, and now and then far beyond it. */
export const deep = fc
  .record({
    depth: fc.oneof(
      { arbitrary: fc.integer({ min: 28, max: 36 }), weight: 8 },
      { arbitrary: fc.constantFrom(64, 2_000), weight: 1 },
    ),
    array: fc.boolean(),
    leaf: scalar,
  })
  .map(({ depth, array, leaf }) => nest(depth, array, leaf));

/** A long array (rare: it costs time). */
const huge = fc.integer({ min: 1_000, max: 20_000 }).map((n) => new Array<number>(n).fill(0));

/** Retyped or hostile values for any field. */
const junk = fc.oneof(
  { arbitrary: scalar, weight: 20 },
  { arbitrary: anyJson, weight: 10 },
  { arbitrary: anyText, weight: 4 },
  { arbitrary: fc.constantFrom([], {}, [null], { length: 1 }), weight: 4 },
  { arbitrary: deep, weight: 1 },
);

/** Object keys, including ones that are special on Object.prototype. */
const key = fc.oneof(
  { arbitrary: fc.string({ maxLength: 10 }), weight: 4 },
  {
    arbitrary: fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "then", "length"),
    weight: 1,
  },
);

/** Fields no version defines. */
const unknownFields = fc.array(fc.tuple(key, junk), { maxLength: 2 });

// ------------------------------------------------------------------------------ addresses and amounts

const randomAddress = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString("hex")}`);

/** An EVM address in the forms a server may send: checksummed, lower case, upper case (a wrong checksum), broken. */
export const addressVariant = (base: fc.Arbitrary<string>) =>
  fc.tuple(base, fc.nat(9)).map(([a, form]) => {
    const checksummed = getAddress(a);
    return [
      checksummed,
      checksummed,
      checksummed,
      a.toLowerCase(),
      `0x${a.slice(2).toUpperCase()}`,
      `0X${a.slice(2)}`,
      checksummed.slice(0, -1),
      `${checksummed}0`,
      `${checksummed.slice(0, 5)}${checksummed[5] === "a" ? "b" : "a"}${checksummed.slice(6)}`,
      ` ${checksummed}`,
    ][form]!;
  });

const knownAddress = fc.constantFrom(...KNOWN_EVM_ASSETS.map((a) => a.address));

export const assetAddress = fc.oneof(
  { arbitrary: fc.constantFrom(USDC_BASE_SEPOLIA, USDC_BASE), weight: 6 },
  { arbitrary: addressVariant(fc.oneof(knownAddress, randomAddress)), weight: 3 },
  { arbitrary: fc.constantFrom(MINT, "USD", "0x1234"), weight: 1 },
);

export const payToAddress = fc.oneof(
  { arbitrary: fc.constantFrom(PAY_TO, PAY_TO, OTHER_PAY_TO), weight: 6 },
  { arbitrary: addressVariant(fc.oneof(fc.constantFrom(PAY_TO, OTHER_PAY_TO), randomAddress)), weight: 3 },
  {
    arbitrary: fc.constantFrom(ZERO, ZERO.toUpperCase().replace("0X", "0x"), MINT, "1".repeat(32), "0x1234"),
    weight: 1,
  },
);

const UINT256_MAX = (1n << 256n) - 1n;

/** Amounts the wire allows: around the $1 cap of 6-decimal tokens, zero, the uint256 edge. */
export const validAmount = fc.oneof(
  { arbitrary: fc.bigInt({ min: 0n, max: 2_000_000n }).map(String), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      "0",
      "10000",
      "999999",
      "1000000",
      "1000001",
      "00010000",
      UINT256_MAX.toString(),
      `0${"9".repeat(77)}`,
    ),
    weight: 2,
  },
  { arbitrary: fc.bigInt({ min: 0n, max: UINT256_MAX }).map(String), weight: 1 },
  { arbitrary: fc.bigInt({ min: 0n, max: 10n ** 21n }).map(String), weight: 1 },
);

/** Amounts it does not: decimals, signs, exponents, hex, non-ASCII digits, 79 digits, 2^256, numbers. */
export const invalidAmount = fc.oneof(
  fc.constantFrom(
    "0.1",
    "-1",
    "1e6",
    "",
    " 1",
    "1 ",
    "0x10",
    "+1",
    "١٢",
    "１",
    "1_000",
    "9".repeat(79),
    `1${"0".repeat(78)}`,
    (1n << 256n).toString(),
    "NaN",
    "Infinity",
  ),
  fc.constantFrom(10000, 0, -1, 1.5, null, true),
  junk,
);

const evmNetwork = fc.oneof(
  { arbitrary: fc.constantFrom("eip155:84532", "eip155:8453", "eip155:4326"), weight: 6 },
  { arbitrary: fc.constantFrom(...KNOWN_EVM_ASSETS.map((a) => a.network)), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 2 ** 40 }).map((n) => `eip155:${n}`), weight: 1 },
);

/** CAIP-2 ids: EVM chains, ones exactEvm cannot pay (chain 0, leading zero, over 2^53, non-numeric, Solana). */
export const caip2Network = fc.oneof(
  { arbitrary: evmNetwork, weight: 8 },
  {
    arbitrary: fc.constantFrom(
      "eip155:0",
      "eip155:01",
      "eip155:9007199254740993",
      "eip155:99999999999999999",
      "eip155:abc",
      "eip155:0x14a34",
      SOLANA_MAINNET,
      "cosmos:cosmoshub-4",
      `eip155:${"1".repeat(64)}`,
    ),
    weight: 2,
  },
  { arbitrary: fc.stringMatching(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,64}$/), weight: 1 },
);

const invalidNetwork = fc.oneof(
  fc.constantFrom(
    "",
    "eip155:",
    "EIP155:8453",
    "eip155:84532 ",
    " eip155:8453",
    "eip155",
    "ab:1",
    `eip155:${"1".repeat(65)}`,
    "eip155:8453\n",
  ),
  fc.constantFrom(8453, null, ["eip155:8453"]),
  anyText,
);

const v1NetworkName = fc.oneof(
  { arbitrary: fc.constantFrom("base-sepolia", "base"), weight: 6 },
  { arbitrary: fc.constantFrom(...Object.keys(V1_CHAIN_IDS)), weight: 2 },
  {
    arbitrary: fc.constantFrom("solana-devnet", "base_sepolia", "Base", "__proto__", "constructor", "toString"),
    weight: 1,
  },
  { arbitrary: caip2Network, weight: 1 },
);

const timeout = fc.oneof(
  { arbitrary: fc.constantFrom(60, 300, 3600), weight: 6 },
  // Either side of the 6 s the facilitator needs and of the policy limits the tests use.
  {
    arbitrary: fc.constantFrom(
      1,
      6,
      7,
      59,
      61,
      299,
      301,
      899,
      900,
      901,
      960,
      3599,
      3601,
      86_400,
      Number.MAX_SAFE_INTEGER,
    ),
    weight: 4,
  },
  { arbitrary: fc.integer({ min: 1, max: 100_000 }), weight: 2 },
);
const invalidTimeout = fc.oneof(
  { arbitrary: fc.constantFrom(0, -1, 1.5, "60", null, 2 ** 53, 1e300, -0), weight: 3 },
  {
    arbitrary: fc.double({ min: -1e6, max: 1e20, noNaN: true }).filter((n) => !Number.isSafeInteger(n) || n <= 0),
    weight: 2,
  },
  { arbitrary: junk, weight: 1 },
);

const extraValue = fc.oneof(
  { arbitrary: fc.constant({ name: "USDC", version: "2" }), weight: 10 },
  {
    arbitrary: fc.constantFrom(
      { name: "USD Coin", version: "2" },
      { name: "USDC", version: "2", assetTransferMethod: "eip3009" },
      { name: "MegaUSD", version: "1", assetTransferMethod: "permit2" },
      { name: "USDC", version: "2", assetTransferMethod: 1 },
      { name: "", version: "2" },
      { name: "USDC" },
      { name: 1, version: 2 },
      {},
      null,
    ),
    weight: 3,
  },
  { arbitrary: deep.map((nested) => ({ name: "USDC", version: "2", nested })), weight: 1 },
  { arbitrary: fc.tuple(anyText, anyText).map(([name, version]) => ({ name, version })), weight: 1 },
);

// ------------------------------------------------------------------------------ requirements and challenges

export interface Bias {
  /** Weight of a valid value against one invalid and one absent (each weight 1). */
  readonly field: number;
  /** Weight of a well-formed envelope (version, accepts, resource ...) against a broken one. */
  readonly envelope: number;
  /** Among valid values, weight of a typical one (USDC on Base Sepolia, a checksummed payee ...) against the rest. */
  readonly typical: number;
}

export const HOSTILE: Bias = { field: 16, envelope: 10, typical: 2 };

/** Usually `typical`, else `varied`. */
const usually = (bias: Bias, typical: fc.Arbitrary<unknown>, varied: fc.Arbitrary<unknown>) =>
  fc.oneof({ arbitrary: typical, weight: bias.typical }, { arbitrary: varied, weight: 1 });

function requirement(version: 1 | 2, bias: Bias): fc.Arbitrary<unknown> {
  const b = bias.field;
  const t = (typical: fc.Arbitrary<unknown>, varied: fc.Arbitrary<unknown>) => usually(bias, typical, varied);
  const known: [string, fc.Arbitrary<Maybe>][] = [
    [
      "scheme",
      field(
        t(fc.constant("exact"), fc.oneof(fc.constantFrom("upto", "EXACT"), fc.string({ minLength: 1, maxLength: 6 }))),
        fc.constantFrom("", 1, null, ["exact"]),
        b,
      ),
    ],
    [
      "network",
      field(
        version === 2 ? t(fc.constant("eip155:84532"), caip2Network) : t(fc.constant("base-sepolia"), v1NetworkName),
        invalidNetwork,
        b,
      ),
    ],
    [
      version === 2 ? "amount" : "maxAmountRequired",
      field(t(fc.bigInt({ min: 0n, max: 1_200_000n }).map(String), validAmount), invalidAmount, b),
    ],
    ["asset", field(t(fc.constant(USDC_BASE_SEPOLIA), assetAddress), fc.constantFrom("", 0, null, {}), b)],
    [
      "payTo",
      field(t(fc.constantFrom(PAY_TO, OTHER_PAY_TO), payToAddress), fc.constantFrom("", 1234, null, {}, [PAY_TO]), b),
    ],
    ["maxTimeoutSeconds", field(t(fc.constantFrom(60, 300, 3600), timeout), invalidTimeout, b)],
    [
      "extra",
      fc.oneof(
        { arbitrary: t(fc.constant({ name: "USDC", version: "2" }), extraValue), weight: b },
        { arbitrary: fc.constantFrom([], "USDC", 5, [{ name: "USDC" }]), weight: 1 },
        { arbitrary: fc.constant(ABSENT), weight: 1 },
      ),
    ],
  ];
  if (version === 1) {
    known.push(
      [
        "resource",
        field(
          t(
            fc.constant(RESOURCE),
            fc.constantFrom(
              "https://other.example/premium",
              "HTTPS://SELLER.EXAMPLE/x",
              "/premium",
              "https://[::1",
              "ftp://other.example/x",
            ),
          ),
          fc.constantFrom(5, null, {}),
          b,
        ),
      ],
      ["description", fc.constantFrom("", "premium data", ABSENT, 7)],
      ["mimeType", fc.constantFrom("application/json", ABSENT, null)],
    );
  }
  const shaped = fc
    .tuple(unknownFields, fc.tuple(...known.map(([, arb]) => arb)))
    // Unknown fields first, so a known field of the same name overwrites them unless it is absent.
    .map(([unknown, values]) =>
      object([...unknown, ...known.map(([name], i) => [name, values[i]] as [string, Maybe])]),
    );
  return fc.oneof({ arbitrary: shaped, weight: 30 }, { arbitrary: junk, weight: 1 });
}

function accepts(version: 1 | 2, bias: Bias, maxLength: number): fc.Arbitrary<unknown> {
  // Empty now and then (an auth-only route); otherwise one or more.
  const list = fc.oneof(
    { arbitrary: fc.array(requirement(version, bias), { minLength: 1, maxLength }), weight: 8 },
    { arbitrary: fc.constant([]), weight: 1 },
  );
  return fc.oneof(
    { arbitrary: list, weight: bias.envelope * 4 },
    { arbitrary: fc.constantFrom(null, "exact", {}, { 0: {} }), weight: 1 },
    {
      arbitrary: fc
        .tuple(requirement(version, bias), fc.integer({ min: 100, max: 2_000 }))
        .map(([r, n]) => new Array(n).fill(r)),
      weight: 1,
    },
    { arbitrary: huge, weight: 1 },
  );
}

const resource = fc.oneof(
  { arbitrary: fc.constant({ url: RESOURCE, description: "", mimeType: "" }), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      { url: "https://other.example/premium" },
      { url: "HTTPS://Seller.Example:8443/premium?x=1" },
      { url: "/premium" },
      { url: "not a url" },
      { url: "https://[::1" },
      { url: "http://seller.example/premium" },
      { url: RESOURCE, extra: { a: 1 } },
    ),
    weight: 2,
  },
);
const invalidResource = fc.constantFrom({ url: "" }, {}, RESOURCE, null, { url: 5 }, []);

const extensions = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      {},
      null,
      { "sign-in-with-x": { info: { domain: "seller.example" } } },
      { bazaar: { info: {}, schema: {} } },
    ),
    weight: 3,
  },
  { arbitrary: fc.dictionary(key, junk, { maxKeys: 3 }), weight: 2 },
  { arbitrary: deep.map((d) => ({ bazaar: d })), weight: 1 },
);

/** A challenge object: a valid v1 or v2 challenge with its fields mutated. */
export function challenge(bias: Bias = HOSTILE, maxAccepts = 4): fc.Arbitrary<Record<string, unknown> | unknown> {
  const e = bias.envelope;
  const build = (version: 1 | 2) =>
    fc
      .record({
        x402Version: fc.oneof(
          { arbitrary: fc.constant(version), weight: e * 3 },
          { arbitrary: fc.constantFrom(1, 2, "2", 3, 0, 2.5, null, ABSENT), weight: 1 },
        ),
        error: fc.oneof(
          { arbitrary: fc.constantFrom(ABSENT, "Payment required", "X-PAYMENT header is required"), weight: e },
          { arbitrary: fc.constantFrom(5, null, {}), weight: 1 },
          { arbitrary: anyText, weight: 1 },
        ),
        resource: version === 2 ? field(resource, invalidResource, e) : fc.constant(ABSENT),
        accepts: accepts(version, bias, maxAccepts),
        extensions: fc.oneof(
          { arbitrary: fc.constant(ABSENT), weight: e },
          { arbitrary: extensions, weight: 2 },
          { arbitrary: fc.constantFrom([], "x", 5), weight: 1 },
        ),
        unknown: unknownFields,
      })
      .map(({ unknown, ...known }) => object([...unknown, ...Object.entries(known)]));
  return fc.oneof({ arbitrary: fc.oneof(build(2), build(1)), weight: e * 4 }, { arbitrary: junk, weight: 1 });
}

// ------------------------------------------------------------------------------ delivery

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** A header value for a JSON text: standard, URL-safe, unpadded, padded with whitespace, or corrupted. */
export const headerFor = (json: string) =>
  fc.oneof(
    { arbitrary: fc.constant(b64(json)), weight: 6 },
    { arbitrary: fc.constant(b64(json).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")), weight: 1 },
    { arbitrary: fc.constant(b64(json).replace(/=+$/, "")), weight: 1 },
    {
      arbitrary: fc.constantFrom(" ", "\t", "\n", "\u00a0", "\ufeff").map((ws) => `${ws}${b64(json)}${ws}`),
      weight: 1,
    },
    {
      // One character inserted, removed or replaced.
      arbitrary: fc
        .tuple(fc.nat(), fc.constantFrom("=", "-", "_", "+", "/", " ", "%", "é", "A", ""), fc.boolean())
        .map(([at, ch, replace]) => {
          const text = b64(json);
          const i = text.length === 0 ? 0 : at % text.length;
          return text.slice(0, i) + ch + text.slice(replace ? i + 1 : i);
        }),
      weight: 2,
    },
    { arbitrary: fc.nat().map((n) => b64(json).slice(0, n % (b64(json).length + 1))), weight: 1 },
    {
      arbitrary: fc.constant(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]).toString("base64")),
      weight: 1,
    },
  );

/** Headers that are not a base64 JSON object at all. */
export const strangeHeader = fc.oneof(
  anyText,
  fc.stringMatching(/^[A-Za-z0-9+/=_-]{0,40}$/),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString("base64")),
  anyJson.map((v) => b64(JSON.stringify(v))),
  fc.constantFrom("", "null", b64("null"), b64("[]"), b64('"x"'), b64("1e999"), "=".repeat(4), "A".repeat(70_000)),
);

/** Body texts and values that are not a challenge (or are challenge-like). */
export const strangeBody = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      undefined,
      null,
      "",
      "{}",
      "<!doctype html><p>Pay to read</p>",
      '{"x402Version":',
      "[1,2,3]",
      '"x402Version"',
      "null",
      '{"x402Version":2}',
    ),
    weight: 4,
  },
  { arbitrary: anyText, weight: 4 },
  { arbitrary: anyJson, weight: 4 },
  { arbitrary: deep, weight: 2 },
  { arbitrary: deep.map((d) => JSON.stringify({ x402Version: 2, accepts: [], extensions: d })), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 4_000 }).map((n) => "[".repeat(n) + "]".repeat(n)), weight: 1 },
  // Around the 1 MiB limit of a body read as text.
  { arbitrary: fc.integer({ min: 10_000, max: 600_000 }).map((n) => `[${"0,".repeat(n)}0]`), weight: 1 },
);

export interface ChallengeInput {
  header: string | null | undefined;
  body?: unknown;
  contentType?: string | null;
}

/**
 * A challenge, delivered as a header, as a JSON body (text or parsed), or mangled; or something that is none of those.
 */
export const challengeInput: fc.Arbitrary<ChallengeInput> = fc.oneof(
  {
    arbitrary: challenge().chain((c) => {
      const json = JSON.stringify(c) ?? "null";
      return fc.oneof(
        headerFor(json).map((header) => ({ header, body: "{}" })),
        fc.constant({ header: undefined, body: json }),
        fc.constant({ header: null, body: c }),
        fc.constant({ header: "", body: json }),
      );
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({
      header: fc.oneof(strangeHeader, fc.constantFrom(null, undefined)),
      body: strangeBody,
      contentType: fc.constantFrom(undefined, null, "application/json", "text/html; charset=utf-8", "TEXT/HTML"),
    }),
    weight: 2,
  },
);
