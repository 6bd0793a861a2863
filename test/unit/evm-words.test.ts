// The EVM encodings x402-pay writes itself (EIP-55 addresses, hex, fixed ERC-20 calldata), checked
// against viem, which the same bytes must match: viem is the oracle here, not the implementation.
import { decodeFunctionData, encodeFunctionData, erc20Abi, getAddress, isAddress, maxUint256, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { bytesToHex } from "../../src/protocol";
import { ERC20, MAX_UINT256, erc20Call } from "../../src/evm/words";
import { checksumAddress } from "../../src/protocol";

const noncesAbi = [
  {
    type: "function",
    name: "nonces",
    stateMutability: "view",
    inputs: [{ name: "owner", type: "address" }],
    outputs: [{ type: "uint256" }],
  },
] as const;

/** Deterministic pseudo-random bytes (xorshift), so a failure names the same inputs every run. */
function bytesFrom(seed: number, length: number): Uint8Array {
  let x = seed || 1;
  return Uint8Array.from({ length }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x & 255;
  });
}

const addresses = Array.from({ length: 300 }, (_, i) => toHex(bytesFrom(i + 1, 20)));

describe("EVM words", () => {
  it("checksumAddress is EIP-55: viem's getAddress for any case of the input", () => {
    for (const address of addresses) {
      const expected = getAddress(address);
      expect(checksumAddress(address)).toBe(expected);
      expect(checksumAddress(address.toUpperCase().replace("0X", "0x"))).toBe(expected);
      expect(checksumAddress(expected)).toBe(expected);
    }
    // The EIP-55 specification's own examples.
    for (const example of [
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
      "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    ]) {
      expect(checksumAddress(example.toLowerCase())).toBe(example);
    }
  });

  it("a mistyped checksum is told apart the way viem's strict isAddress does", () => {
    for (const address of addresses.slice(0, 50)) {
      const good = getAddress(address);
      // Flip the case of the first letter digit: still an address, no longer its checksum.
      const at = good.slice(2).search(/[a-fA-F]/) + 2;
      if (at < 2) continue;
      const flipped =
        good.slice(0, at) +
        (good[at] === good[at]!.toUpperCase() ? good[at]!.toLowerCase() : good[at]!.toUpperCase()) +
        good.slice(at + 1);
      expect(checksumAddress(flipped) === flipped).toBe(isAddress(flipped, { strict: true }));
      expect(checksumAddress(flipped) === flipped).toBe(false);
    }
  });

  it("bytesToHex writes two lower-case digits per byte, leading zeros kept", () => {
    expect(bytesToHex(new Uint8Array())).toBe("0x");
    expect(bytesToHex(Uint8Array.of(0, 1, 15, 16, 255))).toBe("0x00010f10ff");
    for (let i = 1; i <= 20; i++) {
      const bytes = bytesFrom(i, i * 3);
      expect(bytesToHex(bytes)).toBe(toHex(bytes));
    }
  });

  it("ERC-20 calldata matches viem's ABI encoding, selectors included", () => {
    const [owner, spender] = [getAddress(addresses[0]!), addresses[1]!];
    expect(erc20Call(ERC20.allowance, [owner, spender])).toBe(
      encodeFunctionData({ abi: erc20Abi, functionName: "allowance", args: [owner, getAddress(spender)] }),
    );
    expect(erc20Call(ERC20.nonces, [owner])).toBe(
      encodeFunctionData({ abi: noncesAbi, functionName: "nonces", args: [owner] }),
    );
    for (const value of [1n, 10_000_000n, 2n ** 64n + 3n, maxUint256]) {
      const data = erc20Call(ERC20.approve, [spender, value]);
      expect(data).toBe(
        encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [getAddress(spender), value] }),
      );
      expect(decodeFunctionData({ abi: erc20Abi, data }).args).toEqual([getAddress(spender), value]);
    }
    expect(MAX_UINT256).toBe(maxUint256);
  });
});
