// The docs cannot drift from the code: every ```ts block of README.md and docs/*.md is type-checked
// against the built package (dist/, as its exports publish it), each block a module of its own.
// Names a block uses without declaring them come from docs/prelude.d.ts, or from an HTML comment
// right above the block: <!-- prelude: declare const payment: PaymentOutcomeUnknownError; -->.
// docs/contributing.md says how to write a block.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { distProgram } from "../support/dist-types";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pages = [
  "README.md",
  ...readdirSync(`${root}docs`)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];
const exported = Object.keys(JSON.parse(readFileSync(`${root}package.json`, "utf8")).exports as Record<string, unknown>)
  .filter((path) => path !== "./package.json")
  .map((path) => `x402-pay${path.slice(1)}`);

/** One fenced block: where it starts (the fence's line, 1-based), its language, its text and prelude. */
interface Block {
  readonly page: string;
  readonly line: number;
  readonly language: string;
  readonly code: string;
  readonly prelude: string;
}

/** The fenced blocks of a Markdown page, indented ones (in a list) included. */
function blocksOf(page: string, text: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const end = lines.findIndex((line, j) => j > i && line.trim() === fence);
    if (end < 0) throw new Error(`${page}:${i + 1}: a code block is never closed`);
    const body = lines.slice(i + 1, end).map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line));
    // The prelude comment ends on the line right above the fence.
    const above = lines.slice(0, i).join("\n");
    const prelude = /<!--\s*prelude:([\s\S]*?)-->\s*$/.exec(above)?.[1]?.trim() ?? "";
    blocks.push({ page, line: i + 1, language: info!.trim().split(/\s+/)[0] ?? "", code: body.join("\n"), prelude });
    i = end;
  }
  return blocks;
}

/** The sentence a page with top-level await in its blocks carries (see docs/contributing.md). */
const ESM_NOTE = /top-level `await`[^.]*ES module/;

/** Does the code await outside any function (a module's top level, which CommonJS does not allow)? */
function usesTopLevelAwait(code: string): boolean {
  const file = ts.createSourceFile("block.ts", code, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const visit = (node: ts.Node): boolean => {
    if (ts.isFunctionLike(node) || ts.isClassLike(node)) return false;
    if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier !== undefined)) return true;
    return ts.forEachChild(node, visit) ?? false;
  };
  return visit(file);
}

const blocks = pages.flatMap((page) => blocksOf(page, readFileSync(`${root}${page}`, "utf8")));
const tsBlocks = blocks.filter((b) => b.language === "ts");

describe("code blocks of README.md and docs/*.md", () => {
  // A directory of this run's own: node_modules may be shared by several checkouts.
  let dir = "";
  beforeAll(() => {
    dir = `${root}node_modules/.cache/x402-pay-docs-code-${process.pid}/`;
    mkdirSync(dir, { recursive: true });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("name their language: ts is type-checked; sh, json, text and the like are not code to check", () => {
    const bare = blocks.filter((b) => b.language === "").map((b) => `${b.page}:${b.line}`);
    expect(bare, "a fence without a language").toEqual([]);
    const other = blocks
      .filter((b) => /^(typescript|js|javascript|tsx|mjs)$/.test(b.language))
      .map((b) => `${b.page}:${b.line}`);
    expect(other, "TypeScript goes in ```ts blocks, which are checked").toEqual([]);
    // The extraction itself works: a broken one would find nothing to check.
    expect(tsBlocks.length).toBeGreaterThan(20);
  });

  it("import only entries the package exports", () => {
    const imports = tsBlocks.flatMap((b) =>
      [...b.code.matchAll(/from\s+"(x402-pay[^"]*)"/g)].map(([, spec]) => ({
        where: `${b.page}:${b.line}`,
        spec: spec!,
      })),
    );
    expect(imports.filter(({ spec }) => !exported.includes(spec))).toEqual([]);
  });

  it("a page whose blocks use top-level await says once that they need an ES module", () => {
    const unsaid = pages.filter(
      (page) =>
        tsBlocks.some((b) => b.page === page && usesTopLevelAwait(b.code)) &&
        !ESM_NOTE.test(readFileSync(`${root}${page}`, "utf8")),
    );
    expect(unsaid).toEqual([]);
    // The detection itself: top-level await and for await, not an await inside a function.
    expect(
      ["await f();", "try {\n  await f();\n} catch {}", "for await (const x of y) {}"].map(usesTopLevelAwait),
    ).toEqual([true, true, true]);
    expect(["async function g() { await f(); }", "const g = async () => await f();"].map(usesTopLevelAwait)).toEqual([
      false,
      false,
    ]);
  });

  it("type-check against the built package (dist/), each block a module", () => {
    /** File name → its block and how many lines precede the block's first line in the file. */
    const files = new Map<string, { block: Block; offset: number }>();
    tsBlocks.forEach((block, n) => {
      const name = `${dir}${block.page.replace(/[^\w]+/g, "_")}_${block.line}_${n}.ts`;
      const head = block.prelude ? `${block.prelude}\n` : "";
      files.set(name, { block, offset: head.split("\n").length - 1 });
      // `export {}` makes each block a module: its names are its own, and top-level await is allowed.
      writeFileSync(name, `${head}${block.code}\nexport {};\n`);
    });
    // A canary checked in the same program: a block that uses names the package does not have must
    // fail, or the check proves nothing (a wrong `paths`, a dist without declarations, `any` types).
    const canary: Block = { page: "(canary)", line: 0, language: "ts", prelude: "", code: "" };
    files.set(`${dir}canary.ts`, { block: canary, offset: 0 });
    writeFileSync(
      `${dir}canary.ts`,
      [
        'import { notAnExport } from "x402-pay";',
        'import { exactEvm } from "x402-pay/evm";',
        "exactEvm({ signer, notAnOption: true });",
        "undeclaredName(notAnExport);",
        "export {};",
      ].join("\n"),
    );
    // The package's exports, as a user's bundler resolves them: each entry's `import` types in dist/.
    const program = distProgram([`${root}docs/prelude.d.ts`, ...files.keys()], {
      types: ["node"],
      typeRoots: [`${root}node_modules/@types`],
      strict: true,
      skipLibCheck: true,
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
      const found = d.file && files.get(d.file.fileName);
      if (!found || d.start === undefined) return `${d.file?.fileName.replace(root, "") ?? ""}: ${text}`;
      const line = d.file!.getLineAndCharacterOfPosition(d.start).line;
      const where = line < found.offset ? "its prelude" : `line ${found.block.line + 1 + line - found.offset}`;
      return `${found.block.page}:${found.block.line} (${where}): ${text}`;
    });
    const [caught, rest] = [
      problems.filter((p) => p.startsWith("(canary)")),
      problems.filter((p) => !p.startsWith("(canary)")),
    ];
    expect(caught.join("\n")).toMatch(/no exported member 'notAnExport'/);
    expect(caught.join("\n")).toMatch(/'notAnOption' does not exist/);
    expect(caught.join("\n")).toMatch(/Cannot find name 'undeclaredName'/);
    expect(rest).toEqual([]);
  }, 180_000);
});
