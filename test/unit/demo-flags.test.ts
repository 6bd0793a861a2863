// `npm run demo`'s options (examples/demo-flags.ts): the ways to pay one at a time, --batch alone, --serve with
// --v1 and --solana only (it serves every seller the demos pay), anything else refused with its reason. The demo
// itself, refusing and helping as a process: test/interop/demo.test.ts.
import { describe, expect, it } from "vitest";
import { HELP, readFlags } from "../../examples/demo-flags";

describe("npm run demo's options", () => {
  it.each([
    [[]],
    [["--axios"]],
    [["--v1"]],
    [["--axios", "--solana"]],
    [["--upto", "--axios"]],
    [["--permit2"]],
    [["--batch"]],
    [["--serve"]],
    [["--serve", "--v1", "--solana"]],
    [["--serve", "--batch", "--help"]],
    [["-h"]],
  ])("%j go together", (args) => {
    expect(readFlags(args)).toEqual({ flags: new Set(args) });
  });

  it.each([
    [["--serve", "--batch"], "--serve does not take --batch: it serves every seller the demos pay"],
    [["--serve", "--permit2", "--axios"], "--serve does not take --permit2, --axios:"],
    [["--serve", "--upto"], "--serve does not take --upto:"],
    [["--batch", "--axios"], "--batch runs alone: it does not take --axios"],
    [["--batch", "--solana"], "--batch runs alone: it does not take --solana"],
    [["--v1", "--permit2"], "--v1 and --permit2 are ways to pay: give one of them"],
    [["--solana", "--upto", "--axios"], "--solana and --upto are ways to pay: give one of them"],
    [["--serv"], "unknown option --serv"],
    [["serve"], "unknown option serve"],
  ])("%j is refused: %s", (args, reason) => {
    const read = readFlags(args);
    expect(read).toEqual({ refused: expect.any(String) });
    expect((read as { refused: string }).refused.startsWith(reason)).toBe(true);
  });

  it("the help names every option readFlags accepts", () => {
    for (const flag of ["--axios", "--v1", "--solana", "--permit2", "--upto", "--batch", "--serve", "--help", "-h"]) {
      expect(HELP).toContain(flag);
      expect(readFlags([flag])).toHaveProperty("flags");
    }
  });
});
