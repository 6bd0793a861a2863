// Bundling a job's code the way a browser app's production build does, and weighing it: minified, then
// gzip -9. Two bundlers: esbuild (platform browser, NODE_ENV=production) and `vite build` (Rolldown and
// its minifier). "x402-pay" resolves to this repository's dist through package.json's exports, so
// `npm run build` comes first.
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { PEERS, capabilities, entries, jobs } from "./jobs.mjs";

export const root = fileURLToPath(new URL("../../", import.meta.url));
export const budgetsFile = fileURLToPath(new URL("./budgets.json", import.meta.url));

// This repository's dev tree holds two generations of @solana/* (the legacy v1 seller used by the
// interop tests brings kit 5 and npm hoists it). A user's app has one: resolve every @solana/*
// import as @solana/kit's own dependencies, as a deduplicated install would.
const kitDir = dirname(createRequire(import.meta.url).resolve("@solana/kit"));
const dedupeSolana = {
  name: "dedupe-solana",
  setup(b) {
    b.onResolve({ filter: /^@solana\// }, (args) =>
      args.pluginData === "deduped"
        ? undefined
        : b.resolve(args.path, { kind: args.kind, resolveDir: kitDir, pluginData: "deduped" }),
    );
  },
};

export const sizes = (bytes) => ({ raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length });

/**
 * esbuild, one output file (a dynamic import() is bundled in). `external` leaves packages out; with
 * `metafile`, the answer has esbuild's metafile: dist's source maps make its inputs the src/ files;
 * with `sourcemap`, the output's text and its source map (through dist's maps to src/).
 */
export async function measureEsbuild(contents, { external = [], metafile = false, sourcemap = false } = {}) {
  const result = await build({
    plugins: [dedupeSolana],
    stdin: { contents, resolveDir: root, loader: "js" },
    absWorkingDir: root,
    bundle: true,
    minify: true,
    treeShaking: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    external,
    // As a production browser build does: selects production-only code paths (kit's short error
    // messages), for ours and the reference alike.
    define: { "process.env.NODE_ENV": '"production"' },
    write: false,
    metafile,
    // Not written: names the output, so that the map's sources are relative to the repository.
    ...(sourcemap && { sourcemap: "external", outfile: `${root}bench-out.js` }),
    logLevel: "silent",
  });
  const js = result.outputFiles.find((f) => !f.path.endsWith(".map"));
  const map = result.outputFiles.find((f) => f.path.endsWith(".map"));
  return {
    ...sizes(js.contents),
    metafile: result.metafile,
    ...(sourcemap && { output: js.text, map: JSON.parse(map.text) }),
  };
}

/** The same code through `vite build` in production mode; @solana/* deduplicated as above. */
export async function measureVite(contents, { external = [] } = {}) {
  const { build: viteBuild } = await import("vite");
  const entry = "\0bench-entry";
  const output = await viteBuild({
    root,
    configFile: false,
    logLevel: "silent",
    mode: "production",
    plugins: [
      {
        name: "bench-entry",
        resolveId: (id) => (id === entry ? id : null),
        load: (id) => (id === entry ? contents : null),
      },
      {
        name: "dedupe-solana",
        enforce: "pre",
        async resolveId(source, _importer, options) {
          if (!source.startsWith("@solana/")) return null;
          // Resolved as if imported by kit's own (existing) entry file, so from kit's dependencies.
          return this.resolve(source, `${kitDir}/index.browser.mjs`, { ...options, skipSelf: true });
        },
      },
    ],
    build: {
      write: false,
      target: "es2022",
      minify: true,
      rollupOptions: { input: entry, external, output: { codeSplitting: false } },
    },
  });
  const chunks = (Array.isArray(output) ? output[0] : output).output.filter((o) => o.type === "chunk");
  return sizes(Buffer.from(chunks.map((c) => c.code).join("\n")));
}

/**
 * What the budgets hold: x402-pay's side of every job and capability row, and each entry alone, with
 * esbuild (gzip bytes). Built side by side: esbuild runs them in its own process.
 */
export async function measureBudgeted() {
  const rows = [
    ...jobs.map((j) => ({ kind: "jobs", id: j.id, contents: j.ours })),
    ...capabilities.map((c) => ({ kind: "jobs", id: `evm + ${c.id}`, contents: c.ours, external: c.external })),
    ...entries.map((e) => ({ kind: "entries", id: e.id, contents: e.contents, external: PEERS })),
  ];
  const measured = await Promise.all(rows.map((r) => measureEsbuild(r.contents, { external: r.external })));
  return rows.map((r, i) => ({ kind: r.kind, id: r.id, gzip: measured[i].gzip }));
}

export const readBudgets = () => JSON.parse(readFileSync(budgetsFile, "utf8"));

/** Budget = the measured size plus the margin, rounded up to 10 bytes. */
export const budgetFor = (gzip, margin) => Math.ceil((gzip * (1 + margin)) / 10) * 10;

export const UPDATE_COMMAND = "npm run bench:size -- --update-budgets";
