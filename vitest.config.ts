import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: "main", include: ["test/**/*.test.ts"], exclude: ["test/compat/**"] } },
      {
        // x402-pay/svm against @solana/kit 5 (installed as @solana/kit-v5): every "@solana/kit"
        // import, ours and the test's, resolves to it.
        extends: true,
        resolve: { alias: [{ find: /^@solana\/kit$/, replacement: "@solana/kit-v5" }] },
        test: { name: "kit-5", include: ["test/compat/kit5.test.ts"] },
      },
    ],
  },
});
