import { defineConfig } from "tsup";

export default defineConfig([
  {
    entry: {
      index: "src/index.ts",
      fetch: "src/fetch/index.ts",
      axios: "src/axios/index.ts",
      evm: "src/evm/index.ts",
      svm: "src/svm/index.ts",
      offers: "src/extensions/offer-receipt/index.ts",
      errors: "src/entries/errors.ts",
      protocol: "src/entries/protocol.ts",
      schemas: "src/schemas/index.ts",
      file: "src/file/index.ts",
      redis: "src/redis/index.ts",
      mcp: "src/mcp/index.ts",
      discovery: "src/discovery/index.ts",
      "ai-sdk": "src/ai-sdk/index.ts",
      langchain: "src/langchain/index.ts",
      "openai-agents": "src/openai-agents/index.ts",
    },
    format: ["esm", "cjs"],
    dts: true,
    // Shared chunks, so the entries share one copy of the errors and the receipts store.
    splitting: true,
    treeshake: true,
    sourcemap: true,
    // dist is emptied by `npm run build`: the two builds below run side by side.
    clean: false,
    target: "es2022",
    platform: "neutral",
    external: ["viem", "axios", "@solana/kit", "ai", /^@langchain\//, "@openai/agents", /^node:/],
  },
  // The command line (`npx x402-pay`): Node only, ESM. What needs an optional peer (the Solana scheme
  // and @solana/kit, viem's accounts) is imported when used, so those modules go to chunks of their
  // own in dist/cli/ and dist/cli.js starts with none of them installed.
  {
    entry: { cli: "src/cli/bin.ts" },
    format: ["esm"],
    platform: "node",
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
    splitting: true,
    esbuildOptions(options) {
      options.chunkNames = "cli/[name]-[hash]";
    },
    sourcemap: true,
    clean: false,
    dts: false,
    external: ["viem", "axios", "@solana/kit", "commander", /^node:/],
  },
]);
