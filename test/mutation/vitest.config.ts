// Vitest config for mutation testing only (test/mutation/stryker.config.mjs points at it; `npm test` does not
// use it). Paths are relative to the repository's root, set below.
// One project with the fast, in-process tests: test/unit (pure units) and test/http (msw-mocked
// HTTP). Left out: test/interop (anvil, reference facilitator, child processes), test/browser
// (Chromium), test/compat (the @solana/kit 5 alias project), and three unit files that check the
// build rather than the code: package.test.ts loads dist/ in child processes,
// browser-safety.test.ts bundles the entries with esbuild, and api-report.test.ts compares dist's
// declarations (dist is not copied to the sandbox); none runs the source, so none can kill a mutant.
// MUTATION_TESTS (comma-separated globs) narrows the run to the tests that exercise the mutated files, for files
// on the request path that every HTTP test covers (a mutant then costs seconds, not half a minute); a mutant only
// tests outside that list would kill is reported as surviving, so such a score is a lower bound.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    name: "stryker",
    testTimeout: 20_000,
    hookTimeout: 60_000,
    include: process.env.MUTATION_TESTS?.split(",") ?? ["test/unit/**/*.test.ts", "test/http/**/*.test.ts"],
    exclude: [
      "test/unit/package.test.ts",
      "test/unit/browser-safety.test.ts",
      "test/unit/api-report.test.ts",
      "test/http/redis-fleet.test.ts",
    ],
  },
});
