#!/usr/bin/env node
// The JavaScript runtimes of the runtime matrix (test/runtimes), installed from npm when missing. test/runtimes runs
// it before its cases (`--json`: the binaries and versions); it also runs alone, to fill the cache ahead of a test run.
//   node20, node22, node24  the npm `node` package (its preinstall fetches node-<platform>-<arch>), aliased
//   bun, deno               their npm packages (a platform sub-package holds the binary)
// They go to a folder of their own (X402_RUNTIMES_DIR, default node_modules/.cache/x402-pay-runtimes), never to the
// project's dependencies: the `node` packages link a `node` binary, which would shadow the Node that runs npm.
// Versions are pinned, so a CI cache of the folder stays valid until they change here. A runtime that does not start
// after the install fails the run.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const RUNTIMES = {
  node20: { spec: "npm:node@20.20.2", bin: ["node20", "bin", "node"] },
  node22: { spec: "npm:node@22.23.3", bin: ["node22", "bin", "node"] },
  node24: { spec: "npm:node@24.21.0", bin: ["node24", "bin", "node"] },
  bun: { spec: "1.4.5", bin: ["bun", "bin", "bun.exe"] },
  deno: { spec: "2.9.6", bin: [".bin", "deno"] },
};

const root = fileURLToPath(new URL("..", import.meta.url));

export function runtimesDir() {
  return resolve(process.env.X402_RUNTIMES_DIR || join(root, "node_modules", ".cache", "x402-pay-runtimes"));
}

function manifest() {
  const dependencies = Object.fromEntries(Object.entries(RUNTIMES).map(([name, { spec }]) => [name, spec]));
  // Their install scripts fetch or place the binaries; npm 11 asks for them to be allowed by name and version.
  const allowScripts = Object.fromEntries(
    Object.entries(dependencies).map(([name, spec]) => [
      spec.startsWith("npm:") ? spec.slice(4) : `${name}@${spec}`,
      true,
    ]),
  );
  const json = { private: true, description: "x402-pay's runtime matrix", dependencies, allowScripts };
  return `${JSON.stringify(json, null, 2)}\n`;
}

function version(bin) {
  try {
    return execFileSync(bin, ["--version"], { encoding: "utf8", timeout: 30_000, stdio: "pipe" }).split("\n")[0];
  } catch {
    return undefined;
  }
}

/** Installs what is missing; returns each runtime's binary and the version it reports. Throws if one cannot start. */
export function ensureRuntimes({ log = () => {} } = {}) {
  const dir = runtimesDir();
  const bins = Object.fromEntries(
    Object.entries(RUNTIMES).map(([name, { bin }]) => [name, join(dir, "node_modules", ...bin)]),
  );
  const current =
    existsSync(join(dir, "package.json")) && readFileSync(join(dir, "package.json"), "utf8") === manifest();
  if (!current || Object.values(bins).some((bin) => !version(bin))) {
    log(`Installing ${Object.keys(RUNTIMES).join(", ")} into ${dir} for the runtime matrix...`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), manifest());
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"], {
      cwd: dir,
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  const found = {};
  for (const [name, bin] of Object.entries(bins)) {
    const reported = version(bin);
    if (!reported)
      throw new Error(
        `The runtime ${name} (${bin}) does not start after its install ` +
          `(npm must run its install script; delete ${dir} to reinstall).`,
      );
    found[name] = { bin, version: reported };
  }
  return found;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const json = process.argv.includes("--json");
    const found = ensureRuntimes({ log: (line) => (json ? console.error : console.log)(line) });
    if (json) console.log(JSON.stringify(found));
    else
      console.log(
        Object.entries(found)
          .map(([name, { version }]) => `${name} ${version}`)
          .join(", "),
      );
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
