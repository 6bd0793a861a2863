import { build } from "esbuild";
const root = process.argv[2];
const contents = process.argv[3];
const result = await build({
  stdin: { contents, resolveDir: root, loader: "js" },
  bundle: true,
  minify: true,
  treeShaking: true,
  platform: "browser",
  format: "esm",
  target: "es2022",
  define: { "process.env.NODE_ENV": '"production"' },
  write: false,
  logLevel: "silent",
  metafile: true,
});
const out = Object.values(result.metafile.outputs)[0];
const rows = Object.entries(out.inputs)
  .map(([f, v]) => [f.replace(/.*node_modules\//, "nm/"), v.bytesInOutput])
  .sort((a, b) => b[1] - a[1]);
let ours = 0,
  other = 0;
for (const [f, b] of rows) f.startsWith("dist/") || f.startsWith("src/") ? (ours += b) : (other += b);
console.log("ours(min)", ours, "other(min)", other);
for (const [f, b] of rows.filter(([f]) => f.startsWith("src/"))) console.log(String(b).padStart(7), f);
