/**
 * Solana's wire format as far as a wallet needs it: a transaction in (its message and who signed it), a transaction
 * out. Written here, not taken from kit's codecs or ../transaction (which load `@solana/kit`), so this folder loads
 * nothing: `signInWithX` shares its wallet calls from the root entry.
 */
import { bytesToBase58, concatBytes } from "../../protocol";

type Bytes = Uint8Array;

/** A compact-u16 at `at`: its value and where the next field starts, else `undefined`. */
function readLength(bytes: Bytes, at: number): [number, number] | undefined {
  let n = 0;
  for (let shift = 0; shift <= 14; shift += 7) {
    const byte = bytes[at++];
    if (byte === undefined) return undefined;
    n |= (byte & 0x7f) << shift;
    if (!(byte & 0x80)) return [n, at];
  }
  return undefined;
}

function writeLength(n: number): number[] {
  const out: number[] = [];
  for (; n >= 0x80; n >>= 7) out.push((n & 0x7f) | 0x80);
  return [...out, n];
}

/** The signers a message names (its first static keys) and its lifetime token (blockhash or nonce). */
export function readMessageHeader(message: Bytes): { signers: string[]; lifetimeToken: string } | undefined {
  const start = message[0]! & 0x80 ? 1 : 0; // a versioned message starts with its version
  const required = message[start];
  const keys = readLength(message, start + 3);
  if (required === undefined || !keys) return undefined;
  const [count, at] = keys;
  if (required < 1 || required > count || at + 32 * (count + 1) > message.length) return undefined;
  const key = (i: number) => bytesToBase58(message.subarray(at + 32 * i, at + 32 * (i + 1)));
  return { signers: Array.from({ length: required }, (_, i) => key(i)), lifetimeToken: key(count) };
}

/** Wire format: the signatures in signer order (missing ones as 64 zero bytes), then the message; else `undefined`. */
export function toWire(messageBytes: Bytes, signatures: Readonly<Record<string, Bytes | null>>): Bytes | undefined {
  const header = readMessageHeader(messageBytes);
  if (!header) return undefined;
  const { signers } = header;
  return concatBytes([
    writeLength(signers.length),
    ...signers.map((key) => signatures[key] ?? new Uint8Array(64)),
    messageBytes,
  ]);
}

/** A wire transaction as kit holds it (the message, each signer's signature or `null`) and its lifetime token. */
export function fromWire(bytes: Bytes | undefined) {
  const length = bytes && readLength(bytes, 0);
  if (!length) return undefined;
  const [count, at] = length;
  const messageBytes = bytes.slice(at + 64 * count);
  const header = readMessageHeader(messageBytes);
  if (!header || header.signers.length !== count) return undefined;
  const signatures: Record<string, Bytes | null> = {};
  header.signers.forEach((key, i) => {
    const signature = bytes.slice(at + 64 * i, at + 64 * (i + 1));
    signatures[key] = signature.some((b) => b !== 0) ? signature : null;
  });
  return { messageBytes, signatures: Object.freeze(signatures), lifetimeToken: header.lifetimeToken };
}
