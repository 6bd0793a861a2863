// The chaos proof, bounded for `npm test` (`npm run chaos -- --requests 10000` is the long run): 200 keyed requests
// paid by four worker processes through one Redis (budget, ledger, journal) and the reference seller and facilitator
// (payment-identifier and its idempotency cache) on anvil, with 40 kills at forced points of a payment and 10 at
// random moments, Redis killed and restarted twice, answers cut after the seller settled, and one worker that never
// comes back. Among them, 40 more keys paid over one batch-settlement channel of the reference batch seller (its
// channel store in the same Redis). Checked against the chain: each key paid exactly once (a batch key: charged once
// by the seller, its claim on chain equal to its count), every settled payment in the ledger once (with its
// transaction for exact), the budget's spent equal to what moved and nothing reserved beyond the channel's hold,
// nothing left unfinished.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runChaos, startChaosWorld, violations, type ChaosWorld } from "./harness";

let world: ChaosWorld;
beforeAll(async () => {
  world = await startChaosWorld();
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

describe("killed anywhere, paid once", () => {
  it("200 keyed requests and 40 over a batch channel, 50 kills, Redis restarted twice: each paid once, recorded once, spent once", async () => {
    const figures = await runChaos(world, {
      requests: 200,
      batchRequests: 40,
      workers: 4,
      forcedKills: 40,
      randomKills: 10,
      redisRestarts: 2,
      cuts: 10,
    });
    expect(violations(figures)).toEqual([]);
    // The run did what it says: every forced point killed at, and the rest.
    for (const point of ["intent", "signed", "sent", "answered", "ledger"] as const)
      expect(figures.kills[point]).toBeGreaterThanOrEqual(6);
    const forced = figures.kills.intent + figures.kills.signed + figures.kills.sent + figures.kills.answered;
    expect(forced + figures.kills.ledger).toBeGreaterThanOrEqual(40);
    expect(figures.kills.random).toBeGreaterThanOrEqual(5);
    expect(figures.redisRestarts).toBe(2);
    expect(figures.paidOnChain).toBe(200);
    // The budget spent the 200 exact payments and the 40 calls the batch seller charged (its claim on chain).
    expect(figures.budgetSpent).toBe(200 * 1000 + 40 * 1000);
    expect(figures.batch).toMatchObject({ requests: 40, sellerCharged: 40 * 1000, claimedOnChain: 40 * 1000 });
    expect(figures.batch.answered + figures.batch.paidUnanswered).toBe(40);
  }, 300_000);
});
