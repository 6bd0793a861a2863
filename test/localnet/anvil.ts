// Starts the anvil binary shipped by the @foundry-rs/anvil npm package on a free loopback port.

import { createRequire } from "node:module";
import { defineChain, type Chain } from "viem";
import { killOnExit, spawnWithWatchdog } from "./cleanup.js";

/** Base Sepolia's chain id: the reference's default USDC entry lives on this chain. */
export const BASE_SEPOLIA_CHAIN_ID = 84532;

export interface Anvil {
  /** JSON-RPC endpoint, `http://127.0.0.1:<port>`. */
  rpcUrl: string;
  /** A viem chain for this node (id = the chain id anvil was started with). */
  chain: Chain;
  /** Kills the node. Idempotent; resolves once the process has exited. */
  stop(): Promise<void>;
}

export interface StartAnvilOptions {
  chainId?: number;
  /** Give up if anvil is not answering JSON-RPC after this long. */
  timeoutMs?: number;
}

/** Path of the anvil executable, resolved through node module resolution. */
export function anvilBinaryPath(): string {
  const requireHere = createRequire(import.meta.url);
  // The wrapper package lists one optional dependency per platform holding the binary.
  const requireFromAnvil = createRequire(requireHere.resolve("@foundry-rs/anvil/package.json"));
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const executable = process.platform === "win32" ? "anvil.exe" : "anvil";
  return requireFromAnvil.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/bin/${executable}`);
}

/** A viem chain object pointing at a local node. */
export function localChain(rpcUrl: string, chainId: number = BASE_SEPOLIA_CHAIN_ID): Chain {
  return defineChain({
    id: chainId,
    name: `anvil ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    testnet: true,
  });
}

export async function startAnvil({
  chainId = BASE_SEPOLIA_CHAIN_ID,
  timeoutMs = 10_000,
}: StartAnvilOptions = {}): Promise<Anvil> {
  const child = spawnWithWatchdog("anvil", anvilBinaryPath(), [
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--chain-id",
    String(chainId),
  ]);
  killOnExit(child);

  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        // Closing stdin tells the watchdog to terminate anvil; signal as well (no watchdog on Windows).
        child.stdin?.end();
        if (process.platform === "win32") child.kill();
        const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
        await exited;
        clearTimeout(timer);
      }
    })();
    return stopping;
  };

  // anvil logs every RPC call to stdout; keep draining it (a full pipe would block the node) and
  // keep only the tail for error messages.
  let log = "";
  const remember = (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-4_000);
  };
  child.stderr.on("data", remember);

  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`anvil did not start within ${timeoutMs} ms`)), timeoutMs);
      child.stdout.on("data", (chunk: Buffer) => {
        remember(chunk);
        const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(log);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`anvil exited (${code ?? signal}) before listening`));
      });
    });
    const rpcUrl = `http://127.0.0.1:${port}`;
    await waitForRpc(rpcUrl, chainId, timeoutMs);
    return { rpcUrl, chain: localChain(rpcUrl, chainId), stop };
  } catch (error) {
    await stop();
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message}\n--- anvil output (tail) ---\n${log}`, { cause: error });
  }
}

async function waitForRpc(rpcUrl: string, chainId: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const result = await rpc<string>(rpcUrl, "eth_chainId", []);
      if (Number(result) !== chainId) throw new Error(`anvil reports chain id ${result}, expected ${chainId}`);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/**
 * Mines a block at the wall clock's time when the chain's latest block is more than `maxLagSeconds`
 * behind it; resolves at once otherwise. anvil mines only when a transaction comes, and calls (what a
 * facilitator simulates a payment with) run against the latest block: after a quiet spell its
 * timestamp is the last transaction's. Buyers back-date an authorisation's `validAfter` by 600 s, so
 * after ten idle minutes every payment is "not yet valid" there. Run it before the chain is used.
 */
export async function catchUpChainClock(rpcUrl: string, maxLagSeconds = 60): Promise<void> {
  const latest = await rpc<{ timestamp: string }>(rpcUrl, "eth_getBlockByNumber", ["latest", false]);
  const now = Math.floor(Date.now() / 1000);
  if (Number(latest.timestamp) + maxLagSeconds >= now) return;
  // A timestamp given to evm_mine also moves anvil's clock there, should it have been set behind.
  await rpc(rpcUrl, "evm_mine", [now]);
}

/** Minimal JSON-RPC call (for anvil_* methods that viem's public actions do not cover). */
export async function rpc<T>(rpcUrl: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
