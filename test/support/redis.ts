/**
 * A real redis-server for the Redis tests (Debian's package; `bash scripts/ensure-tools.sh`, which
 * `npm test` runs, installs it): started on a free loopback port with nothing saved to disk, ready
 * once it answers PING, stopped by `stop()` and, like anvil, under a watchdog that ends it if this
 * process dies first. Or three of them made a Redis Cluster (with Debian's redis-cli).
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient } from "redis";
import { afterAll, beforeAll } from "vitest";
import { killOnExit, spawnWithWatchdog } from "../localnet/cleanup";

export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Stops the server (idempotent); resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts a redis-server; `args` are added to its command line. */
export async function startRedis(args: string[] = []): Promise<RedisServer> {
  const probe = spawnSync("redis-server", ["--version"]);
  if ((probe.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
    throw new Error(
      "redis-server is not installed: run `bash scripts/ensure-tools.sh` (npm test runs it), or install Debian's redis-server.",
    );
  }
  // A port found free may be taken before redis binds it: then it exits, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), args);
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

/** Starts a redis-server on `port` (one that was stopped there, to start it again on its data: `--dir`). */
export const startRedisOn = (port: number, args: string[] = []): Promise<RedisServer> => startOn(port, args);

async function startOn(port: number, args: string[]): Promise<RedisServer> {
  const child = spawnWithWatchdog("redis", "redis-server", [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    ...args,
  ]);
  killOnExit(child);
  // Drained (a full pipe would stall the server); the tail is kept for error messages.
  let log = "";
  const remember = (chunk: Buffer) => void (log = (log + chunk.toString("utf8")).slice(-4_000));
  child.stdout.on("data", remember);
  child.stderr.on("data", remember);
  const exited = new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve()),
  );
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin.end(); // the watchdog's signal to terminate redis-server
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    })());

  const deadline = Date.now() + 10_000;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!(await answersPing(port))) {
    if (gone || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not answer PING on port ${port}\n--- redis-server output (tail) ---\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop };
}

export interface RedisClusterServers {
  /** For `createCluster({ rootNodes })`. */
  readonly rootNodes: { url: string }[];
  readonly servers: readonly RedisServer[];
  /** Stops every node and removes their cluster files. */
  stop(): Promise<void>;
}

/** A Redis Cluster of `nodes` masters (no replicas) on loopback, every slot assigned and the state ok. */
export async function startRedisCluster(nodes = 3): Promise<RedisClusterServers> {
  const dir = await mkdtemp(join(tmpdir(), "x402-redis-cluster-"));
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < nodes; i++) {
      const busPort = String(await freePort());
      servers.push(
        await startRedis([
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          `nodes-${i}.conf`,
          "--cluster-port",
          busPort,
          "--dir",
          dir,
        ]),
      );
    }
    const addresses = servers.map((server) => `127.0.0.1:${server.port}`);
    await promisify(execFile)(
      "redis-cli",
      ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"],
      { timeout: 30_000 },
    );
    for (const server of servers) {
      const client = await connectRedis(server.url);
      try {
        const deadline = Date.now() + 10_000;
        while (!String(await client.sendCommand(["CLUSTER", "INFO"])).includes("cluster_state:ok")) {
          if (Date.now() > deadline) throw new Error(`cluster node ${server.url} did not reach cluster_state:ok`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        client.destroy();
      }
    }
    return { rootNodes: servers.map((server) => ({ url: server.url })), servers, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A connected node-redis client; its reconnection errors (a test stops the server) are expected, not thrown. */
export async function connectRedis(url: string) {
  const client = createClient({ url });
  client.on("error", () => undefined);
  await client.connect();
  return client;
}

/**
 * A redis-server and a client of it for this test file: started before its tests, stopped after. `fresh()` gives each
 * test its own key prefix (`prefix` of a count), so tests share the server and not their keys.
 */
export function useRedis(prefix: (run: number) => string) {
  let server: RedisServer | undefined;
  let client: Awaited<ReturnType<typeof connectRedis>> | undefined;
  let run = 0;
  beforeAll(async () => {
    server = await startRedis();
    client = await connectRedis(server.url);
  });
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("useRedis: the server starts in beforeAll; use it within a test");
    return value;
  };
  return {
    get server(): RedisServer {
      return started(server);
    },
    get redis(): Awaited<ReturnType<typeof connectRedis>> {
      return started(client);
    },
    fresh: () => prefix(++run),
  };
}

/** A loopback port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let reply = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString("latin1");
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
    socket.on("error", () => done(false));
  });
}
