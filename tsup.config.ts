import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    fetch: "src/fetch/index.ts",
    axios: "src/axios/index.ts",
    evm: "src/evm/index.ts",
    svm: "src/svm/index.ts",
    offers: "src/offers/index.ts",
    schemas: "src/schemas/index.ts",
    file: "src/file/index.ts",
    redis: "src/redis/index.ts",
    mcp: "src/mcp/index.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  // Shared chunks, so the entries share one copy of the errors and the receipts store.
  splitting: true,
  treeshake: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
  platform: "neutral",
  external: ["viem", "axios", "@solana/kit", /^node:/],
});
