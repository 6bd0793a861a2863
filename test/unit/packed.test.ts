// The package as npm publishes it. `npm pack` runs in a clean copy of this checkout (its files, tracked
// or new, without what git ignores: no dist/, as in a fresh clone), so the tarball holds only what
// `prepack` builds. The tarball then installs into a fresh project and every entry loads there, with
// and without the optional peers. Slow (a whole build, declarations included).
import { execFile } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANVIL_TEST_KEYS } from "../localnet/accounts.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
/** The peer each entry loads at once, if any; every other entry must load with no peer installed. */
const PEER_OF: Record<string, string> = {
  "x402-pay/axios": "axios",
  "x402-pay/svm": "@solana/kit",
  "x402-pay/offers": "viem",
  "x402-pay/langchain": "@langchain/core",
  "x402-pay/openai-agents": "@openai/agents",
};
/** Peers installed for the second round, at the versions this checkout has (so npm's cache has them). */
const PEERS = ["viem", "axios", "@solana/kit", "@langchain/core"];
/**
 * Entries whose peer cannot be installed on this Node (@openai/agents needs 22): the second round leaves them out;
 * the runtime matrix installs the peer and loads them on Node 22.
 */
const NODE22_ONLY = ["x402-pay/openai-agents"];
/** What a package may hold besides dist/ and src/ (the sources its source maps name). */
const TOP_FILES = ["package.json", "README.md", "LICENSE"];

interface Packed {
  filename: string;
  files: { path: string; mode: number }[];
}
type Loaded = Record<string, string[] | { error: string; message: string }>;

const sh = (command: string, args: string[], cwd: string) =>
  promisify(execFile)(command, args, {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    shell: process.platform === "win32",
    env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" },
  });

let work: string;
let clone: string;
let app: string;
let pack: Packed;
/** The installed package: exactly the tarball's files. */
let installed: string;
let manifest: {
  exports: Record<string, unknown>;
  main: string;
  module: string;
  types: string;
  bin: Record<string, string>;
  scripts?: Record<string, string>;
};

/** Every file under `dir`, as paths relative to it with forward slashes. */
function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path, base) : [relative(base, path).split("\\").join("/")];
  });
}

/** The string leaves of an `exports` value: every file it points at. */
const targets = (value: unknown): string[] =>
  typeof value === "string" ? [value] : value && typeof value === "object" ? Object.values(value).flatMap(targets) : [];

const subpaths = () =>
  Object.keys(manifest.exports)
    .filter((key) => key !== "./package.json")
    .map((key) => posix.join("x402-pay", key));

/** Loads each entry in a child node of the app, with `require` or `import()`: its export names, or the error. */
async function load(format: "cjs" | "esm", names: string[]): Promise<Loaded> {
  const script = join(app, format === "cjs" ? "load.cjs" : "load.mjs");
  const { stdout } = await sh(process.execPath, [script, ...names], app);
  return JSON.parse(stdout);
}

/** The loader scripts: each name's export names, or the error's code and message. */
const loader = (load: string) => `
const out = {};
for (const name of process.argv.slice(2)) {
  try {
    out[name] = Object.keys(${load}).sort();
  } catch (e) {
    out[name] = { error: e.code ?? e.name, message: e.message };
  }
}
console.log(JSON.stringify(out));`;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "x402-pay-pack-"));
  clone = join(work, "clone");
  const { stdout: listed } = await sh("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root);
  for (const file of listed.split("\0").filter(Boolean)) {
    if (!existsSync(join(root, file))) continue; // deleted in the working tree
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    copyFileSync(join(root, file), join(clone, file));
  }
  expect(existsSync(join(clone, "dist"))).toBe(false);
  symlinkSync(join(root, "node_modules"), join(clone, "node_modules"), "junction");
  const { stdout } = await sh("npm", ["pack", "--json", "--pack-destination", work], clone);
  pack = JSON.parse(stdout.slice(stdout.indexOf("[")))[0];

  app = join(work, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "packed-app", version: "1.0.0", private: true }));
  writeFileSync(join(app, "load.cjs"), loader("require(name)"));
  writeFileSync(join(app, "load.mjs"), loader("await import(name)"));
  await sh("npm", ["install", join(work, pack.filename), "--prefer-offline", "--loglevel=error"], app);
  installed = join(app, "node_modules", "x402-pay");
  manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("npm pack (prepack builds dist/ in a clean copy)", () => {
  it("holds package.json, README.md, LICENSE, dist/ and src/ (the source maps' sources), nothing else", () => {
    const paths = pack.files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(TOP_FILES));
    expect(paths.filter((path) => !/^(dist|src)\//.test(path) && !TOP_FILES.includes(path))).toEqual([]);
    const tests = /\.(test|spec)\.[cm]?[jt]sx?$|(^|\/)(test|tests|__tests__|fixtures|localnet|examples)\//;
    expect(paths.filter((path) => tests.test(path))).toEqual([]);
    expect(paths.filter((path) => /(^|\/)(\.env|\.npmrc)|\.(pem|key|p12)$/.test(path))).toEqual([]);
    // What npm installs is what was packed.
    expect(walk(installed).sort()).toEqual([...paths].sort());
    // Nothing runs when a user installs it (npm 11 asks users to approve a dependency's install scripts).
    const scripts = Object.keys(manifest.scripts ?? {});
    expect(scripts.filter((name) => /^(pre|post)?install$|^prepare$/.test(name))).toEqual([]);
  });

  it("has a built file for every path the manifest names: each export's conditions, main, module, types, bin", () => {
    const paths = new Set(pack.files.map((file) => file.path));
    const { main, module, types } = manifest;
    const named = [...targets(manifest.exports), main, module, types, ...Object.values(manifest.bin)];
    const missing = named.map(posix.normalize).filter((path) => path !== "package.json" && !paths.has(path));
    expect(missing).toEqual([]);
    expect(subpaths().length).toBeGreaterThan(10);
    const bin = pack.files.find((file) => file.path === posix.normalize(manifest.bin["x402-pay"]!));
    expect(bin!.mode & 0o111).not.toBe(0);
  });

  it("names no path of the machine it was built on, holds no key, and its source maps point at packed sources", () => {
    const leaks: string[] = [];
    const machinePaths = [root, clone, work].flatMap((path) => [path, path.replace(/[\\/]+$/, "")]);
    const keys = [...ANVIL_TEST_KEYS.map((key) => key.slice(2)), "PRIVATE KEY-----"];
    for (const path of walk(installed)) {
      const text = readFileSync(join(installed, path), "utf8");
      if (machinePaths.some((needle) => text.includes(needle))) leaks.push(`${path}: a path of this machine`);
      if (keys.some((needle) => text.includes(needle))) leaks.push(`${path}: key material`);
      if (!path.endsWith(".map")) continue;
      const map = JSON.parse(text) as { sources: string[]; sourceRoot?: string };
      expect(map.sourceRoot ?? "", path).toBe("");
      for (const source of map.sources) {
        if (isAbsolute(source) || /^[a-z]+:/i.test(source)) leaks.push(`${path}: absolute source ${source}`);
        else if (!existsSync(join(installed, dirname(path), source))) leaks.push(`${path}: ${source} is not packed`);
      }
    }
    expect(leaks).toEqual([]);
    expect(walk(installed).filter((path) => path.endsWith(".map")).length).toBeGreaterThan(10);
  });
});

describe("the tarball installed in a fresh project", () => {
  it("with no optional peer: each entry loads with require and import(), or fails only for its one peer", async () => {
    const [cjs, esm] = await Promise.all([load("cjs", subpaths()), load("esm", subpaths())]);
    for (const name of subpaths()) {
      const peer = PEER_OF[name];
      for (const loaded of [cjs[name], esm[name]]) {
        if (peer && !Array.isArray(loaded)) {
          expect(["MODULE_NOT_FOUND", "ERR_MODULE_NOT_FOUND"], name).toContain(loaded!.error);
          expect(loaded!.message, name).toContain(`'${peer}`);
        } else {
          expect(loaded, name).toEqual(expect.any(Array));
        }
      }
      if (Array.isArray(cjs[name]) && Array.isArray(esm[name])) expect(cjs[name], name).toEqual(esm[name]);
    }
  }, 60_000);

  it("with viem, axios, @solana/kit and @langchain/core: every entry loads, types resolve, in both formats; the CLI runs", async () => {
    const version = (peer: string): string =>
      JSON.parse(readFileSync(join(root, "node_modules", peer, "package.json"), "utf8")).version;
    const peers = PEERS.map((peer) => `${peer}@${version(peer)}`);
    await sh("npm", ["install", ...peers, "--prefer-offline", "--loglevel=error"], app);
    const loadable = subpaths().filter((name) => !NODE22_ONLY.includes(name));
    const [cjs, esm] = await Promise.all([load("cjs", loadable), load("esm", loadable)]);
    for (const name of loadable) {
      expect(cjs[name], name).toEqual(expect.any(Array));
      expect((cjs[name] as string[]).length, name).toBeGreaterThan(0);
      expect(esm[name], name).toEqual(cjs[name]);
    }

    const options = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
    const modes = [
      [ts.ModuleKind.ESNext, "app.mts", ".d.ts"],
      [ts.ModuleKind.CommonJS, "app.cts", ".d.cts"],
    ] as const;
    for (const name of subpaths()) {
      for (const [mode, file, ext] of modes) {
        const from = join(app, file);
        const resolved = ts.resolveModuleName(name, from, options, ts.sys, undefined, undefined, mode).resolvedModule;
        expect(resolved?.resolvedFileName.startsWith(join(installed, "dist")), `${name} from ${file}`).toBe(true);
        expect(resolved?.resolvedFileName.endsWith(ext), `${name} from ${file}`).toBe(true);
      }
    }

    const { stdout } = await sh(join(app, "node_modules", ".bin", "x402-pay"), ["--help"], app);
    expect(stdout).toMatch(/^Usage: x402-pay \[options\] \[command\] <url>/);
  }, 120_000);

  // TypeScript's `node` resolution (node10, the default of `module: "commonjs"`) reads no `exports`: the subpaths
  // resolve through `typesVersions` (as viem's do). A consumer importing every entry compiles under it, and under
  // node16 and bundler, which read `exports`.
  it.each([
    ["node10", "app.ts", ts.ModuleKind.CommonJS, ts.ModuleResolutionKind.Node10],
    ["node16", "app.cts", ts.ModuleKind.Node16, ts.ModuleResolutionKind.Node16],
    ["node16", "app.mts", ts.ModuleKind.Node16, ts.ModuleResolutionKind.Node16],
    ["bundler", "app.ts", ts.ModuleKind.ESNext, ts.ModuleResolutionKind.Bundler],
  ])("a consumer importing every entry compiles with moduleResolution %s (%s)", (_, name, module, moduleResolution) => {
    const dir = join(app, `tsc-${moduleResolution}-${name.replace(".", "-")}`);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, name);
    const entries = subpaths();
    const imports = entries.map((entry, i) => `import * as e${i} from "${entry}";`);
    // Each entry's first export, typed from its declarations: an entry TypeScript could not find is an error.
    const uses = entries.map((_, i) => `export const k${i}: string[] = Object.keys(e${i});`);
    writeFileSync(
      file,
      [...imports, ...uses, `export type Client = ReturnType<typeof e0.createX402Client>;`].join("\n"),
    );
    const program = ts.createProgram([file], {
      module,
      moduleResolution,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
      types: [],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      noImplicitAny: true,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) => `${d.file?.fileName.replace(app, "") ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
      );
    expect(problems).toEqual([]);
    for (const entry of entries) {
      const resolved = ts.resolveModuleName(entry, file, { module, moduleResolution }, ts.sys).resolvedModule;
      expect(resolved?.resolvedFileName.startsWith(join(installed, "dist")), entry).toBe(true);
    }
  });
});
