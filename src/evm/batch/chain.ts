/** What batch-settlement reads on chain: a channel's balance and what its seller has claimed. */
import { RpcError } from "../../errors";
import { routeChainReads, type EvmRpcOption } from "../chain";
import type { Hex } from "../signer";
import { erc20Call } from "../words";
import { BATCH_SETTLEMENT_ADDRESS, CHANNELS_SELECTOR } from "./wire";

/** A channel as the settlement contract holds it, in base units. */
export interface OnChainChannel {
  readonly balance: bigint;
  readonly totalClaimed: bigint;
}

/** The `ecrecover` precompile: who signed a digest, asked of the chain the channel lives on. */
const ECRECOVER: Hex = "0x0000000000000000000000000000000000000001";

/** What batch-settlement asks the chain of each network, through `rpc`; `undefined` without one. */
export function channelReader(rpc: EvmRpcOption | undefined, timeoutMs: number) {
  if (rpc === undefined) return undefined;
  const reads = routeChainReads(rpc, timeoutMs, "batchSettlementEvm", "the channel could not be checked");
  const on = (network: string, signal?: AbortSignal) => {
    const chain = reads(network, signal);
    if (!chain) {
      const message = `batchSettlementEvm: no RPC was given for ${network}.`;
      throw new RpcError(message, { details: { rpcMethod: "eth_call" } });
    }
    return chain;
  };
  return {
    /** The channel as the settlement contract holds it. */
    async channel(network: string, id: Hex, signal?: AbortSignal): Promise<OnChainChannel> {
      const data = await on(network, signal).call(
        BATCH_SETTLEMENT_ADDRESS,
        erc20Call(CHANNELS_SELECTOR, [id]),
        "channels",
      );
      // Two words: uint128 balance, uint128 totalClaimed (none: no contract there, no channel).
      if (data.length < 2 + 128) return { balance: 0n, totalClaimed: 0n };
      return { balance: BigInt(`0x${data.slice(2, 66)}`), totalClaimed: BigInt(`0x${data.slice(66, 130)}`) };
    },
    /** Who signed `digest` (a 65-byte r ‖ s ‖ v signature), lower-case; `undefined` when it recovers none. */
    async signerOf(network: string, digest: Hex, signature: string, signal?: AbortSignal): Promise<string | undefined> {
      if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
      const v = Number.parseInt(signature.slice(130), 16);
      const input = erc20Call(digest, [
        BigInt(v < 27 ? v + 27 : v),
        `0x${signature.slice(2, 66)}`,
        `0x${signature.slice(66, 130)}`,
      ]);
      const data = await on(network, signal).call(ECRECOVER, input, "ecrecover");
      return data.length === 66 && !/^0x0+$/.test(data) ? `0x${data.slice(26)}`.toLowerCase() : undefined;
    },
  };
}

export type ChannelReader = NonNullable<ReturnType<typeof channelReader>>;
