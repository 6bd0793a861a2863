/**
 * The edges of the spend policy, through both wrappers, written from what a user relies on (README
 * "Spend policy"): what is refused is refused before any signature, with NO_PAYABLE_REQUIREMENT and
 * a reason for every requirement; what is allowed is paid and verified by the seller stub.
 */
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { getPaymentReceipt, type X402ClientOptions } from "../../src";
import { exactSvm } from "../../src/svm";
import {
  PATH,
  PAY_TO,
  SELLER,
  USDC_BASE,
  USDC_BASE_SEPOLIA,
  createSeller,
  payingClient,
  v1Challenge,
  v1Requirement,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { createX402Client } from "../../src";
import { fakeRpc, svmRequirement } from "../support/svm";
import { countingSvmSigner } from "../support/wallets";
import { rejection, wrappers, type Wrapper } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();

const url = `${SELLER}${PATH}`;

/** Serves `challenge`, sends with a counting EVM client, and returns the refusal; asserts nothing was signed or sent twice. */
async function refused(wrapper: Wrapper, challenge: Record<string, unknown>, options: Partial<X402ClientOptions> = {}, to = url) {
  const { origin, pathname } = new URL(to);
  const seller = createSeller({ origin, path: pathname, challenge });
  server.use(seller.handler);
  const { client, signs } = payingClient(options);
  const error = await rejection(wrapper.send(client, { url: to }));
  expect(error.code, String(error)).toBe("NO_PAYABLE_REQUIREMENT");
  expect(signs).toHaveLength(0);
  expect(seller.requests).toHaveLength(1);
  return error;
}

/** Serves `challenge`, sends with a counting EVM client, and asserts the payment was made and verified. */
async function paid(wrapper: Wrapper, challenge: Record<string, unknown>, options: Partial<X402ClientOptions> = {}, to = url) {
  const { origin, pathname } = new URL(to);
  const seller = createSeller({ origin, path: pathname, challenge });
  server.use(seller.handler);
  const { client, signs } = payingClient(options);
  const reply = await wrapper.send(client, { url: to });
  expect(reply.status, reply.text).toBe(200);
  expect(signs).toHaveLength(1);
  expect(seller.verdicts).toEqual([expect.objectContaining({ ok: true })]);
  return { reply, seller };
}

const reasons = (error: { details: { rejected: { reason: string }[] } }) => error.details.rejected.map((r) => r.reason);

describe.each(wrappers)("$name: protocol v1 challenges get the same policy", (wrapper) => {
  it("the per-payment cap: over $1 is refused, exactly $1 is paid", async () => {
    const error = await refused(wrapper, v1Challenge({ accepts: [v1Requirement({ maxAmountRequired: "1000001" })] }));
    expect(error.details.rejected).toEqual([
      expect.objectContaining({ index: 0, code: "policy", amount: "1000001", reason: expect.stringMatching(/1\.000001 USDC is over policy\.maxAmountPerPayment \(\$1\)/) }),
    ]);

    server.resetHandlers();
    const { seller } = await paid(wrapper, v1Challenge({ accepts: [v1Requirement({ maxAmountRequired: "1000000" })] }));
    expect(seller.payments[0]).toMatchObject({ x402Version: 1, network: "base-sepolia" });
  });

  it("a configured cap, and the cap on another chain's USDC (v1 name base)", async () => {
    await refused(wrapper, v1Challenge({ accepts: [v1Requirement({ maxAmountRequired: "10000" })] }), { policy: { maxAmountPerPayment: "$0.005" } });
    server.resetHandlers();
    const onBase = v1Requirement({ network: "base", asset: USDC_BASE, maxAmountRequired: "2000000", extra: { name: "USD Coin", version: "2" } });
    const error = await refused(wrapper, v1Challenge({ accepts: [onBase] }));
    expect(reasons(error)).toEqual([expect.stringMatching(/2 USDC is over/)]);
  });

  it("the same-host check reads each requirement's resource: another host is refused, nothing signed", async () => {
    const error = await refused(wrapper, v1Challenge({ accepts: [v1Requirement({ resource: "https://evil.example/premium" })] }));
    expect(error.details.rejected[0]).toMatchObject({ code: "policy", reason: expect.stringContaining("evil.example") });
  });

  it("a requirement for another host is skipped and the one for this host paid", async () => {
    const evil = v1Requirement({ network: "base", asset: USDC_BASE, resource: "https://evil.example/premium", extra: { name: "USD Coin", version: "2" } });
    const { seller } = await paid(wrapper, v1Challenge({ accepts: [evil, v1Requirement()] }));
    expect(seller.payments[0]).toMatchObject({ x402Version: 1, network: "base-sepolia" });
  });

  it("requireSameHostResource: false pays a v1 requirement whose resource names another host", async () => {
    await paid(wrapper, v1Challenge({ accepts: [v1Requirement({ resource: "https://cdn.example/premium" })] }), { policy: { requireSameHostResource: false } });
  });
});
