/**
 * A batch-settlement seller for HTTP-level tests (msw), keeping count the way the reference server does: a voucher
 * must be exactly what it charged so far plus the price; otherwise a corrective 402 with its `channelState` and the
 * last `voucherState` it holds. Vouchers are checked with viem (written independently of src/). Its chain is an
 * in-memory stand-in answering `eth_chainId` and `channels(bytes32)` over the EIP-1193 `request` shape: the real
 * contract and the reference server run in test/interop/batch-*.test.ts.
 */
import { http, HttpResponse } from "msw";
import { decodeAbiParameters, encodeAbiParameters, recoverAddress, recoverTypedDataAddress, type Hex } from "viem";
import { PAY_TO, SELLER, USDC_BASE_SEPOLIA, decodeHeader, encodeHeader } from "./seller";

export const BATCH_PATH = "/metered";
export const RECEIVER_AUTHORIZER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
export const PRICE = 1000n;
const SETTLEMENT_CONTRACT = "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003";

export function batchRequirement(over: Record<string, unknown> = {}) {
  return {
    scheme: "batch-settlement",
    network: "eip155:84532",
    amount: String(PRICE),
    asset: USDC_BASE_SEPOLIA,
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: "USDC", version: "2", receiverAuthorizer: RECEIVER_AUTHORIZER, withdrawDelay: 900 },
    ...over,
  };
}

interface Channel {
  balance: bigint;
  /** What the seller counts as charged. */
  charged: bigint;
  /** What the seller claimed on chain. */
  claimed: bigint;
  signedMax: bigint;
  signature: Hex | undefined;
}

/** What a lying seller does instead of the truth. */
export interface Lies {
  /** Added to the `chargedCumulativeAmount` it reports after a paid call. */
  reportExtra?: bigint;
  /** `chargedAmount` reported instead of the price. */
  chargedAmount?: string;
  /** The corrective 402 says this much charged (with its real voucherState). */
  correctiveCharged?: bigint;
  /** A deposit is answered 402 with a pending settlement (its transaction lands later: the seller keeps it). */
  pendingDeposit?: boolean;
  /** As `pendingDeposit`, but the transaction never lands: the seller forgets the channel. */
  lostDeposit?: boolean;
}

export function createBatchSeller(options: { lies?: Lies; delayMs?: number; extra?: Record<string, unknown> } = {}) {
  const channels = new Map<string, Channel>();
  const vouchers: { channelId: string; max: bigint; kind: string }[] = [];
  let lies = options.lies ?? {};
  const base = batchRequirement();
  const requirement = options.extra ? { ...base, extra: { ...base.extra, ...options.extra } } : base;
  const challenge = (extra?: Record<string, unknown>, error?: string) => ({
    x402Version: 2,
    ...(error && { error }),
    resource: { url: `${SELLER}${BATCH_PATH}` },
    accepts: [extra ? { ...requirement, extra: { ...requirement.extra, ...extra } } : requirement],
  });
  const refusal = (body: unknown) =>
    new HttpResponse(JSON.stringify({}), { status: 402, headers: { "PAYMENT-REQUIRED": encodeHeader(body) } });

  const handler = http.get(`${SELLER}${BATCH_PATH}`, async ({ request }) => {
    const header = request.headers.get("payment-signature");
    if (!header) return refusal(challenge());
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    const { payload } = decodeHeader(header);
    const id = String(payload.voucher.channelId).toLowerCase();
    const max = BigInt(payload.voucher.maxClaimableAmount);
    const signer = await recoverTypedDataAddress({
      domain: { name: "x402 Batch Settlement", version: "1", chainId: 84532, verifyingContract: SETTLEMENT_CONTRACT },
      types: {
        Voucher: [
          { name: "channelId", type: "bytes32" },
          { name: "maxClaimableAmount", type: "uint128" },
        ],
      },
      primaryType: "Voucher",
      message: { channelId: id as Hex, maxClaimableAmount: max },
      signature: payload.voucher.signature,
    });
    if (signer.toLowerCase() !== String(payload.channelConfig.payerAuthorizer).toLowerCase())
      return refusal(challenge(undefined, "invalid_batch_settlement_evm_voucher_signature"));
    const channel = channels.get(id) ?? { balance: 0n, charged: 0n, claimed: 0n, signedMax: 0n, signature: undefined };
    const deposit = payload.type === "deposit" ? BigInt(payload.deposit.amount) : 0n;
    const expected = channel.charged + (payload.type === "refund" ? 0n : PRICE);
    if (max !== expected) {
      const charged = lies.correctiveCharged ?? channel.charged;
      return refusal(
        challenge(
          {
            channelState: {
              channelId: id,
              balance: String(channel.balance),
              totalClaimed: String(channel.claimed),
              withdrawRequestedAt: 0,
              refundNonce: "0",
              chargedCumulativeAmount: String(charged),
            },
            ...(channel.signature && {
              voucherState: { signedMaxClaimable: String(channel.signedMax), signature: channel.signature },
            }),
          },
          "invalid_batch_settlement_evm_cumulative_amount_mismatch",
        ),
      );
    }
    if (max > channel.balance + deposit)
      return refusal(challenge(undefined, "invalid_batch_settlement_evm_cumulative_exceeds_balance"));
    if (payload.type === "refund") {
      const refunded = payload.amount ? BigInt(payload.amount) : channel.balance - channel.charged;
      channel.balance -= refunded;
      channels.set(id, channel);
      vouchers.push({ channelId: id, max, kind: "refund" });
      const settle = {
        success: true,
        transaction: `0x${"cd".repeat(32)}`,
        network: "eip155:84532",
        amount: String(refunded),
      };
      return HttpResponse.json(
        { message: "Refund acknowledged" },
        { headers: { "PAYMENT-RESPONSE": encodeHeader(settle) } },
      );
    }
    Object.assign(channel, {
      balance: channel.balance + deposit,
      charged: max,
      signedMax: max,
      signature: payload.voucher.signature,
    });
    channels.set(id, channel);
    vouchers.push({ channelId: id, max, kind: payload.type });
    if (deposit && lies.lostDeposit) channels.delete(id);
    if (deposit && (lies.pendingDeposit || lies.lostDeposit)) {
      const pending = {
        success: false,
        errorReason: "settlement_pending",
        transaction: `0x${"ef".repeat(32)}`,
        network: "eip155:84532",
      };
      return new HttpResponse("{}", { status: 402, headers: { "PAYMENT-RESPONSE": encodeHeader(pending) } });
    }
    const settle = {
      success: true,
      payer: String(payload.channelConfig.payer).toLowerCase(),
      transaction: deposit ? `0x${"ef".repeat(32)}` : "",
      network: "eip155:84532",
      amount: deposit ? String(deposit) : "",
      extra: {
        channelState: {
          channelId: id,
          balance: String(channel.balance),
          totalClaimed: String(channel.claimed),
          withdrawRequestedAt: 0,
          refundNonce: "0",
          chargedCumulativeAmount: String(max + (lies.reportExtra ?? 0n)),
        },
        chargedAmount: lies.chargedAmount ?? String(PRICE),
      },
    };
    return HttpResponse.json({ data: "metered" }, { headers: { "PAYMENT-RESPONSE": encodeHeader(settle) } });
  });

  /** The chain: `channels(id)` answers the seller's balance and claimed amount. */
  const rpc = {
    async request({ method, params }: { method: string; params?: readonly unknown[] }) {
      if (method === "eth_chainId") return "0x14a34";
      if (method !== "eth_call") throw new Error(`unexpected ${method}`);
      const { to, data } = (params as [{ to: Hex; data: Hex }])[0];
      if (BigInt(to) === 1n) {
        // The ecrecover precompile: hash, v, r, s.
        const [hash, v, r, s] = decodeAbiParameters(
          [{ type: "bytes32" }, { type: "uint8" }, { type: "bytes32" }, { type: "bytes32" }],
          data,
        );
        const signer = await recoverAddress({ hash, signature: { r, s, v: BigInt(v) } });
        return encodeAbiParameters([{ type: "address" }], [signer]);
      }
      const [id] = decodeAbiParameters([{ type: "bytes32" }], `0x${data.slice(10)}` as Hex);
      const channel = channels.get(id.toLowerCase());
      return encodeAbiParameters(
        [{ type: "uint128" }, { type: "uint128" }],
        [channel?.balance ?? 0n, channel?.claimed ?? 0n],
      );
    },
  };

  return {
    handler,
    rpc,
    channels,
    vouchers,
    url: `${SELLER}${BATCH_PATH}`,
    /** The seller claims what it charged (as its batch claim would). */
    claim() {
      for (const channel of channels.values()) channel.claimed = channel.charged;
    },
    lie(next: Lies) {
      lies = next;
    },
    /** The seller forgets a channel's count (a restart without storage). */
    forget() {
      channels.clear();
    },
  };
}
