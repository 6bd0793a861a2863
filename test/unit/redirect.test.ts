/**
 * redirectHop, the rules every adapter follows by hand: which headers stay behind. Its contract
 * gives the names in lower case, whatever case the caller used for the guarded (payment) headers.
 */
import { describe, expect, it } from "vitest";
import { redirectHop } from "../../src/handshake";

const from = { url: "https://seller.example/premium", method: "GET" };

describe("redirectHop: headers left behind", () => {
  it("to another origin: the guarded headers (lower case) and credentials", () => {
    const hop = redirectHop(from, 302, "https://other.example/landing", {
      guarded: ["PAYMENT-SIGNATURE", "X-Payment"],
    });
    expect(hop.dropHeaders).toEqual([
      "payment-signature",
      "x-payment",
      "authorization",
      "cookie",
      "proxy-authorization",
    ]);
  });

  it("on the same origin after a hop that reported its settlement: the guarded headers only", () => {
    const hop = redirectHop(from, 307, "/landing", { guarded: ["PAYMENT-SIGNATURE"], settled: true });
    expect(hop).toEqual({
      url: "https://seller.example/landing",
      method: "GET",
      dropBody: false,
      dropHeaders: ["payment-signature"],
    });
  });
});
