/** The header codec shared by every x402 header: JSON, UTF-8, standard base64 with padding. */

/** UTF-8 encoding, one instance shared by every module that needs it. */
export const utf8 = /* @__PURE__ */ new TextEncoder();
const base64Shape = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Node's Buffer, where there is one: its base64 is several times faster than `atob`/`btoa` by the character. Never
 * imported, so bundles do not carry a polyfill.
 */
const NodeBuffer = (
  globalThis as {
    Buffer?: {
      from(
        data: Uint8Array | string,
        encoding?: "base64" | "utf8",
      ): Uint8Array & { toString(encoding: "base64"): string };
    };
  }
).Buffer;

/** Bytes → standard base64 with padding. Shared with the Solana wire transaction. */
export function bytesToBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes).toString("base64");
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** Standard base64 → bytes; throws on anything `atob` refuses. Shared with the Solana RPC reads. */
export function base64ToBytes(b64: string): Uint8Array {
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/** `JSON.stringify` → UTF-8 → standard base64 (`+/`, `=` padding): byte-identical to the reference. */
export function encodeBase64Json(value: unknown): string {
  const json = JSON.stringify(value);
  // Buffer encodes the text as UTF-8 itself (as TextEncoder does, lone surrogates as U+FFFD): one copy fewer.
  return NodeBuffer ? NodeBuffer.from(json, "utf8").toString("base64") : bytesToBase64(utf8.encode(json));
}

let decoder: TextDecoder | undefined;

export type DecodeResult = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * Decodes a header value. More lenient than the reference on input (URL-safe alphabet, missing
 * padding, surrounding whitespace), strict on content (valid UTF-8, valid JSON).
 */
export function decodeBase64Json(text: string): DecodeResult {
  let b64 = text.trim();
  if (b64.includes("-") || b64.includes("_")) b64 = b64.replace(/-/g, "+").replace(/_/g, "/");
  // Each step names what failed when it throws.
  let reason = "is not base64";
  if (!base64Shape.test(b64)) return { ok: false, reason };
  // atob takes a value without padding, but not one with part of it ("YQ="): complete it. A length
  // that no padding can complete (4n + 1) is refused by atob.
  while (b64.length % 4 !== 0) b64 += "=";
  try {
    // Buffer decodes anything: refuse first what atob refuses (WHATWG forgiving-base64: after one or
    // two final "=" go, no "=" may remain, nor a length of 4n + 1). The shape put every "=" at the end.
    let pad = 0;
    while (b64[b64.length - 1 - pad] === "=") pad++;
    if (pad > 2 || (b64.length - pad) % 4 === 1) throw new Error(reason);
    const bytes = NodeBuffer ? NodeBuffer.from(b64, "base64") : base64ToBytes(b64);
    reason = "does not decode to UTF-8 text";
    // Made at first use, not at load: a decoder that cannot be made fails this step, where it is seen.
    const json = (decoder ??= new TextDecoder("utf-8", { fatal: true })).decode(bytes);
    reason = "does not decode to JSON";
    return { ok: true, value: JSON.parse(json) };
  } catch {
    return { ok: false, reason };
  }
}
