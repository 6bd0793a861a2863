// The published shape: every subpath export loads from dist in ESM and CommonJS, and an error
// thrown by one entry is recognised by another (shared chunks, brand check across copies).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { distProgram, problemsOf } from "../support/dist-types";

const root = fileURLToPath(new URL("../../", import.meta.url));
const subpaths = [
  "x402-pay",
  "x402-pay/fetch",
  "x402-pay/axios",
  "x402-pay/evm",
  "x402-pay/svm",
  "x402-pay/offers",
  "x402-pay/schemas",
  "x402-pay/file",
  "x402-pay/redis",
  "x402-pay/mcp",
  "x402-pay/discovery",
  "x402-pay/errors",
  "x402-pay/protocol",
  "x402-pay/ai-sdk",
  "x402-pay/langchain",
  "x402-pay/openai-agents",
];
/** x402-pay/openai-agents loads `@openai/agents`, which needs Node 22: the runtime matrix loads it both ways there. */
const loadable = subpaths.filter((subpath) => subpath !== "x402-pay/openai-agents");
const run = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: "utf8" }).trim();

describe("package exports (dist, built by npm test)", () => {
  beforeAll(() => {
    if (!existsSync(`${root}dist/index.js`)) throw new Error("dist/ is missing: run `npm run build` (npm test does).");
  });

  it.each(loadable)("%s loads with require and import", (subpath) => {
    const cjs = run(["-e", `console.log(Object.keys(require(${JSON.stringify(subpath)})).sort().join(","))`]);
    const esm = run([
      "--input-type=module",
      "-e",
      `const m = await import(${JSON.stringify(subpath)}); console.log(Object.keys(m).sort().join(","))`,
    ]);
    expect(cjs.length).toBeGreaterThan(0);
    expect(cjs).toBe(esm);
  });

  /** The packages a dist file loads, itself and through the chunks it loads; `seen` collects those files. */
  const packagesOf = (file: string, seen = new Set<string>()): Set<string> => {
    const found = new Set<string>();
    if (seen.has(file)) return found;
    seen.add(file);
    const code = readFileSync(`${root}dist/${file}`, "utf8");
    for (const [, spec] of code.matchAll(/(?:\bfrom\s*|\brequire\(|\bimport\s*)['"]([^'"]+)['"]/g)) {
      // A chunk, relative to the file that loads it (the command's chunks are in dist/cli/).
      const relative = /^\.\.?\//.test(spec!);
      if (relative) for (const p of packagesOf(posix.join(posix.dirname(file), spec!), seen)) found.add(p);
      else found.add(spec!);
    }
    return found;
  };

  it("the x402-pay command: package.json's bin runs dist/cli.js, an executable Node script, and the MCP SDK stays an optional peer", () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
    expect(pkg.bin).toEqual({ "x402-pay": "dist/cli.js" });
    expect(readFileSync(`${root}dist/cli.js`, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(statSync(`${root}dist/cli.js`).mode & 0o111).not.toBe(0);
    expect(run(["dist/cli.js", "--help"])).toMatch(/^Usage: x402-pay \[options\] \[command\] <url>/);
    expect(pkg.dependencies.commander).toBeDefined();
    expect(pkg.peerDependenciesMeta["@modelcontextprotocol/sdk"]).toEqual({ optional: true });
    expect([...packagesOf("mcp.js")].filter((p) => p.startsWith("@modelcontextprotocol"))).toEqual([]);
  });

  it("no entry (nor the command) loads an optional peer it does not need: viem, @solana/kit, axios, redis, MCP, agent frameworks", () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
    const optional = Object.keys(pkg.peerDependenciesMeta).filter((name) => pkg.peerDependenciesMeta[name].optional);
    expect(optional.sort()).toEqual([
      "@langchain/core",
      "@langchain/langgraph",
      "@modelcontextprotocol/sdk",
      "@openai/agents",
      "@solana/kit",
      "ai",
      "axios",
      "redis",
      "viem",
    ]);
    // The peers an entry is for; every other entry loads none at the top (a dynamic import() is not followed).
    const needs: Record<string, string[]> = {
      "./axios": ["axios"],
      "./svm": ["@solana/kit"],
      "./langchain": ["@langchain/core"],
      "./openai-agents": ["@openai/agents"],
    };
    const files: [string, string][] = [["x402-pay (bin)", "cli.js"]];
    type Target = { import: { default: string }; require: { default: string } };
    for (const [subpath, target] of Object.entries(pkg.exports as Record<string, Target>)) {
      if (subpath === "./package.json") continue;
      for (const form of [target.import, target.require]) files.push([subpath, form.default.replace("./dist/", "")]);
    }
    expect(files.length).toBe(1 + 2 * subpaths.length);
    const nameOf = (spec: string) =>
      spec
        .split("/")
        .slice(0, spec.startsWith("@") ? 2 : 1)
        .join("/");
    for (const [subpath, file] of files) {
      const peers = [...new Set([...packagesOf(file)].map(nameOf).filter((name) => optional.includes(name)))].sort();
      expect(peers, `dist/${file}`).toEqual(needs[subpath] ?? []);
    }
  });

  it("only x402-pay/schemas loads zod: no other entry imports it, nor a chunk it loads (the wrappers validate with generated code)", () => {
    for (const entry of ["index", "fetch", "axios", "evm", "svm", "mcp", "discovery"]) {
      for (const ext of ["js", "cjs"])
        expect(
          [...packagesOf(`${entry}.${ext}`)].filter((p) => p.startsWith("zod")),
          `dist/${entry}.${ext}`,
        ).toEqual([]);
    }
    expect(packagesOf("schemas.js")).toContain("zod/mini");
    expect(packagesOf("schemas.cjs")).toContain("zod/mini");
    // The agent tools describe their input to the model with a zod/mini schema (the frameworks read zod).
    expect(packagesOf("ai-sdk.js")).toContain("zod/mini");
    expect(packagesOf("langchain.js")).toContain("zod/mini");
    expect(packagesOf("openai-agents.js")).toContain("zod/mini");
  });

  it("x402-pay/redis stays in its entry: no other entry loads its code, and it imports no Redis client (it is given one)", () => {
    for (const entry of ["index", "fetch", "axios", "evm", "svm", "offers", "schemas"]) {
      for (const ext of ["js", "cjs"]) {
        const files = new Set<string>();
        packagesOf(`${entry}.${ext}`, files);
        expect(
          [...files].filter((file) => readFileSync(`${root}dist/${file}`, "utf8").includes("// src/redis/")),
          `dist/${entry}.${ext}`,
        ).toEqual([]);
      }
    }
    for (const ext of ["js", "cjs"]) {
      expect([...packagesOf(`redis.${ext}`)].filter((p) => /^(redis|@redis\/|ioredis)/.test(p))).toEqual([]);
      expect(readFileSync(`${root}dist/redis.${ext}`, "utf8")).toContain("// src/redis/budget.ts");
    }
  });

  it("errors from one entry are X402Errors to another, in both formats", () => {
    const script = (load: string) => `
      ${load}
      try { evm.exactEvm({ signer: {} }); } catch (e) { console.log(root.isX402Error(e), e instanceof root.X402Error, e.code); }`;
    expect(run(["-e", script(`const root = require("x402-pay"); const evm = require("x402-pay/evm");`)])).toBe(
      "true true INVALID_CONFIG",
    );
    expect(
      run([
        "--input-type=module",
        "-e",
        script(`const root = await import("x402-pay"); const evm = await import("x402-pay/evm");`),
      ]),
    ).toBe("true true INVALID_CONFIG");
  });
});

/**
 * Whether Node `version` (x.y.z) is in the npm `engines` range: the forms package-lock.json holds
 * (`>=`, `>`, `<=`, `<`, `^`, `~`, bare and x-ranges, spaces for "and", `||` for "or").
 */
function nodeSatisfies(version: string, range: string): boolean {
  const have = version.replace(/^v/, "").split(".").map(Number);
  const compare = (want: number[]) => {
    for (let i = 0; i < 3; i++) if (have[i] !== (want[i] ?? 0)) return have[i]! - (want[i] ?? 0);
    return 0;
  };
  const test = (comparator: string): boolean => {
    const [, op = "", raw = "*"] = /^(>=|<=|>|<|=|\^|~)?v?(.*)$/.exec(comparator)!;
    const parts = raw
      .split(".")
      .filter((part) => part !== "x" && part !== "X" && part !== "*")
      .map(Number);
    if (parts.length === 0) return true;
    const at = compare(parts);
    const samePrefix = (length: number) => have.slice(0, length).every((n, i) => n === parts[i]);
    if (op === ">=") return at >= 0;
    if (op === ">") return at > 0;
    if (op === "<=") return at <= 0 || (parts.length < 3 && samePrefix(parts.length));
    if (op === "<") return at < 0;
    // ^ keeps the major (of a 1.0.0 or later version), ~ the minor, a bare partial version its parts.
    if (op === "^") return at >= 0 && samePrefix(1);
    if (op === "~") return at >= 0 && samePrefix(Math.min(2, parts.length));
    return samePrefix(parts.length);
  };
  const sets = range.split("||").map((set) =>
    set
      .trim()
      .replace(/([<>=^~]+)\s+/g, "$1")
      .split(/\s+/),
  );
  return sets.some((set) => set.every(test));
}

interface LockEntry {
  dev?: boolean;
  devOptional?: boolean;
  os?: string[];
  cpu?: string[];
  engines?: { node?: string };
}

describe("engines: the Node versions package.json claims", () => {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
  const lock = JSON.parse(readFileSync(`${root}package-lock.json`, "utf8")) as { packages: Record<string, LockEntry> };
  /** The entries whose engines refuse Node `version`, with their range. */
  const refusing = (entries: [string, LockEntry][], version: string) =>
    entries
      .filter(([, entry]) => entry.engines?.node && !nodeSatisfies(version, entry.engines.node))
      .map(([path, entry]) => `${path} ${entry.engines!.node}`);

  it("reads the ranges the lockfile holds", () => {
    const cases: [string, string, boolean][] = [
      ["20.0.0", ">=20", true],
      ["20.20.2", ">=22.12.0", false],
      ["20.20.2", ">= 20.0.0", true],
      ["20.17.0", ">=20.18.0", false],
      ["20.20.2", "^20.19.0 || >=22.12.0", true],
      ["21.0.0", "^20.19.0 || >=22.12.0", false],
      ["20.20.2", "18 || 20 || >=22", true],
      ["21.1.0", "20 || >=22", false],
      ["20.20.2", "6.* || 8.* || >= 10.*", true],
      ["20.0.0", "^14.21.3 || >=16", true],
      ["20.20.2", "*", true],
      ["0.7.1", ">=0.6.11 <=0.7.0 || >=0.7.3", false],
      ["20.20.2", "~20.20.0", true],
      ["20.21.0", "~20.20.0", false],
    ];
    const read = cases.map(([version, range]) => nodeSatisfies(version, range));
    expect(read).toEqual(cases.map(([, , expected]) => expected));
  });

  it(`what a user installs with x402-pay runs on the oldest Node "engines" allows (${pkg.engines.node})`, () => {
    const oldest = [...pkg.engines.node.replace(/^>=\s*/, "").split("."), "0", "0"].slice(0, 3).join(".");
    const installed = Object.entries(lock.packages).filter(
      ([path, entry]) => path.startsWith("node_modules/") && !entry.dev && !entry.devOptional,
    );
    const dependencies = Object.keys(pkg.dependencies).map((name) => `node_modules/${name}`);
    expect(installed.map(([path]) => path).sort()).toEqual(dependencies.sort());
    expect(refusing(installed, oldest)).toEqual([]);
  });

  it(`npm install of this repository prints no EBADENGINE on this Node (${process.version})`, () => {
    // Packages for another platform are not installed here (nor checked).
    const here = (list: string[] | undefined, value: string) =>
      !list || list.includes(value) || (list.every((v) => v.startsWith("!")) && !list.includes(`!${value}`));
    const installedHere = Object.entries(lock.packages).filter(
      ([path, entry]) => path && here(entry.os, process.platform) && here(entry.cpu, process.arch),
    );
    expect(refusing(installedHere, process.version)).toEqual([]);
  });
});

/**
 * A browser app's type check of the published declarations: no Node types (`"types": []`), library
 * files checked (`"skipLibCheck": false`), `exactOptionalPropertyTypes` on. The app switches on
 * error codes, which must narrow `details`.
 */
const app = `
import { budget, builderCode, createX402Client, isX402Error, getPaymentReceipt, resendPayment, signInWithX, type X402Plugin } from "x402-pay";
import type { PaymentOutcomeUnknownError } from "x402-pay/errors";
import { exactEvm } from "x402-pay/evm";
import { exactSvm } from "x402-pay/svm";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { wrapAxiosWithPayment } from "x402-pay/axios";
import { PaymentRequiredV2Schema, SettleResponseSchema, SignInWithXPayloadSchema, type PaymentRequiredV2, type SettleResponse, type SignInWithXPayload } from "x402-pay/schemas";
import { redisBudgetStore, redisLedger, redisSignInStore, type RedisClientLike } from "x402-pay/redis";

declare const signer: { address: \`0x\${string}\`; signTypedData(request: never): Promise<\`0x\${string}\`> };
const extension: X402Plugin = { key: "payment-identifier", enrichPayload: () => ({ info: { id: "pay_0123456789abcdef" } }) };
declare const messageSigner: { address: \`0x\${string}\`; signMessage(request: { message: string }): Promise<\`0x\${string}\`> };
declare const kitSigner: { address: string; signMessages(messages: readonly { content: Uint8Array; signatures: Readonly<Record<string, Uint8Array>> }[]): Promise<readonly Readonly<Record<string, Uint8Array>>[]> };
declare const maybe: { policy?: { origins?: string[] }; hook?: () => boolean; store?: { get(key: string): Promise<string | null>; set(key: string, value: string): Promise<unknown> } };
// Options read from elsewhere may be undefined: under exactOptionalPropertyTypes that must still type-check.
const client = createX402Client({
  schemes: [exactEvm({ signer, networks: undefined })],
  plugins: [extension, builderCode(["bc_my_agent"]), signInWithX({ evm: messageSigner, solana: kitSigner, store: maybe.store })],
  policy: { maxAmountPerPayment: "$0.10", origins: maybe.policy?.origins },
  onBeforePayment: maybe.hook,
});
export const paidFetch = wrapFetchWithPayment(fetch, client);
// A fleet's budget, ledger and sign-in memory in Redis.
declare const redis: RedisClientLike;
export const fleet = createX402Client({
  schemes: [exactEvm({ signer })],
  plugins: [
    budget({ limit: "$5", per: "day", scope: "origin", store: redisBudgetStore(redis, { prefix: "agents:", timeoutMs: 500 }) }),
    redisLedger(redis, { key: "agents:ledger" }),
    signInWithX({ evm: messageSigner, store: redisSignInStore(redis, { ttlSeconds: 86_400 }) }),
  ],
});
export { exactSvm, wrapAxiosWithPayment, getPaymentReceipt };
// Per-request options: fetch's init and axios's config both take x402, and a paying fetch is still a fetch.
declare const unknown: PaymentOutcomeUnknownError;
declare const api: import("axios").AxiosInstance;
export const plainFetch: typeof fetch = paidFetch;
export const calls = [
  paidFetch("https://api.example/a", { method: "POST", body: "{}", x402: { paymentId: "order_0000000000000001" } }),
  paidFetch("https://api.example/a", { x402: resendPayment(unknown) }),
  api.post("https://api.example/a", {}, { x402: { paymentId: "order_0000000000000001" } }),
  api.get("https://api.example/a", { x402: { ...resendPayment(unknown), paymentId: undefined } }),
];

// The exported schemas parse to the exported types.
export function readChallenge(value: unknown): PaymentRequiredV2 | undefined {
  const parsed = PaymentRequiredV2Schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
export const settled = (s: SettleResponse | undefined): boolean => s?.success === true && SettleResponseSchema.safeParse(s).success;
export function readProof(value: unknown): SignInWithXPayload | undefined {
  const parsed = SignInWithXPayloadSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export function explain(error: unknown): string {
  if (!isX402Error(error)) return "not ours";
  switch (error.code) {
    case "PAYMENT_REJECTED":
      return error.reason + error.details.reason + error.details.status;
    case "NO_PAYABLE_REQUIREMENT":
      return error.details.rejected.map((r) => r.reason).join();
    case "PAYMENT_OUTCOME_UNKNOWN":
      return error.details.paymentHeader.value + (error.details.receipt?.status ?? "");
    case "RPC_FAILED":
      return error.details.rpcMethod + (error.details.rpcUrl ?? "");
    case "SIGN_IN_REFUSED":
      return error.details.reason;
    case "INVALID_CONFIG":
      return error.details.option ?? error.shortMessage;
    case "PAYMENT_ID_CONFLICT":
      return error.details.paymentId + error.details.status + error.details.paymentHeader.name;
    case "PAYMENT_PENDING":
      return error.details.transaction + error.details.network;
    default:
      return error.code + error.phase;
  }
}
`;

describe("type declarations (dist)", () => {
  it("compile in a browser project with no Node types, library checking on and exactOptionalPropertyTypes; codes narrow details", () => {
    const dir = `${root}node_modules/.cache/x402-pay-dts-check/`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}app.ts`, app);
    const program = distProgram([`${dir}app.ts`], {
      types: [],
      strict: true,
      skipLibCheck: false,
      exactOptionalPropertyTypes: true,
    });
    const problems = problemsOf(program);
    expect(problems).toEqual([]);
  }, 60_000);
});
