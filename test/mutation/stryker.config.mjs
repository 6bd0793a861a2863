// @ts-check
// Mutation testing with StrykerJS (not part of `npm test` or CI): `npm run test:mutation`, run from the
// repository's root (every path below is relative to it).
// One file or folder: `npm run test:mutation -- --mutate src/client/policy.ts`
// (or `--mutate "src/fetch/**/*.ts"`). Runs are incremental: results are kept in
// reports/stryker-incremental.json and only changed code and tests are tested again; add
// `-- --force` to test every mutant anew.
// Reports: reports/mutation/mutation.html and reports/mutation/mutation.json.

/** Folders of src/ to mutate (sign-in, budgets, the ledger, offers and the quote cache are in src/extensions). */
const folders = [
  "protocol",
  "client",
  "handshake",
  "fetch",
  "axios",
  "errors",
  "evm",
  "svm",
  "io",
  "extensions",
  "file",
  "redis",
  "mcp",
  "discovery",
  "agents",
];

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
const config = {
  packageManager: "npm",
  plugins: ["@stryker-mutator/vitest-runner"],
  testRunner: "vitest",
  // vitest does not type-check, so the sandbox's files need no \`// @ts-nocheck\`; left as they are, the
  // up-to-date test of the generated validators compares them byte for byte.
  disableTypeChecks: false,
  // Only the fast, in-process tests (test/unit and test/http): see test/mutation/vitest.config.ts.
  vitest: { configFile: "test/mutation/vitest.config.ts" },
  // The generated validators are not mutated: the up-to-date test would kill every mutant of them.
  // Of the CLI, only its exit codes: the rest runs as the built dist/cli.js in child processes
  // (test/interop/cli.test.ts), which Stryker cannot measure.
  mutate: [
    ...folders.map((folder) => `src/${folder}/**/*.ts`),
    "src/cli/exit.ts",
    "!src/protocol/validators.generated.ts",
  ],
  coverageAnalysis: "perTest",
  incremental: true,
  incrementalFile: "reports/stryker-incremental.json",
  // The machines here have 2 cores: one test-runner worker per core.
  concurrency: 2,
  // Added to each mutant's time limit (Stryker's default: 5 s). The machines are shared: under
  // load a correct but starved test run went past the default and was reported as a timeout
  // (counted as killed). A real endless loop only costs this much longer to detect.
  timeoutMS: 30_000,
  // The first, unmutated run of every test with coverage: under load it went past Stryker's default 5 minutes.
  dryRunTimeoutMinutes: 30,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, logTests: false },
  tempDirName: ".stryker-tmp",
  // Not needed by the tests: keep them out of the sandbox copies.
  ignorePatterns: ["dist", "coverage", "reports", "bench/**/out", "*.log", ".stryker-tmp*"],
};

export default config;
