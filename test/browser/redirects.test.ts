// Redirects of the paid request, in real headless Chromium and Firefox ESR, against the reference seller on the
// local chain (setup in ./harness.ts). A browser's fetch hides redirect targets, so x402-pay cannot
// follow a paid request by hand there. What it does instead:
// - seller on the page's own origin: the paid request goes with `mode: "same-origin"` and the
//   browser follows; same-origin redirects work (the payment header goes along, within the origin),
//   a redirect to another origin fails in the browser before anything is sent there;
// - seller on another origin: the paid request goes with `redirect: "manual"`; the opaque redirect
//   that comes back is an unknown outcome, and its target is never contacted;
// - axios: XHR, its default adapter in a browser, follows redirects anywhere with every header, so
//   the paid request goes through axios's fetch adapter under the same rules.
// And a cross-origin seller whose preflight does not allow PAYMENT-SIGNATURE; and a first request
// that the browser redirected to a 402.
//
// Two kinds of redirect of the paid request: one that a site in front of the seller answers before
// the seller sees the payment (`redirectPaid`), and one the seller's own handler answers after it
// settled (`GET /redirect?to=`; the reference middleware settles every handler answer below 400, so
// PAYMENT-RESPONSE rides on the 3xx, where the browser does not show it). Money is checked on chain,
// and every site records what reached it: which requests carried PAYMENT-SIGNATURE. "Other origins"
// are loopback sites on other ports that let any origin send them anything (CORS `*`), so a payment
// header that never reaches them was never sent, not refused by CORS.
import { beforeEach, describe, expect, it } from "vitest";
import { PRICE_ATOMIC, WEATHER, fundedBuyer, type Buyer } from "../localnet/index.js";
import {
  balances,
  expectMinedTransfer,
  expectPaid,
  paidSince,
  redirectAll,
  redirectPaid,
  settlementOf,
  signedResourceUrl,
  startSite,
  useBrowserHarness,
  withPage,
  type Harness,
  type Site,
} from "./harness";
import type { PageRequest, PageResult } from "./page";

let h: Harness;

const vias = ["fetch", "axios", "axios-fetch"] as const;
/**
 * The ways a page reaches a seller on another origin whose CORS allows PAYMENT-SIGNATURE but not User-Agent. Not
 * axios's fetch adapter in Firefox: axios adds `User-Agent: axios/<version>` there, Firefox sends it (Chromium drops
 * it), and the preflight of the caller's own unpaid request asks for it (a test of its own below).
 */
const crossOrigin = (name: string): readonly (typeof vias)[number][] =>
  name === "firefox" ? vias.filter((via) => via !== "axios-fetch") : vias;

/** What reached a site (preflights aside): method, path, whether it carried PAYMENT-SIGNATURE, the status it got. */
const rows = (site: Site) => site.requests().map((s) => [s.method, s.path, Boolean(s.paymentSignature), s.status]);

/**
 * Pays `request` from a page on `origin` with a fresh funded buyer; returns the result and the buyer's starting
 * balances.
 */
async function payFrom(origin: string, request: PageRequest) {
  const buyer = await fundedBuyer(h.stack.usdc);
  const before = await balances(buyer);
  const result = await withPage(origin, (page) => page.pay(buyer, request));
  return { buyer, before, result };
}

/** An error result with `code`, carrying the signed header when a payment was signed. */
function expectError(result: PageResult, code: string): Extract<PageResult, { ok: false }> {
  expect(result).toMatchObject({ ok: false, error: { code, isX402Error: true } });
  if (result.ok) throw new Error("unreachable");
  return result;
}

/**
 * The payment left and no answer tells how it ended: PAYMENT_OUTCOME_UNKNOWN, with the signed header, reported once.
 */
function expectOutcomeUnknown(result: PageResult) {
  const failed = expectError(result, "PAYMENT_OUTCOME_UNKNOWN");
  expect(failed.error.hasPaymentHeader).toBe(true);
  expect(result).toMatchObject({ signed: 1, outcomes: [{ settled: false, code: "PAYMENT_OUTCOME_UNKNOWN" }] });
  return failed;
}

/** Exactly one price moved, in the transaction a site saw the seller report (the page never saw it). */
async function expectSettledOnceAt(
  seen: Site["seen"][number] | undefined,
  buyer: Buyer,
  before: { buyer: bigint; seller: bigint },
) {
  expect(await paidSince(buyer, before)).toBe(PRICE_ATOMIC);
  const settlement = settlementOf(seen);
  expect(settlement).toMatchObject({ success: true, payer: buyer.address });
  await expectMinedTransfer(settlement?.transaction);
}

describe.each(["chromium", "firefox"] as const)("headless %s", (name) => {
  const mine = useBrowserHarness(name);
  beforeEach(() => void (h = mine));

  describe.each(vias)("%s in the page, seller on the page's origin: redirects of the paid request", (via) => {
    // axios sends the unpaid request by XHR (its default adapter); the paid one never goes that way.
    const xhr = via === "axios" ? 1 : 0;

    it.each([302, 307])(
      "a %i to another same-origin path, before the seller: paid once there, the receipt has the settlement",
      async (status) => {
        const site = await startSite({
          upstream: h.stack.seller.url,
          answer: redirectPaid("/moved/weather", status, "/weather"),
        });
        const { buyer, before, result } = await payFrom(site.url, { url: "/moved/weather", via });

        await expectPaid(result, buyer, before, WEATHER);
        expect(result).toMatchObject({
          signed: 1,
          xhr,
          outcomes: [{ settled: true, transaction: result.ok && result.receipt?.transaction }],
        });
        // The browser followed within the origin, with the payment header, and the seller settled there.
        expect(rows(site)).toEqual([
          ["GET", "/moved/weather", false, 402],
          ["GET", "/moved/weather", true, status],
          ["GET", "/weather", true, 200],
        ]);
        expect(site.seen[2]!.paymentSignature).toBe(site.seen[1]!.paymentSignature);
        expect(settlementOf(site.seen[2])?.transaction).toBe(result.ok && result.receipt?.transaction);
      },
    );

    it("a POST redirected 307 to another same-origin path: the browser sends the body again, paid once there", async () => {
      const site = await startSite({ upstream: h.stack.seller.url, answer: redirectPaid("/moved/echo", 307, "/echo") });
      const payload = { question: "Prémium ✓", n: [1, 2, 3] };
      const { buyer, before, result } = await payFrom(site.url, {
        url: "/moved/echo",
        method: "POST",
        json: payload,
        via,
      });

      await expectPaid(result, buyer, before, payload);
      expect(result).toMatchObject({ signed: 1, xhr });
      expect(rows(site)).toEqual([
        ["POST", "/moved/echo", false, 402],
        ["POST", "/moved/echo", true, 307],
        ["POST", "/echo", true, 200],
      ]);
    });

    it("the seller settles and redirects to a free same-origin path: paid once, the caller gets the target's answer, the settlement stays hidden", async () => {
      const site = await startSite({ upstream: h.stack.seller.url });
      const { buyer, before, result } = await payFrom(site.url, { url: "/redirect?to=/free", via });

      expect(result).toMatchObject({ ok: true, status: 200, body: { free: true }, signed: 1, xhr });
      expect(rows(site)).toEqual([
        ["GET", "/redirect?to=/free", false, 402],
        ["GET", "/redirect?to=/free", true, 302],
        ["GET", "/free", true, 200], // same origin: the browser carries the header along
      ]);
      await expectSettledOnceAt(site.seen[1], buyer, before);
      // PAYMENT-RESPONSE came on the 302, which the browser followed without showing it: the receipt
      // records a paid 200 whose settlement x402-pay could not see, and the payment counts as made.
      if (!result.ok) throw new Error("unreachable");
      expect(result.receipt).toMatchObject({
        status: 200,
        settled: false,
        payer: buyer.address,
        amount: String(PRICE_ATOMIC),
      });
      expect(result.receipt?.settlement).toBeUndefined();
      expect(result.outcomes).toEqual([{ settled: true }]);
    });

    it("the seller settles and redirects to a paid same-origin path: paid once, and never reported as rejected", async () => {
      const site = await startSite({ upstream: h.stack.seller.url });
      const { buyer, before, result } = await payFrom(site.url, { url: "/redirect?to=/weather", via });

      // The browser presents the same payment again at the target, which refuses a used payment.
      expect(rows(site)).toEqual([
        ["GET", "/redirect?to=/weather", false, 402],
        ["GET", "/redirect?to=/weather", true, 302],
        ["GET", "/weather", true, 402],
      ]);
      await expectSettledOnceAt(site.seen[1], buyer, before);
      // The 402 came after a redirect the browser hid, which may have settled: the outcome is unknown.
      expectOutcomeUnknown(result);
    });

    it.each([302, 307])(
      "a %i to another origin, before the seller: never followed there, PAYMENT_OUTCOME_UNKNOWN, nothing settles",
      async (status) => {
        const elsewhere = await startSite({ cors: "any" });
        const site = await startSite({
          upstream: h.stack.seller.url,
          answer: redirectPaid("/moved/weather", status, `${elsewhere.url}/weather`),
        });
        const { buyer, before, result } = await payFrom(site.url, { url: "/moved/weather", via });

        expect(elsewhere.seen).toEqual([]); // not even a preflight
        expect(rows(site)).toEqual([
          ["GET", "/moved/weather", false, 402],
          ["GET", "/moved/weather", true, status],
        ]);
        expectOutcomeUnknown(result);
        expect(result.xhr).toBe(xhr);
        expect(await balances(buyer)).toEqual(before);
      },
    );

    it("the seller settles and redirects to another origin: never followed there, PAYMENT_OUTCOME_UNKNOWN, paid once", async () => {
      const elsewhere = await startSite({ cors: "any" });
      const site = await startSite({ upstream: h.stack.seller.url });
      const path = `/redirect?to=${elsewhere.url}/landing`;
      const { buyer, before, result } = await payFrom(site.url, { url: path, via });

      expect(elsewhere.seen).toEqual([]);
      expect(rows(site)).toEqual([
        ["GET", path, false, 402],
        ["GET", path, true, 302],
      ]);
      expectOutcomeUnknown(result);
      await expectSettledOnceAt(site.seen[1], buyer, before);
    });
  });

  describe.each(crossOrigin(name))(
    "%s in the page, seller on another origin with full CORS: redirects of the paid request",
    (via) => {
      const xhr = via === "axios" ? 1 : 0;

      it.each(["the seller's origin", "a third origin"])(
        "a 307 to %s, before the seller: not followed, PAYMENT_OUTCOME_UNKNOWN, nothing settles",
        async (where) => {
          const third = await startSite({ cors: "any" });
          const seller = await startSite({
            upstream: h.stack.seller.url,
            cors: "expose",
            answer: redirectPaid(
              "/moved/weather",
              307,
              where === "a third origin" ? `${third.url}/weather` : "/weather",
            ),
          });
          const page = await startSite();
          const { buyer, before, result } = await payFrom(page.url, { url: `${seller.url}/moved/weather`, via });

          // The redirect came back opaque and went no further: neither the target nor anything else was asked.
          expect(third.seen).toEqual([]);
          expect(page.seen).toEqual([]);
          expect(rows(seller)).toEqual([
            ["GET", "/moved/weather", false, 402],
            ["GET", "/moved/weather", true, 307],
          ]);
          const failed = expectOutcomeUnknown(result);
          expect(failed.error.cause).toMatch(/redirected/);
          expect(result.xhr).toBe(xhr);
          expect(await balances(buyer)).toEqual(before);
        },
      );

      it.each(["the seller's origin", "a third origin"])(
        "the seller settles and redirects to %s: not followed, PAYMENT_OUTCOME_UNKNOWN, paid once",
        async (where) => {
          const third = await startSite({ cors: "any" });
          const seller = await startSite({ upstream: h.stack.seller.url, cors: "expose" });
          const page = await startSite();
          const path = `/redirect?to=${where === "a third origin" ? `${third.url}/landing` : "/free"}`;
          const { buyer, before, result } = await payFrom(page.url, { url: `${seller.url}${path}`, via });

          expect(third.seen).toEqual([]);
          expect(rows(seller)).toEqual([
            ["GET", path, false, 402],
            ["GET", path, true, 302],
          ]);
          expectOutcomeUnknown(result);
          await expectSettledOnceAt(
            seller.seen.find((s) => s.paymentSignature),
            buyer,
            before,
          );
        },
      );
    },
  );

  describe("a seller on another origin whose preflight does not allow PAYMENT-SIGNATURE", () => {
    it.each(
      (
        [
          ["fetch", "GET", { url: "/weather", method: "GET" }],
          ["fetch", "POST", { url: "/echo", method: "POST", json: { n: 1 } }],
          ["axios", "GET", { url: "/weather", method: "GET" }],
          ["axios", "POST", { url: "/echo", method: "POST", json: { n: 1 } }],
          ["axios-fetch", "GET", { url: "/weather", method: "GET" }],
        ] as const
      ).filter(([via]) => crossOrigin(name).includes(via)),
    )(
      "%s, %s: PAYMENT_NOT_SENT naming Access-Control-Allow-Headers, the seller never sees the payment",
      async (via, _, request) => {
        // Origin allowed, PAYMENT-REQUIRED and PAYMENT-RESPONSE exposed, but the preflight allows Content-Type only.
        const seller = await startSite({ upstream: h.stack.seller.url, cors: "expose-no-payment-header" });
        const page = await startSite();
        const { buyer, before, result } = await payFrom(page.url, {
          ...request,
          url: `${seller.url}${request.url}`,
          via,
        });

        // The browser asked for the header in a preflight, was refused, and sent nothing with it.
        expect(seller.seen.filter((s) => s.paymentSignature)).toEqual([]);
        expect(
          seller.seen.some((s) => s.method === "OPTIONS" && s.requestHeaders?.split(",").includes("payment-signature")),
        ).toBe(true);
        expect(seller.requests().filter((s) => s.method === request.method)).toHaveLength(1); // the unpaid request only
        const failed = expectError(result, "PAYMENT_NOT_SENT");
        expect(failed.error).toMatchObject({ name: "PaymentNotSentError", phase: "send", hasPaymentHeader: true });
        expect(failed.error.message).toMatch(/Access-Control-Allow-Headers/);
        expect(failed.error.message).toMatch(/PAYMENT-SIGNATURE/);
        expect(result).toMatchObject({ signed: 1, outcomes: [{ settled: false, code: "PAYMENT_NOT_SENT" }] });
        expect(await balances(buyer)).toEqual(before);
      },
    );
  });

  // Firefox only: Chromium drops the User-Agent a page sets.
  if (name === "firefox")
    it("axios's fetch adapter (Firefox): the unpaid request asks for User-Agent, the seller's CORS refuses, nothing signed", async () => {
      // axios's own behaviour, before x402-pay has a 402 to act on: the caller's instance sends User-Agent.
      const seller = await startSite({ upstream: h.stack.seller.url, cors: "expose" });
      const page = await startSite();
      const { buyer, before, result } = await payFrom(page.url, { url: `${seller.url}/weather`, via: "axios-fetch" });

      expect(result).toMatchObject({ ok: false, error: { name: "AxiosError", isX402Error: false }, signed: 0 });
      expect(seller.seen.map((s) => [s.method, s.requestHeaders])).toEqual([["OPTIONS", "user-agent"]]);
      expect(await balances(buyer)).toEqual(before);
    });

  describe("a seller on another origin with full CORS that drops the connection of the paid request", () => {
    it.each(crossOrigin(name))(
      "%s: the payment left, so PAYMENT_OUTCOME_UNKNOWN, never PAYMENT_NOT_SENT",
      async (via) => {
        // The seller gets the paid request and settles; its answer never reaches the browser. fetch then
        // probes the preflight, which allows the header: the failure was not the browser's refusal.
        const seller = await startSite({
          upstream: h.stack.seller.url,
          cors: "expose",
          answer: (seen) => (seen.method === "GET" && seen.paymentSignature ? { hangUp: true } : undefined),
        });
        const page = await startSite();
        const { buyer, before, result } = await payFrom(page.url, { url: `${seller.url}/weather`, via });

        // Chromium itself may send a GET again when a reused connection drops without an answer: the
        // identical signed header, which cannot pay twice.
        const paid = seller.requests().filter((s) => s.method === "GET" && s.paymentSignature);
        expect(paid.length).toBeGreaterThanOrEqual(1);
        expect(new Set(paid.map((s) => s.paymentSignature)).size).toBe(1);
        expectOutcomeUnknown(result);
        await expectSettledOnceAt(paid[0], buyer, before);
      },
    );
  });

  describe.each(vias)("%s in the page: a first request the browser redirected to a 402", (via) => {
    it("a GET is paid where the 402 came from", async () => {
      const site = await startSite({
        upstream: h.stack.seller.url,
        answer: redirectAll("/moved/weather", 302, "/weather"),
      });
      const { buyer, before, result } = await payFrom(site.url, { url: "/moved/weather", via });

      await expectPaid(result, buyer, before, WEATHER);
      if (!result.ok) throw new Error("unreachable");
      expect(result.receipt?.url).toBe(`${site.url}/weather`);
      expect(rows(site)).toEqual([
        ["GET", "/moved/weather", false, 302],
        ["GET", "/weather", false, 402],
        ["GET", "/weather", true, 200],
      ]);
      expect(signedResourceUrl(site.seen[2]!.paymentSignature)).toBe(`${site.url}/weather`);
    });

    it("a POST is refused before signing: BODY_NOT_REPLAYABLE, nothing signed, nothing paid", async () => {
      const site = await startSite({ upstream: h.stack.seller.url, answer: redirectAll("/moved/echo", 307, "/echo") });
      const { buyer, before, result } = await payFrom(site.url, {
        url: "/moved/echo",
        method: "POST",
        json: { n: 1 },
        via,
      });

      const failed = expectError(result, "BODY_NOT_REPLAYABLE");
      expect(failed.error.hasPaymentHeader).toBe(false);
      expect(result).toMatchObject({ signed: 0, outcomes: [{ settled: false, code: "BODY_NOT_REPLAYABLE" }] });
      expect(rows(site)).toEqual([
        ["POST", "/moved/echo", false, 307],
        ["POST", "/echo", false, 402],
      ]);
      expect(await balances(buyer)).toEqual(before);
    });
  });
});
