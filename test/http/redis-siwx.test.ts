/**
 * Sign-in-with-x's "paid before" memory in a real redis-server, shared by two clients on two
 * connections (as two processes would share it): what the first paid for, the second signs in to
 * without paying. A Redis that is gone knows nothing: the request pays, without waiting.
 */
import { describe, expect, it, vi } from "vitest";
import { createX402Client, signInWithX } from "../../src";
import { exactEvm } from "../../src/evm";
import { fetchWrapper } from "../support/wrappers";
import { redisSignInStore } from "../../src/redis";
import { paidKey } from "../../src/extensions/sign-in-with-x/store";
import { useMswServer } from "../support/msw";
import { connectRedis, startRedis, useRedis } from "../support/redis";
import { countingEvmWallet, createSiwxSeller } from "../support/siwx";
import { account, countingSigner } from "../support/wallets";

/** The server, a client, and a fresh key prefix per test, so tests share the server and not their keys. */
const live = useRedis((run) => `test:siwx:${run}:`);

const msw = useMswServer();

/** A client paying `exact` with a counting signer and signing in with a counting wallet, remembering in `store`. */
function buyer(store: ReturnType<typeof redisSignInStore>) {
  const payments = countingSigner();
  const evm = countingEvmWallet();
  const client = createX402Client({
    schemes: [exactEvm({ signer: payments.signer })],
    plugins: [signInWithX({ evm: evm.wallet, store })],
  });
  return { client, typedData: payments.calls, messages: evm.messages };
}

describe("redisSignInStore", () => {
  it("two clients share it: the first pays for a route, the second signs in to it without paying", async () => {
    const seller = createSiwxSeller();
    msw.use(seller.handler);
    const prefix = live.fresh();
    const other = await connectRedis(live.server.url);
    try {
      const first = buyer(redisSignInStore(live.redis, { prefix }));
      const second = buyer(redisSignInStore(other, { prefix }));

      expect((await fetchWrapper.send(first.client, { url: seller.url })).status).toBe(200);
      expect(seller.counts).toEqual({ payments: 1, signIns: 0 });
      expect(await live.redis.get(`${prefix}${paidKey(seller.url, account.address)}`)).toBe("eip155:84532");

      const reply = await fetchWrapper.send(second.client, { url: seller.url });
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.text)).toMatchObject({ signedIn: account.address });
      expect(seller.counts).toEqual({ payments: 1, signIns: 1 });
      expect([second.typedData.length, second.messages.length]).toEqual([0, 1]);
    } finally {
      other.destroy();
    }
  });

  it("ttlSeconds: a remembered route expires; without it, it stays", async () => {
    const prefix = live.fresh();
    await redisSignInStore(live.redis, { prefix, ttlSeconds: 60 }).set("route payer", "eip155:84532");
    await redisSignInStore(live.redis, { prefix: `${prefix}forever:` }).set("route payer", "eip155:84532");
    expect(await live.redis.ttl(`${prefix}route payer`)).toBeGreaterThan(0);
    expect(await live.redis.ttl(`${prefix}forever:route payer`)).toBe(-1);
    expect(await redisSignInStore(live.redis, { prefix }).get("route payer")).toBe("eip155:84532");
    expect(await redisSignInStore(live.redis, { prefix }).get("never paid")).toBeNull();
  });

  it("a Redis that is gone knows nothing: the read fails at once, and the request pays as on a first visit", async () => {
    const seller = createSiwxSeller();
    msw.use(seller.handler);
    const own = await startRedis();
    const client = await connectRedis(own.url);
    try {
      const store = redisSignInStore(client, { timeoutMs: 600_000 });
      await store.set(paidKey(seller.url, account.address), "eip155:84532");
      await own.stop();
      await vi.waitFor(() => expect(client.isReady).toBe(false));
      await expect(store.get(paidKey(seller.url, account.address))).rejects.toThrow(/not connected/);
      const b = buyer(store);
      expect((await fetchWrapper.send(b.client, { url: seller.url })).status).toBe(200);
      expect(seller.counts).toEqual({ payments: 1, signIns: 0 });
    } finally {
      client.destroy();
      await own.stop();
    }
  });

  it.each([
    [{ prefix: 5 }, "redisSignInStore.prefix"],
    [{ ttlSeconds: 0 }, "redisSignInStore.ttlSeconds"],
    [{ ttlSeconds: 1.5 }, "redisSignInStore.ttlSeconds"],
    [{ timeoutMs: Infinity }, "redisSignInStore.timeoutMs"],
    [{ ttl: 5 }, "redisSignInStore.ttl"],
  ])("options %j: INVALID_CONFIG naming %s", (options, option) => {
    expect(() => redisSignInStore(live.redis, options as never)).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", details: { option } }),
    );
  });
});
