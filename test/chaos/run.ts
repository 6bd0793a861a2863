/**
 * `npm run chaos -- --requests 10000`: the chaos run of test/chaos at length, its figures printed as JSON (and the
 * checks that must hold, with exit 1 if one does not). `--workers`, `--lanes`, `--forced-kills`, `--random-kills`,
 * `--redis-restarts`, `--cuts`, `--batch-requests` as in ChaosOptions.
 */
import { parseArgs } from "node:util";
import { runChaos, startChaosWorld, violations } from "./harness";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "1000" },
    workers: { type: "string" },
    lanes: { type: "string" },
    "forced-kills": { type: "string" },
    "random-kills": { type: "string" },
    "redis-restarts": { type: "string" },
    cuts: { type: "string" },
    "batch-requests": { type: "string" },
  },
});
const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
const world = await startChaosWorld();
try {
  const figures = await runChaos(world, {
    requests: Number(values.requests),
    workers: number(values.workers),
    lanes: number(values.lanes),
    forcedKills: number(values["forced-kills"]),
    randomKills: number(values["random-kills"]),
    redisRestarts: number(values["redis-restarts"]),
    cuts: number(values.cuts),
    batchRequests: number(values["batch-requests"]),
    log: (line) => console.error(`[chaos] ${line}`),
  });
  console.log(JSON.stringify(figures, null, 2));
  const broken = violations(figures);
  for (const line of broken) console.error(`[chaos] FAILED: ${line}`);
  process.exitCode = broken.length > 0 ? 1 : 0;
} finally {
  await world.stop();
}
