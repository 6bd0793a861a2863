// Peak memory of the x402-pay command while a large answer streams through it: `-o FILE` and
// `--json` (stdout to /dev/null), from a loopback server sending the body in 64 KiB chunks.
// Run: node bench/cli-memory/run.mjs [MiB, default 1024] [the command, default dist/cli.js]
// (build first: npm run build). A free answer: the paid one streams through the same code.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const mib = Number(process.argv[2] ?? 1024);
const cli = process.argv[3] ?? `${root}dist/cli.js`;

/** A server whose every answer is `mib` MiB, written at the reader's pace. */
export async function startLargeBody(mib) {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const server = createServer(async (_request, response) => {
    const length = String(mib * 1024 * 1024);
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": length });
    for (let sent = 0; sent < mib * 16; sent++) if (!response.write(chunk)) await once(response, "drain");
    response.end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/large`, stop: () => new Promise((resolve) => server.close(resolve)) };
}

/** Runs the command with `args`, stdout to /dev/null; its exit code and peak resident memory in MiB. */
export async function peakRss(cliPath, args) {
  const dir = mkdtempSync(join(tmpdir(), "x402-rss-"));
  const file = join(dir, "rss");
  const key = `0x${randomBytes(32).toString("hex")}`;
  try {
    const child = spawn(process.execPath, ["--import", `${root}bench/cli-memory/peak-rss.mjs`, cliPath, ...args], {
      // A fresh key, never asked to sign: the answer is free.
      env: { PATH: process.env.PATH, X402_PEAK_RSS_FILE: file, EVM_PRIVATE_KEY: key },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const [code] = await once(child, "exit");
    return { code, mib: Math.round(Number(readFileSync(file, "utf8")) / 1024) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startLargeBody(mib);
  try {
    console.log(`x402-pay (${cli}), a ${mib} MiB answer: peak resident memory`);
    for (const [name, args] of [
      ["-o /dev/null", ["-s", "-o", "/dev/null", server.url]],
      ["--json", ["--json", server.url]],
    ]) {
      const { code, mib: peak } = await peakRss(cli, args);
      console.log(`  ${name.padEnd(14)} ${String(peak).padStart(6)} MiB  (exit ${code})`);
    }
  } finally {
    await server.stop();
  }
}
