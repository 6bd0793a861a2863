/**
 * Receipts are kept beside the answer, not on it: `getPaymentReceipt` finds them for the answer and
 * (for a fetch Response) its clones, and the answer otherwise stays as the HTTP library made it.
 */
import { describe, expect, it } from "vitest";
import { getPaymentReceipt, type PaymentReceipt } from "../../src";
import { recordReceipt } from "../../src/handshake/receipts";

const receipt = { url: "https://seller.example/premium", settled: true } as unknown as PaymentReceipt;

describe("recording a receipt", () => {
  it("an answer without clone() (axios's) gains no property", () => {
    const answer = { status: 200, data: "ok" };
    recordReceipt(answer, receipt);
    expect(getPaymentReceipt(answer)).toEqual(receipt);
    expect(Object.getOwnPropertyNames(answer)).toEqual(["status", "data"]);
    expect("clone" in answer).toBe(false);
  });

  it("a Response's clones carry the receipt, and clone stays an ordinary method the caller may replace or spy on", () => {
    const answer = new Response("ok");
    recordReceipt(answer, receipt);
    expect(getPaymentReceipt(answer.clone())).toEqual(receipt);

    const replaced = () => answer;
    answer.clone = replaced;
    expect(answer.clone).toBe(replaced);
    delete (answer as { clone?: unknown }).clone;
    expect(answer.clone).toBe(Response.prototype.clone);
  });
});
