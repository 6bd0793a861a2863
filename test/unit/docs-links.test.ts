// Every relative link of README.md and docs/*.md leads somewhere: to a file of the repository, and when
// it names an anchor (`errors.md#payment_rejected`, `#axios`), to a heading of that page. Links to the
// web are not followed. Anchors are made as GitHub makes them from headings.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pages = [
  "README.md",
  ...readdirSync(`${root}docs`)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];

/** The text of a page without its fenced code blocks (a `# comment` in a shell block is no heading). */
function unfenced(text: string): string {
  return text.replace(/^(\s*)(`{3,})[^\n]*\n[\s\S]*?^\s*\2\s*$/gm, "");
}

/** The text of a page without its code, fenced or inline (a `[x](y)` in code is not a link). */
function prose(text: string): string {
  return unfenced(text).replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\- _]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown page: one per heading, a repeated heading numbered as GitHub does. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of unfenced(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative links of a page: `[text](target)` and `[text]: target`, web and mail links left out. */
function linksOf(text: string): string[] {
  const body = prose(text);
  const inline = [...body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(([, target]) => target!);
  const reference = [...body.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map(([, target]) => target!);
  return [...inline, ...reference].filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("relative links of README.md and docs/*.md", () => {
  const links = pages.flatMap((page) =>
    linksOf(readFileSync(`${root}${page}`, "utf8")).map((target) => ({ page, target })),
  );

  it("are found (the extraction works)", () => {
    expect(links.length).toBeGreaterThan(50);
    expect(links.filter(({ target }) => target.includes("#")).length).toBeGreaterThan(5);
  });

  it("each names a file of the repository, and an anchor that page has", () => {
    const broken = links.flatMap(({ page, target }) => {
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const file = path === "" ? page : normalize(join(dirname(page), decodeURIComponent(path)));
      if (file.startsWith("..") || !existsSync(`${root}${file}`)) return [`${page}: ${target} (no file ${file})`];
      if (anchor === undefined || !file.endsWith(".md")) return [];
      return anchorsOf(readFileSync(`${root}${file}`, "utf8")).has(anchor)
        ? []
        : [`${page}: ${target} (no heading #${anchor} in ${file})`];
    });
    expect(broken).toEqual([]);
  });

  it("the check sees a broken file or anchor (its own test)", () => {
    expect(linksOf("See [a](docs/errors.md#nope), [b](https://x.org), `[c](no.md)`,\n[d]: ./x.md")).toEqual([
      "docs/errors.md#nope",
      "./x.md",
    ]);
    expect(anchorsOf("## `PAYMENT_REJECTED`\n## Keys, and past one Redis\n## A b\n## A b")).toEqual(
      new Set(["payment_rejected", "keys-and-past-one-redis", "a-b", "a-b-1"]),
    );
    expect(anchorsOf("```sh\n# not a heading\n```\n# Title")).toEqual(new Set(["title"]));
  });
});
