// Where a job's bytes come from, finer than esbuild's metafile: each byte of the minified output is
// traced through the bundle's source map (composed by esbuild with dist's, so it names src/ files) to
// its source line, and each line to the top-level declaration holding it. Bytes inside string and
// template literals are counted apart: for x402-pay they are mostly error messages.
import { readFileSync } from "node:fs";
import ts from "typescript";
import { measureEsbuild, root, sizes } from "./measure.mjs";

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Source map v3 mappings: per generated line, segments [column, source, line, column] (absolute). */
function decodeMappings(mappings) {
  const lines = [];
  const state = [0, 0, 0, 0];
  for (const line of mappings.split(";")) {
    const segments = [];
    state[0] = 0;
    for (const text of line.split(",")) {
      if (!text) continue;
      const fields = [];
      let value = 0;
      let shift = 0;
      for (const char of text) {
        const digit = BASE64.indexOf(char);
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      for (let i = 0; i < Math.min(fields.length, 4); i++) state[i] += fields[i];
      segments.push(fields.length >= 4 ? [...state] : [state[0]]);
    }
    lines.push(segments);
  }
  return lines;
}

/** Top-level statements of a source file: [first line, last line, name] (0-based lines). */
function declarationsOf(file) {
  const text = readFileSync(`${root}${file}`, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  return source.statements.map((statement) => {
    const start = source.getLineAndCharacterOfPosition(statement.getStart(source)).line;
    const end = source.getLineAndCharacterOfPosition(statement.end).line;
    const declared = ts.isVariableStatement(statement)
      ? statement.declarationList.declarations.map((d) => d.name.getText(source)).join(", ")
      : statement.name?.getText(source);
    return [start, end, declared ?? ts.SyntaxKind[statement.kind]];
  });
}

const LITERALS = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
]);
const SLASHES = new Set([ts.SyntaxKind.SlashToken, ts.SyntaxKind.SlashEqualsToken]);
// After these, a slash divides; elsewhere it starts a regular expression.
const OPERANDS = new Set([
  ts.SyntaxKind.Identifier,
  ts.SyntaxKind.NumericLiteral,
  ts.SyntaxKind.BigIntLiteral,
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.CloseParenToken,
  ts.SyntaxKind.CloseBracketToken,
  ts.SyntaxKind.CloseBraceToken,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.ThisKeyword,
]);

/** Which characters of a JavaScript text are inside string or template literals (1) or not (0). */
function stringMarks(code) {
  const marks = new Uint8Array(code.length);
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, code);
  // Open braces and template substitutions, innermost last: a "}" closes one or the other.
  const nesting = [];
  let previous;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.OpenBraceToken) nesting.push("{");
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (nesting.at(-1) === "${") kind = scanner.reScanTemplateToken(false);
      if (kind !== ts.SyntaxKind.TemplateMiddle) nesting.pop();
    } else if (kind === ts.SyntaxKind.TemplateHead) nesting.push("${");
    else if (SLASHES.has(kind) && !OPERANDS.has(previous)) kind = scanner.reScanSlashToken();
    if (LITERALS.has(kind)) marks.fill(1, scanner.getTokenStart(), scanner.getTokenEnd());
    previous = kind;
  }
  return marks;
}

/**
 * The minified output of `contents` (esbuild, as the bench builds it), attributed to x402-pay's src/
 * top-level declarations: `rows`, largest first, each with its minified bytes and those in string
 * literals; `gzipWithout(test)` weighs the output gzip -9 without the characters of the rows (and, with
 * `stringsOnly`, only their string literals' characters) `test` picks. The output without them is no
 * longer JavaScript, but the difference estimates what they cost after gzip.
 */
export async function declarationBytes(contents, { external = [] } = {}) {
  const { output, map } = await measureEsbuild(contents, { sourcemap: true, external });
  const generated = output.split("\n");
  // Scanned whole: a template literal may span lines.
  const inString = stringMarks(output);
  const owner = new Int32Array(output.length).fill(-1);
  const declarations = new Map();
  const rows = [];
  const index = new Map();
  let lineStart = 0;
  for (const [g, segments] of decodeMappings(map.mappings).entries()) {
    for (const [i, segment] of segments.entries()) {
      const file = segment.length >= 4 ? map.sources[segment[1]] : undefined;
      if (!file?.startsWith("src/")) continue;
      if (!declarations.has(file)) declarations.set(file, declarationsOf(file));
      const holder = declarations.get(file).find(([start, end]) => segment[2] >= start && segment[2] <= end);
      const declaration = holder ? holder[2] : "(glue)";
      const key = `${file} ${declaration}`;
      if (!index.has(key)) index.set(key, rows.push({ file, declaration, bytes: 0, strings: 0 }) - 1);
      const row = rows[index.get(key)];
      const from = lineStart + segment[0];
      const to = lineStart + (segments[i + 1]?.[0] ?? generated[g].length);
      owner.fill(index.get(key), from, to);
      row.bytes += to - from;
      for (let c = from; c < to; c++) row.strings += inString[c];
    }
    lineStart += (generated[g]?.length ?? 0) + 1;
  }
  const gzipWithout = (test, { stringsOnly = false } = {}) => {
    const picked = rows.map(test);
    let kept = "";
    let run = 0;
    for (let c = 0; c <= output.length; c++) {
      const drop = c < output.length && owner[c] >= 0 && picked[owner[c]] && (!stringsOnly || inString[c]);
      if (drop || c === output.length) {
        kept += output.slice(run, c);
        run = c + 1;
      }
    }
    return sizes(Buffer.from(kept)).gzip;
  };
  return { gzip: sizes(Buffer.from(output)).gzip, rows: [...rows].sort((a, b) => b.bytes - a.bytes), gzipWithout };
}
