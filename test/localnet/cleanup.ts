// Last-resort cleanup for child processes the harness starts (anvil, redis-server): if a test
// crashes or the runner exits without calling stop(), the children are killed when this process goes away.

import { spawn, type ChildProcess, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";

const live = new Set<ChildProcess>();
let hooksInstalled = false;

function killAll(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  live.clear();
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.once("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      // Someone else handles the signal (the demo's --serve stops its stack in order): killing the
      // children here would pull anvil's watchdog away from under that stop, and leave anvil to
      // die only after we do. The exit hook still catches whatever they leave running.
      if (process.listenerCount(signal) > 0) return;
      killAll();
      // Keep the default behaviour (terminate).
      process.kill(process.pid, signal);
    });
  }
}

/** Kills `child` when this process exits, unless it was released first. */
export function killOnExit(child: ChildProcess): void {
  installHooks();
  live.add(child);
  child.once("exit", () => live.delete(child));
}

/**
 * Collects stop functions while a stack starts; `stop()` runs them in reverse order, once, ignoring
 * failures, so a half-started stack is always torn down.
 */
export function stopStack(): { add(stop: () => Promise<void>): void; stop(): Promise<void> } {
  const stoppers: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  return {
    add: (stop) => void stoppers.push(stop),
    stop: () =>
      (stopping ??= (async () => {
        for (const stopOne of stoppers.reverse()) await stopOne().catch(() => undefined);
      })()),
  };
}

/**
 * POSIX: `binary` runs under a small /bin/sh watchdog that terminates it as soon as our end of its
 * stdin pipe closes: on stop(), and also when this process dies in any way, even SIGKILL or a
 * worker-thread teardown where no exit hook runs. The shell waits for the binary, so the child's exit
 * means the binary has exited.
 */
export function spawnWithWatchdog(
  name: string,
  binary: string,
  args: string[],
): ChildProcessByStdio<Writable, Readable, Readable> {
  if (process.platform === "win32") return spawn(binary, args, { stdio: ["pipe", "pipe", "pipe"] });
  const watchdog = [
    "exec 3<&0", // keep our pipe: background jobs would otherwise get /dev/null as stdin
    '"$@" </dev/null &',
    "pid=$!",
    // on EOF: TERM, then KILL if the binary is still there after 3 s
    '( read -r _ <&3; kill -TERM "$pid"; for _ in 1 2 3; do sleep 1; kill -0 "$pid" || exit; done; kill -KILL "$pid" ) >/dev/null 2>&1 &',
    'wait "$pid"',
  ].join("\n");
  return spawn("/bin/sh", ["-c", watchdog, `${name}-watchdog`, binary, ...args], { stdio: ["pipe", "pipe", "pipe"] });
}
