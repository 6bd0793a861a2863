/**
 * The engine's seam for schemes that keep state (`PaymentScheme.open`), with a stand-in scheme and an msw seller: the
 * limit it is given is the policy's, a deposit beyond it is refused before signing, a corrected refusal is paid once
 * more and never twice, each attempt is reported once, and every open payment is closed.
 */
import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { createX402Client, memoryLedger, type SpendPolicy } from "../../src";
import type { OpenPayment, PaymentScheme } from "../../src/contracts";
import { EVM_KNOWN_ASSETS } from "../../src/evm";
import { useMswServer } from "../support/msw";
import { PAY_TO, SELLER, USDC_BASE_SEPOLIA, encodeHeader, v2Challenge, v2Requirement } from "../support/seller";
import { fetchWrapper, rejection } from "../support/wrappers";

const server = useMswServer();
const URL_ = `${SELLER}/stateful`;
const PAYER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const UNKNOWN_ASSET = "0x1111111111111111111111111111111111111111";

/** A scheme that keeps state, recording what the engine asks of it. */
function statefulScheme({ deposit, corrects = false }: { deposit?: string; corrects?: boolean } = {}) {
  const log = { opened: 0, signed: 0, closed: 0, limits: [] as (bigint | undefined)[], refusals: [] as unknown[] };
  const scheme: PaymentScheme = {
    scheme: "stateful",
    networks: ["eip155:84532"],
    x402Versions: [2],
    payer: PAYER,
    knownAssets: EVM_KNOWN_ASSETS,
    check: () => undefined,
    createPayload: () => Promise.reject(new Error("a stateful scheme signs through open")),
    async open(requirement, { limit }): Promise<OpenPayment> {
      log.opened++;
      log.limits.push(limit);
      return {
        deposit,
        kind: deposit ? "deposit" : "voucher",
        channel: `0x${"11".repeat(32)}`,
        async createPayload() {
          log.signed++;
          return { payload: { attempt: log.signed } };
        },
        accepted: async () => ({ charge: requirement.amount }),
        async refused(_challenge, reason) {
          log.refusals.push(reason);
          return corrects;
        },
        async close() {
          log.closed++;
        },
      };
    },
  };
  return { scheme, log };
}

/** A seller of `asset` at `amount` that answers every payment with `status`: 200, or a refusal with new terms. */
function seller({ status = 402, asset = USDC_BASE_SEPOLIA, amount = "1000" } = {}) {
  const paid: unknown[] = [];
  const challenge = (error?: string) =>
    v2Challenge({
      ...(error && { error }),
      accepts: [v2Requirement({ scheme: "stateful", asset, amount, payTo: PAY_TO })],
    });
  server.use(
    http.get(URL_, ({ request }) => {
      const header = request.headers.get("payment-signature");
      if (header) paid.push(header);
      if (!header)
        return new HttpResponse("{}", { status: 402, headers: { "PAYMENT-REQUIRED": encodeHeader(challenge()) } });
      if (status === 200) return HttpResponse.json({ ok: true });
      // A refusal with new terms: a 402, or another status carrying them (412).
      const body = challenge("invalid_batch_settlement_evm_cumulative_amount_mismatch");
      return new HttpResponse("{}", { status, headers: { "PAYMENT-REQUIRED": encodeHeader(body) } });
    }),
  );
  return { paid };
}

const client = (scheme: PaymentScheme, policy?: SpendPolicy, plugins = [memoryLedger()]) =>
  createX402Client({ schemes: [scheme], policy, plugins });

describe("a scheme that keeps state: the engine's seam", () => {
  it("a refusal the scheme corrects is paid once more, never twice; each attempt reported once, each closed", async () => {
    const { paid } = seller();
    const { scheme, log } = statefulScheme({ corrects: true });
    const ledger = memoryLedger();
    const error = await rejection(fetchWrapper.send(client(scheme, undefined, [ledger]), { url: URL_ }));
    expect(error.code).toBe("PAYMENT_REJECTED");
    expect([paid.length, log.signed, log.refusals.length]).toEqual([2, 2, 2]);
    expect([log.opened, log.closed]).toEqual([2, 2]);
    expect(ledger.list.map((r) => [r.outcome, r.code])).toEqual([
      ["rejected", "PAYMENT_REJECTED"],
      ["rejected", "PAYMENT_REJECTED"],
    ]);
  });

  it("a refusal the scheme does not correct is not paid again", async () => {
    const { paid } = seller();
    const { scheme, log } = statefulScheme();
    expect((await rejection(fetchWrapper.send(client(scheme), { url: URL_ }))).code).toBe("PAYMENT_REJECTED");
    expect([paid.length, log.signed, log.closed]).toEqual([1, 1, 1]);
  });

  it("only a 402 is offered to the scheme to correct from: another refusal is not paid again", async () => {
    const { paid } = seller({ status: 412 });
    const { scheme, log } = statefulScheme({ corrects: true });
    expect((await rejection(fetchWrapper.send(client(scheme), { url: URL_ }))).code).toBe("PAYMENT_REJECTED");
    expect([paid.length, log.signed, log.refusals.length]).toEqual([1, 1, 0]);
  });

  it("a deposit beyond what the policy lets one payment move is refused before signing; one at the limit is paid", async () => {
    seller({ status: 200 });
    const over = statefulScheme({ deposit: "20001" });
    const policy = { maxAmountPerPayment: "$0.02" as const };
    const error = await rejection(fetchWrapper.send(client(over.scheme, policy), { url: URL_ }));
    expect(error.code).toBe("PAYMENT_REFUSED");
    expect(error.message).toMatch(
      /deposit 20001 base units, over what the spend policy lets one payment move \(20000\)/,
    );
    expect(error.details.url).toBe(URL_);
    expect([over.log.signed, over.log.closed]).toEqual([0, 1]);
    const at = statefulScheme({ deposit: "20000" });
    expect((await fetchWrapper.send(client(at.scheme, policy), { url: URL_ })).status).toBe(200);
    expect(at.log.signed).toBe(1);
    // No cap at all: no limit to hold a deposit to.
    const uncapped = statefulScheme({ deposit: "1000000000000" });
    const open = { maxAmountPerPayment: false as const };
    expect((await fetchWrapper.send(client(uncapped.scheme, open), { url: URL_ })).status).toBe(200);
  });

  it.each<[string, SpendPolicy | undefined, string, bigint | undefined]>([
    ["the USD cap, in the asset's units", { maxAmountPerPayment: "$0.05" }, USDC_BASE_SEPOLIA, 50_000n],
    [
      "the asset cap when it is lower",
      {
        maxAmountPerPayment: "$0.05",
        assetCaps: [{ network: "eip155:84532", asset: USDC_BASE_SEPOLIA, maxAmount: "7000" }],
      },
      USDC_BASE_SEPOLIA,
      7000n,
    ],
    [
      "the USD cap when it is lower",
      {
        maxAmountPerPayment: "$0.005",
        assetCaps: [{ network: "eip155:84532", asset: USDC_BASE_SEPOLIA, maxAmount: "7000" }],
      },
      USDC_BASE_SEPOLIA,
      5000n,
    ],
    [
      "an asset of unknown worth: its cap alone",
      {
        maxAmountPerPayment: "$0.05",
        assetCaps: [{ network: "eip155:84532", asset: UNKNOWN_ASSET, maxAmount: "123456" }],
      },
      UNKNOWN_ASSET,
      123_456n,
    ],
    [
      "another network's cap does not apply",
      {
        maxAmountPerPayment: "$0.05",
        assetCaps: [
          { network: "eip155:8453", asset: USDC_BASE_SEPOLIA, maxAmount: "10" },
          { network: "eip155:84532", asset: USDC_BASE_SEPOLIA, maxAmount: "9000" },
        ],
      },
      USDC_BASE_SEPOLIA,
      9000n,
    ],
    ["no cap at all", { maxAmountPerPayment: false }, USDC_BASE_SEPOLIA, undefined],
  ])("the limit a deposit is sized within: %s", async (_, policy, asset, limit) => {
    seller({ status: 200, asset });
    const { scheme, log } = statefulScheme();
    await fetchWrapper.send(client(scheme, policy), { url: URL_ });
    expect(log.limits).toEqual([limit]);
  });
});
