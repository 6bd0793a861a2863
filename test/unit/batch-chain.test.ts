/**
 * What batch-settlement reads on chain (src/evm/batch/chain.ts), through an EIP-1193 requester on Base Sepolia: a
 * channel's two words, none where there is no contract, who signed a digest (`ecrecover`, v as 0/1 or 27/28), and no
 * read for a signature of the wrong length or a network without an RPC.
 */
import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import type { EvmRequester } from "../../src/evm";
import { channelReader } from "../../src/evm/batch/chain";

const NETWORK = "eip155:84532";
const ID = `0x${"ab".repeat(32)}` as Hex;
const word = (n: bigint) => n.toString(16).padStart(64, "0");

/** A requester on 84532 whose eth_call answers `answer(data, to)`; the calls it got. */
function chain(answer: (data: Hex, to: string) => string) {
  const calls: { to: string; data: Hex }[] = [];
  const rpc: EvmRequester = {
    async request({ method, params }) {
      if (method === "eth_chainId") return "0x14a34";
      const [{ to, data }] = params as [{ to: string; data: Hex }];
      calls.push({ to, data });
      return answer(data, to);
    },
  };
  return { reader: channelReader(rpc, 5_000)!, calls };
}

describe("batch-settlement's chain reads", () => {
  it("a channel: its balance and what was claimed, the two words the contract answers", async () => {
    const { reader, calls } = chain(() => `0x${word(10_000n)}${word(3_000n)}`);
    expect(await reader.channel(NETWORK, ID)).toEqual({ balance: 10_000n, totalClaimed: 3_000n });
    expect(calls[0]!.data.endsWith(ID.slice(2))).toBe(true);
  });

  it("no contract there (an empty answer, or one word): no channel", async () => {
    for (const answer of ["0x", `0x${word(5n)}`])
      expect(await chain(() => answer).reader.channel(NETWORK, ID)).toEqual({ balance: 0n, totalClaimed: 0n });
  });

  it("who signed: ecrecover's address, lower case; v of 0 or 1 asked as 27 or 28", async () => {
    const signer = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
    const { reader, calls } = chain(() => `0x${"0".repeat(24)}${signer.slice(2)}`);
    const r = "11".repeat(32);
    const s = "22".repeat(32);
    for (const [v, asked] of [
      ["00", 27n],
      ["01", 28n],
      ["1b", 27n],
      ["1c", 28n],
    ] as const) {
      expect(await reader.signerOf(NETWORK, `0x${"33".repeat(32)}`, `0x${r}${s}${v}`)).toBe(signer.toLowerCase());
      const data = calls.at(-1)!.data;
      expect(calls.at(-1)!.to.toLowerCase()).toBe("0x0000000000000000000000000000000000000001");
      // digest, v, r, s: four words.
      expect(data.slice(2)).toBe(`${"33".repeat(32)}${word(asked)}${r}${s}`);
    }
  });

  it("a signature that is not 65 bytes of hex is read by no one: no call", async () => {
    const { reader, calls } = chain(() => `0x${"0".repeat(64)}`);
    for (const signature of [
      `0x${"1".repeat(129)}`,
      `0x${"1".repeat(131)}`,
      `1x${"1".repeat(130)}`,
      `0x${"g".repeat(130)}`,
    ])
      expect(await reader.signerOf(NETWORK, `0x${"33".repeat(32)}`, signature)).toBeUndefined();
    expect(calls).toHaveLength(0);
  });

  it("ecrecover recovering none (zero, or not one word) is no signer", async () => {
    const good = `0x${"11".repeat(65)}`;
    for (const answer of [`0x${"0".repeat(64)}`, "0x", `0x${"0".repeat(24)}${"ab".repeat(20)}00`])
      expect(await chain(() => answer).reader.signerOf(NETWORK, `0x${"33".repeat(32)}`, good)).toBeUndefined();
  });

  it("a network the RPCs given do not name is an RpcError naming it; no RPC at all is no reader", async () => {
    const rpc = { [NETWORK]: { request: async () => "0x14a34" } as EvmRequester };
    await expect(channelReader(rpc, 5_000)!.channel("eip155:1", ID)).rejects.toMatchObject({
      code: "RPC_FAILED",
      message: "batchSettlementEvm: no RPC was given for eip155:1.",
    });
    expect(channelReader(undefined, 5_000)).toBeUndefined();
  });
});
