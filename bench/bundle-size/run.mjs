// Browser bundle size of the same job done with x402-pay and with the reference @x402 packages:
// esbuild, platform browser, minified, tree-shaken, then gzip -9. Run: npm run bench:size
// (builds dist first). Prints a table and the ratio ours / reference.
import { build } from "esbuild";
import { execSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = fileURLToPath(new URL("../../", import.meta.url));

// Each case is the code a user would write for the job, ours and the reference's side by side.
const cases = [
  {
    job: "fetch + EVM exact + viem privateKeyToAccount",
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
    job: "viem privateKeyToAccount alone (the floor both share)",
    ours: `import { privateKeyToAccount } from "viem/accounts"; globalThis.a = privateKeyToAccount(globalThis.key);`,
    reference: null,
  },
];

async function measure(contents) {
  const result = await build({
    stdin: { contents, resolveDir: root, loader: "js" },
    bundle: true,
    minify: true,
    treeShaking: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  const bytes = result.outputFiles[0].contents;
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

if (!process.argv.includes("--no-build")) execSync("npx tsup --silent", { cwd: root, stdio: "inherit" });

const rows = [];
for (const c of cases) {
  const ours = await measure(c.ours);
  const reference = c.reference ? await measure(c.reference) : null;
  rows.push({
    job: c.job,
    "x402-pay (min)": kb(ours.raw),
    "x402-pay (gzip)": kb(ours.gzip),
    "reference (min)": reference ? kb(reference.raw) : "-",
    "reference (gzip)": reference ? kb(reference.gzip) : "-",
    "ratio (gzip)": reference ? (ours.gzip / reference.gzip).toFixed(3) : "-",
  });
}
console.table(rows);
