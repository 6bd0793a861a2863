// A redis-server for the journal rows of the bench (run.mjs starts it): Debian's redis-server on a free loopback
// port, nothing saved to disk (--save "" --appendonly no), ready once it answers PING; stopped by `stop()`, or
// when this process exits. Undefined when redis-server is not installed.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { connect, createServer } from "node:net";

/** Starts redis-server: `{ url, pid, stop }`, or undefined if it is not installed. */
export async function startRedis() {
  if (spawnSync("redis-server", ["--version"]).error?.code === "ENOENT") return undefined;
  // A port found free may be taken before redis binds it: then it exits, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort());
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

async function startOn(port) {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  // Drained (a full pipe would stall the server); the tail is kept for an error message.
  let log = "";
  const remember = (chunk) => (log = (log + chunk.toString("utf8")).slice(-2000));
  child.stdout.on("data", remember);
  child.stderr.on("data", remember);
  const exited = child.exitCode === null ? once(child, "exit") : Promise.resolve();
  const kill = () => child.kill();
  process.once("exit", kill);
  const stop = async () => {
    process.off("exit", kill);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill();
      await exited;
    }
  };
  let gone = false;
  exited.then(() => (gone = true));
  const deadline = Date.now() + 10_000;
  while (!(await answersPing(port))) {
    if (gone || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not answer PING on port ${port}\n--- its output (tail) ---\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url: `redis://127.0.0.1:${port}`, pid: child.pid, stop };
}

/** A loopback port nothing listens on now. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function answersPing(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let reply = "";
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString("latin1");
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
    socket.on("error", () => done(false));
  });
}
