// The demo's options (examples/demo.ts): which go together, and the help text. Apart from the demo, so that a test
// reads them without starting anything.

export const HELP = `Usage: npm run demo [-- <options>]

  (none)      pay one request with fetch: EVM exact (EIP-3009), protocol v2
  --axios     the same through axios; goes with one of --v1, --solana, --permit2, --upto
  --v1        pay the protocol v1 seller
  --solana    pay on Solana (LiteSVM) instead of EVM
  --permit2   pay exact through Permit2, after the buyer's one-time approval
  --upto      pay a metered upto route that settles less than the signed maximum
  --batch     100 calls from one batch-settlement deposit, then the seller settles and the buyer is refunded
  --serve     keep the stack running for your own code: every seller the demos pay (exact, Permit2, upto,
              batch-settlement, auth-capture, extensions, MCP, discovery), funded test keys; Ctrl-C stops it.
              Goes with --v1 (also the v1 seller) and --solana (the Solana stack instead)
  --help, -h  this text

One of --v1, --solana, --permit2 and --upto at a time; --batch alone.`;

/** The options given, or why they do not go together (`npm run demo -- --help` lists them). */
export function readFlags(args: string[]): { flags: Set<string> } | { refused: string } {
  const known = ["--axios", "--v1", "--solana", "--permit2", "--upto", "--batch", "--serve", "--help", "-h"];
  const unknown = args.filter((arg) => !known.includes(arg));
  if (unknown.length > 0) return { refused: `unknown option ${unknown.join(", ")}` };
  const flags = new Set(args);
  const given = (...names: string[]) => names.filter((name) => flags.has(name));
  if (flags.has("--help") || flags.has("-h")) return { flags };
  if (flags.has("--serve")) {
    const others = args.filter((arg) => !["--serve", "--v1", "--solana"].includes(arg));
    if (others.length > 0)
      return {
        refused:
          `--serve does not take ${others.join(", ")}: it serves every seller the demos pay (batch-settlement, ` +
          "Permit2, upto and auth-capture among them) and pays nothing itself; it goes with --v1 and --solana only",
      };
    return { flags };
  }
  if (flags.has("--batch") && flags.size > 1)
    return {
      refused: `--batch runs alone: it does not take ${given("--axios", "--v1", "--solana", "--permit2", "--upto").join(", ")}`,
    };
  const ways = given("--v1", "--solana", "--permit2", "--upto");
  if (ways.length > 1) return { refused: `${ways.join(" and ")} are ways to pay: give one of them` };
  return { flags };
}
