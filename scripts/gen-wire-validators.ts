/**
 * Writes src/protocol/validators.generated.ts from the zod/mini schemas of src/protocol/schemas.ts: for each exported
 * schema `XSchema`, a plain function `problemOfX(value)` that returns the sentence zod's first issue makes
 * (`resource.url must not be empty`, the path then the message), or `undefined` when zod accepts. The wrappers validate
 * with these, so zod stays out of their bundles.
 *
 *   npm run gen:validators            (tsx scripts/gen-wire-validators.ts)
 *   npm run gen:validators -- --check  exits 1 if the committed file is stale
 *  It reads each schema's definition (`schema._zod.def`) and knows these constructs only:
 *   string, number, boolean      a type test, then the refinements (`.check(z.refine(fn, msg))`) in order
 *   literal                      of strings, finite numbers, booleans or null
 *   array                        of `z.unknown()` elements (left unchecked: checked elsewhere), or of
 *                                elements of any construct listed here, checked in order (`resources.1 must be a
 *                                string`)
 *   looseObject                  fields in shape order; `unknown` catchall (unknown fields kept)
 *   optional, nullable           around any of the above
 *   union                        of any of the above, each refinement inside it `{ abort: true }`: zod then
 *                                reports the union's own sentence unless an option accepts (a refinement
 *                                that does not abort makes zod report that option's issue instead) Every message must
 *                                be a fixed sentence (a string given to the schema, not zod's default wording), and a
 *                                refinement's function must be one of the predicates listed in RULES, which the
 *                                generated code calls by name. Anything else (another type, another def field, a check
 *                                of another kind, an inline refinement) stops the generator with an error naming the
 *                                schema and the path: a schema change is never silently dropped.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as schemas from "../src/protocol/schemas";
import * as wire from "../src/protocol/wire";

/** The generated file, relative to the repository root. */
export const OUTPUT = "src/protocol/validators.generated.ts";

/**
 * The refinements the generator knows: a check's function, by identity, and the name of the `wire.ts` export the
 * generated code calls.
 */
export const RULES: ReadonlyMap<unknown, string> = new Map<unknown, string>([
  [wire.isNonEmpty, "isNonEmpty"],
  [wire.isAtomicAmount, "isAtomicAmount"],
  [wire.isCaip2, "isCaip2"],
  [wire.isPositiveInteger, "isPositiveInteger"],
  [wire.isPaymentIdText, "isPaymentIdText"],
  [wire.isBuilderCodeText, "isBuilderCodeText"],
]);

/** The `_zod.def` fields each known type may have (fields set to `undefined` do not count). */
const DEF_FIELDS: Record<string, readonly string[]> = {
  string: ["type", "error", "checks"],
  number: ["type", "error", "checks"],
  boolean: ["type", "error", "checks"],
  literal: ["type", "values", "error"],
  array: ["type", "element", "error"],
  object: ["type", "shape", "catchall", "error"],
  optional: ["type", "innerType"],
  nullable: ["type", "innerType"],
  union: ["type", "options", "error"],
  unknown: ["type"],
};

/** The fields of a refinement's definition (`z.refine(fn, "message")`). */
const CHECK_FIELDS = ["type", "check", "fn", "error", "abort"];

interface Def {
  type: string;
  error?: (issue: unknown) => unknown;
  checks?: { _zod: { def: Record<string, unknown> } }[];
  values?: unknown[];
  element?: Schema;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  innerType?: Schema;
  options?: Schema[];
  [key: string]: unknown;
}
interface Schema {
  _zod: { def: Def };
}

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" &&
  value !== null &&
  "_zod" in value &&
  typeof (value as Schema)._zod?.def?.type === "string";

class Unsupported extends Error {
  constructor(where: string, what: string) {
    super(
      `gen-wire-validators: ${where}: ${what}. Teach scripts/gen-wire-validators.ts this construct (and its test), or change the schema.`,
    );
  }
}

/**
 * The code of `validators.generated.ts` for the zod schemas among `exports` (a module namespace: every export that is a
 * zod schema).
 */
export function generateWireValidators(exports: Record<string, unknown> = schemas): string {
  const helpers = new Set<string>(["isObject"]);
  const functions: string[] = [];
  // By name: a module namespace lists its exports in that order under Node, in source order under Vite.
  for (const [name, schema] of Object.entries(exports).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!isSchema(schema)) continue;
    if (!name.endsWith("Schema")) throw new Unsupported(name, "a schema's export name must end in Schema");
    const base = name.slice(0, -"Schema".length);
    const body = new Emitter(name, helpers);
    body.value(schema, "value", []);
    functions.push(
      [
        `/** The first problem of \`value\` against \`${name}\`, as zod's first issue words it (path, then message); \`undefined\` if it conforms. */`,
        `export function problemOf${base}(value: unknown): string | undefined {`,
        ...body.lines,
        "  return undefined;",
        "}",
      ].join("\n"),
    );
  }
  if (functions.length === 0) throw new Unsupported("schemas", "no zod schema exported");
  const used = [...helpers].sort();
  return [
    "// Generated by scripts/gen-wire-validators.ts from the zod/mini schemas of src/protocol/schemas.ts. Do not edit:",
    "// change the schemas, then run `npm run gen:validators`. test/unit/wire-validators.test.ts fails while this file is",
    "// stale and holds every function to its schema's verdict and sentence. Plain code, so the wrappers' bundles carry no zod.",
    `import { ${used.join(", ")} } from "./wire";`,
    "",
    functions.join("\n\n"),
    "",
  ].join("\n");
}

/** Writes the checks of one schema as statements that return the first problem's sentence. */
class Emitter {
  readonly lines: string[] = [];
  private indent = "  ";
  private count = 0;
  /** How many unions the statements being written are inside. */
  private unions = 0;

  constructor(
    private readonly root: string,
    private readonly helpers: Set<string>,
  ) {}

  /** Statements that return the first problem of the value in variable `v` against `schema`, whose path is `path`. */
  value(schema: Schema, v: string, path: string[]): void {
    // optional and nullable wrappers: what they admit skips the inner checks.
    const admitted: string[] = [];
    let inner = this.known(schema, path);
    while (inner.type === "optional" || inner.type === "nullable") {
      const test = inner.type === "optional" ? `${v} !== undefined` : `${v} !== null`;
      if (!admitted.includes(test)) admitted.push(test);
      inner = this.known(inner.innerType!, path);
    }
    if (admitted.length > 0) {
      this.line(`if (${admitted.join(" && ")}) {`);
      this.indent += "  ";
    }
    this.plain(inner, v, path);
    if (admitted.length > 0) {
      this.indent = this.indent.slice(2);
      this.line("}");
    }
  }

  private plain(def: Def, v: string, path: string[]): void {
    const fail = (message: string) => `return ${sentence(path, message)};`;
    switch (def.type) {
      case "string":
      case "boolean":
        this.line(`if (typeof ${v} !== "${def.type}") ${fail(this.message(def, path))}`);
        break;
      case "number":
        // zod refuses NaN and the infinities as numbers.
        this.line(`if (typeof ${v} !== "number" || !Number.isFinite(${v})) ${fail(this.message(def, path))}`);
        break;
      case "literal": {
        const values = def.values ?? [];
        if (values.length === 0) throw new Unsupported(this.where(path), "a literal of no value");
        for (const value of values) {
          const ok =
            typeof value === "string" ||
            typeof value === "boolean" ||
            value === null ||
            (typeof value === "number" && Number.isFinite(value));
          if (!ok)
            throw new Unsupported(
              this.where(path),
              `a literal value ${String(value)} (only strings, finite numbers, booleans, null)`,
            );
        }
        this.line(
          `if (${values.map((value) => `${v} !== ${JSON.stringify(value)}`).join(" && ")}) ${fail(this.message(def, path))}`,
        );
        break;
      }
      case "array": {
        const element = this.known(def.element!, [...path, "[]"]);
        this.line(`if (!Array.isArray(${v})) ${fail(this.message(def, path))}`);
        // z.unknown() elements are left unchecked; any other element is checked in order, as zod does
        // (holes read as undefined), its index in the path.
        if (element.type !== "unknown") {
          const i = `i${++this.count}`;
          const e = `v${++this.count}`;
          this.line(`for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {`);
          this.indent += "  ";
          this.line(`const ${e} = ${v}[${i}];`);
          this.value(def.element!, e, [...path, INDEX + i]);
          this.indent = this.indent.slice(2);
          this.line("}");
        }
        break;
      }
      case "object": {
        const catchall = def.catchall?._zod?.def;
        if (catchall?.type !== "unknown") {
          throw new Unsupported(
            this.where(path),
            `an object whose unknown fields are ${catchall ? `checked as ${catchall.type}` : "stripped"} (only z.looseObject)`,
          );
        }
        this.known(def.catchall!, [...path, "*"]);
        this.line(`if (!isObject(${v})) ${fail(this.message(def, path))}`);
        for (const [key, field] of Object.entries(def.shape ?? {})) {
          if (key === "__proto__") throw new Unsupported(this.where([...path, key]), "a field named __proto__");
          if (optin(field) === undefined && admitsUndefined(field)) {
            throw new Unsupported(
              this.where([...path, key]),
              "a required field that admits undefined (zod then reports a missing key in its own words)",
            );
          }
          const name = `v${++this.count}`;
          this.line(`const ${name} = ${v}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`};`);
          this.value(field, name, [...path, key]);
        }
        break;
      }
      case "union": {
        const options = def.options ?? [];
        if (options.length === 0) throw new Unsupported(this.where(path), "a union of no option");
        const message = this.message(def, path);
        // Each option as a local function giving its first problem: the union fails when every option does.
        const names = options.map((option) => {
          const name = `o${++this.count}`;
          const arg = `v${++this.count}`;
          this.line(`const ${name} = (${arg}: unknown): string | undefined => {`);
          this.indent += "  ";
          this.unions++;
          this.value(option, arg, path);
          this.unions--;
          this.line("return undefined;");
          this.indent = this.indent.slice(2);
          this.line("};");
          return name;
        });
        this.line(`if (${names.map((name) => `${name}(${v}) !== undefined`).join(" && ")}) ${fail(message)}`);
        break;
      }
      case "unknown":
        throw new Unsupported(this.where(path), "z.unknown() outside an array's elements");
      default:
        throw new Unsupported(this.where(path), `type ${def.type}`);
    }
    for (const check of def.checks ?? []) {
      const c = check._zod.def;
      if (c.check !== "custom")
        throw new Unsupported(this.where(path), `a ${String(c.check)} check (only z.refine with a predicate of RULES)`);
      for (const [field, value] of Object.entries(c)) {
        if (value !== undefined && !CHECK_FIELDS.includes(field))
          throw new Unsupported(this.where(path), `a check with ${field}`);
      }
      if (this.unions > 0 && c.abort !== true) {
        throw new Unsupported(
          this.where(path),
          "a refinement inside a union that does not abort (give it { abort: true })",
        );
      }
      const rule = RULES.get(c.fn);
      if (!rule)
        throw new Unsupported(
          this.where(path),
          `a refinement by a function not in RULES: ${String(c.fn).slice(0, 80)}`,
        );
      this.helpers.add(rule);
      this.line(`if (!${rule}(${v})) ${fail(this.message(c as Def, path))}`);
    }
  }

  /** The definition of `schema`, if its type and every field of it are known. */
  private known(schema: Schema, path: string[]): Def {
    if (!isSchema(schema)) throw new Unsupported(this.where(path), "not a zod schema");
    const def = schema._zod.def;
    const fields = DEF_FIELDS[def.type];
    if (!fields) throw new Unsupported(this.where(path), `type ${def.type}`);
    for (const [field, value] of Object.entries(def)) {
      if (value !== undefined && !fields.includes(field))
        throw new Unsupported(this.where(path), `a ${def.type} with ${field}`);
    }
    if ((def.type === "unknown" || def.type === "object" || def.type === "array") && def.checks?.length) {
      throw new Unsupported(this.where(path), `checks on a ${def.type}`);
    }
    return def;
  }

  /** The fixed sentence a definition's error gives, whatever the issue. */
  private message(def: Def, path: string[]): string {
    if (typeof def.error !== "function")
      throw new Unsupported(this.where(path), `a ${def.type} with zod's default message (give it a fixed sentence)`);
    const a = def.error({ code: "invalid_type", expected: def.type, input: undefined, path: [] });
    const b = def.error({ code: "custom", input: 0, path: ["x"] });
    if (typeof a !== "string" || a !== b)
      throw new Unsupported(this.where(path), "a message that is not one fixed sentence");
    return a;
  }

  private where(path: string[]): string {
    const named = path.map((key) => (key.startsWith(INDEX) ? "[]" : key));
    return named.length > 0 ? `${this.root}.${named.join(".")}` : this.root;
  }

  private line(text: string): void {
    this.lines.push(this.indent + text);
  }
}

/** Marks a path segment that is an array index, held at run time by the variable named after the mark. */
const INDEX = "\u0000";

/**
 * The expression of the sentence for `message` at `path`: a string literal, or a concatenation where the path holds
 * array indices.
 */
function sentence(path: string[], message: string): string {
  const parts: string[] = [];
  let text = "";
  path.forEach((key, n) => {
    if (n > 0) text += ".";
    if (key.startsWith(INDEX)) {
      parts.push(JSON.stringify(text), key.slice(INDEX.length));
      text = "";
    } else text += key;
  });
  text += path.length > 0 ? ` ${message}` : message;
  parts.push(JSON.stringify(text));
  return parts.filter((part) => part !== '""').join(" + ");
}

/** zod's optin: a field whose key may be absent. */
function optin(schema: Schema): "optional" | undefined {
  const def = schema._zod.def;
  if (def.type === "optional") return "optional";
  return def.type === "nullable" ? optin(def.innerType!) : undefined;
}

/** Does the schema accept `undefined` as a value? */
function admitsUndefined(schema: Schema): boolean {
  const def = schema._zod.def;
  if (def.type === "optional" || def.type === "unknown") return true;
  if (def.type === "nullable") return admitsUndefined(def.innerType!);
  return def.type === "literal" && (def.values ?? []).includes(undefined);
}

const root = fileURLToPath(new URL("../", import.meta.url));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const code = generateWireValidators();
  const target = `${root}${OUTPUT}`;
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(target, "utf8");
    } catch {}
    if (current !== code) {
      console.error(`${OUTPUT} is stale: run npm run gen:validators`);
      process.exit(1);
    }
  } else {
    writeFileSync(target, code);
    console.log(`wrote ${OUTPUT}`);
  }
}
