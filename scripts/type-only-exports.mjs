// After tsup: each entry's declarations export as values only what its module exports at run time.
// rollup-plugin-dts (tsup's declaration bundler) drops `type` from re-exports, so a class every entry
// names as a type (the error classes: `export type * from "../entries/types"`) would type-check as a
// value that is not there at run time. Here every name a declaration file exports that its module
// (dist/<entry>.js) does not is marked `type`, in the .d.ts and the .d.cts alike.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));
const EXPORT_LIST = /export\s*(type\s*)?\{([^}]*)\}/g;

/** The names a module's export lists give (`a as b` gives b). */
function exportedNames(code) {
  if (/^export\s*\*/m.test(code)) throw new Error("type-only-exports: an `export *` in a module cannot be read");
  const names = new Set();
  for (const [, typeOnly, list] of code.matchAll(EXPORT_LIST)) {
    if (typeOnly) continue;
    for (const spec of list
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean))
      names.add(spec.split(/\s+as\s+/).at(-1));
  }
  return names;
}

let changed = 0;
for (const file of readdirSync(dist)) {
  const entry = /^([a-z-]+)\.js$/.exec(file)?.[1];
  if (!entry) continue;
  const values = exportedNames(readFileSync(`${dist}${file}`, "utf8"));
  for (const declarations of [`${entry}.d.ts`, `${entry}.d.cts`]) {
    const path = `${dist}${declarations}`;
    if (!existsSync(path)) continue;
    const before = readFileSync(path, "utf8");
    const after = before.replace(EXPORT_LIST, (whole, typeOnly, list) => {
      if (typeOnly) return whole;
      const specs = list
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      const marked = specs.map((spec) =>
        spec.startsWith("type ") || values.has(spec.split(/\s+as\s+/).at(-1)) ? spec : `type ${spec}`,
      );
      return `export { ${marked.join(", ")} }`;
    });
    if (after !== before) writeFileSync(path, after), changed++;
  }
}
if (!process.argv.includes("--silent")) console.log(`type-only-exports: ${changed} declaration files marked`);
