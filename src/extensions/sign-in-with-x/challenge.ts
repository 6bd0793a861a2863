/**
 * A 402's `sign-in-with-x` declaration: read, checked against the request before anything is signed
 * (the phishing guard, freshness, nonce), and matched to a chain a wallet can sign a message for.
 */
import { SignInRefusedError, clip, requestDetails, type SignInRefusal } from "../../errors";
import { problemOfSignInWithXChain, problemOfSignInWithXDeclaration } from "../../protocol";
import { formatMessage, messageProblem, parseTime, type Family, type SignInFields } from "./message";

/** How far the server's clock may be ahead of or behind ours. */
export const CLOCK_SKEW_SECONDS = 60;
/** The oldest challenge signed: the reference server refuses proofs issued more than 5 minutes before. */
export const MAX_AGE_SECONDS = 300;

/** One `supportedChains` entry. */
export interface SupportedChain {
  readonly chainId: string;
  readonly type: string;
  readonly signatureScheme?: unknown;
}

export interface Declaration {
  /** The server's `info`: the fields of the message but the chain. */
  readonly info: Omit<SignInFields, "chainId">;
  readonly chains: readonly SupportedChain[];
}

/**
 * The field a refusal names for the declaration's first problem (the generated validator's sentence,
 * its path first): `info.resources.1 must be a string` is about `resources`, `supportedChains must be
 * an array` about `supportedChains`, a declaration or `info` that is no object about `info`.
 */
function fieldOf(problem: string): string {
  const path = problem.split(" ", 1)[0]!.split(".");
  return path[0] === "supportedChains" ? "supportedChains" : path[0] === "info" && path[1] ? path[1] : "info";
}

/**
 * The declaration, checked: well formed, for the request's own host and origin, fresh, with a nonce
 * EIP-4361 allows. Throws `SignInRefusedError` otherwise; nothing has been signed.
 */
export function checkDeclaration(
  declaration: unknown,
  request: { url: string; method: string },
  now: number,
): Declaration {
  const refuse = (reason: SignInRefusal, why: string): never => {
    throw new SignInRefusedError(`Sign-in refused: ${why}. Nothing was signed or paid.`, {
      details: { ...requestDetails(request), reason },
    });
  };
  const problem = problemOfSignInWithXDeclaration(declaration);
  if (problem) refuse("malformed", `the sign-in-with-x declaration has no valid ${fieldOf(problem)}`);
  const { info, supportedChains } = declaration as { info: unknown; supportedChains: unknown[] };
  const fields = info as unknown as Declaration["info"];

  // The phishing guard: a proof for one site is never signed for another. Servers differ on whether
  // `domain` carries the port (the reference server 2.10 wrote the hostname, 2.27 the host).
  const url = new URL(request.url);
  const port = url.port || (url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : "");
  const domain = fields.domain.toLowerCase();
  if (domain !== url.hostname && domain !== `${url.hostname}:${port}`) {
    refuse("domain_mismatch", `the challenge is for ${clip(fields.domain, 100)}, and this request went to ${url.host}`);
  }
  let uriOrigin: string | undefined;
  try {
    uriOrigin = new URL(fields.uri).origin;
  } catch {
    // Not a URL: no origin.
  }
  if (uriOrigin !== url.origin)
    refuse("uri_mismatch", `the challenge's uri ${clip(fields.uri, 100)} is not on ${url.origin}`);

  if (!/^[A-Za-z0-9]{8,}$/.test(fields.nonce))
    refuse("weak_nonce", `the nonce ${clip(fields.nonce, 100)} is not 8 or more letters and digits (EIP-4361)`);

  const time = (key: "issuedAt" | "expirationTime" | "notBefore") => {
    const value = fields[key];
    if (value === undefined) return undefined;
    const ms = parseTime(value);
    return ms ?? refuse("malformed", `its ${key} ${clip(value, 100)} is not an RFC 3339 date-time`);
  };
  const skew = CLOCK_SKEW_SECONDS * 1000;
  const issued = time("issuedAt")!;
  if (issued > now + skew)
    refuse(
      "issued_in_future",
      `the challenge was issued at ${fields.issuedAt}, ahead of this clock by more than ${CLOCK_SKEW_SECONDS} s`,
    );
  if (issued < now - MAX_AGE_SECONDS * 1000 - skew) {
    refuse(
      "issued_too_long_ago",
      `the challenge was issued at ${fields.issuedAt}, more than ${MAX_AGE_SECONDS / 60} minutes ago (a stale or ` +
        `replayed 402)`,
    );
  }
  const expires = time("expirationTime");
  if (expires !== undefined && expires < now - skew)
    refuse("expired", `the challenge expired at ${fields.expirationTime}`);
  const notBefore = time("notBefore");
  if (notBefore !== undefined && notBefore > now + skew)
    refuse("not_yet_valid", `the challenge is not valid before ${fields.notBefore}`);

  // A malformed entry is dropped, not refused: the others may still do.
  const chains = supportedChains.filter((c): c is SupportedChain => problemOfSignInWithXChain(c) === undefined);
  return { info: fields, chains };
}

/** A wallet that may sign in: its family, its address, and how it signs a message. */
export interface SignInWallet {
  readonly family: Family;
  readonly address: string;
  sign(message: string): Promise<string>;
}

/** The chain, wallet and message to sign, or why no declared chain can be used. */
export type ChainChoice = { chain: SupportedChain; wallet: SignInWallet; message: string } | { reasons: string[] };

const families: Record<string, { family: Family; type: string }> = {
  eip155: { family: "evm", type: "eip191" },
  solana: { family: "solana", type: "ed25519" },
};

/**
 * Picks from `chains` one that a wallet can sign for (eip155 with `eip191`, solana with `ed25519`) and
 * whose message can be built, trying first those in `preferred` (the networks paid on and offered),
 * then the server's order.
 */
export function chooseChain(
  declaration: Declaration,
  wallets: readonly SignInWallet[],
  preferred: readonly string[],
): ChainChoice {
  const rank = (chain: SupportedChain) => {
    const i = preferred.indexOf(chain.chainId);
    return i < 0 ? preferred.length : i;
  };
  const reasons: string[] = [];
  // A stable sort: equal ranks keep the server's order.
  for (const chain of [...declaration.chains].sort((a, b) => rank(a) - rank(b))) {
    const namespace = chain.chainId.split(":")[0]!;
    const named = Object.hasOwn(families, namespace) ? families[namespace] : undefined;
    const wallet = named && wallets.find((w) => w.family === named.family);
    const fields = { ...declaration.info, chainId: chain.chainId };
    const problem = !named
      ? "x402-pay signs in on eip155 and solana chains only"
      : chain.type !== named.type
        ? `its type is ${clip(chain.type, 40)}, not ${named.type}`
        : !wallet
          ? `no ${named.family === "evm" ? "EVM" : "Solana"} wallet that may sign in is registered`
          : messageProblem(named.family, fields);
    if (!problem) return { chain, wallet: wallet!, message: formatMessage(named!.family, fields, wallet!.address) };
    reasons.push(`${clip(chain.chainId, 80)}: ${problem}`);
  }
  return { reasons };
}
