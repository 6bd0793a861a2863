/** The header codec shared by every x402 header: JSON, UTF-8, standard base64 with padding. */

const encoder = /* @__PURE__ */ new TextEncoder();
const decoder = /* @__PURE__ */ new TextDecoder("utf-8", { fatal: true });
const base64Shape = /^[A-Za-z0-9+/]*={0,2}$/;

/** `JSON.stringify` → UTF-8 → standard base64 (`+/`, `=` padding): byte-identical to the reference. */
export function encodeBase64Json(value: unknown): string {
  const bytes = encoder.encode(JSON.stringify(value));
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]);
  }
  return btoa(binary);
}

export type DecodeResult = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * Decodes a header value. More lenient than the reference on input (URL-safe alphabet, missing
 * padding, surrounding whitespace), strict on content (valid UTF-8, valid JSON).
 */
export function decodeBase64Json(text: string): DecodeResult {
  let b64 = text.trim().replace(/-/g, "+").replace(/_/g, "/");
  if (!base64Shape.test(b64) || b64.length % 4 === 1) return { ok: false, reason: "is not base64" };
  while (b64.length % 4 !== 0) b64 += "=";
  let bytes: Uint8Array;
  try {
    const binary = atob(b64);
    bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  } catch {
    return { ok: false, reason: "is not base64" };
  }
  let json: string;
  try {
    json = decoder.decode(bytes);
  } catch {
    return { ok: false, reason: "does not decode to UTF-8 text" };
  }
  try {
    return { ok: true, value: JSON.parse(json) };
  } catch {
    return { ok: false, reason: "does not decode to JSON" };
  }
}
