/**
 * The decision behind PAYMENT_NOT_SENT in a browser: after a cross-origin paid request failed, two
 * HEAD probes tell a CORS preflight that refused the payment header (the probe with the header fails,
 * the plain one passes) from a server that is down or blocks everything (both fail) and from a failure
 * after sending (both pass). A browser's CORS cannot run in Node, so the probes here are answered by a
 * fetch that plays the preflight's part; test/browser runs the same path against real CORS in Chromium.
 */
import { describe, expect, it } from "vitest";
import { PaymentNotSentError } from "../../src/entries/errors";
import { browserOrigin, throwIfPreflightRefused } from "../../src/handshake";

const url = "https://seller.example/premium";
const cause = new TypeError("Failed to fetch");

/** A fetch whose answer depends only on whether the probe carries headers; it records every call. */
function probing(withHeaders: "ok" | "fails", plain: "ok" | "fails") {
  const calls: { url: string; init: RequestInit; headers: [string, string][] }[] = [];
  const cancelled: string[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const headers = init.headers as [string, string][];
    calls.push({ url: String(input), init, headers });
    if ((headers.length > 0 ? withHeaders : plain) === "fails") throw new TypeError("Failed to fetch");
    const body = new ReadableStream({ cancel: () => void cancelled.push(String(input)) });
    return new Response(body, { status: 200 });
  }) as typeof fetch;
  return { fetchFn, calls, cancelled };
}

describe("a failed cross-origin paid request, probed", () => {
  it("the header refused, the plain request allowed: PAYMENT_NOT_SENT naming the headers and Access-Control-Allow-Headers, with the send's error as cause", async () => {
    const { fetchFn } = probing("fails", "ok");
    const error = await throwIfPreflightRefused(fetchFn, url, ["PAYMENT-SIGNATURE", "X-Trace"], { cause }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PaymentNotSentError);
    expect(error).toMatchObject({ code: "PAYMENT_NOT_SENT", cause });
    expect((error as Error).message).toBe(
      "The browser did not send the request: the server's CORS preflight must list PAYMENT-SIGNATURE, X-Trace in Access-Control-Allow-Headers.",
    );
  });

  it.each([
    { withHeaders: "ok", plain: "ok", case: "both probes pass (the request failed after it was sent)" },
    { withHeaders: "fails", plain: "fails", case: "both probes fail (the server is unreachable)" },
    { withHeaders: "ok", plain: "fails", case: "only the probe with the header passes" },
  ] as const)("$case: no verdict, the caller's error stands", async ({ withHeaders, plain }) => {
    const { fetchFn } = probing(withHeaders, plain);
    await expect(throwIfPreflightRefused(fetchFn, url, ["PAYMENT-SIGNATURE"], { cause })).resolves.toBeUndefined();
  });

  it("the probes are HEAD requests to the same URL without a body or redirects, the first with placeholder values, then a plain one", async () => {
    const { fetchFn, calls } = probing("fails", "ok");
    const init = { credentials: "include", mode: "cors", body: "order", method: "POST" } as const;
    await throwIfPreflightRefused(fetchFn, url, ["PAYMENT-SIGNATURE"], { cause, init }).catch(() => undefined);
    expect(calls.map((c) => c.url)).toEqual([url, url]);
    expect(calls.map((c) => c.headers)).toEqual([[["PAYMENT-SIGNATURE", "probe"]], []]);
    for (const { init: sent } of calls) {
      expect(sent).toMatchObject({
        method: "HEAD",
        body: null,
        redirect: "manual",
        credentials: "include",
        mode: "cors",
      });
    }
  });

  it("probe answers without a body (a HEAD's, in a browser) are read as passed", async () => {
    const calls: [string, string][][] = [];
    const fetchFn = (async (_: RequestInfo | URL, init: RequestInit = {}) => {
      const headers = init.headers as [string, string][];
      calls.push(headers);
      if (headers.length > 0) throw new TypeError("Failed to fetch");
      return new Response(null, { status: 200 });
    }) as typeof fetch;
    await expect(throwIfPreflightRefused(fetchFn, url, ["PAYMENT-SIGNATURE"], { cause })).rejects.toBeInstanceOf(
      PaymentNotSentError,
    );
    expect(calls).toHaveLength(2);
  });

  it("a probe that passes with the header ends there, its body released", async () => {
    const { fetchFn, calls, cancelled } = probing("ok", "ok");
    await throwIfPreflightRefused(fetchFn, url, ["PAYMENT-SIGNATURE"], { cause });
    expect(calls).toHaveLength(1);
    expect(cancelled).toEqual([url]);
  });
});

describe("browserOrigin", () => {
  const scope = globalThis as { document?: unknown; location?: unknown; WorkerGlobalScope?: unknown };

  it("is undefined in Node", () => {
    expect(browserOrigin()).toBeUndefined();
  });

  it.each([
    { where: "a page", set: () => void (scope.document = {}) },
    { where: "a worker", set: () => void (scope.WorkerGlobalScope = function WorkerGlobalScope() {}) },
  ])("is location.origin in $where", ({ set }) => {
    try {
      set();
      scope.location = { origin: "https://app.example" };
      expect(browserOrigin()).toBe("https://app.example");
    } finally {
      delete scope.document;
      delete scope.WorkerGlobalScope;
      delete scope.location;
    }
  });

  it("a document without a location (a DOM shim on a server) has no origin", () => {
    try {
      scope.document = {};
      expect(browserOrigin()).toBeUndefined();
    } finally {
      delete scope.document;
    }
  });

  it("a location alone (Deno has one) is not a browser", () => {
    try {
      scope.location = { origin: "https://app.example" };
      expect(browserOrigin()).toBeUndefined();
    } finally {
      delete scope.location;
    }
  });
});
