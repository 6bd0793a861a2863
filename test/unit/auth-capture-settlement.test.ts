/**
 * `checkSettlement` of an auth-capture payment, on a scripted chain: a transaction of the escrow counts what it moved
 * into the escrow from the payer or out of it to the payee, but when the signed payload is known, only once its own
 * authorization was used (an escrow's transaction moves other buyers' payments too).
 */
import { describe, expect, it } from "vitest";
import { checkSettlement, createX402Client } from "../../src";
import { AUTH_CAPTURE_DEPLOYMENTS, authCaptureEvm, evmSettlement } from "../../src/evm";
import { account, PAY_TO, TX_HASH, USDC_BASE_SEPOLIA } from "../support/seller";

const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const topic = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`;
const amount = (value: bigint) => `0x${value.toString(16).padStart(64, "0")}`;
const STORE = "0x00000000000000000000000000000000000051ae";
const NOW = 1_800_000_000;

/** A capture: the escrow's event, then its token store paying the payee. */
const capture = {
  status: "0x1",
  logs: [
    {
      address: AUTH_CAPTURE_DEPLOYMENTS[0]!.escrow,
      topics: [`0x${"ab".repeat(32)}`, `0x${"cd".repeat(32)}`],
      data: "0x",
    },
    { address: USDC_BASE_SEPOLIA, topics: [TRANSFER, topic(STORE), topic(PAY_TO)], data: amount(9_900n) },
  ],
};

/** A chain whose `authorizationState` answers `used`, and whose latest block is at NOW. */
function chain(used: boolean) {
  return {
    request: async ({ method }: { method: string }) => {
      if (method === "eth_getTransactionReceipt") return capture;
      if (method === "eth_call") return amount(used ? 1n : 0n);
      if (method === "eth_getBlockByNumber") return { timestamp: `0x${NOW.toString(16)}` };
      throw new Error(`unexpected ${method}`);
    },
  };
}

/** The signed payload of this payment: an EIP-3009 authorization, valid until after NOW. */
const payload = {
  x402Version: 2,
  payload: {
    authorization: {
      from: account.address,
      to: AUTH_CAPTURE_DEPLOYMENTS[0]!.eip3009Collector,
      value: "10000",
      validAfter: "0",
      validBefore: String(NOW + 60),
      nonce: `0x${"11".repeat(32)}`,
    },
    signature: `0x${"22".repeat(65)}`,
    salt: `0x${"33".repeat(32)}`,
  },
};

const query = {
  scheme: "auth-capture",
  network: "eip155:84532",
  transaction: TX_HASH,
  asset: USDC_BASE_SEPOLIA,
  payTo: PAY_TO,
  payer: account.address,
  amount: "10000",
};

const clientOn = (used: boolean) =>
  createX402Client({
    schemes: [authCaptureEvm({ signer: account, settlement: evmSettlement({ rpc: { "eip155:84532": chain(used) } }) })],
  });

describe("checkSettlement of an auth-capture payment", () => {
  it("a capture the seller names while this payment's authorization is unused is not believed: pending", async () => {
    const status = await checkSettlement(clientOn(false), { ...query, payload });
    expect(status).toMatchObject({ state: "pending", transaction: TX_HASH });
    expect(status.reason).toContain("the signed authorization can still move money");
  });

  it("the same capture, once the authorization was used: settled, for what reached the payee", async () => {
    expect(await checkSettlement(clientOn(true), { ...query, payload })).toMatchObject({
      state: "settled",
      transaction: TX_HASH,
      amount: "9900",
    });
  });

  it("no transaction named, the authorization used: settled, at most the amount (the hold may be voided in part)", async () => {
    const status = await checkSettlement(clientOn(true), { ...query, transaction: undefined, payload });
    expect(status).toMatchObject({ state: "settled", transaction: undefined, amount: undefined });
    expect(status.reason).toContain("the signed authorization was used on chain");
  });

  it("without the payload (a ledger record), the escrow's payment to the payee counts", async () => {
    expect(await checkSettlement(clientOn(false), query)).toMatchObject({ state: "settled", amount: "9900" });
  });
});

describe("the generic check follows the rule of the scheme that paid, not the scheme's name", () => {
  const settlement = () => evmSettlement({ rpc: { "eip155:84532": chain(false) } });
  const named = { ...query, scheme: "a-new-escrow-scheme" };

  it("a scheme of any name whose rule names the escrow: the escrow's payment to the payee counts", async () => {
    const rule = { amount: "at-most", escrows: [AUTH_CAPTURE_DEPLOYMENTS[0]!.escrow] } as const;
    expect(await settlement().check(named, undefined, rule)).toMatchObject({ state: "settled", amount: "9900" });
  });

  it("the same transaction under exact's rule (no escrow): nothing moved from the payer to the payee", async () => {
    const status = await settlement().check({ ...query }, undefined);
    expect(status).toMatchObject({ state: "failed", transaction: TX_HASH });
    expect(status.reason).toContain("moved none of this payment");
  });

  it("an at-most rule leaves the amount of a used authorization unknown; exact's names the amount signed", async () => {
    const used = evmSettlement({ rpc: { "eip155:84532": chain(true) } });
    const noTx = { ...named, transaction: undefined, payload };
    expect(await used.check(noTx, undefined, { amount: "at-most" })).toMatchObject({ amount: undefined });
    expect(await used.check(noTx, undefined, { amount: "exact" })).toMatchObject({ amount: "10000" });
  });
});
