/**
 * Properties of the header codec (wire.md §2) and of the settlement header (§1.5): decoding never
 * throws and agrees with Node's Buffer; encoding round-trips every JSON value.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/protocol/wire";
import { MAX_HEADER_BYTES, decodeBase64Json, decodeSettlement, encodeBase64Json } from "../../src/entries/protocol";
import { anyText, deep, headerFor, strangeHeader } from "./arbitraries";
import { DEPTH_LIMIT, HEADER_LIMIT, expectedSettlement, referenceDecode } from "./oracle";
import { bounded, check, ensure } from "./params";

const show = (v: unknown) => JSON.stringify(v)?.slice(0, 300);
/**
 * Equal JSON values (both sides come from JSON.parse of the same text, so key order agrees). Not recursive in JS: deep
 * values are fine.
 */
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Every string a header can hold, and base64-looking strings in particular. */
const anyHeader = fc.oneof(
  anyText,
  strangeHeader,
  fc.stringMatching(/^\s?[A-Za-z0-9+/_-]{0,24}={0,3}\s?$/),
  fc.jsonValue().chain((v) => headerFor(JSON.stringify(v))),
);

/** JSON values with text of every kind: non-ASCII, astral, lone surrogates (JSON.stringify escapes those). */
const jsonWithAnyText = fc.jsonValue({ maxDepth: 4, stringUnit: "binary" });

describe("fuzz: header codec", () => {
  it("the oracle's limits are the documented ones", () => {
    expect(DEPTH_LIMIT).toBe(MAX_JSON_DEPTH);
    expect(HEADER_LIMIT).toBe(MAX_HEADER_BYTES);
  });

  it("decodeBase64Json never throws, and agrees with Buffer + isUtf8 + JSON.parse on every string", async () => {
    await check(
      "decodeBase64Json agrees with Buffer",
      fc.property(anyHeader, (text) => {
        const got = bounded(() => decodeBase64Json(text));
        const want = referenceDecode(text);
        ensure(got.ok === want.ok, () => `ok=${got.ok}, expected ${want.ok} for ${show(text)}`);
        if (got.ok && want.ok)
          ensure(sameJson(got.value, want.value), () => `decoded ${show(got.value)}, expected ${show(want.value)}`);
        if (!got.ok) ensure(typeof got.reason === "string" && got.reason !== "", "a failure names its reason");
      }),
      300,
    );
  });

  it("on random bytes in standard base64 (padded or not, or URL-safe), decodes what Buffer decodes", async () => {
    await check(
      "decodeBase64Json on random bytes",
      fc.property(fc.uint8Array({ maxLength: 96 }), fc.constantFrom("standard", "unpadded", "url"), (bytes, form) => {
        let text = Buffer.from(bytes).toString("base64");
        if (form !== "standard") text = text.replace(/=+$/, "");
        if (form === "url") text = text.replace(/\+/g, "-").replace(/\//g, "_");
        const got = decodeBase64Json(text);
        const want = referenceDecode(text);
        ensure(
          got.ok === want.ok && (!got.ok || sameJson(got.value, (want as { value: unknown }).value)),
          () => `mismatch on ${text}`,
        );
      }),
      200,
    );
  });

  it("encodeBase64Json → decodeBase64Json round-trips any JSON value, and encodes as Buffer does", async () => {
    await check(
      "encode/decode round trip",
      fc.property(fc.oneof(jsonWithAnyText, deep), (value) => {
        const header = encodeBase64Json(value);
        ensure(
          header === Buffer.from(JSON.stringify(value), "utf8").toString("base64"),
          "standard padded base64 of UTF-8 JSON",
        );
        const decoded = decodeBase64Json(header);
        ensure(decoded.ok, "decodes");
        // JSON itself maps -0 to 0; everything else comes back as it went.
        ensure(sameJson(decoded.value, value), () => `round trip changed ${show(value)}`);
      }),
      200,
    );
  });
});

describe("fuzz: decodeSettlement", () => {
  /** Settlement-like objects: each field usually well-formed, sometimes absent or retyped. */
  const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>) =>
    fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: invalid, weight: 1 });
  const settlement = fc
    .record(
      {
        success: mostly(fc.boolean(), fc.constantFrom("true", 1, null)),
        errorReason: mostly(fc.string(), fc.constantFrom(5, null)),
        errorMessage: mostly(anyText, fc.constantFrom(false)),
        payer: mostly(fc.string(), fc.constantFrom(1, null)),
        transaction: mostly(fc.constantFrom("", `0x${"ab".repeat(32)}`), fc.constantFrom(0)),
        network: mostly(fc.constantFrom("eip155:84532", "base-sepolia"), fc.constantFrom(8453)),
        amount: mostly(fc.constantFrom("10000"), fc.constantFrom(10000)),
        extensions: mostly(
          fc.oneof(
            fc.constantFrom(null, {}, { "offer-receipt": { info: {} } }),
            deep.map((d) => ({ d })),
          ),
          fc.constantFrom([], "x"),
        ),
        unknown: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    )
    .chain((s) => headerFor(JSON.stringify(s)));

  it("never throws; returns undefined or an object with a boolean success, exactly when the header is a valid settlement", async () => {
    await check(
      "decodeSettlement",
      fc.property(fc.oneof(settlement, anyHeader, fc.constantFrom(null, undefined, "")), (header) => {
        const got = bounded(() => decodeSettlement(header));
        const want = expectedSettlement(header);
        if (got === undefined) ensure(want === undefined, () => `refused a valid settlement ${show(want)}`);
        else {
          ensure(typeof got === "object" && typeof got.success === "boolean", "success is a boolean");
          ensure(sameJson(got, want), () => `returned ${show(got)}, expected ${show(want)}`);
        }
      }),
      300,
    );
  });
});
