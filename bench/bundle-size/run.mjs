// Browser bundle size of the same job done with x402-pay and with the reference @x402 packages, with
// two bundlers: esbuild (platform browser, minified, NODE_ENV=production) and a Vite production build
// (Rolldown and its minifier), each then gzip -9. Run: npm run bench:size (builds dist first). Prints
// a table per bundler and the ratio ours / reference.
//
// The two disagree most about @solana/kit: esbuild keeps kit's table of error messages (its keys are
// computed, which esbuild treats as possible side effects) although production code never reads it;
// Vite drops it. Both sides carry the same kit code, so the table adds the same bytes to both and
// pulls the ratio toward 1; the "added" column (code above the signer alone) leaves it out.
import { build } from "esbuild";
import { build as viteBuild } from "vite";
import { execSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = fileURLToPath(new URL("../../", import.meta.url));

// Each case is the code a user would write for the job, ours and the reference's side by side.
const cases = [
  {
    job: "fetch + EVM exact + viem privateKeyToAccount",
    floor: `import { privateKeyToAccount } from "viem/accounts"; globalThis.a = privateKeyToAccount(globalThis.key);`,
    ours: `
      import { privateKeyToAccount } from "viem/accounts";
      import { createX402Client } from "x402-pay";
      import { exactEvm } from "x402-pay/evm";
      import { wrapFetchWithPayment } from "x402-pay/fetch";
      const signer = privateKeyToAccount(globalThis.key);
      const client = createX402Client({ schemes: [exactEvm({ signer })] });
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
    reference: `
      import { privateKeyToAccount } from "viem/accounts";
      import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
      import { ExactEvmScheme } from "@x402/evm/exact/client";
      const client = new x402Client();
      client.register("eip155:*", new ExactEvmScheme(privateKeyToAccount(globalThis.key)));
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
  },
  {
    job: "fetch + EVM upto + viem privateKeyToAccount",
    floor: `import { privateKeyToAccount } from "viem/accounts"; globalThis.a = privateKeyToAccount(globalThis.key);`,
    ours: `
      import { privateKeyToAccount } from "viem/accounts";
      import { createX402Client } from "x402-pay";
      import { uptoEvm } from "x402-pay/evm";
      import { wrapFetchWithPayment } from "x402-pay/fetch";
      const signer = privateKeyToAccount(globalThis.key);
      const client = createX402Client({ schemes: [uptoEvm({ signer })] });
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
    reference: `
      import { privateKeyToAccount } from "viem/accounts";
      import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
      import { UptoEvmScheme } from "@x402/evm/upto/client";
      const client = new x402Client();
      client.register("eip155:*", new UptoEvmScheme(privateKeyToAccount(globalThis.key)));
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
  },
  {
    // A dapp paying from an injected wallet: ours needs no viem WalletClient; the reference needs one.
    job: "fetch + EVM exact + injected EIP-1193 wallet",
    floor: `globalThis.a = globalThis.ethereum;`,
    ours: `
      import { createX402Client } from "x402-pay";
      import { eip1193Signer, exactEvm } from "x402-pay/evm";
      import { wrapFetchWithPayment } from "x402-pay/fetch";
      const signer = await eip1193Signer(globalThis.ethereum);
      const client = createX402Client({ schemes: [exactEvm({ signer })] });
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
    reference: `
      import { createWalletClient, custom } from "viem";
      import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
      import { ExactEvmScheme } from "@x402/evm/exact/client";
      const [address] = await globalThis.ethereum.request({ method: "eth_accounts" });
      const wallet = createWalletClient({ account: address, transport: custom(globalThis.ethereum) });
      const signer = { address, signTypedData: (m) => wallet.signTypedData({ account: wallet.account, ...m }) };
      const client = new x402Client();
      client.register("eip155:*", new ExactEvmScheme(signer));
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
  },
  {
    job: "fetch + Solana exact + kit key pair signer",
    floor: `import { createKeyPairSignerFromBytes } from "@solana/kit"; globalThis.s = await createKeyPairSignerFromBytes(globalThis.key);`,
    ours: `
      import { createKeyPairSignerFromBytes } from "@solana/kit";
      import { createX402Client } from "x402-pay";
      import { exactSvm } from "x402-pay/svm";
      import { wrapFetchWithPayment } from "x402-pay/fetch";
      const signer = await createKeyPairSignerFromBytes(globalThis.key);
      const client = createX402Client({ schemes: [exactSvm({ signer })] });
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
    reference: `
      import { createKeyPairSignerFromBytes } from "@solana/kit";
      import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
      import { ExactSvmScheme } from "@x402/svm/exact/client";
      const client = new x402Client();
      client.register("solana:*", new ExactSvmScheme(await createKeyPairSignerFromBytes(globalThis.key)));
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
  },
  {
    // Sign-in-with-x beside the payment: ours as an extension, the reference as its HTTP client hook.
    job: "fetch + EVM exact + signInWithX + viem privateKeyToAccount",
    floor: `import { privateKeyToAccount } from "viem/accounts"; globalThis.a = privateKeyToAccount(globalThis.key);`,
    ours: `
      import { privateKeyToAccount } from "viem/accounts";
      import { createX402Client, signInWithX } from "x402-pay";
      import { exactEvm } from "x402-pay/evm";
      import { wrapFetchWithPayment } from "x402-pay/fetch";
      const signer = privateKeyToAccount(globalThis.key);
      const client = createX402Client({ schemes: [exactEvm({ signer })], extensions: [signInWithX({ evm: signer })] });
      globalThis.paidFetch = wrapFetchWithPayment(fetch, client);`,
    reference: `
      import { privateKeyToAccount } from "viem/accounts";
      import { wrapFetchWithPayment, x402Client, x402HTTPClient } from "@x402/fetch";
      import { ExactEvmScheme } from "@x402/evm/exact/client";
      import { createSIWxClientHook } from "@x402/extensions/sign-in-with-x";
      const signer = privateKeyToAccount(globalThis.key);
      const client = new x402Client();
      client.register("eip155:*", new ExactEvmScheme(signer));
      const http = new x402HTTPClient(client).onPaymentRequired(createSIWxClientHook(signer));
      globalThis.paidFetch = wrapFetchWithPayment(fetch, http);`,
  },
];

// This repository's dev tree holds two generations of @solana/* (the legacy v1 seller used by the
// interop tests brings kit 5 and npm hoists it). A user's app has one: resolve every @solana/*
// import as @solana/kit's own dependencies, as a deduplicated install would.
const kitDir = dirname(createRequire(import.meta.url).resolve("@solana/kit"));
const dedupeSolana = {
  name: "dedupe-solana",
  setup(b) {
    b.onResolve({ filter: /^@solana\// }, (args) =>
      args.pluginData === "deduped" ? undefined : b.resolve(args.path, { kind: args.kind, resolveDir: kitDir, pluginData: "deduped" }),
    );
  },
};

async function measureEsbuild(contents) {
  const result = await build({
    plugins: [dedupeSolana],
    stdin: { contents, resolveDir: root, loader: "js" },
    bundle: true,
    minify: true,
    treeShaking: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    // As a production browser build does: selects production-only code paths (kit's short error
    // messages), for ours and the reference alike.
    define: { "process.env.NODE_ENV": '"production"' },
    write: false,
    logLevel: "silent",
  });
  return sizes(result.outputFiles[0].contents);
}

function sizes(bytes) {
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}

// The same entry through `vite build` in production mode; @solana/* deduplicated as above.
async function measureVite(contents) {
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
    build: { write: false, target: "es2022", minify: true, rollupOptions: { input: entry, output: { codeSplitting: false } } },
  });
  const chunks = (Array.isArray(output) ? output[0] : output).output.filter((o) => o.type === "chunk");
  return sizes(Buffer.from(chunks.map((c) => c.code).join("\n")));
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

if (!process.argv.includes("--no-build")) execSync("npx tsup --silent", { cwd: root, stdio: "inherit" });

// "floor": the signer alone, which both sides bundle; "added" is each side's code above it.
for (const [bundler, measure] of [["esbuild", measureEsbuild], ["vite", measureVite]]) {
  const rows = [];
  for (const c of cases) {
    // One at a time: Vite builds do not run concurrently in one process.
    const ours = await measure(c.ours);
    const reference = await measure(c.reference);
    const floor = await measure(c.floor);
    rows.push({
      job: c.job,
      "x402-pay (min)": kb(ours.raw),
      "x402-pay (gzip)": kb(ours.gzip),
      "reference (gzip)": kb(reference.gzip),
      "ratio (gzip)": (ours.gzip / reference.gzip).toFixed(4),
      "signer floor (gzip)": kb(floor.gzip),
      "added ratio": ((ours.gzip - floor.gzip) / (reference.gzip - floor.gzip)).toFixed(3),
    });
  }
  console.log(`\n${bundler}`);
  console.table(rows);
}
