/**
 * The text a sign-in proof signs, byte for byte as the reference server rebuilds it to verify:
 * EIP-4361 as `@signinwithethereum/siwe` prints it (EVM), and the reference's own SIWS layout
 * (Solana). Lines joined by LF, no trailing newline. The layouts differ on purpose (wire.md §6.3).
 */

/** The server's `info` with the chosen chain: what a message states. */
export interface SignInFields {
  readonly domain: string;
  readonly uri: string;
  readonly statement?: string | undefined;
  readonly version: string;
  readonly chainId: string;
  readonly nonce: string;
  readonly issuedAt: string;
  readonly expirationTime?: string | undefined;
  readonly notBefore?: string | undefined;
  readonly requestId?: string | undefined;
  readonly resources?: readonly string[] | undefined;
}

export type Family = "evm" | "solana";

/**
 * The message for `family`. EVM: an absent statement leaves two blank lines, an empty one three; the
 * request id is written when given, even empty, and `Resources:` whenever the list is given. Solana:
 * one blank line, the statement and the optional lines only when not empty. Call `messageProblem` first.
 */
export function formatMessage(family: Family, f: SignInFields, address: string): string {
  const evm = family === "evm";
  const { statement, requestId, resources } = f;
  const lines = [`${f.domain} wants you to sign in with your ${evm ? "Ethereum" : "Solana"} account:`, address, ""];
  if (evm ? statement !== undefined : statement) lines.push(statement!, "");
  else if (evm) lines.push("");
  const reference = f.chainId.slice(f.chainId.indexOf(":") + 1);
  lines.push(
    `URI: ${f.uri}`,
    `Version: ${f.version}`,
    `Chain ID: ${evm ? Number(reference) : reference}`,
    `Nonce: ${f.nonce}`,
    `Issued At: ${f.issuedAt}`,
  );
  if (f.expirationTime) lines.push(`Expiration Time: ${f.expirationTime}`);
  if (f.notBefore) lines.push(`Not Before: ${f.notBefore}`);
  if (evm ? requestId !== undefined : requestId) lines.push(`Request ID: ${requestId}`);
  if (evm ? resources : resources?.length) lines.push("Resources:", ...resources!.map((r) => `- ${r}`));
  return lines.join("\n");
}

// RFC 3986 as the EIP-4361 grammar of @signinwithethereum/siwe-parser reads it.
const pct = "%[0-9A-Fa-f]{2}";
const pchar = `(?:[\\w\\-.~!$&'()*+,;=:@]|${pct})`;
const host = `(?:\\[[\\w:.]+\\]|(?:[\\w\\-.~!$&'()*+,;=]|${pct})*)`;
const authority = `(?:(?:[\\w\\-.~!$&'()*+,;=:]|${pct})*@)?${host}(?::\\d*)?`;
const tail = `(?:\\?(?:${pchar}|[/?])*)?(?:#(?:${pchar}|[/?])*)?`;
const URI = new RegExp(
  `^[A-Za-z][\\w+\\-.]*:(?://${authority}(?:/${pchar}*)*|/?(?:${pchar}+(?:/${pchar}*)*)?)${tail}$`,
);
/** EIP-4361 statement characters: printable ASCII but `"%<>\^`{|}` (and no line break). */
const STATEMENT = /^[ !#$&-;=?-[\]_a-z~]*$/;
const REQUEST_ID = new RegExp(`^${pchar}*$`);

/**
 * Why `f` cannot be written as a message of `family` that the server reads back, else `undefined`.
 * EVM: the server parses the message with the EIP-4361 grammar, which refuses a URI with spaces or
 * braces, a statement with `%`, a version other than 1... Solana: a line break in a field would
 * forge lines of the message the wallet shows.
 */
export function messageProblem(family: Family, f: SignInFields): string | undefined {
  const fields: [string, unknown][] = [
    ["uri", f.uri],
    ["statement", f.statement],
    ["requestId", f.requestId],
    ...(f.resources ?? []).map((r, i): [string, unknown] => [`resources[${i}]`, r]),
  ];
  if (family === "solana") {
    if (!/^solana:[-\w]{1,32}$/.test(f.chainId)) return `${f.chainId} is not a Solana CAIP-2 chain id`;
    const broken = fields.find(([, v]) => /[\r\n]/.test(String(v ?? "")));
    return broken && `its ${broken[0]} contains a line break`;
  }
  if (!/^eip155:\d{1,15}$/.test(f.chainId)) return `${f.chainId} is not an EVM chain id (eip155:<number>)`;
  if (f.version !== "1") return `EIP-4361 knows version 1 only, not ${JSON.stringify(f.version)}`;
  const test = (name: string) => (name === "statement" ? STATEMENT : name === "requestId" ? REQUEST_ID : URI);
  const bad = fields.find(([name, v]) => v !== undefined && !test(name).test(String(v)));
  return bad && `its ${bad[0]} is not what EIP-4361 allows there`;
}

/** RFC 3339's date-time: a date, `T`, a time (a leap second allowed), `Z` or an offset. */
const RFC3339 = new RegExp(
  String.raw`^(\d{4})-(\d\d)-(\d\d)[Tt]([01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?` +
    String.raw`(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$`,
);

/** RFC 3339 date-time (what EIP-4361 requires of its times), as milliseconds; `undefined` if it is not one. */
export function parseTime(value: string): number | undefined {
  const match = RFC3339.exec(value);
  if (!match) return undefined;
  const [, year, month, day] = match.map(Number);
  // A real calendar day (no February 30th).
  const date = new Date(Date.UTC(year!, month! - 1, day!));
  if (date.getUTCMonth() !== month! - 1 || date.getUTCDate() !== day) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}
