// A journal entry read back from a store: whole JSON with an id and a state is an entry; a torn line, another
// writer's value or anything not a string is none (the stores skip it).
import { describe, expect, it } from "vitest";
import { parseJournalEntry } from "../../src/contracts";

describe("parseJournalEntry", () => {
  it("takes whole JSON with a string id and state, and nothing else", () => {
    const entry = { id: "a1", state: "signed", at: 1 };
    expect(parseJournalEntry(JSON.stringify(entry))).toEqual(entry);
    for (const foreign of [
      undefined,
      null,
      42,
      { id: "a1", state: "signed" },
      "",
      "null",
      '{"id":"a1","state":"sig',
      '{"state":"signed"}',
      '{"id":"a1"}',
      '{"id":7,"state":"signed"}',
      '{"id":"a1","state":false}',
    ])
      expect(parseJournalEntry(foreign)).toBeUndefined();
  });
});
