/**
 * What Biome's formatter cannot do by itself: it leaves a long string or comment as it is. Every line of
 * src/ (but the generated validators) is at most 120 characters, so a reader never scrolls sideways.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../../src", import.meta.url));
const files = readdirSync(src, { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts") && !file.endsWith(".generated.ts"))
  .map((file) => join(src, file));

describe("src/ lines", () => {
  it("every line of every source file is at most 120 characters", () => {
    expect(files.length).toBeGreaterThan(50);
    const long = files.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (line.length > 120 ? [`${file.slice(src.length + 1)}:${i + 1} (${line.length})`] : [])),
    );
    expect(long).toEqual([]);
  });
});
