// batch-settlement's wire facts against the reference client (npm @x402/evm, batch-settlement/client): the channel
// id, and the deposit and voucher payloads signed for the same inputs, byte for byte.
import {
  BatchSettlementEvmScheme,
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from "@x402/evm/batch-settlement/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createX402Client, engineOf } from "../../src/client";
import { batchSettlementEvm, channelIdOf, type ChannelConfig } from "../../src/evm";
import { parseChallenge } from "../../src/protocol";
import { ANVIL_TEST_KEYS } from "../localnet/accounts";

const payer = privateKeyToAccount(ANVIL_TEST_KEYS[0]);
const sessionKey = privateKeyToAccount(ANVIL_TEST_KEYS[2]);
const NETWORK = "eip155:84532";
const requirement = {
  scheme: "batch-settlement",
  network: NETWORK,
  amount: "1000",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  maxTimeoutSeconds: 300,
  extra: {
    name: "USDC",
    version: "2",
    receiverAuthorizer: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
    withdrawDelay: 900,
    minDeposit: "10000",
  },
};
const challenge = parseChallenge({
  header: btoa(
    JSON.stringify({ x402Version: 2, resource: { url: "http://seller.test/weather" }, accepts: [requirement] }),
  ),
});
const request = { url: "http://seller.test/weather", method: "GET" };
const SALT = new Uint8Array(32).fill(7);
const NOW = 1_790_000_000_000;

afterEach(() => vi.restoreAllMocks());

/** Our payment for the challenge (default: the EIP-3009 one), from a fresh client. */
async function ours(options: Partial<Parameters<typeof batchSettlementEvm>[0]> = {}, offered = challenge) {
  const scheme = batchSettlementEvm({ signer: payer, randomBytes: () => SALT.slice(), now: () => NOW, ...options });
  const client = createX402Client({ schemes: [scheme], policy: { maxAmountPerPayment: "$5" } });
  return engineOf(client).createPayment(offered, request);
}

/** The reference's randomness and clock, fixed to ours. */
function fixReferenceRandomness() {
  vi.spyOn(Date, "now").mockReturnValue(NOW);
  vi.spyOn(globalThis.crypto, "getRandomValues").mockImplementation((array) => {
    (array as Uint8Array).set(SALT);
    return array;
  });
}

describe("batch-settlement wire", () => {
  it("computes the channel id the reference computes", () => {
    const config: ChannelConfig = {
      payer: payer.address,
      payerAuthorizer: sessionKey.address,
      receiver: requirement.payTo as `0x${string}`,
      receiverAuthorizer: requirement.extra.receiverAuthorizer as `0x${string}`,
      token: requirement.asset as `0x${string}`,
      withdrawDelay: 3600,
      salt: `0x${"ab".repeat(32)}`,
    };
    expect(channelIdOf(config, 84532)).toBe(computeChannelId(config, NETWORK).toLowerCase());
    expect(channelIdOf(config, 8453)).not.toBe(channelIdOf(config, 84532));
  });

  it("signs the deposit payload the reference signs for the same salt and time", async () => {
    const payment = await ours();
    const payload = payment.payload.payload as Record<string, unknown>;
    fixReferenceRandomness();
    const config = payload.channelConfig as ChannelConfig;
    // Deposit: 10 x the price, the seller's minDeposit; the first call's charge rides in the voucher.
    const reference = await createBatchSettlementEIP3009DepositPayload(
      payer,
      2,
      requirement as never,
      config,
      "10000",
      "1000",
    );
    expect(JSON.stringify(payload)).toBe(JSON.stringify(reference.payload));
    expect(payment.terms.deposit).toBe("10000");
    expect(payment.terms.amount).toBe("1000");
  });

  it("signs the Permit2 deposit payload the reference signs for the same nonce and time", async () => {
    const permit2 = { ...requirement, extra: { ...requirement.extra, assetTransferMethod: "permit2" } };
    const raw = { x402Version: 2, resource: { url: request.url }, accepts: [permit2] };
    const payment = await ours({}, parseChallenge({ header: btoa(JSON.stringify(raw)) }));
    fixReferenceRandomness();
    const reference = await new BatchSettlementEvmScheme(payer).createPaymentPayload(2, permit2 as never);
    expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(reference.payload));
    expect(payment.payload.payload).toMatchObject({ deposit: { authorization: { permit2Authorization: {} } } });
  });

  it("signs vouchers with the session key, deposits with the wallet", async () => {
    const payment = await ours({ voucherSigner: sessionKey });
    const payload = payment.payload.payload as { channelConfig: ChannelConfig; voucher: Record<string, string> };
    expect(payload.channelConfig.payerAuthorizer).toBe(sessionKey.address);
    expect(payload.channelConfig.payer).toBe(payer.address);
    const reference = await signVoucher(sessionKey, payload.voucher.channelId as `0x${string}`, "1000", NETWORK);
    expect(payload.voucher).toEqual(reference);
  });
});
