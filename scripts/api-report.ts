/**
 * The API reports, docs/api/<entry>.api.md: every name and type each entry of package.json "exports"
 * gives its users, as @microsoft/api-extractor reads them from the built declarations (dist/*.d.ts).
 * A change of the public surface is then a diff in review, and `npm test` (test/unit/api-report.test.ts)
 * fails until the reports are regenerated.
 *
 *   npm run build && npm run api     rewrites docs/api from dist
 *
 * api-extractor is driven here, one in-memory configuration per entry and one TypeScript program for
 * all of them, so the repository needs no api-extractor.json per entry. The reports list signatures
 * only (no doc comments); a type an entry uses but does not export is flagged in its report
 * (ae-forgotten-export), as users of that entry cannot name it.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
  type IConfigFile,
} from "@microsoft/api-extractor";
import ts from "typescript";

const root = fileURLToPath(new URL("../", import.meta.url));
const packageJsonPath = join(root, "package.json");
export const reportFolder = join(root, "docs", "api");

/** The report's name of an entry: `x402-pay` for the root, else its subpath (`fetch`, `errors`, ...). */
export function reportName(subpath: string): string {
  return subpath === "." ? "x402-pay" : subpath.slice(2);
}

/** Each entry of package.json "exports" with types: its report name and its ESM declaration file. */
export function entries(): { name: string; dts: string }[] {
  const pkg = JSON.parse(readFileSync(packageJsonPath, "utf8"));
  const found: { name: string; dts: string }[] = [];
  for (const [subpath, target] of Object.entries(pkg.exports as Record<string, unknown>)) {
    const types = (target as { import?: { types?: string } }).import?.types;
    if (types) found.push({ name: reportName(subpath), dts: join(root, types) });
  }
  return found;
}

function configFor(entry: { name: string; dts: string }, files: string[], out: string): IConfigFile {
  return {
    projectFolder: root,
    mainEntryPointFilePath: entry.dts,
    bundledPackages: [],
    newlineKind: "lf",
    compiler: {
      // The declarations are tsup's output: read as they are published, peers from node_modules.
      overrideTsconfig: {
        compilerOptions: {
          target: "ES2022",
          module: "ESNext",
          moduleResolution: "Bundler",
          lib: ["ES2022", "DOM", "DOM.Iterable"],
          types: ["node"],
          strict: true,
          skipLibCheck: true,
        },
        files,
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: `${entry.name}.api.md`,
      reportFolder: out,
      reportTempFolder: out,
      includeForgottenExports: false,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
      extractorMessageReporting: {
        // No release tags (@public, @beta) in this package: everything an entry exports is public.
        default: { logLevel: ExtractorLogLevel.None },
        "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None },
        "ae-forgotten-export": { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
        "ae-wrong-input-file-type": { logLevel: ExtractorLogLevel.Error },
      },
      // Doc comments are prose for readers and editors, not TSDoc: not checked here.
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
}

/** The report of every entry, by report name, from dist (built first). Throws on any error api-extractor meets. */
export function apiReports(): Map<string, string> {
  const list = entries();
  const files = list.map((entry) => entry.dts);
  const out = mkdtempSync(join(tmpdir(), "x402-pay-api-"));
  const reports = new Map<string, string>();
  try {
    let compilerState: CompilerState | undefined;
    for (const entry of list) {
      const config = ExtractorConfig.prepare({
        configObject: configFor(entry, files, out),
        configObjectFullPath: undefined,
        packageJsonFullPath: packageJsonPath,
      });
      compilerState ??= CompilerState.create(config, { additionalEntryPoints: files });
      const problems: string[] = [];
      const result = Extractor.invoke(config, {
        localBuild: true,
        compilerState,
        messageCallback(message: ExtractorMessage) {
          const level = message.logLevel;
          if (level === ExtractorLogLevel.Error || level === ExtractorLogLevel.Warning) {
            problems.push(message.formatMessageWithLocation(root));
          }
          // Progress lines ("Analysis will use the bundled TypeScript version ...") stay quiet.
          message.handled = true;
        },
      });
      if (!result.succeeded || problems.length > 0) {
        throw new Error(`api-extractor failed on ${entry.name} (${entry.dts}):\n${problems.join("\n")}`);
      }
      const report = readFileSync(join(out, `${entry.name}.api.md`), "utf8");
      reports.set(entry.name, tidy(entry.name, report) + augmentationSection(entry.dts));
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return reports;
}

/**
 * The report without what changes with prose rather than with the surface: the release tag every item
 * carries (`// @public`: this package has no other), the `(undocumented)` marks, and the line numbers
 * of warnings. Its title names the entry (`x402-pay/fetch`), not only the package.
 */
function tidy(name: string, report: string): string {
  const specifier = name === "x402-pay" ? name : `x402-pay/${name}`;
  const lines = report
    .replace(/^## API Report File for "[^"]*"/, `## API Report File for "${specifier}"`)
    .split("\n")
    .map((line) => line.replace(/^(\s*\/\/ dist\/[^:]+\.d\.ts):\d+:\d+ - /, "$1 - "))
    .map((line) => line.replace(/^(\s*\/\/ )@public(?: \(undocumented\))? ?/, "$1"))
    .filter((line) => !/^\s*\/\/ (?:\(undocumented\)|\(No @packageDocumentation comment [^)]*\))?$/.test(line));
  // A lone `//` closed a list of warnings above a tag now removed.
  const kept = lines.filter((line, i) => !(/^\s*\/\/$/.test(line) && !/^\s*\/\//.test(lines[i + 1] ?? "")));
  return kept
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/\n\n```\n*$/, "\n```\n");
}

/**
 * api-extractor leaves module augmentations out of its reports (x402-pay/axios adds `x402` to axios'
 * `AxiosRequestConfig`): each `declare module "..."` or `declare global` of the entry's declarations, and
 * of the chunks they import, printed without comments.
 */
function augmentationSection(entryDts: string): string {
  const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });
  const seen = new Set<string>();
  const found: string[] = [];
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    for (const statement of source.statements) {
      const global = (statement.flags & ts.NodeFlags.GlobalAugmentation) !== 0;
      if (ts.isModuleDeclaration(statement) && (ts.isStringLiteral(statement.name) || global)) {
        found.push(printer.printNode(ts.EmitHint.Unspecified, statement, source));
      }
      const linked = ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement);
      const from = linked ? statement.moduleSpecifier : undefined;
      if (from && ts.isStringLiteral(from) && from.text.startsWith(".")) {
        visit(join(dirname(file), from.text.replace(/\.js$/, ".d.ts")));
      }
    }
  };
  visit(entryDts);
  if (found.length === 0) return "";
  return `\n## Module augmentations\n\n\`\`\`ts\n${found.sort().join("\n\n")}\n\`\`\`\n`;
}

/** The committed reports, by report name. */
export function committedReports(): Map<string, string> {
  const reports = new Map<string, string>();
  let names: string[] = [];
  try {
    names = readdirSync(reportFolder);
  } catch {
    return reports;
  }
  for (const file of names.filter((name) => name.endsWith(".api.md")).sort()) {
    reports.set(file.slice(0, -".api.md".length), readFileSync(join(reportFolder, file), "utf8"));
  }
  return reports;
}

function main(): void {
  const reports = apiReports();
  const before = committedReports();
  mkdirSync(reportFolder, { recursive: true });
  for (const name of before.keys()) {
    if (reports.has(name)) continue;
    rmSync(join(reportFolder, `${name}.api.md`));
    console.log(`docs/api/${name}.api.md: removed (no such entry)`);
  }
  for (const [name, text] of reports) {
    const state = !before.has(name) ? "new" : before.get(name) === text ? "unchanged" : "changed";
    if (state !== "unchanged") writeFileSync(join(reportFolder, `${name}.api.md`), text);
    console.log(`docs/api/${name}.api.md: ${state}`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
